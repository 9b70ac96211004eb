/**
 * Test helpers for the offer tests: orders are created and offered through the operator API (HTTP),
 * exactly as a deployment would.
 */
import { expect } from 'vitest';
import type { TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { type Auth, createOrder } from '../orders/orders.test-helpers.js';
import type { PartnerOffer } from './offers.schemas.js';

/** POST /v1/admin/orders/{code}/offers, answered as it is. */
export function offerRequest(t: TestApp, admin: Auth, code: string, payload: Record<string, unknown>) {
  return t.live.inject({ method: 'POST', url: `/v1/admin/orders/${code}/offers`, headers: admin, payload });
}

/** A new live order offered to the key (answered 201). */
export async function offeredOrder(
  t: TestApp,
  admin: Auth,
  keyId: string,
  options: { ttlSec?: number; order?: Record<string, unknown> } = {},
): Promise<PartnerOffer> {
  const order = await createOrder(t, admin, options.order);
  const res = await offerRequest(
    t,
    admin,
    order.code,
    options.ttlSec === undefined ? { apiKeyId: keyId } : { apiKeyId: keyId, ttlSec: options.ttlSec },
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export function accept(
  t: TestApp,
  k: TestKey,
  id: string,
  headers: Record<string, string> = {},
  listener: 'live' | 'sandbox' = 'live',
) {
  return t[listener].inject({ method: 'POST', url: `/v1/partner/offers/${id}/accept`, headers: { ...k.headers, ...headers } });
}

export function decline(t: TestApp, k: TestKey, id: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/offers/${id}/decline`,
    headers: { ...k.headers, ...headers },
    payload: payload as object,
  });
}

export function withdraw(t: TestApp, admin: Auth, id: string) {
  return t.live.inject({ method: 'DELETE', url: `/v1/admin/offers/${id}`, headers: admin });
}

/** The offer events of an order, in outbox order (each row's `data` is the PartnerOffer itself). */
export async function offerEventsOf(
  t: TestApp,
  code: string,
): Promise<Array<{ type: string; assigned_key_id: string | null; data: PartnerOffer }>> {
  return t.ctx.db.query(
    `SELECT x.type, x.assigned_key_id, x.data FROM outbox x JOIN orders o ON o.id = x.order_id
      WHERE o.code = $1 AND x.type LIKE 'offer.%' ORDER BY x.id`,
    [code],
  );
}
