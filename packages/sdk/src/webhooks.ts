/**
 * Verifying a webhook delivery (Node.js). Each delivery carries
 * `X-Partner-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`: v1 is the HMAC-SHA256, in hex, of
 * `<t>.<raw body>` keyed with the webhook's signing secret (the whole `whsec_…` string). While a secret is
 * being rotated a delivery carries one v1 per secret. The scheme is Stripe's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { components } from './generated/partner-api.js';

export const SIGNATURE_HEADER = 'x-partner-signature';
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

/**
 * Checks a delivery and returns its event. `rawBody` must be the body exactly as received (before any
 * JSON parsing: re-serialised JSON does not match). `secretOrSecrets`: the webhook's signing secret, or
 * during a rotation both (old and new) so that deliveries signed with either pass. Throws
 * WebhookVerificationError (with `reason`) when the delivery must be refused.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | readonly string[] | null | undefined,
  secretOrSecrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const secrets = (typeof secretOrSecrets === 'string' ? [secretOrSecrets] : [...secretOrSecrets]).filter((s) => s !== '');
  if (secrets.length === 0) throw new TypeError('verifyWebhook: give the webhook signing secret (whsec_…)');
  const header = Array.isArray(signatureHeader) ? signatureHeader.join(',') : (signatureHeader as string | null | undefined);
  if (!header?.trim()) {
    throw new WebhookVerificationError('MISSING_SIGNATURE', 'No X-Partner-Signature header');
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

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  // Compare every signature with every secret, in constant time, without stopping at the first match.
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
    for (const given of signatures) {
      if (timingSafeEqual(given, expected)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'SIGNATURE_MISMATCH',
      'No signature matches: a wrong secret, or the body was changed (verify the raw body, before JSON parsing)',
    );
  }

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
 * The header value for `rawBody` signed at `timestampSec` with each secret (one v1 per secret): for
 * tests of your receiver, and for forwarding tools.
 */
export function signWebhook(rawBody: string, secretOrSecrets: string | readonly string[], timestampSec: number): string {
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets;
  const v1 = secrets.map((s) => createHmac('sha256', s).update(`${timestampSec}.${rawBody}`, 'utf8').digest('hex'));
  return [`t=${timestampSec}`, ...v1.map((s) => `v1=${s}`)].join(',');
}
