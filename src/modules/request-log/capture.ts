/**
 * What of a request the log may keep (docs/decisions-log.md, 'Request log'), as plain functions over text: credentials are
 * masked wherever they appear (path, query, headers we keep, bodies), bodies are cut at 8 KiB, and text
 * PostgreSQL cannot hold (NUL, lone surrogates) is replaced, so one odd request can never make a batch
 * fail. No credential header is ever read into an entry in the first place.
 */

/** Bodies are kept up to this many bytes of UTF-8 (docs/decisions-log.md, 'Request log'). */
export const BODY_LIMIT_BYTES = 8 * 1024;
/** Short fields (path, query, user agent, idempotency key) are cut here: they are not bodies. */
const FIELD_LIMIT = 2048;

/**
 * Credentials the service issues, wherever they appear in logged text: API keys (any length, so a
 * mistyped or cut key is masked too), access tokens (JWTs, whole or cut), refresh tokens, webhook
 * signing secrets.
 */
const CREDENTIALS =
  /svc_(?:live|sandbox)_[A-Za-z0-9]*|eyJ[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){0,2}|\brt_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]*/g;
export const REDACTED = '[redacted]';

/**
 * `text` with every credential masked, including `presented` (the caller's X-Api-Key header as sent,
 * which may not look like one of our keys at all), NUL characters and lone surrogates replaced.
 */
export function scrub(text: string, presented: string | null): string {
  let out = text.replace(CREDENTIALS, REDACTED);
  if (presented !== null && presented.length >= 8 && out.includes(presented)) out = out.replaceAll(presented, REDACTED);
  if (out.includes('\0')) out = out.replaceAll('\0', '\uFFFD');
  const text16 = out as unknown as WellFormed;
  return text16.isWellFormed() ? out : text16.toWellFormed();
}

/** ES2024 string methods (Node 20 has them; the project's lib setting stops at ES2023). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** A short field (path, query, header value) as logged: scrubbed, cut at 2048 characters. */
export function field(text: string | undefined | null, presented: string | null): string | null {
  if (text === undefined || text === null || text === '') return null;
  return scrub(text.length > FIELD_LIMIT ? text.slice(0, FIELD_LIMIT) : text, presented);
}

/**
 * A body as logged: its first 8 KiB (UTF-8 bytes, never cutting a character in two), scrubbed. A key cut
 * in two at the limit is still masked: the pattern matches a key of any length.
 */
export function bodyText(text: string, presented: string | null): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8: most bodies need no measuring.
  if (text.length * 3 <= BODY_LIMIT_BYTES || Buffer.byteLength(text) <= BODY_LIMIT_BYTES) return scrub(text, presented);
  // Cut through a Buffer: the result is a string of its own. (A slice of a longer string would keep the
  // whole body, up to 1 MiB, alive for as long as the entry waits in the queue.)
  const cut = Buffer.from(text.slice(0, BODY_LIMIT_BYTES)).subarray(0, BODY_LIMIT_BYTES).toString('utf8');
  // A character cut in two decodes as U+FFFD at the end: leave it out.
  return scrub(cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut, presented);
}

/**
 * A body that was never read, as a short note: the request was refused before its body was parsed
 * (key, environment, rate limit and scope are checked first), or its content type is not JSON.
 */
export function unreadBodyNote(contentType: string | undefined, contentLength: string | undefined): string | null {
  const bytes = contentLength === undefined ? null : Number(contentLength);
  if (bytes === 0 || (bytes === null && contentType === undefined)) return null;
  const size = bytes === null || Number.isNaN(bytes) ? 'a body' : `${bytes} bytes`;
  const type = contentType?.split(';')[0].trim().toLowerCase();
  if (type && type !== 'application/json') return `[not JSON: ${size} of ${type.slice(0, 100)}, not read]`;
  return `[not read: ${size}; the request was refused before its body was read]`;
}

/** The `code` of an error envelope as the service serialises it, or null. */
export function errorCodeOf(payload: string): string | null {
  const match = /"code":"(ERR_[A-Z0-9_]+)"/.exec(payload);
  return match ? match[1] : null;
}
