/**
 * Webhook signing (docs/decisions-log.md, 'Webhooks'): `X-Partner-Signature: t=<unix seconds>,v1=<hex>` where v1
 * is HMAC-SHA256 of `${t}.${rawBody}` keyed with the secret string itself (UTF-8), the scheme Stripe
 * uses, so Stripe-style verifiers (stripe.webhooks.constructEvent) accept it unchanged.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Partner-Signature';
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes in base64url. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
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
