/**
 * Assertions on the error envelope `{ statusCode, code, message, details? }` (docs/decisions-log.md, 'Requests, errors and input'), shared by
 * every route test.
 */
import { expect } from 'vitest';

/** What an injected or fetched answer offers these checks. */
export interface Answer {
  statusCode: number;
  body?: string;
  json(): unknown;
}

const ENVELOPE_FIELDS = new Set(['statusCode', 'code', 'message', 'details']);

/**
 * The answer is the error envelope with this status and code, a message, and nothing outside the
 * envelope (no stack, no internals); `details` may be present. The body is shown when the status differs.
 */
export function expectError(res: Answer, status: number, code: string): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ statusCode: status, code, message: expect.any(String) });
  expect(Object.keys(body).filter((field) => !ENVELOPE_FIELDS.has(field))).toEqual([]);
}

/** The same, and without `details`: exactly `{ statusCode, code, message }`. */
export function expectPlainError(res: Answer, status: number, code: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toEqual({ statusCode: status, code, message: expect.any(String) });
}

/** A 400 ERR_VALIDATION whose details name `field`, each detail with at least one message. */
export function expectFieldError(res: Answer, field: string): void {
  expectError(res, 400, 'ERR_VALIDATION');
  const details = (res.json() as { details: Array<{ field: string; messages: string[] }> }).details;
  expect(details.map((d) => d.field)).toContain(field);
  for (const d of details) expect(d.messages.length).toBeGreaterThan(0);
}
