/**
 * The operator creates zones and orders: POST /v1/admin/zones and POST /v1/admin/orders (the admin view,
 * the optional fields, the input rules and the order.placed event).
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, adminStatus, createOrder, createZone, ISO, orderBody, outboxOf } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

const CODE = /^ORD-[0-9A-HJKMNP-TV-Z]{8}$/;

describe('POST /v1/admin/zones', () => {
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

const postOrder = (payload: unknown) =>
  t.live.inject({ method: 'POST', url: '/v1/admin/orders', headers: admin, payload: payload as never });

describe('POST /v1/admin/orders', () => {
  it('creates an order in PLACED and answers the full admin view', async () => {
    const zone = await createZone(t, admin, { az: 'Şimal', ru: 'Север', en: 'North' });
    const before = t.clock.nowMs();
    const res = await postOrder(orderBody({ zoneId: zone.id, paymentStatus: 'UNPAID' }));
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
    const res = await postOrder({
      environment: 'sandbox',
      paymentMethod: 'CARD',
      totalQepik: 900,
      codAmountQepik: 0,
      items: [{ name: { az: 'a', ru: 'б', en: 'c' }, qty: 1, unitPriceQepik: 900 }],
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
    const res = await postOrder(
      orderBody({ area: null, zoneId: null, timeWindowStart: null, timeWindowEnd: null, customer: null }),
    );
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ area: null, zone: null, timeWindowStart: null, timeWindowEnd: null, customer: null });
  });

  it('keeps a partial customer with nulls for what was not given', async () => {
    const res = await postOrder(orderBody({ customer: { address: { street: 'Təbriz küç. 44' } } }));
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
    const res = await postOrder(orderBody({ paymentMethod: 'CARD', codAmountQepik: 100 }));
    expectFieldError(res, 'codAmountQepik');
  });

  it('refuses a COD order that is not UNPAID (ERR_VALIDATION on paymentStatus): its cash shows on its payment intent', async () => {
    for (const paymentStatus of ['PAID', 'REFUNDED', 'PARTIALLY_REFUNDED'] as const) {
      expectFieldError(await postOrder(orderBody({ paymentMethod: 'COD', paymentStatus })), 'paymentStatus');
    }
    const unpaid = await postOrder(orderBody({ paymentMethod: 'COD', paymentStatus: 'UNPAID' }));
    expect(unpaid.statusCode, unpaid.body).toBe(201);
    expect(unpaid.json().paymentStatus).toBe('UNPAID');
  });

  it('refuses a COD amount above the total', async () => {
    const res = await postOrder(orderBody({ totalQepik: 100, codAmountQepik: 101 }));
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
    const res = await postOrder(orderBody(overrides));
    expectFieldError(res, field);
  });

  it('requires timeWindowEnd to be after timeWindowStart', async () => {
    for (const end of ['2030-05-01T09:00:00Z', '2030-05-01T10:00:00Z']) {
      const res = await postOrder(orderBody({ timeWindowStart: '2030-05-01T10:00:00Z', timeWindowEnd: end }));
      expectFieldError(res, 'timeWindowEnd');
    }
  });

  it('answers an unknown zoneId with 404 ERR_NOT_FOUND', async () => {
    const res = await postOrder(orderBody({ zoneId: '00000000-0000-4000-8000-000000000000' }));
    expectError(res, 404, 'ERR_NOT_FOUND');
  });

  it('gives every order a distinct code', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 10; i++) codes.add((await createOrder(t, admin)).code);
    expect(codes.size).toBe(10);
  });
});
