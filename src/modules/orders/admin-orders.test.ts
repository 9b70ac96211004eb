import { describe, expect, it } from 'vitest';
import { bearerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { ORDER_STATUSES, type OrderStatus } from '../../shared/schemas.js';
import { type Auth, adminStatus, advanceTo, assign, createOrder, ISO, orderBody, outboxOf } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
const getApp = () => t;

setUpTestAppWithOperator((app, operator) => {
  t = app;
  admin = operator;
});

const CODE = /^ORD-[0-9A-HJKMNP-TV-Z]{8}$/;

function expectFieldError(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  const details = (res.json() as { details: Array<{ field: string; messages: string[] }> }).details;
  expect(details.map((d) => d.field)).toContain(field);
  for (const d of details) expect(d.messages.length).toBeGreaterThan(0);
}

async function liveKey() {
  const partner = await createPartner(t.ctx);
  return createKey(t.ctx, partner.id, { environment: 'LIVE' });
}

describe('POST /v1/admin/zones', () => {
  bearerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/admin/zones',
    body: { name: { az: 'Mərkəz', ru: 'Центр', en: 'Centre' } },
    role: 'ADMIN',
  });

  it('creates a zone and answers 201 { id, name }', async () => {
    const name = { az: 'Mərkəz', ru: 'Центр', en: 'Centre' };
    const res = await t.live.inject({ method: 'POST', url: '/v1/admin/zones', headers: admin, payload: { name } });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name });
  });

  it('requires all three languages', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/zones',
      headers: admin,
      payload: { name: { az: 'Mərkəz', ru: 'Центр' } },
    });
    expectFieldError(res, 'name.en');
  });
});

