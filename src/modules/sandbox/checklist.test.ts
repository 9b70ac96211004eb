/**
 * The go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'), item by item: each turns done exactly when the key meets its
 * condition, and not before; nothing another key does counts; the operator sees every sandbox key's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { signAccessToken } from '../auth/tokens.js';
import type { Auth } from '../orders/orders.test-helpers.js';
import { devAuth } from '../webhooks/webhooks.test-helpers.js';
import { CHECKLIST_ITEM_IDS } from './checklist.service.js';
import type { GoLiveChecklist } from './sandbox.schemas.js';
import {
  partnerEvent,
  platformMove,
  rotateKey,
  type SandboxSetup,
  sandboxPost,
  sandboxSetup,
  testOrder,
} from './sandbox.test-helpers.js';

let t: TestApp;
let receiver: WebhookReceiver;
let worker: Worker;
let adminId: string;

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
  worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 });
  adminId = (await createUser(t.ctx, 'ADMIN')).userId;
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
  await t.close();
});

async function checklist(s: Pick<SandboxSetup, 'partner'>, keyId: string): Promise<GoLiveChecklist> {
  const res = await t.live.inject({
    method: 'GET',
    url: `/v1/developer/keys/${keyId}/checklist`,
    headers: await devAuth(t, s.partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The ids of the done items, with when each was done. */
async function done(s: SandboxSetup, key: TestKey = s.key): Promise<Record<string, string>> {
  const c = await checklist(s, key.id);
  return Object.fromEntries(c.items.filter((i) => i.done).map((i) => [i.id, i.doneAt as string]));
}

/**
 * Moves the service clock an hour on, so each step has its own hour; returns the new now. The test
 * clock flows with real time between ticks: a step's doneAt is within its hour.
 */
function tick(): string {
  t.clock.advance(3600);
  return t.clock.now().toISOString();
}

/** `actual` has exactly the items of `expected`, each done within the hour its step began. */
function expectDone(actual: Record<string, string>, expected: Record<string, string>): void {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
  for (const [id, from] of Object.entries(expected)) {
    const at = Date.parse(actual[id]);
    expect(at, id).toBeGreaterThanOrEqual(Date.parse(from));
    expect(at, id).toBeLessThan(Date.parse(from) + 3_600_000);
  }
}

const list = (key: TestKey, query = '') =>
  t.sandbox.inject({ method: 'GET', url: `/v1/partner/orders${query}`, headers: key.headers });

