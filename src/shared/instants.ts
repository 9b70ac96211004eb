import { validationError } from '../errors.js';

// The schema's date-time format accepts instants PostgreSQL cannot store (year 0000) or JavaScript
// cannot represent (leap second :60); either would otherwise surface as a 500 from the database.
const MIN_MS = Date.parse('0001-01-01T00:00:00Z');
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A date-time input as epoch milliseconds, or 400 ERR_VALIDATION naming `field`. */
export function parseInstantMs(field: string, value: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms < MIN_MS || ms > MAX_MS) {
    throw validationError(field, 'must be a valid date-time between the years 0001 and 9999');
  }
  return ms;
}

/** A date-time input as a canonical ISO string, or 400 ERR_VALIDATION naming `field`. */
export function parseInstant(field: string, value: string): string {
  return new Date(parseInstantMs(field, value)).toISOString();
}

export function parseOptionalInstant(field: string, value: string | null | undefined): string | null {
  return value === undefined || value === null ? null : parseInstant(field, value);
}
