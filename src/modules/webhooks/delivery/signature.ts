/**
 * Webhook signing, two header sets on every delivery (docs/webhook-signatures.md):
 *  - `X-Partner-Signature: t=<unix seconds>,v1=<hex>` where v1 is HMAC-SHA256 of `${t}.${rawBody}` keyed
 *    with the secret string itself (UTF-8), the scheme Stripe uses, so Stripe-style verifiers
 *    (stripe.webhooks.constructEvent) accept it unchanged;
 *  - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` where the
 *    signature is HMAC-SHA256 of `${id}.${t}.${rawBody}` keyed with the secret's bytes (the base64 after
 *    `whsec_`), so the `standardwebhooks` libraries accept it with the same secret string.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Partner-Signature';
export const SECRET_PREFIX = 'whsec_';

/**
 * A new signing secret: `whsec_` + 32 random bytes in standard base64 (the form the Standard Webhooks
 * libraries decode). Secrets made earlier are base64url; both keep working (standardWebhooksKey).
 */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The HMAC key of the Standard Webhooks signature: the bytes the secret's text after `whsec_` encodes,
 * standard base64 or, for secrets made earlier, base64url (docs/webhook-signatures.md, "Secrets").
 */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(encodedPart(secret), signingSecretForm(secret));
}

function encodedPart(secret: string): string {
  return secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
}

/**
 * The form a secret was made in: `base64` (44 characters after `whsec_`, padded: what the Standard
 * Webhooks libraries decode as is) or `base64url` (43 characters, unpadded: made earlier).
 */
export function signingSecretForm(secret: string): 'base64' | 'base64url' {
  const encoded = encodedPart(secret);
  return encoded.endsWith('=') && !/[-_]/.test(encoded) ? 'base64' : 'base64url';
}

/** `v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">` for one secret. */
export function standardWebhooksSignature(secret: string, messageId: string, timestampSec: number, rawBody: string): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${messageId}.${timestampSec}.`, 'utf8')
    .update(rawBody, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The Standard Webhooks headers of a delivery: `webhook-id` the event id (the same on every attempt),
 * `webhook-timestamp` the same `t` as X-Partner-Signature, `webhook-signature` one space-separated
 * signature per live secret, the current one first.
 */
export function standardWebhooksHeaders(
  eventId: string,
  timestampSec: number,
  rawBody: string,
  secrets: ReadonlyArray<string | null | undefined>,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': secrets
      .filter((s): s is string => typeof s === 'string' && s !== '')
      .map((s) => standardWebhooksSignature(s, eventId, timestampSec, rawBody))
      .join(' '),
  };
}

export function computeSignature(secret: string, timestampSec: number, rawBody: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestampSec}.${rawBody}`, 'utf8').digest('hex');
}

/**
 * The header value for a body sent at `timestampSec`: one v1 per secret, the current one first. During
 * a rotation's grace (docs/decisions-log.md, 'Webhook operations') the previous secret signs too (`t=…,v1=<new>,v1=<old>`), and a
 * Stripe-style verifier accepts the body when any v1 matches its secret.
 */
export function signatureHeader(secret: string, timestampSec: number, rawBody: string, previousSecret?: string | null): string {
  const current = `t=${timestampSec},v1=${computeSignature(secret, timestampSec, rawBody)}`;
  return previousSecret ? `${current},v1=${computeSignature(previousSecret, timestampSec, rawBody)}` : current;
}

/**
 * What a receiver does (used by the docs and tests as a reference): parse the header, recompute,
 * compare in constant time, and refuse timestamps outside the tolerance (replay protection).
 */
export function verifySignature(
  header: string,
  rawBody: string,
  secret: string,
  options: { toleranceSec?: number; nowSec?: number } = {},
): boolean {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  const now = options.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSec ?? 300)) return false;
  const expected = Buffer.from(computeSignature(secret, t, rawBody), 'hex');
  return parts
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .some(([, v]) => timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
