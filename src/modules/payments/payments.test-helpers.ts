/** Helpers of the payment tests: a partner whose key may read payments, a delivery, an operator's settlement. */
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import type { Auth } from '../orders/orders.test-helpers.js';

export const PAYMENT_SCOPES: ApiKeyScope[] = ['orders:read', 'logistics:write', 'payments:read'];

/** A fresh partner with a LIVE key of `scopes` (reading payments and writing logistics unless told). */
export async function paymentsPartner(
  t: TestApp,
  scopes: ApiKeyScope[] = PAYMENT_SCOPES,
  options: { receivesAllOrders?: boolean } = {},
): Promise<{ partner: TestPartner; key: TestKey }> {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, { environment: 'LIVE', scopes, receivesAllOrders: options.receivesAllOrders });
  return { partner, key };
}

/** The key reports the order DELIVERED, with `body`'s fields (codCollectedQepik, note, proof …). */
export function deliverAs(
  t: TestApp,
  key: TestKey,
  code: string,
  body: Record<string, unknown> = {},
  listener: 'live' | 'sandbox' = 'live',
) {
  return t[listener].inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: key.headers,
    payload: { type: 'DELIVERED', ...body },
  });
}

/** POST /v1/admin/partners/{id}/settlements as the operator. */
export function createSettlement(t: TestApp, admin: Auth, partnerId: string, body: unknown) {
  return adminPost(t, admin, `/v1/admin/partners/${partnerId}/settlements`, body);
}

/** A POST as the operator on the live listener. */
export function adminPost(t: TestApp, admin: Auth, url: string, body: unknown) {
  return t.live.inject({ method: 'POST', url, headers: admin, payload: body as never });
}
