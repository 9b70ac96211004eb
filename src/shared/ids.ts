import { randomUUID } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids are plain strings in the contract: anything that is not a UUID simply matches nothing (404). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function newId(): string {
  return randomUUID();
}
