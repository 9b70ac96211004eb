import { describe, expect, it } from 'vitest';
import { partnerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithWorker } from '../../../test/test-app-per-file.js';
import { waitFor } from '../../../test/wait.js';
import type { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { ORDER_STATUSES, type OrderStatus } from '../../shared/schemas.js';
import { type Auth, adminStatus, createOrder, orderFor } from '../orders/orders.test-helpers.js';
import { platformMovesFrom, platformPathTo } from '../orders/state-machine.js';
import { openRealtime } from '../realtime/realtime.test-helpers.js';
import {
  outboxOfKey,
  platformMove,
  receivedOn,
  sandboxPost,
  sandboxSetup,
  testOrder,
  waitForEvents,
} from './sandbox.test-helpers.js';

let t: TestApp;
let receiver: WebhookReceiver;
let admin: Auth;
const getApp = () => t;
setUpTestAppWithWorker((s) => {
  ({ t, receiver, admin } = s);
});

/** Every platform transition of the state machine (docs/decisions-log.md, 'Orders'), as [from, to]. */
const TRANSITIONS: Array<[OrderStatus, OrderStatus]> = ORDER_STATUSES.flatMap((from) =>
  platformMovesFrom(from).map((to): [OrderStatus, OrderStatus] => [from, to]),
);

/** The pairs the state machine forbids (a sample of each kind: skipping ahead, going back, leaving a final state). */
const FORBIDDEN: Array<[OrderStatus, OrderStatus]> = [
  ['PLACED', 'PACKED'],
  ['RUNNER_PICKUP', 'CANCELLED'],
  ['PACKED', 'DELIVERED'],
  ['EN_ROUTE', 'CANCELLED'],
  ['FAILED', 'DELIVERED'],
  ['DELIVERED', 'RETURNED'],
  ['CANCELLED', 'VENDOR_ACCEPTED'],
  ['PACKED', 'PACKED'],
];

describe('POST /v1/partner/sandbox/orders/{code}/platform-status', () => {
  const url = (code: string) => `/v1/partner/sandbox/orders/${code}/platform-status`;
  partnerAuthContract(getApp, { method: 'POST', url: url('ORD-ANY'), body: { status: 'CANCELLED' }, listener: 'live' });

  it('makes every platform transition of the state machine, writing exactly the events the operator’s move writes, delivered to the key’s webhook', async () => {
    const s = await sandboxSetup(t, receiver);
    const liveKey = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    for (const [from, to] of TRANSITIONS) {
      const order = await testOrder(t, s.key, from);
      const before = (await outboxOfKey(t, s.key.id)).length;
      const res = await platformMove(t, s.key, order.code, to);
      expect(res.statusCode, `${from} → ${to}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ code: order.code, status: to });
      expect(res.json().timeline.at(-1).status).toBe(to);
      const written = (await outboxOfKey(t, s.key.id)).slice(before);

      // The operator's move of the same transition, on an order of its own.
      const twin = await orderFor(t, admin, liveKey.id, 'PLACED');
      for (const step of platformPathTo(from)?.slice(1) ?? [])
        expect((await adminStatus(t, admin, twin, step)).statusCode).toBe(200);
      const [{ n: opBefore }] = await t.ctx.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM outbox WHERE assigned_key_id = $1 AND type NOT LIKE 'payment\\_intent.%'",
        [liveKey.id],
      );
      expect((await adminStatus(t, admin, twin, to)).statusCode).toBe(200);
      const operator = (await outboxOfKey(t, liveKey.id)).slice(opBefore);

      expect(
        written.map((e) => e.type),
        `${from} → ${to}`,
      ).toEqual(operator.map((e) => e.type));
      for (const event of written) {
        expect(event).toMatchObject({
          environment: 'SANDBOX',
          assigned_key_id: s.key.id,
          data: { previousStatus: from, order: { code: order.code, status: to } },
        });
      }
    }
    // Every event of the key's orders reached its webhook, and nothing else did.
    const ids = (await outboxOfKey(t, s.key.id)).map((e) => e.event_id);
    await waitForEvents(receiver, s.path, ids);
    expect(new Set(receivedOn(receiver, s.path).map((e) => e.id))).toEqual(new Set(ids));
  });

  it('emits order.cancelled and order.delivered like the real move, as the key sees the order (no customer without orders:pii)', async () => {
    const s = await sandboxSetup(t, receiver, { scopes: ['orders:read', 'logistics:write', 'webhooks:manage'] });
    const placed = await testOrder(t, s.key, 'PLACED');
    const cancelled = await platformMove(t, s.key, placed.code, 'CANCELLED');
    expect(cancelled.json()).toMatchObject({ status: 'CANCELLED', customer: null });
    const enRoute = await testOrder(t, s.key, 'EN_ROUTE');
    expect((await platformMove(t, s.key, enRoute.code, 'DELIVERED')).json().status).toBe('DELIVERED');
    const ids = (await outboxOfKey(t, s.key.id)).map((e) => e.event_id);
    const got = await waitForEvents(receiver, s.path, ids);
    // Deliveries carry no ordering promise: compare the kinds each order's move sent, as a set.
    const movedTo = (code: string, status: string) =>
      got
        .filter((e) => e.data.order?.code === code && e.data.order.status === status)
        .map((e) => e.type)
        .sort();
    expect(movedTo(placed.code, 'CANCELLED')).toEqual(['order.cancelled', 'order.status_changed']);
    expect(movedTo(enRoute.code, 'DELIVERED')).toEqual(['order.delivered', 'order.status_changed']);
    for (const event of got) expect(event.environment).toBe('sandbox');
    for (const event of got) expect(event.data.order?.customer).toBeNull();
  });

  it('answers 409 ERR_INVALID_TRANSITION where the state machine forbids the move, changing nothing', async () => {
    const s = await sandboxSetup(t, null);
    for (const [from, to] of FORBIDDEN) {
      const order = await testOrder(t, s.key, from);
      const before = (await outboxOfKey(t, s.key.id)).length;
      const res = await platformMove(t, s.key, order.code, to);
      expectError(res, 409, 'ERR_INVALID_TRANSITION');
      expect(res.json().details).toEqual({ from, to });
      expect((await outboxOfKey(t, s.key.id)).length).toBe(before);
    }
  });

  it('answers 400 ERR_VALIDATION naming status for an unknown or missing status, and an unknown field', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PLACED');
    for (const body of [{ status: 'SHIPPED' }, {}, { status: 'CANCELLED', reason: 'x' }]) {
      const res = await sandboxPost(t, s.key, url(order.code), body);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details[0].field).toBe('status' in body && body.status === 'CANCELLED' ? 'reason' : 'status');
    }
  });

  it('answers 404 for an order of another key (same partner or not, receivesAllOrders included) and for an unknown code', async () => {
    const s = await sandboxSetup(t, null);
    const sibling = await sandboxSetup(t, null, { partner: s.partner });
    const stranger = await sandboxSetup(t, null);
    const seesAll = await sandboxSetup(t, null, { receivesAllOrders: true });
    const order = await testOrder(t, s.key, 'PLACED');
    for (const key of [sibling.key, stranger.key, seesAll.key]) {
      expectError(await platformMove(t, key, order.code, 'CANCELLED'), 404, 'ERR_NOT_FOUND');
    }
    expectError(await platformMove(t, s.key, 'ORD-NOSUCH1', 'CANCELLED'), 404, 'ERR_NOT_FOUND');
    // The receivesAllOrders key may read it, never move it.
    expect(
      (await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${order.code}`, headers: seesAll.key.headers }))
        .statusCode,
    ).toBe(200);
    expect((await platformMove(t, s.key, order.code, 'CANCELLED')).json().status).toBe('CANCELLED');
  });

  it('never reaches a live order, even with its code guessed right', async () => {
    const s = await sandboxSetup(t, null);
    const liveKey = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    const live = await orderFor(t, admin, liveKey.id, 'PLACED');
    // Unassigned live orders too.
    const unassigned = (await createOrder(t, admin)).code as string;
    for (const code of [live, unassigned]) {
      const [{ n: before }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
      expectError(await platformMove(t, s.key, code, 'CANCELLED'), 404, 'ERR_NOT_FOUND');
      expectError(await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [code] }), 404, 'ERR_NOT_FOUND');
      const view = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${code}`, headers: admin });
      expect(view.json()).toMatchObject({ status: 'PLACED', environment: 'live', batch: null });
      const [{ n: after }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
      expect(after).toBe(before);
    }
  });

  it('is refused on the live API with 403 ERR_API_KEY_ENVIRONMENT for a sandbox key too, before anything is looked up', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PLACED');
    const res = await sandboxPost(t, s.key, url(order.code), { status: 'CANCELLED' }, 'live');
    expectError(res, 403, 'ERR_API_KEY_ENVIRONMENT');
    const read = await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${order.code}`, headers: s.key.headers });
    expect(read.json().status).toBe('PLACED');
  });

  it('tells the partner’s users over the realtime channel, as the operator’s move does', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PLACED');
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    const socket = await openRealtime(t, s.partner.token);
    const got: Array<{ order: { code: string; status: string } }> = [];
    socket.on('order.updated', (payload) => got.push(payload));
    expect((await platformMove(t, s.key, order.code, 'VENDOR_ACCEPTED')).statusCode).toBe(200);
    await waitFor(() => got.some((m) => m.order.code === order.code && m.order.status === 'VENDOR_ACCEPTED'));
  });
});

