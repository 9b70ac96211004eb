/**
 * The delivery engine end to end: events produced through the operator API (or appended to the outbox
 * as a producer does), fanned out by a real worker, POSTed to a real local receiver, verified there.
 */
import Stripe from 'stripe';
import Value from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createKey, createPartner, createUser, type TestKey, type TestPartner } from '../../test/factories.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { type ReceivedRequest, WebhookReceiver } from '../../test/webhook-receiver.js';
import { PartnerOrder } from '../modules/orders/orders.schemas.js';
import { advanceTo, assign, createOrder } from '../modules/orders/orders.test-helpers.js';
import type { ProcessedOutboxEvent } from '../modules/orders/outbox.js';
import { RETRY_DELAYS_MS } from '../modules/webhooks/delivery/retry-schedule.js';
import { EVENT_SCHEMAS, type EventType } from '../modules/webhooks/event-catalog.js';
import type { DeliveryUpdated } from '../modules/webhooks/signals.js';
import {
  ALL_EVENTS,
  appendOrderEvent,
  createWebhookVia,
  deliveriesVia,
  devAuth,
  independentlyVerified,
  waitFor,
  waitForDeliveries,
} from '../modules/webhooks/webhooks.test-helpers.js';
import { newId } from '../shared/ids.js';
import type { ApiKeyScope, WebhookEvent } from '../shared/schemas.js';
import { startWorker, type Worker } from './worker.js';

const stripe = new Stripe('sk_test_not_used');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let t: TestApp;
let receiver: WebhookReceiver;
let admin: { authorization: string };
let pathSeq = 0;

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
  admin = (await createUser(t.ctx, 'ADMIN')).auth;
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

function uniquePath(name: string): string {
  return `/${name}-${++pathSeq}`;
}

async function setup(
  options: {
    scopes?: ApiKeyScope[];
    receivesAllOrders?: boolean;
    environment?: 'LIVE' | 'SANDBOX';
    events?: WebhookEvent[];
  } = {},
  partner?: TestPartner,
): Promise<{ partner: TestPartner; key: TestKey; hook: { id: string; secret: string }; path: string }> {
  const p = partner ?? (await createPartner(t.ctx));
  const key = await createKey(t.ctx, p.id, {
    scopes: options.scopes,
    receivesAllOrders: options.receivesAllOrders,
    environment: options.environment,
  });
  const path = uniquePath('hook');
  const hook = await createWebhookVia(t, await devAuth(t, p), {
    apiKeyId: key.id,
    url: receiver.url(path),
    events: options.events ?? ALL_EVENTS,
  });
  return { partner: p, key, hook, path };
}

function bodyOf(request: ReceivedRequest) {
  return JSON.parse(request.body) as {
    id: string;
    type: string;
    createdAt: string;
    environment: string;
    data: {
      order?: { code: string; customer: unknown; status: string };
      previousStatus?: string;
      batch?: { code: string; status: string; orderCodes: string[] };
      webhookId?: string;
    };
  };
}

