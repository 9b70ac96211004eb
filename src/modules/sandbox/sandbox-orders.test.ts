import { describe, expect, it } from 'vitest';
import { partnerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import { type Auth, createZone, ISO, orderFor, outboxOf } from '../orders/orders.test-helpers.js';
import { SANDBOX_START_STATUSES } from './sandbox.schemas.js';

let t: TestApp;
let admin: Auth;
const getApp = () => t;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

async function key(environment: ApiKeyEnvironment = 'SANDBOX', scopes?: ApiKeyScope[]): Promise<TestKey> {
  const partner = await createPartner(t.ctx);
  return createKey(t.ctx, partner.id, { environment, scopes: scopes ?? ['orders:read', 'orders:pii', 'logistics:write'] });
}

function create(k: TestKey, payload?: unknown, listener: 'live' | 'sandbox' = 'sandbox') {
  return t[listener].inject({
    method: 'POST',
    url: '/v1/partner/sandbox/orders',
    headers: k.headers,
    ...(payload === undefined ? {} : { payload: payload as never }),
  });
}

describe('POST /v1/partner/sandbox/orders', () => {
  // On the live API the operation does not exist for any key: the refusal stands where the environment
  // check does (docs/decisions-log.md, 'API keys'), so it comes before the rate limit and the scope.
  partnerAuthContract(getApp, { method: 'POST', url: '/v1/partner/sandbox/orders', listener: 'live' });

  it('is refused on the live API with 403 ERR_API_KEY_ENVIRONMENT for every valid key, writing nothing', async () => {
    const [{ n: before }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    for (const k of [await key('LIVE'), await key('LIVE', ['orders:read']), await key('SANDBOX')]) {
      const res = await create(k, {}, 'live');
      expectError(res, 403, 'ERR_API_KEY_ENVIRONMENT');
      expect(res.json().message).toMatch(/sandbox/i);
      // Refused before the rate limit: no rate-limit fields on the answer.
      expect(res.headers.ratelimit).toBeUndefined();
    }
    const [{ n: after }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(after).toBe(before);
  });

  it('creates a realistic PACKED order assigned to the calling key', async () => {
    const k = await key();
    const before = t.clock.nowMs();
    const res = await create(k);
    expect(res.statusCode).toBe(201);
    const order = res.json();
    expect(order).toEqual({
      code: expect.stringMatching(/^ORD-[0-9A-Z]{8}$/),
      status: 'PACKED',
      paymentMethod: expect.stringMatching(/^(COD|CARD)$/),
      paymentStatus: expect.stringMatching(/^(UNPAID|PAID)$/),
      totalQepik: expect.any(Number),
      codAmountQepik: expect.any(Number),
      area: expect.any(String),
      zone: null,
      timeWindowStart: expect.stringMatching(ISO),
      timeWindowEnd: expect.stringMatching(ISO),
      items: expect.any(Array),
      timeline: ['PLACED', 'VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'].map((status) => ({
        status,
        at: expect.stringMatching(ISO),
      })),
      customer: {
        name: expect.any(String),
        phone: expect.stringMatching(/^\+994\d{9}$/),
        address: { street: expect.any(String), details: expect.any(String), lat: expect.any(Number), lng: expect.any(Number) },
      },
      batch: null,
      partnerAssignedAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(order.items.length).toBeGreaterThanOrEqual(2);
    expect(order.items.length).toBeLessThanOrEqual(3);
    for (const item of order.items) {
      expect(item.name.az.length && item.name.ru.length && item.name.en.length).toBeTruthy();
      expect(Number.isInteger(item.qty) && item.qty >= 1).toBe(true);
      expect(Number.isInteger(item.unitPriceQepik) && item.unitPriceQepik > 0).toBe(true);
    }
    const sum = order.items.reduce((s: number, i: { qty: number; unitPriceQepik: number }) => s + i.qty * i.unitPriceQepik, 0);
    expect(order.totalQepik).toBe(sum);
    // Baku.
    expect(order.customer.address.lat).toBeGreaterThan(40.2);
    expect(order.customer.address.lat).toBeLessThan(40.6);
    expect(order.customer.address.lng).toBeGreaterThan(49.6);
    expect(order.customer.address.lng).toBeLessThan(50.1);
    // A window later today.
    const start = Date.parse(order.timeWindowStart);
    const end = Date.parse(order.timeWindowEnd);
    expect(start).toBeGreaterThan(before);
    expect(start - before).toBeLessThanOrEqual(2 * 3600_000);
    expect(end).toBeGreaterThan(start);

    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${order.code}`, headers: admin })).json();
    expect(view).toMatchObject({ environment: 'sandbox', assignedKeyId: k.id, status: 'PACKED' });
    const read = await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${order.code}`, headers: k.headers });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(order);
  });

  it('makes a COD order UNPAID with the total to collect, a CARD order UNPAID (awaiting capture) with nothing to collect', async () => {
    const k = await key();
    const cod = (await create(k, { paymentMethod: 'COD' })).json();
    expect(cod).toMatchObject({ paymentMethod: 'COD', paymentStatus: 'UNPAID', codAmountQepik: cod.totalQepik });
    const card = (await create(k, { paymentMethod: 'CARD' })).json();
    expect(card).toMatchObject({ paymentMethod: 'CARD', paymentStatus: 'UNPAID', codAmountQepik: 0 });
  });

  it('accepts an empty JSON object, and refuses an unknown payment method or field with ERR_VALIDATION', async () => {
    const k = await key();
    expect((await create(k, {})).statusCode).toBe(201);
    const bad = await create(k, { paymentMethod: 'CASH' });
    expectError(bad, 400, 'ERR_VALIDATION');
    expect(bad.json().details[0].field).toBe('paymentMethod');
    const extra = await create(k, { status: 'EN_ROUTE' });
    expectError(extra, 400, 'ERR_VALIDATION');
    expect(extra.json().details[0].field).toBe('status');
  });

  it('answers customer null for a key without orders:pii', async () => {
    const k = await key('SANDBOX', ['logistics:write']);
    const res = await create(k);
    expect(res.statusCode).toBe(201);
    expect(res.json().customer).toBeNull();
  });

  it('puts the order in an existing zone or in none', async () => {
    const zone = await createZone(t, admin, { az: 'Z', ru: 'З', en: 'Z' });
    const k = await key();
    const seen: Array<string | null> = [];
    // Each order picks a zone with probability 1/2: 24 orders all without one would happen once in 16 million runs.
    for (let i = 0; i < 24; i++) {
      const order = (await create(k)).json();
      seen.push(order.zone === null ? null : order.zone.id);
      if (order.zone !== null) expect(order.zone).toEqual(zone);
    }
    expect(seen).toContain(zone.id);
  });

  it('writes order.placed and order.assigned_to_partner for the sandbox environment', async () => {
    const k = await key();
    const order = (await create(k)).json();
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => [r.type, r.environment, r.assigned_key_id])).toEqual([
      ['order.placed', 'SANDBOX', k.id],
      ['order.assigned_to_partner', 'SANDBOX', k.id],
    ]);
    expect(rows[0].data).toEqual({ order });
  });

  it('lets the partner run the whole flow on its test order', async () => {
    const k = await key();
    const order = (await create(k, { paymentMethod: 'COD' })).json();
    const post = (body: unknown) =>
      t.sandbox.inject({
        method: 'POST',
        url: `/v1/partner/orders/${order.code}/events`,
        headers: k.headers,
        payload: body as never,
      });
    expect((await post({ type: 'PICKED_UP' })).json().status).toBe('SCANNED_TO_VAN');
    expect((await post({ type: 'EN_ROUTE' })).json().status).toBe('EN_ROUTE');
    const delivered = await post({ type: 'DELIVERED', codCollectedQepik: order.codAmountQepik });
    expect(delivered.statusCode).toBe(201);
    expect(delivered.json().status).toBe('DELIVERED');
  });

  it('assigns the order to the successor when called with a rotated-out key in its grace period', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const successor = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    await t.ctx.db.query('UPDATE api_keys SET successor_id = $2, revoked_at = $3 WHERE id = $1', [
      old.id,
      successor.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    t.ctx.keys.invalidateAll();
    const order = (await create(old)).json();
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${order.code}`, headers: admin })).json();
    expect(view.assignedKeyId).toBe(successor.id);
    expect(
      (await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${order.code}`, headers: successor.headers })).statusCode,
    ).toBe(200);
  });
});

