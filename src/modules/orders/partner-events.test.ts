import { describe, expect, it } from 'vitest';
import { partnerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import type { ApiKeyScope, OrderStatus } from '../../shared/schemas.js';
import { type Auth, adminStatus, createOrder, orderFor, outboxOf } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
const getApp = () => t;

setUpTestAppWithOperator((app, operator) => {
  t = app;
  admin = operator;
});

function expectFieldError(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}

async function key(
  options: { scopes?: ApiKeyScope[]; receivesAllOrders?: boolean; partnerName?: string } = {},
): Promise<TestKey> {
  const partner = await createPartner(t.ctx, options.partnerName);
  return createKey(t.ctx, partner.id, {
    environment: 'LIVE',
    scopes: options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write'],
    receivesAllOrders: options.receivesAllOrders ?? false,
  });
}

function send(k: TestKey, code: string, body: unknown, headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: { ...k.headers, ...headers },
    payload: body as never,
  });
}

const BODY: Record<string, Record<string, unknown>> = {
  PICKED_UP: { type: 'PICKED_UP' },
  EN_ROUTE: { type: 'EN_ROUTE' },
  DELIVERED: { type: 'DELIVERED' },
  FAILED: { type: 'FAILED', failReason: 'NOT_HOME' },
};

// Reaching each status: the platform path, then partner events for the states after EN_ROUTE.
async function orderAt(k: TestKey, status: OrderStatus, overrides: Record<string, unknown> = {}): Promise<string> {
  const platform: Partial<Record<OrderStatus, OrderStatus>> = {
    PLACED: 'PLACED',
    VENDOR_ACCEPTED: 'VENDOR_ACCEPTED',
    RUNNER_PICKUP: 'RUNNER_PICKUP',
    AT_HUB: 'AT_HUB',
    PACKED: 'PACKED',
    SCANNED_TO_VAN: 'SCANNED_TO_VAN',
    EN_ROUTE: 'EN_ROUTE',
  };
  if (platform[status]) return orderFor(t, admin, k.id, status, overrides);
  if (status === 'CANCELLED') {
    const code = await orderFor(t, admin, k.id, 'PLACED', overrides);
    expect((await adminStatus(t, admin, code, 'CANCELLED')).statusCode).toBe(200);
    return code;
  }
  const code = await orderFor(t, admin, k.id, 'EN_ROUTE', overrides);
  if (status === 'DELIVERED') expect((await send(k, code, BODY.DELIVERED)).statusCode).toBe(201);
  if (status === 'FAILED' || status === 'RETURNED') expect((await send(k, code, BODY.FAILED)).statusCode).toBe(201);
  if (status === 'RETURNED') expect((await adminStatus(t, admin, code, 'RETURNED')).statusCode).toBe(200);
  return code;
}

describe('POST /v1/partner/orders/{code}/events: authentication', () => {
  partnerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/partner/orders/ORD-00000000/events',
    body: { type: 'PICKED_UP' },
    scope: 'logistics:write',
  });
  partnerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/partner/orders/ORD-00000000/events',
    body: { type: 'PICKED_UP' },
    scope: 'logistics:write',
    listener: 'sandbox',
  });

  it('checks the key before the body: 401 for an invalid body or malformed JSON without a key', async () => {
    const invalid = await t.live.inject({ method: 'POST', url: '/v1/partner/orders/ORD-1/events', payload: { type: 'NOPE' } });
    expectError(invalid, 401, 'ERR_API_KEY_INVALID');
    const malformed = await t.live.inject({
      method: 'POST',
      url: '/v1/partner/orders/ORD-1/events',
      headers: { 'content-type': 'application/json' },
      payload: '{"type":',
    });
    expectError(malformed, 401, 'ERR_API_KEY_INVALID');
  });
});