async function ping(partner: TestPartner, webhookId: string) {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/webhooks/${webhookId}/test`,
    headers: await devAuth(t, partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { id: string };
}

/** POST …/deliveries/{id}/redeliver as the partner; answers the queued delivery. */
async function redeliver(partner: TestPartner, id: string) {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/deliveries/${id}/redeliver`,
    headers: await devAuth(t, partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Record<string, unknown>;
}

/** Resolves once every outbox row has been fanned out. */
async function outboxDrained() {
  await waitFor(async () => {
    const [{ n }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE processed_at IS NULL');
    return n === 0;
  });
}

const WORKER_OPTIONS = { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 };

describe('fan-out and signed delivery', () => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(t.ctx, WORKER_OPTIONS);
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('each of the six event kinds reaches exactly the webhooks that may see it, signed and verifiable', async () => {
    const partnerA = await createPartner(t.ctx);
    const assigned = await setup({}, partnerA); // full scopes, sees its own orders
    const seesAll = await setup({ scopes: ['orders:read', 'webhooks:manage'], receivesAllOrders: true }, partnerA);
    const idleKey = await setup({}, partnerA); // a key no order is assigned to
    const sandboxAll = await setup({ environment: 'SANDBOX', receivesAllOrders: true }, partnerA);
    const otherPartner = await setup();
    // A webhook on the assigned key that subscribes to cancellations only.
    const cancelOnlyPath = uniquePath('cancel-only');
    const cancelOnly = await createWebhookVia(t, await devAuth(t, partnerA), {
      apiKeyId: assigned.key.id,
      url: receiver.url(cancelOnlyPath),
      events: ['order.cancelled'],
    });

    // O1: placed (unassigned), assigned, walked to EN_ROUTE, delivered.
    const o1 = (await createOrder(t, admin)).code as string;
    await assign(t, admin, o1, assigned.key.id);
    await advanceTo(t, admin, o1, 'EN_ROUTE');
    const delivered = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${o1}/status`,
      headers: admin,
      payload: { status: 'DELIVERED' },
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    // O2: placed, assigned, cancelled.
    const o2 = (await createOrder(t, admin)).code as string;
    await assign(t, admin, o2, assigned.key.id);
    const cancelled = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${o2}/status`,
      headers: admin,
      payload: { status: 'CANCELLED' },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    // O3: placed, assigned, packed, on a batch that completes.
    const o3 = (await createOrder(t, admin)).code as string;
    await assign(t, admin, o3, assigned.key.id);
    await advanceTo(t, admin, o3, 'PACKED');
    const batch = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/batches',
      headers: admin,
      payload: { orderCodes: [o3] },
    });
    expect(batch.statusCode, batch.body).toBe(201);
    const batchCode = batch.json().code as string;
    for (const status of ['DISPATCHED', 'COMPLETED']) {
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/admin/batches/${batchCode}/status`,
        headers: admin,
        payload: { status },
      });
      expect(res.statusCode, res.body).toBe(200);
    }

    const mine = new Set([o1, o2, o3]);
    const labelled = (path: string) =>
      receiver
        .requestsTo(path)
        .map(bodyOf)
        .filter((b) => (b.data.order ? mine.has(b.data.order.code) : b.data.batch?.code === batchCode))
        .map((b) => `${b.type} ${b.data.order?.code ?? b.data.batch?.code}`)
        .sort();
    const forAssignedKey = [
      `order.assigned_to_partner ${o1}`,
      ...Array(7).fill(`order.status_changed ${o1}`),
      `order.delivered ${o1}`,
      `order.assigned_to_partner ${o2}`,
      `order.status_changed ${o2}`,
      `order.cancelled ${o2}`,
      `order.assigned_to_partner ${o3}`,
      ...Array(4).fill(`order.status_changed ${o3}`),
      `batch.completed ${batchCode}`,
    ];
    const forAllOrders = [...forAssignedKey, `order.placed ${o1}`, `order.placed ${o2}`, `order.placed ${o3}`];

    await waitFor(
      () => labelled(seesAll.path).length >= forAllOrders.length && labelled(assigned.path).length >= forAssignedKey.length,
    );
    await outboxDrained();
    await waitFor(async () => {
      const [{ n }] = await t.ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE partner_id = $1 AND status <> 'DELIVERED'`,
        [partnerA.id],
      );
      return n === 0;
    });

    expect(labelled(assigned.path)).toEqual([...forAssignedKey].sort());
    expect(labelled(seesAll.path)).toEqual([...forAllOrders].sort());
    expect(labelled(cancelOnlyPath)).toEqual([`order.cancelled ${o2}`]);
    expect(receiver.requestsTo(idleKey.path)).toEqual([]);
    expect(receiver.requestsTo(sandboxAll.path)).toEqual([]);
    expect(receiver.requestsTo(otherPartner.path)).toEqual([]);

    // PII only for the key with orders:pii; the batch shows the orders the key sees.
    for (const b of receiver.requestsTo(assigned.path).map(bodyOf)) {
      if (b.data.order) expect(b.data.order.customer).toMatchObject({ name: expect.any(String), address: expect.any(Object) });
      // Fields in the order of the API's PartnerOrder, not jsonb's.
      if (b.data.order) expect(Object.keys(b.data.order)).toEqual(Object.keys(PartnerOrder.properties));
      if (b.data.batch) expect(b.data.batch).toEqual({ code: batchCode, status: 'COMPLETED', orderCodes: [o3] });
    }
    for (const b of receiver.requestsTo(seesAll.path).map(bodyOf)) {
      if (b.data.order) expect(b.data.order.customer).toBeNull();
    }
    const statusChanges = receiver
      .requestsTo(assigned.path)
      .map(bodyOf)
      .filter((b) => b.type === 'order.status_changed' && b.data.order?.code === o1);
    expect(statusChanges.map((b) => `${b.data.previousStatus}>${b.data.order?.status}`).sort()).toEqual(
      [
        'PLACED>VENDOR_ACCEPTED',
        'VENDOR_ACCEPTED>RUNNER_PICKUP',
        'RUNNER_PICKUP>AT_HUB',
        'AT_HUB>PACKED',
        'PACKED>SCANNED_TO_VAN',
        'SCANNED_TO_VAN>EN_ROUTE',
        'EN_ROUTE>DELIVERED',
      ].sort(),
    );

    // Every request: POST, JSON, the envelope, the headers, and a signature two verifiers accept.
    const log = await deliveriesVia(t, partnerA, assigned.hook.id);
    const logIds = new Set(log.map((d) => d.id));
    for (const [path, secret] of [
      [assigned.path, assigned.hook.secret],
      [seesAll.path, seesAll.hook.secret],
      [cancelOnlyPath, cancelOnly.secret],
    ] as const) {
      for (const request of receiver.requestsTo(path)) {
        const body = bodyOf(request);
        expect(request.method).toBe('POST');
        expect(request.headers['content-type']).toBe('application/json');
        expect(Object.keys(body)).toEqual(['id', 'type', 'createdAt', 'environment', 'data']);
        // Every real body is valid against its kind's catalog schema: the docs cannot drift from the payloads.
        expect([...Value.Errors(EVENT_SCHEMAS[body.type as EventType], body)], body.type).toEqual([]);
        expect(body).toMatchObject({
          id: expect.stringMatching(/^evt_/),
          createdAt: expect.stringMatching(ISO),
          environment: 'live',
        });
        expect(request.headers['x-partner-event']).toBe(body.type);
        expect(request.headers['x-partner-delivery']).toMatch(UUID);
        expect(request.headers['x-partner-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
        expect(independentlyVerified(request, secret)).toBe(true);
        expect(independentlyVerified(request, `${secret}x`)).toBe(false);
        const event = stripe.webhooks.constructEvent(request.body, String(request.headers['x-partner-signature']), secret);
        expect(event.id).toBe(body.id);
        // t is the wall clock (receivers' replay windows), whatever the service clock says.
        const ts = Number(/^t=(\d+)/.exec(String(request.headers['x-partner-signature']))?.[1]);
        expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
      }
    }
    for (const request of receiver.requestsTo(assigned.path)) {
      expect(logIds.has(String(request.headers['x-partner-delivery']))).toBe(true);
    }
    // One event, one id, whichever webhook gets it.
    const idsOf = (path: string) => new Map(receiver.requestsTo(path).map((r) => [bodyOf(r).id, bodyOf(r).type]));
    const cancelEvent = [...idsOf(cancelOnlyPath).keys()][0];
    expect(idsOf(assigned.path).get(cancelEvent)).toBe('order.cancelled');
    expect(idsOf(seesAll.path).get(cancelEvent)).toBe('order.cancelled');
  }, 90_000);

  it('sends nothing for the other environment, unsubscribed types, other keys and other partners', async () => {
    const partner = await createPartner(t.ctx);
    const live = await setup({}, partner);
    const sandbox = await setup({ environment: 'SANDBOX' }, partner);
    const narrow = await setup({ events: ['order.delivered'] }, partner);
    const stranger = await setup();
    const sandboxEvent = await appendOrderEvent(t, {
      type: 'order.status_changed',
      environment: 'SANDBOX',
      assignedKeyId: sandbox.key.id,
    });
    const liveEvent = await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: live.key.id });
    await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: narrow.key.id });
    // Keys of another environment never match, even when the event names them.
    await appendOrderEvent(t, { type: 'order.status_changed', environment: 'LIVE', assignedKeyId: sandbox.key.id });
    await outboxDrained();
    await waitFor(() => receiver.requestsTo(live.path).length === 1 && receiver.requestsTo(sandbox.path).length === 1);
    expect(bodyOf(receiver.requestsTo(live.path)[0])).toMatchObject({ id: liveEvent, environment: 'live' });
    expect(bodyOf(receiver.requestsTo(sandbox.path)[0])).toMatchObject({ id: sandboxEvent, environment: 'sandbox' });
    expect(await deliveriesVia(t, partner, narrow.hook.id)).toEqual([]);
    expect(await deliveriesVia(t, stranger.partner, stranger.hook.id)).toEqual([]);
  });

  it('after a key rotation the moved webhook receives the events of the moved orders, raised before it too', async () => {
    const s = await setup();
    // The worker is stopped so that the assignment event, raised before the rotation, is fanned out
    // after it, when the webhook already hangs on the new key (the case a running worker only hits by chance).
    await worker.stop();
    const code = (await createOrder(t, admin)).code as string;
    await assign(t, admin, code, s.key.id);
    const rotated = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/keys/${s.key.id}/rotate`,
      headers: await devAuth(t, s.partner),
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json()).toMatchObject({ movedOrders: 1, movedWebhooks: 1 });
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
    expect(list.json().items[0]).toMatchObject({ id: s.hook.id, apiKeyId: rotated.json().id });
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${code}/status`,
      headers: admin,
      payload: { status: 'CANCELLED' },
    });
    expect(res.statusCode, res.body).toBe(200);
    worker = startWorker(t.ctx, WORKER_OPTIONS);
    // Deliveries run concurrently and carry no ordering promise: the assignment made before the rotation
    // may arrive after the cancellation, so wait for all three rather than for the last one sent.
    const typesFor = () =>
      receiver
        .requestsTo(s.path)
        .map(bodyOf)
        .filter((b) => b.data.order?.code === code)
        .map((b) => b.type)
        .sort();
    await waitFor(() => typesFor().length >= 3);
    const types = typesFor();
    expect(types).toEqual(['order.assigned_to_partner', 'order.cancelled', 'order.status_changed']);
  });

  it("a revoked key's webhooks get nothing; a key in its rotation grace still gets its events", async () => {
    const revoked = await setup();
    const rotating = await setup();
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.key.id, t.clock.now()]);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [
      rotating.key.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: revoked.key.id });
    const id = await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: rotating.key.id });
    await outboxDrained();
    await waitFor(() => receiver.requestsTo(rotating.path).length === 1);
    expect(bodyOf(receiver.requestsTo(rotating.path)[0]).id).toBe(id);
    expect(await deliveriesVia(t, revoked.partner, revoked.hook.id)).toEqual([]);
  });

  it('a disabled webhook gets no new deliveries', async () => {
    const s = await setup();
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [s.hook.id]);
    await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: s.key.id });
    await outboxDrained();
    expect(await deliveriesVia(t, s.partner, s.hook.id)).toEqual([]);
  });

  it('announces processed outbox rows and every delivery change after commit', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 202 });
    const processed: ProcessedOutboxEvent[] = [];
    const updates: DeliveryUpdated[] = [];
    const onProcessed = (rows: ProcessedOutboxEvent[]) => processed.push(...rows);
    const onUpdated = (u: DeliveryUpdated) => updates.push(u);
    t.ctx.events.on('outbox.processed', onProcessed);
    t.ctx.events.on('delivery.updated', onUpdated);
    try {
      const eventId = await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: s.key.id, code: 'ORD-ANNOUNCE' });
      await waitFor(() => updates.some((u) => u.delivery.webhookId === s.hook.id && u.delivery.status === 'DELIVERED'));
      const row = processed.find((r) => r.eventId === eventId);
      expect(row).toEqual({
        eventId,
        type: 'order.status_changed',
        environment: 'LIVE',
        orderId: null,
        assignedKeyId: s.key.id,
        partnerId: null,
        data: { order: expect.objectContaining({ code: 'ORD-ANNOUNCE', customer: expect.any(Object) }) },
        createdAt: expect.any(Date),
      });
      const mine = updates.filter((u) => u.delivery.webhookId === s.hook.id);
      expect(mine.map((u) => u.delivery.status)).toEqual(['PENDING', 'DELIVERED']);
      for (const u of mine) expect(u.partnerId).toBe(s.partner.id);
      expect(mine[1].delivery).toEqual({
        id: mine[0].delivery.id,
        webhookId: s.hook.id,
        event: 'order.status_changed',
        status: 'DELIVERED',
        attempts: 1,
        statusCode: 202,
        lastError: null,
        createdAt: expect.stringMatching(ISO),
        deliveredAt: expect.stringMatching(ISO),
        nextAttemptAt: null,
      });
    } finally {
      t.ctx.events.off('outbox.processed', onProcessed);
      t.ctx.events.off('delivery.updated', onUpdated);
    }
  });

  it('the test ping reaches the endpoint, really signed, with data.webhookId', async () => {
    const s = await setup();
    const queued = await ping(s.partner, s.hook.id);
    const [done] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'DELIVERED');
    expect(done).toMatchObject({
      id: queued.id,
      event: 'ping',
      status: 'DELIVERED',
      attempts: 1,
      statusCode: 200,
      lastError: null,
    });
    const [request] = receiver.requestsTo(s.path);
    expect(bodyOf(request)).toMatchObject({ type: 'ping', environment: 'live', data: { webhookId: s.hook.id } });
    expect(request.headers['x-partner-event']).toBe('ping');
    expect(request.headers['x-partner-delivery']).toBe(queued.id);
    expect(independentlyVerified(request, s.hook.secret)).toBe(true);
    expect(stripe.webhooks.constructEvent(request.body, String(request.headers['x-partner-signature']), s.hook.secret).type).toBe(
      'ping',
    );
  });
});