describe('POST /v1/admin/orders', () => {
  bearerAuthContract(getApp, { method: 'POST', url: '/v1/admin/orders', body: orderBody(), role: 'ADMIN' });

  it('creates an order in PLACED and answers the full admin view', async () => {
    const zone = (
      await t.live.inject({
        method: 'POST',
        url: '/v1/admin/zones',
        headers: admin,
        payload: { name: { az: 'Şimal', ru: 'Север', en: 'North' } },
      })
    ).json();
    const before = t.clock.nowMs();
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ zoneId: zone.id, paymentStatus: 'UNPAID' }),
    });
    expect(res.statusCode).toBe(201);
    const order = res.json();
    expect(order).toEqual({
      code: expect.stringMatching(CODE),
      status: 'PLACED',
      paymentMethod: 'COD',
      paymentStatus: 'UNPAID',
      totalQepik: 12_500,
      codAmountQepik: 12_500,
      area: 'Nəsimi',
      zone: { id: zone.id, name: { az: 'Şimal', ru: 'Север', en: 'North' } },
      timeWindowStart: '2030-05-01T10:00:00.000Z',
      timeWindowEnd: '2030-05-01T12:00:00.000Z',
      items: [
        { name: { az: 'Çay dəsti', ru: 'Чайный сервиз', en: 'Tea set' }, qty: 2, unitPriceQepik: 5_000 },
        { name: { az: 'Stəkan', ru: 'Стакан', en: 'Glass' }, qty: 5, unitPriceQepik: 500 },
      ],
      timeline: [{ status: 'PLACED', at: expect.stringMatching(ISO) }],
      customer: {
        name: 'Aysel Məmmədova',
        phone: '+994501234567',
        address: { street: 'Nizami küç. 67', details: 'Mənzil 12', lat: 40.3725, lng: 49.8463 },
      },
      batch: null,
      partnerAssignedAt: null,
      updatedAt: expect.stringMatching(ISO),
      environment: 'live',
      assignedKeyId: null,
    });
    expect(Date.parse(order.updatedAt)).toBeGreaterThanOrEqual(before);
    expect(order.timeline[0].at).toBe(order.updatedAt);
  });

  it('fills absent optional fields with null and defaults paymentStatus to UNPAID', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: {
        environment: 'sandbox',
        paymentMethod: 'CARD',
        totalQepik: 900,
        codAmountQepik: 0,
        items: [{ name: { az: 'a', ru: 'б', en: 'c' }, qty: 1, unitPriceQepik: 900 }],
      },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      environment: 'sandbox',
      paymentMethod: 'CARD',
      paymentStatus: 'UNPAID',
      codAmountQepik: 0,
      area: null,
      zone: null,
      timeWindowStart: null,
      timeWindowEnd: null,
      customer: null,
      batch: null,
    });
  });

  it('accepts explicit nulls for the optional fields', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ area: null, zoneId: null, timeWindowStart: null, timeWindowEnd: null, customer: null }),
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ area: null, zone: null, timeWindowStart: null, timeWindowEnd: null, customer: null });
  });

  it('keeps a partial customer with nulls for what was not given', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ customer: { address: { street: 'Təbriz küç. 44' } } }),
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().customer).toEqual({
      name: null,
      phone: null,
      address: { street: 'Təbriz küç. 44', details: null, lat: null, lng: null },
    });
  });

  it('writes exactly one order.placed outbox event with the customer filled', async () => {
    const order = await createOrder(t, admin);
    const rows = await outboxOf(t, order.code);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'order.placed', environment: 'LIVE', assigned_key_id: null });
    expect(rows[0].event_id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    const { environment: _e, assignedKeyId: _k, ...partnerView } = order;
    expect(rows[0].data).toEqual({ order: partnerView });
  });

  it.runIf(process.env.DATABASE_URL)(
    'wakes workers in other processes with NOTIFY partner_api_outbox on commit only',
    async () => {
      const listener = await t.ctx.db.connect();
      const heard: string[] = [];
      let onHeard = () => {};
      listener.on('notification', (n) => {
        heard.push(n.payload ?? '');
        onHeard();
      });
      const next = (count: number) =>
        new Promise<void>((resolve) => {
          onHeard = () => heard.length >= count && resolve();
          onHeard();
        });
      await listener.query('LISTEN partner_api_outbox');
      try {
        const order = await createOrder(t, admin);
        await next(1);
        expect(heard).toEqual(['']);
        // A refused change rolls back and notifies nothing: notifications arrive in commit order, so a
        // marker sent after it arriving alone proves it.
        expectError(await adminStatus(t, admin, order.code, 'DELIVERED'), 409, 'ERR_INVALID_TRANSITION');
        await t.ctx.db.query(`SELECT pg_notify('partner_api_outbox', 'marker')`);
        await next(2);
        expect(heard).toEqual(['', 'marker']);
      } finally {
        await listener.query('UNLISTEN *');
        listener.release();
      }
    },
  );

  it('refuses a CARD order with a COD amount (ERR_VALIDATION on codAmountQepik)', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ paymentMethod: 'CARD', codAmountQepik: 100 }),
    });
    expectFieldError(res, 'codAmountQepik');
  });

  it('refuses a COD amount above the total', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ totalQepik: 100, codAmountQepik: 101 }),
    });
    expectFieldError(res, 'codAmountQepik');
  });

  it.each([
    ['no items', { items: [] }, 'items'],
    ['qty 0', { items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: 0, unitPriceQepik: 1 }] }, 'items.0.qty'],
    ['fractional qty', { items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: 1.5, unitPriceQepik: 1 }] }, 'items.0.qty'],
    [
      'negative price',
      { items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: 1, unitPriceQepik: -1 }] },
      'items.0.unitPriceQepik',
    ],
    ['fractional money', { totalQepik: 10.5 }, 'totalQepik'],
    ['money as a string', { totalQepik: '100' }, 'totalQepik'],
    ['negative COD', { codAmountQepik: -1 }, 'codAmountQepik'],
    ['a name without en', { items: [{ name: { az: 'a', ru: 'b' }, qty: 1, unitPriceQepik: 1 }] }, 'items.0.name.en'],
    ['an upper-case environment', { environment: 'LIVE' }, 'environment'],
    ['an unknown payment method', { paymentMethod: 'CASH' }, 'paymentMethod'],
    ['an unknown payment status', { paymentStatus: 'DONE' }, 'paymentStatus'],
    ['a phone that is not +994', { customer: { phone: '+15551234567', address: { street: 'x' } } }, 'customer.phone'],
    ['a customer without address', { customer: { name: 'A' } }, 'customer.address'],
    ['latitude out of range', { customer: { address: { street: 'x', lat: 91 } } }, 'customer.address.lat'],
    ['a malformed zoneId', { zoneId: 'zone-1' }, 'zoneId'],
    ['a malformed time window', { timeWindowStart: 'tomorrow' }, 'timeWindowStart'],
    ['an unknown field', { priority: 'high' }, 'priority'],
  ])('refuses %s with ERR_VALIDATION naming the field', async (_name, overrides, field) => {
    const res = await t.live.inject({ method: 'POST', url: '/v1/admin/orders', headers: admin, payload: orderBody(overrides) });
    expectFieldError(res, field);
  });

  it('requires timeWindowEnd to be after timeWindowStart', async () => {
    for (const end of ['2030-05-01T09:00:00Z', '2030-05-01T10:00:00Z']) {
      const res = await t.live.inject({
        method: 'POST',
        url: '/v1/admin/orders',
        headers: admin,
        payload: orderBody({ timeWindowStart: '2030-05-01T10:00:00Z', timeWindowEnd: end }),
      });
      expectFieldError(res, 'timeWindowEnd');
    }
  });

  it('answers an unknown zoneId with 404 ERR_NOT_FOUND', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin,
      payload: orderBody({ zoneId: '00000000-0000-4000-8000-000000000000' }),
    });
    expectError(res, 404, 'ERR_NOT_FOUND');
  });

  it('gives every order a distinct code', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 10; i++) codes.add((await createOrder(t, admin)).code);
    expect(codes.size).toBe(10);
  });
});

