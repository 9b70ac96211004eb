/**
 * Test helpers for the order tests: orders are created, assigned and moved through the operator API
 * (HTTP), exactly as a deployment would, never by writing rows directly.
 */
import { expect } from 'vitest';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import type { ApiKeyEnvironment, ApiKeyScope, LocalizedText, OrderStatus } from '../../shared/schemas.js';

export type Auth = { authorization: string };

/** The operator's path from PLACED to EN_ROUTE (docs/decisions-log.md, 'Orders'). */
export const PLATFORM_PATH: OrderStatus[] = [
  'PLACED',
  'VENDOR_ACCEPTED',
  'RUNNER_PICKUP',
  'AT_HUB',
  'PACKED',
  'SCANNED_TO_VAN',
  'EN_ROUTE',
];

export function orderBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    environment: 'live',
    paymentMethod: 'COD',
    totalQepik: 12_500,
    codAmountQepik: 12_500,
    items: [
      { name: { az: 'Çay dəsti', ru: 'Чайный сервиз', en: 'Tea set' }, qty: 2, unitPriceQepik: 5_000 },
      { name: { az: 'Stəkan', ru: 'Стакан', en: 'Glass' }, qty: 5, unitPriceQepik: 500 },
    ],
    area: 'Nəsimi',
    timeWindowStart: '2030-05-01T10:00:00.000Z',
    timeWindowEnd: '2030-05-01T12:00:00.000Z',
    customer: {
      name: 'Aysel Məmmədova',
      phone: '+994501234567',
      address: { street: 'Nizami küç. 67', details: 'Mənzil 12', lat: 40.3725, lng: 49.8463 },
    },
    ...overrides,
  };
}

/** A key of a fresh partner (or of `partnerId`): LIVE, reading with PII and writing logistics unless told. */
export async function partnerKey(
  t: TestApp,
  options: {
    environment?: ApiKeyEnvironment;
    scopes?: ApiKeyScope[];
    receivesAllOrders?: boolean;
    partnerId?: string;
    partnerName?: string;
  } = {},
): Promise<TestKey> {
  const partnerId = options.partnerId ?? (await createPartner(t.ctx, options.partnerName)).id;
  return createKey(t.ctx, partnerId, {
    environment: options.environment ?? 'LIVE',
    scopes: options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write'],
    receivesAllOrders: options.receivesAllOrders ?? false,
  });
}

export async function createZone(t: TestApp, admin: Auth, name: LocalizedText): Promise<{ id: string; name: LocalizedText }> {
  const res = await t.live.inject({ method: 'POST', url: '/v1/admin/zones', headers: admin, payload: { name } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

export function createBatch(t: TestApp, admin: Auth, orderCodes: string[]) {
  return t.live.inject({ method: 'POST', url: '/v1/admin/batches', headers: admin, payload: { orderCodes } });
}

export async function createOrder(t: TestApp, admin: Auth, overrides: Record<string, unknown> = {}) {
  const res = await t.live.inject({ method: 'POST', url: '/v1/admin/orders', headers: admin, payload: orderBody(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** POST /v1/admin/orders/{code}/assign as the operator, answered as it is. */
export function assignRequest(t: TestApp, admin: Auth, code: string, apiKeyId: string) {
  return t.live.inject({ method: 'POST', url: `/v1/admin/orders/${code}/assign`, headers: admin, payload: { apiKeyId } });
}

/** The order assigned to the key (answered 200); its admin view. */
export async function assign(t: TestApp, admin: Auth, code: string, apiKeyId: string) {
  const res = await assignRequest(t, admin, code, apiKeyId);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export async function adminStatus(t: TestApp, admin: Auth, code: string, status: OrderStatus, note?: string) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/admin/orders/${code}/status`,
    headers: admin,
    payload: note === undefined ? { status } : { status, note },
  });
}

/** Moves an order along the platform path (PLACED → … → EN_ROUTE) up to `target`. */
export async function advanceTo(t: TestApp, admin: Auth, code: string, target: OrderStatus) {
  const end = PLATFORM_PATH.indexOf(target);
  if (end < 0) throw new Error(`${target} is not on the platform path`);
  for (let i = 1; i <= end; i++) {
    const res = await adminStatus(t, admin, code, PLATFORM_PATH[i]);
    expect(res.statusCode, res.body).toBe(200);
  }
}

/** An order created, assigned to `keyId` and moved to `status` (on the platform path). */
export async function orderFor(
  t: TestApp,
  admin: Auth,
  keyId: string,
  status: OrderStatus = 'PACKED',
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const order = await createOrder(t, admin, overrides);
  await assign(t, admin, order.code, keyId);
  await advanceTo(t, admin, order.code, status);
  return order.code as string;
}

export interface OutboxRow {
  event_id: string;
  type: string;
  environment: string;
  order_id: string | null;
  assigned_key_id: string | null;
  data: {
    order?: Record<string, unknown> & { code: string; status: string; customer: unknown };
    previousStatus?: string;
    batch?: unknown;
  };
}

/** The order's own events in the outbox (its payment intent's are src/modules/payments/'s to test). */
export async function outboxOf(t: TestApp, code: string): Promise<OutboxRow[]> {
  return t.ctx.db.query<OutboxRow>(
    `SELECT x.event_id, x.type, x.environment, x.order_id, x.assigned_key_id, x.data
       FROM outbox x JOIN orders o ON o.id = x.order_id
      WHERE o.code = $1 AND x.type NOT LIKE 'payment\\_intent.%'
      ORDER BY x.id`,
    [code],
  );
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A GET as the key, on the live listener unless told. */
export function readAs(t: TestApp, k: TestKey, url: string, listener: 'live' | 'sandbox' = 'live') {
  return t[listener].inject({ method: 'GET', url, headers: k.headers });
}

/** GET /v1/partner/orders as the key (answered 200), with `query` as written (`?status=…`). */
export async function listAs(t: TestApp, k: TestKey, query = '', listener: 'live' | 'sandbox' = 'live') {
  const res = await readAs(t, k, `/v1/partner/orders${query}`, listener);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { page: number; pageSize: number; total: number; items: Array<{ code: string; customer: unknown }> };
}
