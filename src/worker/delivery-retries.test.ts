/**
 * Retries, dead deliveries, redeliver and auto-disable, and the failures an endpoint can cause
 * (timeouts, redirects, closed ports, 4xx), with a real worker and a real local receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestPartner } from '../../test/factories.js';
import { waitFor } from '../../test/wait.js';
import { type ReceivedRequest, WebhookReceiver } from '../../test/webhook-receiver.js';
import { RETRY_DELAYS_MS } from '../modules/webhooks/delivery/retry-schedule.js';
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
  t,
  uniquePath,
  waitForDeliveries,
} from '../modules/webhooks/webhooks.test-helpers.js';
import { newId } from '../shared/ids.js';
import { startWorker, type Worker } from './worker.js';

setUpAppWithReceiver();

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

describe('retries, dead deliveries, redeliver and auto-disable', () => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(t.ctx, { attemptTimeoutMs: 1_000, leaseMs: 10_000, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker.stop();
  });

  it('a failing endpoint is retried after 1 min, 5 min, 30 min, 2 h and 12 h, then the delivery is DEAD', async () => {
    const s = await createEndpoint(t, receiver);
    receiver.on(s.path, { status: 500 });
    const { id } = await sendTestEvent(t, s.partner, s.hook.id);
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
      // Not early: ten seconds before it is due, nothing is sent. (The test clock flows with real time,
      // so the clock is moved to a point measured from the row, with a margin no busy machine's pause
      // between this read and the check below crosses.)
      t.clock.advance((r.next_attempt_at!.getTime() - t.clock.nowMs()) / 1000 - 10);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(receiver.requestsTo(s.path)).toHaveLength(attempt);
      t.clock.advance(10);
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
    expect(redelivered.deliveredAt).toMatch(ISO_TIME);
    const requests = receiver.requestsTo(s.path);
    expect(requests).toHaveLength(7);
    expect(requests[6].body).toBe(requests[0].body);
    expect(requests[6].headers['x-partner-delivery']).toBe(id);
    expect(independentlyVerified(requests[6], s.hook.secret)).toBe(true);
    const after = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: await devAuth(t, s.partner) });
    expect(after.json().items[0]).toMatchObject({ consecutiveFailures: 0, isActive: true });
  });

  it('a redelivery sent within the second of the previous attempt still carries a signature of its own', async () => {
    const s = await createEndpoint(t, receiver);
    receiver.on(s.path, { status: 500 });
    const { id } = await sendTestEvent(t, s.partner, s.hook.id);
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
    const s = await createEndpoint(t, receiver);
    receiver.on(s.path, { status: 503 });
    const { id } = await sendTestEvent(t, s.partner, s.hook.id);
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
    const s = await createEndpoint(t, receiver);
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
    await outboxDrained(t);
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
    const s = await createEndpoint(t, receiver);
    receiver.on(s.path, { hang: true });
    await sendTestEvent(t, s.partner, s.hook.id);
    const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({
      attempts: 1,
      statusCode: null,
      lastError: 'timeout after 0.3 s',
      nextAttemptAt: expect.stringMatching(ISO_TIME),
    });
  });

  it('a redirect is not followed and counts as a failure', async () => {
    const s = await createEndpoint(t, receiver);
    const target = uniquePath('redirect-target');
    receiver.on(s.path, { redirectTo: receiver.url(target) });
    await sendTestEvent(t, s.partner, s.hook.id);
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
    await sendTestEvent(t, partner, hook.id);
    const [d] = await waitForDeliveries(t, partner, hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({ attempts: 1, statusCode: null, lastError: 'connection refused' });
  });

  it('4xx answers are failures too, and a large answer body is not a problem', async () => {
    const s = await createEndpoint(t, receiver);
    receiver.on(s.path, { status: 410, body: 'x'.repeat(1_000_000) });
    await sendTestEvent(t, s.partner, s.hook.id);
    const [d] = await waitForDeliveries(t, s.partner, s.hook.id, (items) => items[0]?.status === 'FAILED');
    expect(d).toMatchObject({ statusCode: 410, lastError: 'HTTP 410' });
  });
});