describe('POST /v1/partner/orders/{code}/events: state machine', () => {
  const ALLOWED: Array<[string, OrderStatus, OrderStatus]> = [
    ['PICKED_UP', 'PACKED', 'SCANNED_TO_VAN'],
    ['EN_ROUTE', 'SCANNED_TO_VAN', 'EN_ROUTE'],
    ['EN_ROUTE', 'PACKED', 'EN_ROUTE'],
    ['EN_ROUTE', 'FAILED', 'EN_ROUTE'],
    ['DELIVERED', 'EN_ROUTE', 'DELIVERED'],
    ['FAILED', 'EN_ROUTE', 'FAILED'],
  ];

  for (const [type, from, to] of ALLOWED) {
    it(`${type} moves ${from} → ${to} and answers 201 with the updated order`, async () => {
      const k = await key();
      const code = await orderAt(k, from);
      const before = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
      t.clock.advance(2);
      const res = await send(k, code, BODY[type]);
      expect(res.statusCode).toBe(201);
      const order = res.json();
      expect(order.status).toBe(to);
      expect(order.timeline.slice(0, -1)).toEqual(before.timeline);
      expect(order.timeline.at(-1)).toEqual({ status: to, at: order.updatedAt });
      expect(Date.parse(order.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
      expect(order.customer).toEqual(before.customer);
      expect((await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json()).toEqual(
        order,
      );
    });
  }

  const SOURCES: Record<string, OrderStatus[]> = {
    PICKED_UP: ['PACKED'],
    EN_ROUTE: ['SCANNED_TO_VAN', 'PACKED', 'FAILED'],
    DELIVERED: ['EN_ROUTE'],
    FAILED: ['EN_ROUTE'],
  };
  const STATUSES: OrderStatus[] = [
    'PLACED',
    'VENDOR_ACCEPTED',
    'RUNNER_PICKUP',
    'AT_HUB',
    'PACKED',
    'SCANNED_TO_VAN',
    'EN_ROUTE',
    'DELIVERED',
    'FAILED',
    'RETURNED',
    'CANCELLED',
  ];
  for (const status of STATUSES) {
    const refused = Object.keys(SOURCES).filter((type) => !SOURCES[type].includes(status));
    it(`from ${status} refuses ${refused.join(', ')} with 409 ERR_INVALID_TRANSITION and writes nothing`, async () => {
      const k = await key();
      const code = await orderAt(k, status);
      const outboxBefore = (await outboxOf(t, code)).length;
      for (const type of refused) expectError(await send(k, code, BODY[type]), 409, 'ERR_INVALID_TRANSITION');
      const order = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
      expect(order.status).toBe(status);
      expect(await outboxOf(t, code)).toHaveLength(outboxBefore);
    });
  }

  it('allows a new attempt after one or two failures, refuses the fourth with 409 ERR_DELIVERY_RETRY_LIMIT', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await send(k, code, { type: 'FAILED', failReason: 'UNREACHABLE' })).statusCode).toBe(201);
      if (attempt < 3) expect((await send(k, code, BODY.EN_ROUTE)).statusCode).toBe(201);
    }
    expectError(await send(k, code, BODY.EN_ROUTE), 409, 'ERR_DELIVERY_RETRY_LIMIT');
    const order = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
    expect(order.status).toBe('FAILED');
    expect(order.timeline.filter((e: { status: string }) => e.status === 'FAILED')).toHaveLength(3);
    // The operator can still return it.
    expect((await adminStatus(t, admin, code, 'RETURNED')).statusCode).toBe(200);
  });

  it('counts failures reported by the operator too', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    for (let i = 0; i < 3; i++) {
      expect((await adminStatus(t, admin, code, 'FAILED')).statusCode).toBe(200);
      if (i < 2) expect((await adminStatus(t, admin, code, 'EN_ROUTE')).statusCode).toBe(200);
    }
    expectError(await send(k, code, BODY.EN_ROUTE), 409, 'ERR_DELIVERY_RETRY_LIMIT');
  });

  it('stores the event with actor PARTNER, note partner:<partnerName> and the partner’s own fields', async () => {
    const k = await key({ partnerName: 'Sürət Kuryer' });
    const code = await orderAt(k, 'EN_ROUTE');
    t.clock.advance(30);
    const res = await send(k, code, {
      type: 'FAILED',
      failReason: 'WRONG_ADDRESS',
      note: 'Bina tapılmadı',
      at: '2020-01-01T09:30:00+04:00',
    });
    expect(res.statusCode).toBe(201);
    const [event] = await t.ctx.db.query<Record<string, unknown>>(
      `SELECT e.status, e.actor, e.note, e.partner_note, e.fail_reason, e.cod_collected_qepik, e.partner_reported_at, e.api_key_id, e.at
         FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 ORDER BY e.id DESC LIMIT 1`,
      [code],
    );
    expect(event).toMatchObject({
      status: 'FAILED',
      actor: 'PARTNER',
      note: 'partner:Sürət Kuryer',
      partner_note: 'Bina tapılmadı',
      fail_reason: 'WRONG_ADDRESS',
      cod_collected_qepik: null,
      api_key_id: k.id,
    });
    expect((event.partner_reported_at as Date).toISOString()).toBe('2020-01-01T05:30:00.000Z');
    // Stamped with the service clock, not the partner's `at`.
    expect((event.at as Date).toISOString()).toBe(res.json().updatedAt);
    expect(Math.abs((event.at as Date).getTime() - t.clock.nowMs())).toBeLessThan(5_000);
  });
});

