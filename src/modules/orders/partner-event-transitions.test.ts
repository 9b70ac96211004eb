/**
 * POST /v1/partner/orders/{code}/events moves an order: the key is checked before the body, each event
 * moves exactly the statuses docs/decisions-log.md, 'Orders' lists, and each move writes its domain events.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { ORDER_STATUSES, type OrderStatus } from '../../shared/schemas.js';
import { type Auth, adminStatus, outboxOf, partnerKey } from './orders.test-helpers.js';
import { EVENT_BODY, orderAtWithEvents, sendEvent } from './partner-events.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('POST /v1/partner/orders/{code}/events: authentication', () => {
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
      const k = await partnerKey(t);
      const code = await orderAtWithEvents(t, admin, k, from);
      const before = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
      t.clock.advance(2);
      const res = await sendEvent(t, k, code, EVENT_BODY[type]);
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

  /** The statuses each event type may start from, as listed above. */
  const SOURCES: Record<string, OrderStatus[]> = {};
  for (const [type, from] of ALLOWED) SOURCES[type] = [...(SOURCES[type] ?? []), from];
  for (const status of ORDER_STATUSES) {
    const refused = Object.keys(SOURCES).filter((type) => !SOURCES[type].includes(status));
    it(`from ${status} refuses ${refused.join(', ')} with 409 ERR_INVALID_TRANSITION and writes nothing`, async () => {
      const k = await partnerKey(t);
      const code = await orderAtWithEvents(t, admin, k, status);
      const outboxBefore = (await outboxOf(t, code)).length;
      for (const type of refused) expectError(await sendEvent(t, k, code, EVENT_BODY[type]), 409, 'ERR_INVALID_TRANSITION');
      const order = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
      expect(order.status).toBe(status);
      expect(await outboxOf(t, code)).toHaveLength(outboxBefore);
    });
  }

  it('allows a new attempt after one or two failures, refuses the fourth with 409 ERR_DELIVERY_RETRY_LIMIT', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await sendEvent(t, k, code, { type: 'FAILED', failReason: 'UNREACHABLE' })).statusCode).toBe(201);
      if (attempt < 3) expect((await sendEvent(t, k, code, EVENT_BODY.EN_ROUTE)).statusCode).toBe(201);
    }
    expectError(await sendEvent(t, k, code, EVENT_BODY.EN_ROUTE), 409, 'ERR_DELIVERY_RETRY_LIMIT');
    const order = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers })).json();
    expect(order.status).toBe('FAILED');
    expect(order.timeline.filter((e: { status: string }) => e.status === 'FAILED')).toHaveLength(3);
    // The operator can still return it.
    expect((await adminStatus(t, admin, code, 'RETURNED')).statusCode).toBe(200);
  });

  it('counts failures reported by the operator too', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    for (let i = 0; i < 3; i++) {
      expect((await adminStatus(t, admin, code, 'FAILED')).statusCode).toBe(200);
      if (i < 2) expect((await adminStatus(t, admin, code, 'EN_ROUTE')).statusCode).toBe(200);
    }
    expectError(await sendEvent(t, k, code, EVENT_BODY.EN_ROUTE), 409, 'ERR_DELIVERY_RETRY_LIMIT');
  });

  it('stores the event with actor PARTNER, note partner:<partnerName> and the partner’s own fields', async () => {
    const k = await partnerKey(t, { partnerName: 'Sürət Kuryer' });
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    t.clock.advance(30);
    const res = await sendEvent(t, k, code, {
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

describe('POST /v1/partner/orders/{code}/events: domain events', () => {
  it('writes order.status_changed with previousStatus and the customer, for a key without orders:pii too', async () => {
    const k = await partnerKey(t, { scopes: ['orders:read', 'logistics:write'] });
    const code = await orderAtWithEvents(t, admin, k, 'PACKED');
    const before = (await outboxOf(t, code)).length;
    let wakes = 0;
    const onOutbox = () => wakes++;
    t.ctx.events.on('outbox', onOutbox);
    const res = await sendEvent(t, k, code, EVENT_BODY.PICKED_UP);
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
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    const before = (await outboxOf(t, code)).length;
    const res = await sendEvent(t, k, code, EVENT_BODY.DELIVERED);
    expect(res.statusCode).toBe(201);
    const rows = (await outboxOf(t, code)).slice(before);
    expect(rows.map((r) => [r.type, r.data.previousStatus, r.data.order?.status])).toEqual([
      ['order.status_changed', 'EN_ROUTE', 'DELIVERED'],
      ['order.delivered', 'EN_ROUTE', 'DELIVERED'],
    ]);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(2);
  });

  it('writes nothing for refused events', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    const before = (await outboxOf(t, code)).length;
    expectError(await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 1 }), 400, 'ERR_COD_VARIANCE_NOTE_REQUIRED');
    expectError(await sendEvent(t, k, code, EVENT_BODY.PICKED_UP), 409, 'ERR_INVALID_TRANSITION');
    expect(await outboxOf(t, code)).toHaveLength(before);
  });
});
