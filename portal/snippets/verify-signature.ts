import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies the X-Partner-Signature header (`t=<unix>,v1=<hex>`) of a webhook delivery.
 * rawBody: the request body exactly as received (before JSON.parse).
 * secret: the webhook's signing secret, the whole `whsec_…` string.
 */
export function verifySignature(rawBody: string, header: string, secret: string, toleranceSec = 300): boolean {
  const parts = new Map(header.split(',').map((kv) => kv.trim().split('=') as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  // Refuse old timestamps so a captured delivery cannot be replayed later.
  if (Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