describe('GET /v1/admin/orders/{code}', () => {
  bearerAuthContract(getApp, { method: 'GET', url: '/v1/admin/orders/ORD-00000000', role: 'ADMIN' });

  it('answers the admin view of the order', async () => {
    const created = await createOrder(t, admin);
    const res = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${created.code}`, headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it('answers an unknown code with 404 ERR_NOT_FOUND', async () => {
    expectError(await t.live.inject({ method: 'GET', url: '/v1/admin/orders/ORD-NOPE', headers: admin }), 404, 'ERR_NOT_FOUND');
  });
});

describe('POST /v1/admin/orders/{code}/assign', () => {
  bearerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/admin/orders/ORD-00000000/assign',
    body: { apiKeyId: '00000000-0000-4000-8000-000000000000' },
    role: 'ADMIN',
  });

  it('assigns the order, sets partnerAssignedAt and writes order.assigned_to_partner', async () => {
    const key = await liveKey();
    const order = await createOrder(t, admin);
    t.clock.advance(5);
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${order.code}/assign`,
      headers: admin,
      payload: { apiKeyId: key.id },
    });
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view).toMatchObject({
      code: order.code,
      assignedKeyId: key.id,
      status: 'PLACED',
      partnerAssignedAt: expect.stringMatching(ISO),
    });
    expect(view.updatedAt).toBe(view.partnerAssignedAt);
    expect(Date.parse(view.updatedAt)).toBeGreaterThan(Date.parse(order.updatedAt));

    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
    expect(rows[1]).toMatchObject({ environment: 'LIVE', assigned_key_id: key.id });
    const { environment: _e, assignedKeyId: _k, ...partnerView } = view;
    expect(rows[1].data).toEqual({ order: partnerView });
  });

  it('moves an order to another key, and assigning the same key again changes nothing', async () => {
    const first = await liveKey();
    const second = await liveKey();
    const order = await createOrder(t, admin);
    const a = await assign(t, admin, order.code, first.id);
    const again = await assign(t, admin, order.code, first.id);
    expect(again).toEqual(a);
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
    const b = await assign(t, admin, order.code, second.id);
    expect(b.assignedKeyId).toBe(second.id);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => [r.type, r.assigned_key_id])).toEqual([
      ['order.placed', null],
      ['order.assigned_to_partner', first.id],
      ['order.assigned_to_partner', second.id],
    ]);
  });

  it('answers a key of the other environment with 409 ERR_CONFLICT', async () => {
    const partner = await createPartner(t.ctx);
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const order = await createOrder(t, admin);
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${order.code}/assign`,
      headers: admin,
      payload: { apiKeyId: sandboxKey.id },
    });
    expectError(res, 409, 'ERR_CONFLICT');
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed']);
  });

  it('answers a revoked key, or one rotated out and still in its grace period, with 409 ERR_CONFLICT', async () => {
    const order = await createOrder(t, admin);
    const revoked = await liveKey();
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.id, t.clock.now()]);
    const rotating = await liveKey();
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [
      rotating.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    for (const key of [revoked, rotating]) {
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/admin/orders/${order.code}/assign`,
        headers: admin,
        payload: { apiKeyId: key.id },
      });
      expectError(res, 409, 'ERR_CONFLICT');
    }
  });

  it('answers an unknown key or an unknown order with 404 ERR_NOT_FOUND', async () => {
    const order = await createOrder(t, admin);
    const key = await liveKey();
    expectError(
      await t.live.inject({
        method: 'POST',
        url: `/v1/admin/orders/${order.code}/assign`,
        headers: admin,
        payload: { apiKeyId: '00000000-0000-4000-8000-000000000000' },
      }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(
      await t.live.inject({
        method: 'POST',
        url: '/v1/admin/orders/ORD-NOPE/assign',
        headers: admin,
        payload: { apiKeyId: key.id },
      }),
      404,
      'ERR_NOT_FOUND',
    );
  });

  it('answers a malformed apiKeyId with 400 ERR_VALIDATION', async () => {
    const order = await createOrder(t, admin);
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${order.code}/assign`,
      headers: admin,
      payload: { apiKeyId: 'key-1' },
    });
    expectFieldError(res, 'apiKeyId');
  });

  it('refuses to assign a finished order with 409 ERR_CONFLICT', async () => {
    const key = await liveKey();
    const order = await createOrder(t, admin);
    expect((await adminStatus(t, admin, order.code, 'CANCELLED')).statusCode).toBe(200);
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${order.code}/assign`,
      headers: admin,
      payload: { apiKeyId: key.id },
    });
    expectError(res, 409, 'ERR_CONFLICT');
  });
});

