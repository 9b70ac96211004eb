import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies the X-Partner-Signature header (`t=<unix>,v1=<hex>`) of a webhook delivery.
 * rawBody: the request body exactly as received (before JSON.parse).
 * secret: the webhook's signing secret, the whole `whsec_…` string.
 * After a secret rotation, deliveries carry two signatures (`v1=<new>,v1=<old>`) for a while:
 * the body is genuine when any of them matches.
 */
export function verifySignature(rawBody: string, header: string, secret: string, toleranceSec = 300): boolean {
  const parts = header.split(',').map((kv) => kv.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  // Refuse old timestamps so a captured delivery cannot be replayed later.
  if (Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return parts.some(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '') && timingSafeEqual(expected, Buffer.from(v, 'hex')));
}