describe('GET /v1/developer/keys/{id}/checklist', () => {
  it('starts with every item of the checklist open, in order, each with a title and a hint', async () => {
    const s = await sandboxSetup(t, null);
    const c = await checklist(s, s.key.id);
    expect(c).toEqual({ apiKeyId: s.key.id, complete: false, items: expect.any(Array) });
    expect(c.items.map((i) => i.id)).toEqual([
      'orders-listed-updated-since',
      'event-picked-up',
      'event-en-route',
      'event-delivered-exact-cod',
      'event-delivered-cod-variance',
      'event-failed-with-reason',
      'event-en-route-after-failed',
      'event-idempotent-repeat',
      'webhook-order-assigned-to-partner',
      'webhook-order-status-changed',
      'webhook-order-delivered',
      'webhook-order-cancelled',
      'webhook-batch-completed',
      'offer-accepted',
      'offer-declined-with-reason',
      'webhook-offer-created',
    ]);
    expect(c.items.map((i) => i.id)).toEqual(CHECKLIST_ITEM_IDS);
    for (const item of c.items) {
      expect(item).toEqual({ id: item.id, title: expect.any(String), done: false, doneAt: null, hint: expect.any(String) });
      expect(item.hint.length).toBeGreaterThan(30);
    }
    expect(c.items.find((i) => i.id === 'webhook-order-cancelled')?.hint).toContain('PLACED, VENDOR_ACCEPTED, PACKED');
  });

  // Another partner's key: test/auth-contract.test.ts, "another partner's resources".
  it('answers 404 for an unknown or malformed id, and 409 ERR_CONFLICT for a live key', async () => {
    const s = await sandboxSetup(t, null);
    const ask = async (partner: typeof s.partner, id: string) =>
      t.live.inject({ method: 'GET', url: `/v1/developer/keys/${id}/checklist`, headers: await devAuth(t, partner) });
    expectError(await ask(s.partner, '00000000-0000-4000-8000-000000000000'), 404, 'ERR_NOT_FOUND');
    expectError(await ask(s.partner, 'nope'), 404, 'ERR_NOT_FOUND');
    const live = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    expectError(await ask(s.partner, live.id), 409, 'ERR_CONFLICT');
  });

  it('marks each partner event item done exactly when that event is sent by the key, and not before', async () => {
    const s = await sandboxSetup(t, null);
    const [a, b, c, d] = [
      await testOrder(t, s.key, 'PACKED', { paymentMethod: 'COD' }),
      await testOrder(t, s.key, 'PACKED', { paymentMethod: 'COD' }),
      await testOrder(t, s.key, 'PACKED', { paymentMethod: 'COD' }),
      await testOrder(t, s.key, 'PACKED', { paymentMethod: 'CARD' }),
    ];
    const expected: Record<string, string> = {};
    const send = async (code: string, body: Record<string, unknown>, status = 201) => {
      const res = await partnerEvent(t, s.key, code, body);
      expect(res.statusCode, res.body).toBe(status);
    };

    // The marketplace's own moves are not the partner's events.
    const m = await testOrder(t, s.key, 'FAILED');
    expect((await platformMove(t, s.key, m.code, 'EN_ROUTE')).statusCode).toBe(200);
    expect((await platformMove(t, s.key, m.code, 'DELIVERED')).statusCode).toBe(200);
    expectDone(await done(s), expected);

    expected['event-picked-up'] = tick();
    await send(a.code, { type: 'PICKED_UP' });
    expectDone(await done(s), expected);

    expected['event-en-route'] = tick();
    await send(a.code, { type: 'EN_ROUTE' });
    expectDone(await done(s), expected);

    // A CARD order delivered, and a COD order delivered without the amount: not the exact-COD item.
    tick();
    await send(d.code, { type: 'EN_ROUTE' });
    await send(d.code, { type: 'DELIVERED' });
    await send(b.code, { type: 'EN_ROUTE' });
    await send(b.code, { type: 'DELIVERED' });
    expectDone(await done(s), expected);

    expected['event-delivered-exact-cod'] = tick();
    await send(a.code, { type: 'DELIVERED', codCollectedQepik: a.codAmountQepik });
    expectDone(await done(s), expected);

    // A variance without a note is refused, so it proves nothing.
    tick();
    await send(c.code, { type: 'EN_ROUTE' });
    await send(c.code, { type: 'DELIVERED', codCollectedQepik: c.codAmountQepik - 100 }, 400);
    expectDone(await done(s), expected);
    expected['event-delivered-cod-variance'] = tick();
    await send(c.code, {
      type: 'DELIVERED',
      codCollectedQepik: c.codAmountQepik - 100,
      note: 'Customer paid less: damaged item',
    });
    expectDone(await done(s), expected);

    const e = await testOrder(t, s.key, 'PACKED');
    tick();
    await send(e.code, { type: 'EN_ROUTE' });
    await send(e.code, { type: 'FAILED' }, 400);
    expectDone(await done(s), expected);
    expected['event-failed-with-reason'] = tick();
    await send(e.code, { type: 'FAILED', failReason: 'NOT_HOME' });
    expectDone(await done(s), expected);

    expected['event-en-route-after-failed'] = tick();
    await send(e.code, { type: 'EN_ROUTE' });
    expectDone(await done(s), expected);
    expect((await checklist(s, s.key.id)).complete).toBe(false);
  });

  it('marks "listed orders with updatedSince" only for a successful list with updatedSince made with the key', async () => {
    const s = await sandboxSetup(t, null);
    const sibling = await sandboxSetup(t, null, { partner: s.partner });
    expect((await list(s.key, '?pageSize=5')).statusCode).toBe(200);
    expect((await list(s.key, '?updatedSince=yesterday')).statusCode).toBe(400);
    expect((await list(sibling.key, `?updatedSince=${encodeURIComponent(t.clock.now().toISOString())}`)).statusCode).toBe(200);
    expect(await done(s)).toEqual({});
    const at = tick();
    expect((await list(s.key, `?pageSize=50&updatedSince=${encodeURIComponent(t.clock.now().toISOString())}`)).statusCode).toBe(
      200,
    );
    expectDone(await done(s), { 'orders-listed-updated-since': at });
  });

  it('marks "repeated an event with the same Idempotency-Key" only when a repeat is answered with the first answer', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PACKED');
    const other = await testOrder(t, s.key, 'PACKED');
    expect((await partnerEvent(t, s.key, order.code, { type: 'PICKED_UP' }, 'idem-1')).statusCode).toBe(201);
    // Another body under the same key is a conflict, not a repeat; another key is a new event.
    expect((await partnerEvent(t, s.key, order.code, { type: 'EN_ROUTE' }, 'idem-1')).statusCode).toBe(409);
    expect((await partnerEvent(t, s.key, other.code, { type: 'EN_ROUTE' }, 'idem-2')).statusCode).toBe(201);
    const without = Object.keys(await done(s));
    expect(without).not.toContain('event-idempotent-repeat');
    const at = tick();
    const repeat = await partnerEvent(t, s.key, order.code, { type: 'PICKED_UP' }, 'idem-1');
    expect(repeat.statusCode).toBe(201);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    const after = await done(s);
    expectDone({ 'event-idempotent-repeat': after['event-idempotent-repeat'] }, { 'event-idempotent-repeat': at });
  });

  it('marks each webhook item when a webhook of the key first answers 2xx to that kind; failures and test samples do not count', async () => {
    const s = await sandboxSetup(t, receiver);
    const hooks = await devAuth(t, s.partner);
    receiver.on(s.path, { status: 500 });
    const failing = await testOrder(t, s.key, 'PACKED');
    expect((await platformMove(t, s.key, failing.code, 'CANCELLED')).statusCode).toBe(200);
    await waitFor(() => receiver.requestsTo(s.path).length >= 4);
    for (const event of ['order.assigned_to_partner', 'order.cancelled', 'batch.completed']) {
      const sample = await t.live.inject({
        method: 'POST',
        url: `/v1/developer/webhooks/${s.webhookId}/test`,
        headers: hooks,
        payload: { event },
      });
      expect(sample.statusCode, sample.body).toBe(200);
    }
    receiver.on(s.path, { status: 200 });
    await waitFor(() => receiver.requestsTo(s.path).filter((r) => r.body.includes('evt_test_')).length >= 3);
    expect(Object.keys(await done(s)).filter((id) => id.startsWith('webhook-'))).toEqual([]);

    const webhookItems = async () =>
      Object.keys(await done(s))
        .filter((id) => id.startsWith('webhook-'))
        .sort();
    const order = await testOrder(t, s.key, 'PLACED');
    await waitFor(async () => (await webhookItems()).includes('webhook-order-assigned-to-partner'));
    expect(await webhookItems()).toEqual(['webhook-order-assigned-to-partner']);
    expect((await platformMove(t, s.key, order.code, 'CANCELLED')).statusCode).toBe(200);
    await waitFor(async () => (await webhookItems()).length === 3);
    expect(await webhookItems()).toEqual([
      'webhook-order-assigned-to-partner',
      'webhook-order-cancelled',
      'webhook-order-status-changed',
    ]);
    const delivered = await testOrder(t, s.key, 'EN_ROUTE');
    expect((await platformMove(t, s.key, delivered.code, 'DELIVERED')).statusCode).toBe(200);
    await waitFor(async () => (await webhookItems()).length === 4);
    expect(await webhookItems()).toContain('webhook-order-delivered');
    const packed = await testOrder(t, s.key, 'PACKED');
    const batch = (await sandboxPost(t, s.key, '/v1/partner/sandbox/batches', { orderCodes: [packed.code] })).json();
    for (const status of ['DISPATCHED', 'COMPLETED']) {
      expect((await sandboxPost(t, s.key, `/v1/partner/sandbox/batches/${batch.code}/status`, { status })).statusCode).toBe(200);
    }
    await waitFor(async () => (await webhookItems()).length === 5);
    expect(await webhookItems()).toContain('webhook-batch-completed');
  });

  it('counts a 2xx answer even when the delivery was redelivered later and failed', async () => {
    const s = await sandboxSetup(t, receiver, {});
    await testOrder(t, s.key, 'PACKED');
    const auth = await devAuth(t, s.partner);
    const deliveries = async () =>
      (
        await t.live.inject({ method: 'GET', url: `/v1/developer/webhooks/${s.webhookId}/deliveries?pageSize=50`, headers: auth })
      ).json().items as Array<{ id: string; event: string; status: string }>;
    const assigned = (await waitFor(async () =>
      (await deliveries()).find((d) => d.event === 'order.assigned_to_partner' && d.status === 'DELIVERED'),
    )) as { id: string };
    receiver.on(s.path, { status: 503 });
    const again = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/deliveries/${assigned.id}/redeliver`,
      headers: auth,
    });
    expect(again.statusCode).toBe(200);
    await waitFor(async () => (await deliveries()).find((d) => d.id === assigned.id)?.status === 'FAILED');
    expect(Object.keys(await done(s))).toContain('webhook-order-assigned-to-partner');
    receiver.on(s.path, { status: 200 });
  });

  it('counts nothing another key did, of the same partner or another', async () => {
    const s = await sandboxSetup(t, null);
    const sibling = await sandboxSetup(t, null, { partner: s.partner });
    const stranger = await sandboxSetup(t, null);
    for (const other of [sibling, stranger]) {
      const order = await testOrder(t, other.key, 'PACKED');
      expect((await partnerEvent(t, other.key, order.code, { type: 'PICKED_UP' }, 'same-key')).statusCode).toBe(201);
      expect((await partnerEvent(t, other.key, order.code, { type: 'PICKED_UP' }, 'same-key')).statusCode).toBe(201);
      expect((await list(other.key, `?updatedSince=${encodeURIComponent(t.clock.now().toISOString())}`)).statusCode).toBe(200);
    }
    expect(await done(s)).toEqual({});
    expect(Object.keys(await done(sibling))).toEqual([
      'orders-listed-updated-since',
      'event-picked-up',
      'event-idempotent-repeat',
    ]);
  });

  it('follows the integration across a rotation: the old key’s events count for the successor, both show one checklist', async () => {
    const s = await sandboxSetup(t, null);
    const order = await testOrder(t, s.key, 'PACKED');
    expect((await partnerEvent(t, s.key, order.code, { type: 'PICKED_UP' })).statusCode).toBe(201);
    const successor = await rotateKey(t, s);
    // The rotated-out key, acting for its successor during the grace period.
    expect((await partnerEvent(t, s.key, order.code, { type: 'EN_ROUTE' })).statusCode).toBe(201);
    const old = await checklist(s, s.key.id);
    const next = await checklist(s, successor.id);
    expect(next.items).toEqual(old.items);
    expect(next.items.filter((i) => i.done).map((i) => i.id)).toEqual(['event-picked-up', 'event-en-route']);
  });

  it('keeps an item done once it was seen, after its evidence is gone (deliveries and the request log are purged after 35 days)', async () => {
    const s = await sandboxSetup(t, receiver);
    await testOrder(t, s.key, 'PACKED');
    await waitFor(async () => 'webhook-order-assigned-to-partner' in (await done(s)));
    const before = await done(s);
    await t.ctx.db.query('DELETE FROM webhook_deliveries WHERE webhook_id = $1', [s.webhookId]);
    expect(await done(s)).toEqual(before);
  });
});

/** An operator's bearer header signed now (the tests move the clock by hours). */
async function adminAuth(): Promise<Auth> {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, { userId: adminId, role: 'ADMIN', partnerId: null });
  return { authorization: `Bearer ${token}` };
}

describe('GET /v1/admin/partners/{id}/checklist', () => {
  it('gives the operator the checklist of every sandbox key of the partner, newest key first, and nothing of live keys', async () => {
    const s = await sandboxSetup(t, null);
    await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    t.clock.advance(1);
    const second = await sandboxSetup(t, null, { partner: s.partner });
    const order = await testOrder(t, second.key, 'PACKED');
    expect((await partnerEvent(t, second.key, order.code, { type: 'PICKED_UP' })).statusCode).toBe(201);
    const res = await t.live.inject({
      method: 'GET',
      url: `/v1/admin/partners/${s.partner.id}/checklist`,
      headers: await adminAuth(),
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().items as GoLiveChecklist[];
    expect(items.map((c) => c.apiKeyId)).toEqual([second.key.id, s.key.id]);
    expect(items[0]).toEqual(await checklist(second, second.key.id));
    expect(items[1]).toEqual(await checklist(s, s.key.id));
    expect(items[0].items.filter((i) => i.done).map((i) => i.id)).toEqual(['event-picked-up']);
  });

  it('answers 404 for an unknown partner and an empty list for a partner without sandbox keys', async () => {
    expectError(
      await t.live.inject({
        method: 'GET',
        url: '/v1/admin/partners/00000000-0000-4000-8000-000000000000/checklist',
        headers: await adminAuth(),
      }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(
      await t.live.inject({ method: 'GET', url: '/v1/admin/partners/nope/checklist', headers: await adminAuth() }),
      404,
      'ERR_NOT_FOUND',
    );
    const partner = await createPartner(t.ctx);
    await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    const res = await t.live.inject({
      method: 'GET',
      url: `/v1/admin/partners/${partner.id}/checklist`,
      headers: await adminAuth(),
    });
    expect(res.json()).toEqual({ items: [] });
  });
});