// How to reach each status through platform transitions only.
const PATH_TO: Record<OrderStatus, OrderStatus[]> = {
  PLACED: [],
  VENDOR_ACCEPTED: ['VENDOR_ACCEPTED'],
  RUNNER_PICKUP: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP'],
  AT_HUB: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB'],
  PACKED: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'],
  SCANNED_TO_VAN: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN'],
  EN_ROUTE: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE'],
  DELIVERED: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE', 'DELIVERED'],
  FAILED: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE', 'FAILED'],
  RETURNED: ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE', 'FAILED', 'RETURNED'],
  CANCELLED: ['CANCELLED'],
};

const ALLOWED: Record<OrderStatus, OrderStatus[]> = {
  PLACED: ['VENDOR_ACCEPTED', 'CANCELLED'],
  VENDOR_ACCEPTED: ['RUNNER_PICKUP', 'CANCELLED'],
  RUNNER_PICKUP: ['AT_HUB'],
  AT_HUB: ['PACKED'],
  PACKED: ['SCANNED_TO_VAN', 'CANCELLED'],
  SCANNED_TO_VAN: ['EN_ROUTE'],
  EN_ROUTE: ['DELIVERED', 'FAILED'],
  FAILED: ['EN_ROUTE', 'RETURNED'],
  DELIVERED: [],
  RETURNED: [],
  CANCELLED: [],
};