describe('POST /v1/partner/sandbox/orders with options', () => {
  it('creates an order in each status from PLACED to PACKED, with the timeline a real order has on reaching it', async () => {
    const k = await key();
    const liveKey = await createKey(t.ctx, (await createPartner(t.ctx)).id);
    expect(SANDBOX_START_STATUSES).toEqual(['PLACED', 'VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED']);
    for (const status of SANDBOX_START_STATUSES) {
      const res = await create(k, { status });
      expect(res.statusCode, res.body).toBe(201);
      const order = res.json();
      expect(order.status).toBe(status);
      // The operator's order walked to the same status has the same timeline.
      const real = await orderFor(t, admin, liveKey.id, status);
      const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${real}`, headers: admin })).json();
      expect(order.timeline.map((e: { status: string }) => e.status)).toEqual(
        view.timeline.map((e: { status: string }) => e.status),
      );
    }
  });

  it('makes an order without customer when asked (customer null for every key, the operator included)', async () => {
    const k = await key();
    const order = (await create(k, { customer: false })).json();
    expect(order.customer).toBeNull();
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${order.code}`, headers: admin })).json();
    expect(view.customer).toBeNull();
    expect((await create(k, { customer: true })).json().customer).not.toBeNull();
  });

  it('answers { items } for count above 1 (distinct orders, all assigned to the key, all options applied) and the order for count 1', async () => {
    const k = await key();
    const res = await create(k, { count: 20, paymentMethod: 'COD', status: 'AT_HUB' });
    expect(res.statusCode, res.body).toBe(201);
    const { items, ...rest } = res.json();
    expect(rest).toEqual({});
    expect(items).toHaveLength(20);
    expect(new Set(items.map((o: { code: string }) => o.code)).size).toBe(20);
    for (const order of items) expect(order).toMatchObject({ status: 'AT_HUB', paymentMethod: 'COD' });
    const list = await t.sandbox.inject({ method: 'GET', url: '/v1/partner/orders?pageSize=50', headers: k.headers });
    expect(list.json().total).toBe(20);
    const one = (await create(k, { count: 1 })).json();
    expect(one).toMatchObject({ code: expect.stringMatching(/^ORD-/), status: 'PACKED' });
  });

  it('answers 400 ERR_VALIDATION naming the field for a count out of range, an unknown or later status, a non-boolean customer', async () => {
    const k = await key();
    const [{ n: before }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    for (const [body, field] of [
      [{ count: 0 }, 'count'],
      [{ count: 21 }, 'count'],
      [{ count: 1.5 }, 'count'],
      [{ count: '3' }, 'count'],
      [{ status: 'SCANNED_TO_VAN' }, 'status'],
      [{ status: 'LOST' }, 'status'],
      [{ customer: 'no' }, 'customer'],
    ] as const) {
      const res = await create(k, body);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details[0].field, JSON.stringify(body)).toBe(field);
    }
    const [{ n: after }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
    expect(after).toBe(before);
  });
});
