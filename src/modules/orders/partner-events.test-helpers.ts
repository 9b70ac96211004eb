/**
 * Helpers of the partner-event tests: a key sends an event, and an order reaches a status the way a
 * deployment moves it (the operator's platform path, then the partner's own events after EN_ROUTE).
 */
import { expect } from 'vitest';
import type { TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import type { OrderStatus } from '../../shared/schemas.js';
import { type Auth, adminStatus, orderFor, PLATFORM_PATH } from './orders.test-helpers.js';

/** A valid body of each partner event type. */
export const EVENT_BODY: Record<string, Record<string, unknown>> = {
  PICKED_UP: { type: 'PICKED_UP' },
  EN_ROUTE: { type: 'EN_ROUTE' },
  DELIVERED: { type: 'DELIVERED' },
  FAILED: { type: 'FAILED', failReason: 'NOT_HOME' },
};

export function sendEvent(t: TestApp, k: TestKey, code: string, body: unknown, headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: { ...k.headers, ...headers },
    payload: body as never,
  });
}

/** An order of `k` in `status`: the platform path, then partner events for the states after EN_ROUTE. */
export async function orderAtWithEvents(
  t: TestApp,
  admin: Auth,
  k: TestKey,
  status: OrderStatus,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  if (PLATFORM_PATH.includes(status)) return orderFor(t, admin, k.id, status, overrides);
  if (status === 'CANCELLED') {
    const code = await orderFor(t, admin, k.id, 'PLACED', overrides);
    expect((await adminStatus(t, admin, code, 'CANCELLED')).statusCode).toBe(200);
    return code;
  }
  const code = await orderFor(t, admin, k.id, 'EN_ROUTE', overrides);
  if (status === 'DELIVERED') expect((await sendEvent(t, k, code, EVENT_BODY.DELIVERED)).statusCode).toBe(201);
  if (status === 'FAILED' || status === 'RETURNED') expect((await sendEvent(t, k, code, EVENT_BODY.FAILED)).statusCode).toBe(201);
  if (status === 'RETURNED') expect((await adminStatus(t, admin, code, 'RETURNED')).statusCode).toBe(200);
  return code;
}