async function orderAt(status: OrderStatus): Promise<string> {
  const order = await createOrder(t, admin);
  for (const step of PATH_TO[status]) expect((await adminStatus(t, admin, order.code, step)).statusCode).toBe(200);
  return order.code;
}

describe('POST /v1/admin/orders/{code}/status', () => {
  bearerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/admin/orders/ORD-00000000/status',
    body: { status: 'VENDOR_ACCEPTED' },
    role: 'ADMIN',
  });

  for (const from of ORDER_STATUSES) {
    it(`from ${from} allows exactly ${ALLOWED[from].join(', ') || 'nothing (final)'}`, async () => {
      const code = await orderAt(from);
      for (const to of ORDER_STATUSES) {
        if (ALLOWED[from].includes(to)) continue;
        const res = await adminStatus(t, admin, code, to);
        expectError(res, 409, 'ERR_INVALID_TRANSITION');
      }
      for (const to of ALLOWED[from]) {
        const fresh = await orderAt(from);
        const res = await adminStatus(t, admin, fresh, to);
        expect(res.statusCode, `${from} → ${to}`).toBe(200);
        expect(res.json().status).toBe(to);
      }
    });
  }

  it('appends the timeline and answers the admin view', async () => {
    const key = await liveKey();
    const order = await createOrder(t, admin);
    await assign(t, admin, order.code, key.id);
    const res = await adminStatus(t, admin, order.code, 'VENDOR_ACCEPTED', 'vendor confirmed by phone');
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view).toMatchObject({ code: order.code, status: 'VENDOR_ACCEPTED', environment: 'live', assignedKeyId: key.id });
    expect(view.timeline.map((e: { status: string }) => e.status)).toEqual(['PLACED', 'VENDOR_ACCEPTED']);
    const [event] = await t.ctx.db.query<{ actor: string; note: string }>(
      `SELECT e.actor, e.note FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 ORDER BY e.id DESC LIMIT 1`,
      [order.code],
    );
    expect(event).toEqual({ actor: 'ADMIN', note: 'vendor confirmed by phone' });
  });

  it('writes order.status_changed with previousStatus, plus order.delivered on DELIVERED', async () => {
    const key = await liveKey();
    const order = await createOrder(t, admin);
    await assign(t, admin, order.code, key.id);
    await advanceTo(t, admin, order.code, 'EN_ROUTE');
    const res = await adminStatus(t, admin, order.code, 'DELIVERED');
    expect(res.statusCode).toBe(200);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => r.type)).toEqual([
      'order.placed',
      'order.assigned_to_partner',
      ...['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE'].map(() => 'order.status_changed'),
      'order.status_changed',
      'order.delivered',
    ]);
    const last = rows.slice(-2);
    for (const row of last) {
      expect(row).toMatchObject({ environment: 'LIVE', assigned_key_id: key.id });
      expect(row.data.previousStatus).toBe('EN_ROUTE');
      expect(row.data.order).toMatchObject({ code: order.code, status: 'DELIVERED' });
      expect(row.data.order?.customer).toMatchObject({ name: 'Aysel Məmmədova' });
    }
    expect(rows[2].data.previousStatus).toBe('PLACED');
    expect(rows[2].data.order?.status).toBe('VENDOR_ACCEPTED');
  });

  it('writes order.status_changed and order.cancelled on CANCELLED', async () => {
    const order = await createOrder(t, admin);
    expect((await adminStatus(t, admin, order.code, 'CANCELLED')).statusCode).toBe(200);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => [r.type, r.data.previousStatus ?? null])).toEqual([
      ['order.placed', null],
      ['order.status_changed', 'PLACED'],
      ['order.cancelled', 'PLACED'],
    ]);
  });

  it('writes nothing for a refused transition', async () => {
    const order = await createOrder(t, admin);
    expectError(await adminStatus(t, admin, order.code, 'DELIVERED'), 409, 'ERR_INVALID_TRANSITION');
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed']);
  });

  it('lets the operator send an order out again after three failed attempts', async () => {
    const code = await orderAt('EN_ROUTE');
    for (let i = 0; i < 3; i++) {
      expect((await adminStatus(t, admin, code, 'FAILED')).statusCode).toBe(200);
      expect((await adminStatus(t, admin, code, 'EN_ROUTE')).statusCode).toBe(200);
    }
  });

  it('refuses an unknown status value and answers an unknown order with 404', async () => {
    const order = await createOrder(t, admin);
    expectFieldError(await adminStatus(t, admin, order.code, 'SHIPPED' as OrderStatus), 'status');
    expectError(await adminStatus(t, admin, 'ORD-NOPE', 'VENDOR_ACCEPTED'), 404, 'ERR_NOT_FOUND');
  });
});

