/**
 * Fan-out and signed delivery end to end: events produced through the operator API (or appended to the
 * outbox as a producer does), fanned out by a real worker to exactly the webhooks that may see them,
 * POSTed to a real local receiver and verified there.
 */
import Stripe from 'stripe';
import Value from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner, createUser, type TestPartner } from '../../test/factories.js';
import { waitFor } from '../../test/wait.js';
import type { ReceivedRequest } from '../../test/webhook-receiver.js';
import { PartnerOrder } from '../modules/orders/orders.schemas.js';
import { advanceTo, assign, createOrder } from '../modules/orders/orders.test-helpers.js';
import { EVENT_SCHEMAS, type EventType } from '../modules/webhooks/event-catalog.js';
import type { DeliveryUpdated } from '../modules/webhooks/signals.js';
import {
  appendOrderEvent,
  createEndpoint,
  createWebhookVia,
  deliveriesVia,
  devAuth,
  ISO_TIME,
  independentlyVerified,
  outboxDrained,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  TEST_WORKER_OPTIONS,
  t,
  UUID,
  uniquePath,
  waitForDeliveries,
} from '../modules/webhooks/webhooks.test-helpers.js';
import type { ProcessedOutboxEvent } from '../shared/outbox.js';
import { startWorker, type Worker } from './worker.js';

const stripe = new Stripe('sk_test_not_used');

setUpAppWithReceiver();
let admin: { authorization: string };
beforeAll(async () => {
  admin = (await createUser(t.ctx, 'ADMIN')).auth;
});

/** A webhook on a new key of `partner` (of a new partner when none is given). */
const setup = (options: Omit<Parameters<typeof createEndpoint>[2], 'partner'> = {}, partner?: TestPartner) =>
  createEndpoint(t, receiver, { ...options, partner });
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

describe('fan-out and signed delivery', () => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(t.ctx, TEST_WORKER_OPTIONS);
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
    await outboxDrained(t);
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
          createdAt: expect.stringMatching(ISO_TIME),
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
    await outboxDrained(t);
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
    worker = startWorker(t.ctx, TEST_WORKER_OPTIONS);
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
    await outboxDrained(t);
    await waitFor(() => receiver.requestsTo(rotating.path).length === 1);
    expect(bodyOf(receiver.requestsTo(rotating.path)[0]).id).toBe(id);
    expect(await deliveriesVia(t, revoked.partner, revoked.hook.id)).toEqual([]);
  });

  it('a disabled webhook gets no new deliveries', async () => {
    const s = await setup();
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [s.hook.id]);
    await appendOrderEvent(t, { type: 'order.status_changed', assignedKeyId: s.key.id });
    await outboxDrained(t);
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
        createdAt: expect.stringMatching(ISO_TIME),
        deliveredAt: expect.stringMatching(ISO_TIME),
        nextAttemptAt: null,
      });
    } finally {
      t.ctx.events.off('outbox.processed', onProcessed);
      t.ctx.events.off('delivery.updated', onUpdated);
    }
  });

  it('the test ping reaches the endpoint, really signed, with data.webhookId', async () => {
    const s = await setup();
    const queued = await sendTestEvent(t, s.partner, s.hook.id);
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
