import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { parseInstant, parseInstantMs } from './instants.js';

describe('parseInstant', () => {
  it('answers the canonical ISO string of any spelling of one instant', () => {
    expect(parseInstant('at', '2026-11-28T05:00:00+02:00')).toBe('2026-11-28T03:00:00.000Z');
    expect(parseInstantMs('at', '2026-11-28T03:00:00Z')).toBe(Date.UTC(2026, 10, 28, 3));
  });

  it('refuses what is no date-time, or outside the years 0001 to 9999, with 400 ERR_VALIDATION naming the field', () => {
    for (const value of ['yesterday', '0000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z']) {
      for (const parse of [parseInstant, parseInstantMs]) {
        let caught: unknown;
        try {
          parse('points.0.at', value);
        } catch (err) {
          caught = err;
        }
        expect(caught).toBeInstanceOf(AppError);
        expect(caught).toMatchObject({ code: 'ERR_VALIDATION', details: [{ field: 'points.0.at' }] });
      }
    }
  });
});
