/**
 * Verifying a webhook delivery (Node.js). Each delivery carries two header sets, either is enough:
 *  - `X-Partner-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`: v1 is the HMAC-SHA256, in hex, of
 *    `<t>.<raw body>` keyed with the webhook's signing secret (the whole `whsec_…` string). The scheme is
 *    Stripe's.
 *  - Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64>[ v1,<base64>]`,
 *    the HMAC-SHA256 of `<id>.<timestamp>.<raw body>` keyed with the secret's bytes (the base64 after
 *    `whsec_`; base64url for secrets made before secrets were standard base64).
 * While a secret is being rotated a delivery carries one signature per secret in each set.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { components } from './generated/partner-api.js';

export const SIGNATURE_HEADER = 'x-partner-signature';
/** The Standard Webhooks headers (https://www.standardwebhooks.com). */
export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;
export const DEFAULT_TOLERANCE_SEC = 300;

type Schemas = components['schemas'];

/** A verified event: the document's `WebhookEventEnvelope`, a union on `type` (`ping` and the six kinds). */
export type WebhookEvent = Schemas['WebhookEventEnvelope'];
export type WebhookEventType = WebhookEvent['type'];
/** The envelope of one kind: `WebhookEventEnvelope<'order.status_changed'>['data']` is `{ order, previousStatus }`. */
export type WebhookEventEnvelope<T extends WebhookEventType = WebhookEventType> = Extract<WebhookEvent, { type: T }>;

export interface VerifyWebhookOptions {
  /** How far `t` may be from now, in seconds (default 300). `Infinity` turns the check off. */
  toleranceSec?: number;
  /** The current time in ms (default Date.now): for tests. */
  now?: () => number;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** A request's headers: Node's `req.headers`, a fetch `Headers`, or a plain object (any name case). */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(',') : (value as string | undefined);
  }
  return undefined;
}

/** The HMAC key of a Standard Webhooks signature: the bytes the text after `whsec_` encodes. */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return Buffer.from(encoded, /[-_]/.test(encoded) ? 'base64url' : 'base64');
}

/**
 * Checks a delivery and returns its event. `rawBody` must be the body exactly as received (before any
 * JSON parsing: re-serialised JSON does not match). `headers`: the request's headers (then either
 * header set is checked, X-Partner-Signature first when both are there), or the X-Partner-Signature
 * value alone. `secretOrSecrets`: the webhook's signing secret, or during a rotation both (old and new)
 * so that deliveries signed with either pass. Throws WebhookVerificationError (with `reason`) when the
 * delivery must be refused.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders | string | readonly string[] | null | undefined,
  secretOrSecrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const secrets = (typeof secretOrSecrets === 'string' ? [secretOrSecrets] : [...secretOrSecrets]).filter((s) => s !== '');
  if (secrets.length === 0) throw new TypeError('verifyWebhook: give the webhook signing secret (whsec_…)');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  if (typeof headers === 'object' && headers !== null && !Array.isArray(headers)) {
    const set = headers as WebhookHeaders;
    const partner = headerOf(set, SIGNATURE_HEADER);
    if (!partner?.trim() && headerOf(set, STANDARD_WEBHOOKS_HEADERS.signature)?.trim()) {
      const timestamp = verifyStandard(body, set, secrets);
      return checkedEvent(body, timestamp, options);
    }
    return checkedEvent(body, verifyPartner(body, partner, secrets), options);
  }
  const header = Array.isArray(headers) ? headers.join(',') : (headers as string | null | undefined);
  return checkedEvent(body, verifyPartner(body, header, secrets), options);
}

/** X-Partner-Signature; answers its timestamp. */
function verifyPartner(body: Uint8Array, header: string | null | undefined, secrets: string[]): string {
  if (!header?.trim()) {
    throw new WebhookVerificationError('MISSING_SIGNATURE', 'No X-Partner-Signature header (nor webhook-signature)');
  }
  let timestamp: string | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') timestamp = value;
    else if (key === 'v1') {
      if (!HEX64.test(value))
        throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'A v1 signature is not 64 hex characters');
      signatures.push(Buffer.from(value, 'hex'));
    }
  }
  if (timestamp === null || signatures.length === 0) {
    throw new WebhookVerificationError('MISSING_SIGNATURE', 'The signature header has no t= or no v1=');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('MALFORMED_SIGNATURE', 't is not a Unix time in seconds');

  // Compare every signature with every secret, in constant time, without stopping at the first match.
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
    for (const given of signatures) {
      if (timingSafeEqual(given, expected)) matched = true;
    }
  }
  if (!matched) throw mismatch();
  return timestamp;
}

/** Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature; answers the timestamp. */
function verifyStandard(body: Uint8Array, headers: WebhookHeaders, secrets: string[]): string {
  const id = headerOf(headers, STANDARD_WEBHOOKS_HEADERS.id)?.trim();
  const timestamp = headerOf(headers, STANDARD_WEBHOOKS_HEADERS.timestamp)?.trim();
  const header = headerOf(headers, STANDARD_WEBHOOKS_HEADERS.signature) ?? '';
  if (!id || !timestamp) {
    throw new WebhookVerificationError('MISSING_SIGNATURE', 'webhook-signature without webhook-id or webhook-timestamp');
  }
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'webhook-timestamp is not a Unix time in seconds');
  }
  const signatures: Buffer[] = [];
  for (const part of header.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue; // other versions are not ours to check
    const given = Buffer.from(part.slice(comma + 1), 'base64');
    if (given.length !== 32)
      throw new WebhookVerificationError('MALFORMED_SIGNATURE', 'A v1 signature is not 32 bytes of base64');
    signatures.push(given);
  }
  if (signatures.length === 0) throw new WebhookVerificationError('MISSING_SIGNATURE', 'webhook-signature has no v1 signature');
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', standardWebhooksKey(secret))
      .update(`${id}.${timestamp}.`, 'utf8')
      .update(body)
      .digest();
    for (const given of signatures) {
      if (timingSafeEqual(given, expected)) matched = true;
    }
  }
  if (!matched) throw mismatch();
  return timestamp;
}

function mismatch(): WebhookVerificationError {
  return new WebhookVerificationError(
    'SIGNATURE_MISMATCH',
    'No signature matches: a wrong secret, or the body was changed (verify the raw body, before JSON parsing)',
  );
}

/** The timestamp and the payload of an authentic delivery. */
function checkedEvent(body: Uint8Array, timestamp: string, options: VerifyWebhookOptions): WebhookEvent {
  // Checked after the signature, so that this reason is only ever given for an authentic delivery.
  const toleranceSec = options.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const nowSec = (options.now ?? Date.now)() / 1000;
  if (Math.abs(nowSec - Number(timestamp)) > toleranceSec) {
    throw new WebhookVerificationError(
      'TIMESTAMP_OUTSIDE_TOLERANCE',
      `The signature is ${Math.round(nowSec - Number(timestamp))} s old; at most ${toleranceSec} s is accepted (a replay, or a wrong clock)`,
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(Buffer.from(body).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('INVALID_PAYLOAD', 'The body is not JSON');
  }
  if (!isEnvelope(event)) {
    throw new WebhookVerificationError(
      'INVALID_PAYLOAD',
      'The body is not an event envelope { id, type, createdAt, environment, data }',
    );
  }
  return event;
}

function isEnvelope(value: unknown): value is WebhookEvent {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === 'string' &&
    typeof v.type === 'string' &&
    typeof v.createdAt === 'string' &&
    typeof v.environment === 'string' &&
    typeof v.data === 'object' &&
    v.data !== null
  );
}

/**
 * The X-Partner-Signature value for `rawBody` signed at `timestampSec` with each secret (one v1 per
 * secret): for tests of your receiver, and for forwarding tools.
 */
export function signWebhook(rawBody: string, secretOrSecrets: string | readonly string[], timestampSec: number): string {
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const v1 = secrets.map((s) => createHmac('sha256', s).update(`${timestampSec}.${rawBody}`, 'utf8').digest('hex'));
  return [`t=${timestampSec}`, ...v1.map((s) => `v1=${s}`)].join(',');
}

/**
 * The Standard Webhooks headers for `rawBody` with message id `messageId` (a delivery's event id) signed
 * at `timestampSec` with each secret: for tests of your receiver, and for forwarding tools.
 */
export function signStandardWebhook(
  rawBody: string,
  secretOrSecrets: string | readonly string[],
  messageId: string,
  timestampSec: number,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const signatures = secrets.map(
    (s) =>
      `v1,${createHmac('sha256', standardWebhooksKey(s)).update(`${messageId}.${timestampSec}.${rawBody}`, 'utf8').digest('base64')}`,
  );
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSec), 'webhook-signature': signatures.join(' ') };
}