describe('POST /v1/partner/sandbox/batches and POST /v1/partner/sandbox/batches/{code}/status', () => {
  partnerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/partner/sandbox/batches',
    body: { orderCodes: ['ORD-ANY'] },
    listener: 'live',
  });
  partnerAuthContract(getApp, {
    method: 'POST',
    url: '/v1/partner/sandbox/batches/B-ANY/status',
    body: { status: 'DISPATCHED' },
    listener: 'live',
  });

  const batchStatus = (s: { key: Parameters<typeof sandboxPost>[1] }, code: string, status: string) =>
    sandboxPost(t, s.key, `/v1/partner/sandbox/batches/${code}/status`, { status });

  it('puts the key’s orders on a van batch and takes it through COMPLETED, emitting batch.completed to the key’s webhook', async () => {
    const s = await sandboxSetup(t, receiver);
    const a = await testOrder(t, s.key, 'PACKED');
    const b = await testOrder(t, s.key, 'PACKED');
    const created = await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [a.code, b.code] });
    expect(created.statusCode, created.body).toBe(201);
    const batch = created.json();
    expect(batch).toEqual({ code: expect.any(String), status: 'OPEN', orderCodes: [a.code, b.code] });
    const read = await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${a.code}`, headers: s.key.headers });
    expect(read.json().batch).toEqual({ code: batch.code, status: 'OPEN' });

    expectError(await batchStatus(s, batch.code, 'COMPLETED'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expect((await batchStatus(s, batch.code, 'DISPATCHED')).json()).toEqual({ ...batch, status: 'DISPATCHED' });
    expect((await batchStatus(s, batch.code, 'COMPLETED')).json()).toEqual({ ...batch, status: 'COMPLETED' });
    expectError(await batchStatus(s, batch.code, 'COMPLETED'), 409, 'ERR_BATCH_INVALID_TRANSITION');

    const [row] = await t.ctx.db.query<{ event_id: string; environment: string; data: unknown }>(
      `SELECT event_id, environment, data FROM outbox WHERE type = 'batch.completed' AND data->'batch'->>'code' = $1`,
      [batch.code],
    );
    expect(row).toMatchObject({ environment: 'SANDBOX', data: { batch: { ...batch, status: 'COMPLETED' } } });
    const got = await waitForEvents(receiver, s.path, [row.event_id]);
    expect(got.find((e) => e.id === row.event_id)).toMatchObject({
      type: 'batch.completed',
      environment: 'sandbox',
      data: { batch: { code: batch.code, status: 'COMPLETED', orderCodes: [a.code, b.code] } },
    });
  });

  it('answers 404 for orders that are not the key’s sandbox orders, naming them, and creates nothing', async () => {
    const s = await sandboxSetup(t, null);
    const other = await sandboxSetup(t, null, { partner: s.partner });
    const mine = await testOrder(t, s.key, 'PACKED');
    const theirs = await testOrder(t, other.key, 'PACKED');
    const liveKey = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    const live = await orderFor(t, admin, liveKey.id, 'PACKED');
    const res = await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [mine.code, theirs.code, live] });
    expectError(res, 404, 'ERR_NOT_FOUND');
    expect(res.json().details).toEqual({ orderCodes: [theirs.code, live] });
    const read = await t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders/${mine.code}`, headers: s.key.headers });
    expect(read.json().batch).toBeNull();
  });

  it('answers 404 for the status of another key’s batch, or of an operator’s batch mixing the key’s orders with others', async () => {
    const s = await sandboxSetup(t, null);
    const other = await sandboxSetup(t, null);
    const theirs = await testOrder(t, other.key, 'PACKED');
    const batch = (await sandboxPost(t, other.key, '/v1/partner/sandbox/batches', { orderCodes: [theirs.code] })).json();
    expectError(await batchStatus(s, batch.code, 'DISPATCHED'), 404, 'ERR_NOT_FOUND');

    const mine = await testOrder(t, s.key, 'PACKED');
    const also = await testOrder(t, other.key, 'PACKED');
    const mixed = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/batches',
      headers: admin,
      payload: { orderCodes: [mine.code, also.code] },
    });
    expect(mixed.statusCode).toBe(201);
    expectError(await batchStatus(s, mixed.json().code, 'DISPATCHED'), 404, 'ERR_NOT_FOUND');
    expectError(await batchStatus(s, 'B-NOSUCH', 'DISPATCHED'), 404, 'ERR_NOT_FOUND');
  });

  it('answers 409 ERR_CONFLICT for an order already on an open batch, as the operator API does', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PACKED');
    expect((await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [order.code] })).statusCode).toBe(201);
    expectError(await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [order.code] }), 409, 'ERR_CONFLICT');
  });

  it('answers 400 ERR_VALIDATION naming the field for bad input', async () => {
    const s = await sandboxSetup(t, null);
    for (const [body, field] of [
      [{ orderCodes: [] }, 'orderCodes'],
      [{}, 'orderCodes'],
      [{ orderCodes: ['A', 'A'] }, 'orderCodes'],
    ] as const) {
      const res = await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', body);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details[0].field).toBe(field);
    }
    const res = await batchStatus(s, 'B-ANY', 'SHIPPED');
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details[0].field).toBe('status');
  });
});