async function createBatch(orderCodes: string[]) {
  return t.live.inject({ method: 'POST', url: '/v1/admin/batches', headers: admin, payload: { orderCodes } });
}
async function batchStatus(code: string, status: string) {
  return t.live.inject({ method: 'POST', url: `/v1/admin/batches/${code}/status`, headers: admin, payload: { status } });
}

describe('POST /v1/admin/batches', () => {
  bearerAuthContract(getApp, { method: 'POST', url: '/v1/admin/batches', body: { orderCodes: ['ORD-00000000'] }, role: 'ADMIN' });

  it('creates an OPEN batch with the orders in the listed order, visible on each order', async () => {
    const a = await createOrder(t, admin);
    const b = await createOrder(t, admin);
    const res = await createBatch([b.code, a.code]);
    expect(res.statusCode).toBe(201);
    const batch = res.json();
    expect(batch).toEqual({
      code: expect.stringMatching(/^BAT-[0-9A-HJKMNP-TV-Z]{8}$/),
      status: 'OPEN',
      orderCodes: [b.code, a.code],
    });
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${a.code}`, headers: admin })).json();
    expect(view.batch).toEqual({ code: batch.code, status: 'OPEN' });
    expect(Date.parse(view.updatedAt)).toBeGreaterThanOrEqual(Date.parse(a.updatedAt));
  });

  it('answers unknown order codes with 404 ERR_NOT_FOUND naming them', async () => {
    const a = await createOrder(t, admin);
    const res = await createBatch([a.code, 'ORD-NOPE']);
    expectError(res, 404, 'ERR_NOT_FOUND');
    expect(res.json().details).toEqual({ orderCodes: ['ORD-NOPE'] });
  });

  it('answers an order already on an OPEN or DISPATCHED batch with 409 ERR_CONFLICT', async () => {
    const a = await createOrder(t, admin);
    const first = (await createBatch([a.code])).json();
    expectError(await createBatch([a.code]), 409, 'ERR_CONFLICT');
    expect((await batchStatus(first.code, 'DISPATCHED')).statusCode).toBe(200);
    expectError(await createBatch([a.code]), 409, 'ERR_CONFLICT');
    expect((await batchStatus(first.code, 'COMPLETED')).statusCode).toBe(200);
    const again = await createBatch([a.code]);
    expect(again.statusCode).toBe(201);
  });

  it('answers orders of two environments with 409 ERR_CONFLICT', async () => {
    const live = await createOrder(t, admin);
    const sandbox = await createOrder(t, admin, { environment: 'sandbox' });
    expectError(await createBatch([live.code, sandbox.code]), 409, 'ERR_CONFLICT');
  });

  it('refuses an empty list, duplicates and unknown fields with ERR_VALIDATION', async () => {
    const a = await createOrder(t, admin);
    expectFieldError(await createBatch([]), 'orderCodes');
    expectFieldError(await createBatch([a.code, a.code]), 'orderCodes');
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/batches',
      headers: admin,
      payload: { orderCodes: [a.code], driver: 'x' },
    });
    expectFieldError(res, 'driver');
  });
});

describe('POST /v1/admin/batches/{code}/status', () => {
  bearerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/admin/batches/BAT-00000000/status',
    body: { status: 'DISPATCHED' },
    role: 'ADMIN',
  });

  it('moves OPEN → DISPATCHED → COMPLETED, and completing writes batch.completed', async () => {
    const key = await liveKey();
    const a = await createOrder(t, admin);
    await assign(t, admin, a.code, key.id);
    const b = await createOrder(t, admin);
    const batch = (await createBatch([a.code, b.code])).json();

    const dispatched = await batchStatus(batch.code, 'DISPATCHED');
    expect(dispatched.statusCode).toBe(200);
    expect(dispatched.json()).toEqual({ code: batch.code, status: 'DISPATCHED', orderCodes: [a.code, b.code] });
    expect(
      await t.ctx.db.query('SELECT 1 FROM outbox WHERE type = $1 AND data->$2->>$3 = $4', [
        'batch.completed',
        'batch',
        'code',
        batch.code,
      ]),
    ).toHaveLength(0);

    t.clock.advance(1);
    const completed = await batchStatus(batch.code, 'COMPLETED');
    expect(completed.statusCode).toBe(200);
    expect(completed.json()).toEqual({ code: batch.code, status: 'COMPLETED', orderCodes: [a.code, b.code] });

    const rows = await t.ctx.db.query<{
      type: string;
      environment: string;
      order_id: null;
      assigned_key_id: null;
      data: unknown;
    }>(
      `SELECT type, environment, order_id, assigned_key_id, data FROM outbox WHERE type = 'batch.completed' AND data->'batch'->>'code' = $1`,
      [batch.code],
    );
    expect(rows).toEqual([
      {
        type: 'batch.completed',
        environment: 'LIVE',
        order_id: null,
        assigned_key_id: null,
        data: { batch: { code: batch.code, status: 'COMPLETED', orderCodes: [a.code, b.code] } },
      },
    ]);
    // The batch status is part of each order's view, so updatedAt moves with it.
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${a.code}`, headers: admin })).json();
    expect(view.batch).toEqual({ code: batch.code, status: 'COMPLETED' });
    expect(Date.parse(view.updatedAt)).toBeGreaterThanOrEqual(t.clock.nowMs() - 5_000);
    // No order status event comes from a batch change.
    expect((await outboxOf(t, a.code)).map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
  });

  it('refuses every other move with 409 ERR_BATCH_INVALID_TRANSITION', async () => {
    const a = await createOrder(t, admin);
    const batch = (await createBatch([a.code])).json();
    expectError(await batchStatus(batch.code, 'COMPLETED'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expectError(await batchStatus(batch.code, 'OPEN'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expect((await batchStatus(batch.code, 'DISPATCHED')).statusCode).toBe(200);
    expectError(await batchStatus(batch.code, 'OPEN'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expectError(await batchStatus(batch.code, 'DISPATCHED'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expect((await batchStatus(batch.code, 'COMPLETED')).statusCode).toBe(200);
    for (const s of ['OPEN', 'DISPATCHED', 'COMPLETED']) {
      expectError(await batchStatus(batch.code, s), 409, 'ERR_BATCH_INVALID_TRANSITION');
    }
  });

  it('answers an unknown batch with 404 and an unknown status with 400', async () => {
    expectError(await batchStatus('BAT-NOPE', 'DISPATCHED'), 404, 'ERR_NOT_FOUND');
    const a = await createOrder(t, admin);
    const batch = (await createBatch([a.code])).json();
    expectFieldError(await batchStatus(batch.code, 'LOST'), 'status');
  });
});