describe('POST /v1/partner/orders/{code}/events: body rules', () => {
  it('requires failReason on FAILED (400 ERR_VALIDATION naming failReason)', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    expectFieldError(await send(k, code, { type: 'FAILED' }), 'failReason');
    expectFieldError(await send(k, code, { type: 'FAILED', failReason: 'LOST' }), 'failReason');
  });

  it('refuses failReason on any other event with 400 ERR_BAD_REQUEST', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) {
      expectError(await send(k, code, { type, failReason: 'NOT_HOME' }), 400, 'ERR_BAD_REQUEST');
    }
  });

  it('refuses codCollectedQepik on a non-DELIVERED event with 400 ERR_BAD_REQUEST', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    for (const body of [
      { type: 'PICKED_UP', codCollectedQepik: 0 },
      { type: 'EN_ROUTE', codCollectedQepik: 100 },
      { type: 'FAILED', failReason: 'REFUSED', codCollectedQepik: 0 },
    ]) {
      expectError(await send(k, code, body), 400, 'ERR_BAD_REQUEST');
    }
  });

  it('refuses codCollectedQepik on a CARD order with 400 ERR_BAD_REQUEST', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE', { paymentMethod: 'CARD', codAmountQepik: 0, paymentStatus: 'PAID' });
    expectError(await send(k, code, { type: 'DELIVERED', codCollectedQepik: 0 }), 400, 'ERR_BAD_REQUEST');
    expect((await send(k, code, { type: 'DELIVERED' })).statusCode).toBe(201);
  });

  it('refuses codCollectedQepik above the COD amount (400 ERR_VALIDATION naming codCollectedQepik)', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    expectFieldError(await send(k, code, { type: 'DELIVERED', codCollectedQepik: 12_501, note: 'tip' }), 'codCollectedQepik');
  });

  it('requires a note when the collected cash differs (400 ERR_COD_VARIANCE_NOTE_REQUIRED)', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    expectError(await send(k, code, { type: 'DELIVERED', codCollectedQepik: 12_000 }), 400, 'ERR_COD_VARIANCE_NOTE_REQUIRED');
    expectError(
      await send(k, code, { type: 'DELIVERED', codCollectedQepik: 12_000, note: '   ' }),
      400,
      'ERR_COD_VARIANCE_NOTE_REQUIRED',
    );
    const res = await send(k, code, { type: 'DELIVERED', codCollectedQepik: 12_000, note: 'customer had no change' });
    expect(res.statusCode).toBe(201);
    const [event] = await t.ctx.db.query<{ cod_collected_qepik: number; partner_note: string }>(
      `SELECT e.cod_collected_qepik, e.partner_note FROM order_events e JOIN orders o ON o.id = e.order_id
        WHERE o.code = $1 ORDER BY e.id DESC LIMIT 1`,
      [code],
    );
    expect(event).toEqual({ cod_collected_qepik: 12_000, partner_note: 'customer had no change' });
  });

  it('accepts the exact COD amount without a note, and DELIVERED without codCollectedQepik', async () => {
    const k = await key();
    const exact = await orderAt(k, 'EN_ROUTE');
    expect((await send(k, exact, { type: 'DELIVERED', codCollectedQepik: 12_500 })).statusCode).toBe(201);
    const plain = await orderAt(k, 'EN_ROUTE');
    expect((await send(k, plain, { type: 'DELIVERED' })).statusCode).toBe(201);
  });

  it.each([
    ['an unknown type', { type: 'ARRIVED' }, 'type'],
    ['no type', {}, 'type'],
    ['codCollectedQepik below 0', { type: 'DELIVERED', codCollectedQepik: -1 }, 'codCollectedQepik'],
    ['codCollectedQepik above 100000000', { type: 'DELIVERED', codCollectedQepik: 100_000_001 }, 'codCollectedQepik'],
    ['a fractional codCollectedQepik', { type: 'DELIVERED', codCollectedQepik: 10.5 }, 'codCollectedQepik'],
    ['codCollectedQepik as a string', { type: 'DELIVERED', codCollectedQepik: '100' }, 'codCollectedQepik'],
    ['a note over 500 characters', { type: 'PICKED_UP', note: 'x'.repeat(501) }, 'note'],
    ['a malformed at', { type: 'PICKED_UP', at: 'now' }, 'at'],
    ['an at PostgreSQL cannot store', { type: 'PICKED_UP', at: '0000-01-01T00:00:00Z' }, 'at'],
    ['an unknown field', { type: 'PICKED_UP', driver: 'Elvin' }, 'driver'],
  ])('refuses %s with 400 ERR_VALIDATION', async (_name, body, field) => {
    const k = await key();
    const code = await orderAt(k, 'PACKED');
    expectFieldError(await send(k, code, body), field);
  });

  it('accepts a note of exactly 500 characters', async () => {
    const k = await key();
    const code = await orderAt(k, 'PACKED');
    expect((await send(k, code, { type: 'PICKED_UP', note: 'x'.repeat(500) })).statusCode).toBe(201);
  });
});