describe('retries, dead deliveries, redeliver and auto-disable', () => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(t.ctx, { attemptTimeoutMs: 1_000, leaseMs: 10_000, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('a failing endpoint is retried after 1 min, 5 min, 30 min, 2 h and 12 h, then the delivery is DEAD', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 500 });
    const { id } = await ping(s.partner, s.hook.id);
    const row = async () =>
      (
        await t.ctx.db.query<{ attempts: number; status: string; next_attempt_at: Date | null; updated_at: Date }>(
          'SELECT attempts, status, next_attempt_at, updated_at FROM webhook_deliveries WHERE id = $1',
          [id],
        )
      )[0];

    for (let attempt = 1; attempt <= 5; attempt++) {
      const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.attempts === attempt);
      expect(d).toMatchObject({ status: 'FAILED', attempts: attempt, statusCode: 500, lastError: 'HTTP 500', deliveredAt: null });
      const r = await row();
      const delay = RETRY_DELAYS_MS[attempt - 1];
      expect(r.next_attempt_at!.getTime() - r.updated_at.getTime()).toBe(delay);
      // Not a moment early: a second before it is due, nothing is sent.
      t.clock.advance(delay / 1000 - 1);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(receiver.requestsTo(s.path)).toHaveLength(attempt);
      t.clock.advance(1);
    }
    const [dead] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'DEAD');
    expect(dead).toMatchObject({ id, status: 'DEAD', attempts: 6, statusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });
    expect(receiver.requestsTo(s.path)).toHaveLength(6);
    // Every attempt carried the same event and bytes.
    expect(new Set(receiver.requestsTo(s.path).map((r) => r.body)).size).toBe(1);
    const hooks = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
    expect(hooks.json().items[0]).toMatchObject({ id: s.hook.id, consecutiveFailures: 1, isActive: true });

    // Nothing more happens, however long we wait.
    t.clock.advance(2 * 86_400);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.requestsTo(s.path)).toHaveLength(6);

    // Redeliver: queued at once, same event id and body, a fresh signature; success resets the streak.
    receiver.on(s.path, { status: 200 });
    expect(await redeliver(s.partner, id)).toMatchObject({
      id,
      status: 'PENDING',
      attempts: 0,
      statusCode: null,
      lastError: null,
    });
    const [redelivered] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'DELIVERED');
    expect(redelivered).toMatchObject({ id, attempts: 1, statusCode: 200, lastError: null, nextAttemptAt: null });
    expect(redelivered.deliveredAt).toMatch(ISO);
    const requests = receiver.requestsTo(s.path);
    expect(requests).toHaveLength(7);
    expect(requests[6].body).toBe(requests[0].body);
    expect(requests[6].headers['x-partner-delivery']).toBe(id);
    expect(independentlyVerified(requests[6], s.hook.secret)).toBe(true);
    const after = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
    expect(after.json().items[0]).toMatchObject({ consecutiveFailures: 0, isActive: true });
  });

  it('a redelivery sent within the second of the previous attempt still carries a signature of its own', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 500 });
    const { id } = await ping(s.partner, s.hook.id);
    await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.attempts === 1);
    receiver.on(s.path, { status: 200 });
    await redeliver(s.partner, id);
    await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'DELIVERED');
    const [first, second] = receiver.requestsTo(s.path);
    expect(second.body).toBe(first.body);
    const timestampOf = (r: ReceivedRequest) => Number(/^t=(\d+),/.exec(String(r.headers['x-partner-signature']))?.[1]);
    // Same bytes, so only a later t can make the signature fresh: t moves on by at least a second.
    expect(timestampOf(second)).toBeGreaterThan(timestampOf(first));
    expect(second.headers['x-partner-signature']).not.toBe(first.headers['x-partner-signature']);
    expect(independentlyVerified(second, s.hook.secret)).toBe(true);
    expect(Math.abs(timestampOf(second) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('a redelivered delivery gets the whole schedule again', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 503 });
    const { id } = await ping(s.partner, s.hook.id);
    await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.attempts === 1);
    await t.ctx.db.query(`UPDATE webhook_deliveries SET status = 'DEAD', attempts = 6, next_attempt_at = NULL WHERE id = $1`, [
      id,
    ]);
    await redeliver(s.partner, id);
    const [d] = await waitForDeliveries(
      t,
      s.partner,
      s.hook.id,
      (items) => items[0]?.attempts === 1 && items[0].status === 'FAILED',
    );
    expect(d).toMatchObject({ status: 'FAILED', statusCode: 503, lastError: 'HTTP 503' });
    expect(Date.parse(d.nextAttemptAt!) - t.clock.nowMs()).toBeGreaterThan(50_000);
  });

  it('the 50th dead delivery in a row disables the webhook; its retries wait until it is switched on again', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 500 });
    // 49 dead deliveries already behind it, and one delivery on its last attempt.
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 49 WHERE id = $1', [s.hook.id]);
    for (let i = 0; i < 49; i++) {
      await t.ctx.db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code, last_error, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'order.placed', '{}', 'DEAD', 6, 500, 'HTTP 500', $5, $5)`,
        [newId(), s.hook.id, s.partner.id, `evt_old_${i}`, new Date(t.clock.nowMs() - 86_400_000)],
      );
    }
    const lastChance = newId();
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code, last_error,
                                       next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'evt_last_chance', 'order.placed', '{"id":"evt_last_chance"}', 'FAILED', 5, 500, 'HTTP 500', $4, $4, $4)`,
      [lastChance, s.hook.id, s.partner.id, t.clock.now()],
    );
    t.ctx.events.emit('webhooks.due');
    await waitFor(async () => {
      const res = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
      return res.json().items[0].isActive === false;
    });
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
    expect(list.json().items[0]).toMatchObject({ id: s.hook.id, isActive: false, consecutiveFailures: 50 });
    const [last] = await deliveriesVia(t, s.partner, s.hook.id, '&status=FAILED');
    expect(last).toBeUndefined();

    // While disabled: no new deliveries, no ping, and a pending retry waits.
    await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: s.key.id });
    await outboxDrained();
    const pingRes = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/webhooks/${s.hook.id}/test`,
      headers: await devAuth(t, s.partner),
    });
    expect(pingRes.statusCode).toBe(409);
    expect(pingRes.json()).toMatchObject({ statusCode: 409, code: 'ERR_WEBHOOK_DISABLED' });
    const waiting = newId();
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, 'evt_waiting', 'order.placed', '{"id":"evt_waiting"}', 'FAILED', 1, $4, $4, $4)`,
      [waiting, s.hook.id, s.partner.id, t.clock.now()],
    );
    const sentBefore = receiver.requestsTo(s.path).length;
    t.clock.advance(3_600);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.requestsTo(s.path)).toHaveLength(sentBefore);
    expect(await deliveriesVia(t, s.partner, s.hook.id, '&status=PENDING')).toEqual([]);

    // Switched on: the streak is cleared and the waiting retry goes out.
    receiver.on(s.path, { status: 200 });
    const on = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${s.hook.id}`,
      headers: await devAuth(t, s.partner),
      payload: { isActive: true },
    });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ isActive: true, consecutiveFailures: 0 });
    const items = await waitForDeliveries(
      t,
      s.partner,
      s.hook.id,
      (all) => all.find((d) => d.id === waiting)?.status === 'DELIVERED',
    );
    expect(items.find((d) => d.id === waiting)).toMatchObject({ attempts: 2, statusCode: 200 });
  });
});

describe('failures the endpoint can cause', () => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(t.ctx, { attemptTimeoutMs: 300, leaseMs: 10_000, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('an endpoint that never answers fails the attempt with "timeout after …"', async () => {
    const s = await setup();
    receiver.on(s.path, { hang: true });
    await ping(s.partner, s.hook.id);
    const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({
      attempts: 1,
      statusCode: null,
      lastError: 'timeout after 0.3 s',
      nextAttemptAt: expect.stringMatching(ISO),
    });
  });

  it('a redirect is not followed and counts as a failure', async () => {
    const s = await setup();
    const target = uniquePath('redirect-target');
    receiver.on(s.path, { redirectTo: receiver.url(target) });
    await ping(s.partner, s.hook.id);
    const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({ attempts: 1, statusCode: 302, lastError: 'redirect not followed' });
    expect(receiver.requestsTo(target)).toEqual([]);
  });

  it('a closed port fails with "connection refused"', async () => {
    const closed = await WebhookReceiver.start();
    const url = closed.url('/gone');
    await closed.close();
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const hook = await createWebhookVia(t, await devAuth(t, partner), { apiKeyId: key.id, url, events: ['order.placed'] });
    await ping(partner, hook.id);
    const [d] = await waitForDeliveries(t, partner, hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({ attempts: 1, statusCode: null, lastError: 'connection refused' });
  });

  it('4xx answers are failures too, and a large answer body is not a problem', async () => {
    const s = await setup();
    receiver.on(s.path, { status: 410, body: 'x'.repeat(1_000_000) });
    await ping(s.partner, s.hook.id);
    const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({ statusCode: 410, lastError: 'HTTP 410' });
  });
});

describe('per-endpoint concurrency', () => {
  let worker: Worker;
  beforeAll(() => {
    // The cap is an option (default 8 of 128 slots); 4 of 8 here keeps the test small.
    worker = startWorker(t.ctx, {
      attemptTimeoutMs: 10_000,
      leaseMs: 30_000,
      pollIntervalMs: 100,
      concurrency: 8,
      perWebhookConcurrency: 4,
      maxPerWebhookConcurrency: 4,
    });
  });
  afterAll(async () => {
    receiver.releaseHung(200);
    await worker.stop();
  });

  it('a slow endpoint holds at most 4 attempts at once and does not delay other endpoints', async () => {
    const slow = await setup();
    const fast = await setup();
    receiver.on(slow.path, { hang: true });
    for (let i = 0; i < 10; i++) await ping(slow.partner, slow.hook.id);
    await waitFor(() => receiver.hungCount(slow.path) === 4);

    const started = Date.now();
    await ping(fast.partner, fast.hook.id);
    await waitForDeliveries(t, fast.partner, fast.hook.id, (items) => items[0]?.status === 'DELIVERED');
    // Well within the slow endpoint's 10 s timeout: the fast one did not wait for a slot.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(receiver.hungCount(slow.path)).toBe(4);
    expect(receiver.maxInFlightOn(slow.path)).toBe(4);

    // Released, the backlog drains, never more than 4 at a time.
    receiver.on(slow.path, { delayMs: 20 });
    receiver.releaseHung(200, slow.path);
    const items = await waitForDeliveries(
      t,
      slow.partner,
      slow.hook.id,
      (all) => all.length === 10 && all.every((d) => d.status === 'DELIVERED'),
    );
    expect(items).toHaveLength(10);
    expect(receiver.requestsTo(slow.path)).toHaveLength(10);
    expect(receiver.maxInFlightOn(slow.path)).toBe(4);
  });
});

describe('adaptive per-endpoint concurrency', () => {
  it('an endpoint answering quickly gets more attempts in flight than the starting cap, never more than the ceiling', async () => {
    const fast = await setup();
    receiver.on(fast.path, { status: 204, delayMs: 30 });
    // A backlog first (no worker of this test runs yet), so the cap, not the arrival rate, bounds what is in flight.
    for (let i = 0; i < 50; i++) await ping(fast.partner, fast.hook.id);
    const worker = startWorker(t.ctx, {
      ...WORKER_OPTIONS,
      concurrency: 16,
      perWebhookConcurrency: 2,
      maxPerWebhookConcurrency: 6,
    });
    onTestFinished(() => worker.stop());
    await waitForDeliveries(
      t,
      fast.partner,
      fast.hook.id,
      (all) => all.length === 50 && all.every((d) => d.status === 'DELIVERED'),
      60_000,
    );
    expect(receiver.maxInFlightOn(fast.path)).toBeGreaterThan(2);
    expect(receiver.maxInFlightOn(fast.path)).toBeLessThanOrEqual(6);
  }, 90_000);
});