describe('POST /v1/partner/orders/{code}/events: who may write', () => {
  it('answers 404 for an order the key cannot see (other partner, unassigned, unknown)', async () => {
    const k = await key();
    const other = await key();
    const theirs = await orderAt(other, 'PACKED');
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await send(k, theirs, BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
    expectError(await send(k, unassigned, BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
    expectError(await send(k, 'ORD-NOPE', BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
  });

  it('answers 404 for an order of the other environment, even for a receivesAllOrders key', async () => {
    const all = await key({ receivesAllOrders: true });
    const sandboxOrder = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    expectError(await send(all, sandboxOrder, BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
  });

  it('answers 403 ERR_PARTNER_ORDER_NOT_ASSIGNED to a receivesAllOrders key on an order it may only read', async () => {
    const all = await key({ receivesAllOrders: true });
    const other = await key();
    const theirs = await orderAt(other, 'PACKED');
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await send(all, theirs, BODY.PICKED_UP), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
    expectError(await send(all, unassigned, BODY.PICKED_UP), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
    // … but it writes its own orders.
    const own = await orderAt(all, 'PACKED');
    expect((await send(all, own, BODY.PICKED_UP)).statusCode).toBe(201);
  });

  it('lets a rotated-out key in its grace period write the orders moved to its successor', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    const code = await orderFor(t, admin, old.id, 'PACKED');
    const successor = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    await t.ctx.db.query('UPDATE api_keys SET successor_id = $2, revoked_at = $3 WHERE id = $1', [
      old.id,
      successor.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    await t.ctx.db.query('UPDATE orders SET assigned_key_id = $2 WHERE assigned_key_id = $1', [old.id, successor.id]);
    t.ctx.keys.invalidateAll();
    expect((await send(old, code, BODY.PICKED_UP)).statusCode).toBe(201);
    expect((await send(successor, code, BODY.EN_ROUTE)).statusCode).toBe(201);
  });

  it('answers customer only for a key with orders:pii', async () => {
    const k = await key({ scopes: ['orders:read', 'logistics:write'] });
    const code = await orderAt(k, 'PACKED');
    const res = await send(k, code, BODY.PICKED_UP);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ code, status: 'SCANNED_TO_VAN', customer: null });
  });

  it('works with logistics:write alone (no orders:read)', async () => {
    const k = await key({ scopes: ['logistics:write'] });
    const code = await orderAt(k, 'PACKED');
    const res = await send(k, code, BODY.PICKED_UP);
    expect(res.statusCode).toBe(201);
    expect(res.json().customer).toBeNull();
  });
});

describe('POST /v1/partner/orders/{code}/events: check order (400 body → 404 → 403 → 400 order → 409)', () => {
  it('body-only rules come before the order lookup', async () => {
    const k = await key();
    expectFieldError(await send(k, 'ORD-NOPE', { type: 'FAILED' }), 'failReason');
    expectError(await send(k, 'ORD-NOPE', { type: 'PICKED_UP', failReason: 'NOT_HOME' }), 400, 'ERR_BAD_REQUEST');
  });

  it('not assigned (403) comes before order-dependent input rules', async () => {
    const all = await key({ receivesAllOrders: true });
    const other = await key();
    const theirs = await orderAt(other, 'EN_ROUTE');
    expectError(await send(all, theirs, { type: 'DELIVERED', codCollectedQepik: 99_999 }), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
  });

  it('order-dependent input rules come before the transition', async () => {
    const k = await key();
    const packed = await orderAt(k, 'PACKED');
    expectFieldError(await send(k, packed, { type: 'DELIVERED', codCollectedQepik: 99_999 }), 'codCollectedQepik');
    expectError(await send(k, packed, { type: 'DELIVERED', codCollectedQepik: 1 }), 400, 'ERR_COD_VARIANCE_NOTE_REQUIRED');
    expectError(await send(k, packed, { type: 'DELIVERED', codCollectedQepik: 12_500 }), 409, 'ERR_INVALID_TRANSITION');
  });
});

describe('POST /v1/partner/orders/{code}/events: domain events', () => {
  it('writes order.status_changed with previousStatus and the customer, for a key without orders:pii too', async () => {
    const k = await key({ scopes: ['orders:read', 'logistics:write'] });
    const code = await orderAt(k, 'PACKED');
    const before = (await outboxOf(t, code)).length;
    let wakes = 0;
    const onOutbox = () => wakes++;
    t.ctx.events.on('outbox', onOutbox);
    const res = await send(k, code, BODY.PICKED_UP);
    t.ctx.events.off('outbox', onOutbox);
    expect(res.statusCode).toBe(201);
    expect(wakes).toBe(1);
    const rows = (await outboxOf(t, code)).slice(before);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'order.status_changed', environment: 'LIVE', assigned_key_id: k.id });
    expect(rows[0].data).toEqual({
      order: { ...res.json(), customer: expect.objectContaining({ name: 'Aysel Məmmədova' }) },
      previousStatus: 'PACKED',
    });
  });

  it('writes order.status_changed and order.delivered on DELIVERED', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    const before = (await outboxOf(t, code)).length;
    const res = await send(k, code, BODY.DELIVERED);
    expect(res.statusCode).toBe(201);
    const rows = (await outboxOf(t, code)).slice(before);
    expect(rows.map((r) => [r.type, r.data.previousStatus, r.data.order?.status])).toEqual([
      ['order.status_changed', 'EN_ROUTE', 'DELIVERED'],
      ['order.delivered', 'EN_ROUTE', 'DELIVERED'],
    ]);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(2);
  });

  it('writes nothing for refused events', async () => {
    const k = await key();
    const code = await orderAt(k, 'EN_ROUTE');
    const before = (await outboxOf(t, code)).length;
    expectError(await send(k, code, { type: 'DELIVERED', codCollectedQepik: 1 }), 400, 'ERR_COD_VARIANCE_NOTE_REQUIRED');
    expectError(await send(k, code, BODY.PICKED_UP), 409, 'ERR_INVALID_TRANSITION');
    expect(await outboxOf(t, code)).toHaveLength(before);
  });
});

describe('POST /v1/partner/orders/{code}/events: racing events', () => {
  it('of DELIVERED and FAILED racing on one order exactly one wins and the other gets 409', async () => {
    const k = await key();
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) codes.push(await orderAt(k, 'EN_ROUTE'));
    const results = await Promise.all(
      codes.map((code) => Promise.all([send(k, code, BODY.DELIVERED), send(k, code, BODY.FAILED)])),
    );
    for (const [i, pair] of results.entries()) {
      const statuses = pair.map((r) => r.statusCode).sort();
      expect(statuses, codes[i]).toEqual([201, 409]);
      const loser = pair.find((r) => r.statusCode === 409)!;
      expect(loser.json().code).toBe('ERR_INVALID_TRANSITION');
      const partnerEvents = await t.ctx.db.query(
        `SELECT 1 FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 AND e.actor = 'PARTNER'`,
        [codes[i]],
      );
      expect(partnerEvents).toHaveLength(1);
      expect(
        (await outboxOf(t, codes[i])).filter((r) => r.data.previousStatus === 'EN_ROUTE' && r.type === 'order.status_changed'),
      ).toHaveLength(1);
    }
  });

  it('of two identical concurrent events exactly one wins', async () => {
    const k = await key();
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) codes.push(await orderAt(k, 'PACKED'));
    const pairs = await Promise.all(
      codes.map((code) => Promise.all([send(k, code, BODY.PICKED_UP), send(k, code, BODY.PICKED_UP)])),
    );
    for (const pair of pairs) {
      expect(pair.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    }
  });
});

describe('POST /v1/partner/orders/{code}/events: group commit', () => {
  /** The transactions that wrote these orders' latest timeline entries (rows of one transaction share xmin). */
  async function writers(codes: string[]): Promise<number> {
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      `SELECT count(DISTINCT e.xmin::text)::int AS n
         FROM orders o JOIN order_events e ON e.id = o.pv_last_event WHERE o.code = ANY($1::text[])`,
      [codes],
    );
    return n;
  }

  it('writes concurrent events in one transaction, each answered with its own order or its own refusal', async () => {
    const k = await key();
    const other = await key();
    const packed = await Promise.all([1, 2, 3].map(() => orderAt(k, 'PACKED')));
    const enRoute = await orderAt(k, 'EN_ROUTE');
    const delivered = await orderAt(k, 'DELIVERED');
    const foreign = await orderAt(other, 'PACKED');
    const answers = await Promise.all([
      ...packed.map((code) => send(k, code, BODY.PICKED_UP)),
      send(k, enRoute, BODY.DELIVERED),
      send(k, delivered, BODY.EN_ROUTE),
      send(k, foreign, BODY.PICKED_UP),
      send(k, 'ORD-NOSUCH1', BODY.PICKED_UP),
    ]);
    for (const [i, code] of packed.entries()) {
      expect(answers[i].statusCode, answers[i].body).toBe(201);
      expect(answers[i].json()).toMatchObject({ code, status: 'SCANNED_TO_VAN' });
    }
    expect(answers[3].statusCode, answers[3].body).toBe(201);
    expect(answers[3].json()).toMatchObject({ code: enRoute, status: 'DELIVERED' });
    expectError(answers[4], 409, 'ERR_INVALID_TRANSITION');
    expectError(answers[5], 404, 'ERR_NOT_FOUND');
    expectError(answers[6], 404, 'ERR_NOT_FOUND');
    // The four accepted events went to the database together, with their outbox events.
    expect(await writers([...packed, enRoute])).toBe(1);
    for (const code of packed) expect((await outboxOf(t, code)).at(-1)).toMatchObject({ type: 'order.status_changed' });
    expect((await outboxOf(t, enRoute)).slice(-2).map((o) => o.type)).toEqual(['order.status_changed', 'order.delivered']);
    expect((await outboxOf(t, foreign)).at(-1)?.data.order?.status).toBe('PACKED');
  });

  it('tries each event of a failed transaction again alone: one cannot fail the others', async () => {
    const k = await key();
    const codes = await Promise.all([1, 2, 3].map(() => orderAt(k, 'PACKED')));
    // A database error for one event only (a trigger refusing one note), which the rules cannot foresee.
    await t.ctx.db.query(`CREATE FUNCTION test_refuse_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.partner_note = 'refused by the database' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
    await t.ctx.db.query(
      'CREATE TRIGGER test_refuse_note BEFORE INSERT ON order_events FOR EACH ROW EXECUTE FUNCTION test_refuse_note()',
    );
    try {
      const answers = await Promise.all([
        send(k, codes[0], BODY.PICKED_UP),
        send(k, codes[1], { ...BODY.PICKED_UP, note: 'refused by the database' }),
        send(k, codes[2], BODY.PICKED_UP),
      ]);
      expect(answers.map((a) => a.statusCode)).toEqual([201, 500, 201]);
      expectError(answers[1], 500, 'ERR_INTERNAL');
      const read = (code: string) => t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers });
      expect((await read(codes[0])).json().status).toBe('SCANNED_TO_VAN');
      expect((await read(codes[1])).json().status).toBe('PACKED');
      expect((await read(codes[2])).json().status).toBe('SCANNED_TO_VAN');
    } finally {
      await t.ctx.db.query('DROP TRIGGER test_refuse_note ON order_events');
      await t.ctx.db.query('DROP FUNCTION test_refuse_note()');
    }
  });
});
