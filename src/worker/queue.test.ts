/**
 * The queue's guarantees: several workers (in one process, or in two processes on one PostgreSQL
 * server) never send a delivery twice; a worker that dies mid-attempt leaves its row to be retried
 * once the lease expires (by the wall clock: moving the test clock never ends a lease); a worker that
 * lost its lease cannot overwrite the outcome; stop() is graceful and bounded. Retention: purge.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPartner } from '../../test/factories.js';
import { createSecondApp, type TestApp } from '../../test/harness.js';
import { waitFor } from '../../test/wait.js';
import { OutcomeWriter } from '../modules/webhooks/delivery/outcome-writer.js';
import { claimDueDeliveries } from '../modules/webhooks/queue/claim-due-deliveries.js';
import {
  createEndpoint,
  devAuth,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  t,
  waitForDeliveries,
} from '../modules/webhooks/webhooks.test-helpers.js';
import { newId } from '../shared/ids.js';
import { startWorker } from './worker.js';

setUpAppWithReceiver();

/** A webhook for order.placed of a new partner's key, on a path of its own. */
const setup = (app: TestApp = t) => createEndpoint(app, receiver, { events: ['order.placed'] });
/** Queues a test ping as the partner; answers the delivery id. */
const ping = async (app: TestApp, partner: TestPartner, webhookId: string) => (await sendTestEvent(app, partner, webhookId)).id;

async function deliveryRow(id: string) {
  const [row] = await t.ctx.db.query<{ status: string; attempts: number; status_code: number | null; locked_until: Date | null }>(
    'SELECT status, attempts, status_code, locked_until FROM webhook_deliveries WHERE id = $1',
    [id],
  );
  return row;
}

function deliveryIdsReceived(path: string): string[] {
  return receiver.requestsTo(path).map((r) => String(r.headers['x-partner-delivery']));
}

/** Claims what is due as a worker would (a 60 s lease unless told), without attempting anything. */
function claimAsAWorker(leaseMs = 60_000) {
  return claimDueDeliveries(
    { nowMs: t.clock.nowMs(), wallClockMs: Date.now(), leaseMs, limit: 10, perWebhookLimit: 4 },
    t.ctx.db,
  );
}

describe('several workers', () => {
  it('two workers on one app never send a delivery twice', async () => {
    const hooks = await Promise.all([setup(), setup(), setup()]);
    const a = startWorker(t.ctx, { concurrency: 3, pollIntervalMs: 20 });
    const b = startWorker(t.ctx, { concurrency: 3, pollIntervalMs: 20 });
    try {
      for (const h of hooks) receiver.on(h.path, { delayMs: 15 });
      const queued: string[] = [];
      for (let i = 0; i < 12; i++) for (const h of hooks) queued.push(await ping(t, h.partner, h.hook.id));
      for (const h of hooks) {
        await waitForDeliveries(
          t,
          h.partner,
          h.hook.id,
          (items) => items.length === 12 && items.every((d) => d.status === 'DELIVERED'),
          15_000,
        );
      }
      const received = hooks.flatMap((h) => deliveryIdsReceived(h.path));
      expect(received.sort()).toEqual([...queued].sort());
      expect(new Set(received).size).toBe(36);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a delivery claimed by a worker that died is retried once its lease expires by the wall clock, not before', async () => {
    const h = await setup();
    receiver.on(h.path, { status: 200 });
    const id = await ping(t, h.partner, h.hook.id);
    // The "dead" worker: it claimed the row for 1.5 s and never came back.
    const claimedAt = Date.now();
    const [claimed] = await claimAsAWorker(1_500);
    expect(claimed.id).toBe(id);
    const survivor = startWorker(t.ctx, { pollIntervalMs: 20 });
    try {
      // Moving the service clock past the lease does not end it: a lease is real time.
      t.clock.advance(120);
      await waitForDeliveries(t, h.partner, h.hook.id, (items) => items[0]?.status === 'DELIVERED');
      expect(deliveryIdsReceived(h.path)).toEqual([id]);
      expect(receiver.requestsTo(h.path)[0].receivedAtMs).toBeGreaterThanOrEqual(claimedAt + 1_500);
      expect(await deliveryRow(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, status_code: 200, locked_until: null });
    } finally {
      await survivor.stop();
    }
  });

  it('an attempt that outlived its lease cannot overwrite the outcome of the worker that took over', async () => {
    const h = await setup();
    receiver.on(h.path, { status: 200 });
    const id = await ping(t, h.partner, h.hook.id);
    // The slow worker: it claimed the row for 300 ms and is still "attempting" when the lease ends.
    const [slow] = await claimAsAWorker(300);
    expect(slow.id).toBe(id);
    const worker = startWorker(t.ctx, { pollIntervalMs: 20 });
    try {
      await waitForDeliveries(t, h.partner, h.hook.id, (items) => items[0]?.status === 'DELIVERED');
    } finally {
      await worker.stop();
    }
    // The slow attempt now "fails", too late: its outcome is dropped and nothing of it is logged.
    const late = await new OutcomeWriter(t.ctx.db).record({
      claimed: slow,
      statusCode: 500,
      error: 'HTTP 500',
      atMs: t.clock.nowMs(),
      attempt: { startedAtMs: t.clock.nowMs() - 400, durationMs: 400, requestHeaders: {}, responseHeaders: {}, responseBody: '' },
    });
    expect(late).toBeNull();
    expect(await deliveryRow(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, status_code: 200 });
    expect(deliveryIdsReceived(h.path)).toEqual([id]);
  });

  it('moving the test clock forward never takes a delivery from the attempt in flight', async () => {
    // A slow endpoint holds the first attempt; the clock then moves past any lease and retry. The
    // delivery must not be claimed and sent a second time while that attempt runs.
    const slow = await setup();
    receiver.on(slow.path, { hang: true });
    const worker = startWorker(t.ctx, { attemptTimeoutMs: 10_000, leaseMs: 11_000, pollIntervalMs: 20 });
    try {
      const id = await ping(t, slow.partner, slow.hook.id);
      await waitFor(() => receiver.hungCount(slow.path) === 1);
      const res = await t.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: 3_600 } });
      expect(res.statusCode).toBe(200);
      // A witness queued after the advance: once it is delivered, the worker has claimed with the new time.
      const witness = await setup();
      receiver.on(witness.path, { status: 200 });
      await ping(t, witness.partner, witness.hook.id);
      await waitForDeliveries(t, witness.partner, witness.hook.id, (items) => items[0]?.status === 'DELIVERED');
      expect(deliveryIdsReceived(slow.path)).toEqual([id]);
      receiver.releaseHung(200, slow.path);
      await waitForDeliveries(t, slow.partner, slow.hook.id, (items) => items[0]?.status === 'DELIVERED');
      expect(deliveryIdsReceived(slow.path)).toEqual([id]);
      expect(await deliveryRow(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, status_code: 200 });
    } finally {
      await worker.stop();
    }
  });
});

describe('changes while an attempt is in flight', () => {
  it('a redeliver takes the row over: the attempt in flight cannot record its outcome', async () => {
    const h = await setup();
    receiver.on(h.path, (_req, index) => (index === 0 ? { hang: true } : { status: 200 }));
    const worker = startWorker(t.ctx, { pollIntervalMs: 20 });
    try {
      const id = await ping(t, h.partner, h.hook.id);
      await waitFor(() => receiver.hungCount(h.path) === 1);
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/developer/deliveries/${id}/redeliver`,
        headers: await devAuth(t, h.partner),
      });
      expect(res.statusCode).toBe(200);
      await waitForDeliveries(t, h.partner, h.hook.id, (items) => items[0]?.status === 'DELIVERED');
      receiver.releaseHung(500, h.path);
      await waitFor(() => receiver.hungCount(h.path) === 0);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await deliveryRow(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, status_code: 200 });
    } finally {
      await worker.stop();
    }
  });

  it('deleting a webhook during an attempt removes it and its log; the attempt records nothing', async () => {
    const h = await setup();
    receiver.on(h.path, { hang: true });
    const worker = startWorker(t.ctx, { pollIntervalMs: 20 });
    try {
      const id = await ping(t, h.partner, h.hook.id);
      await waitFor(() => receiver.hungCount(h.path) === 1);
      const res = await t.live.inject({
        method: 'DELETE',
        url: `/v1/developer/webhooks/${h.hook.id}`,
        headers: await devAuth(t, h.partner),
      });
      expect(res.statusCode).toBe(204);
      receiver.releaseHung(200, h.path);
      await waitFor(() => receiver.hungCount(h.path) === 0);
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await deliveryRow(id)).toBeUndefined();
    } finally {
      await worker.stop();
    }
  });
});

describe('outcomes written in batches', () => {
  it('outcomes finishing together are written as one batch; each is fenced by its own lease and a delivery resets the streak', async () => {
    const h = await setup();
    const ids = [await ping(t, h.partner, h.hook.id), await ping(t, h.partner, h.hook.id), await ping(t, h.partner, h.hook.id)];
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 7 WHERE id = $1', [h.hook.id]);
    const claimed = await claimAsAWorker();
    expect(claimed.map((c) => c.id).sort()).toEqual([...ids].sort());
    const [a, b, c] = claimed;
    const writer = new OutcomeWriter(t.ctx.db);
    const now = t.clock.nowMs();
    const attempt = (durationMs: number) => ({
      startedAtMs: now - durationMs,
      durationMs,
      requestHeaders: { 'content-type': 'application/json' },
      responseHeaders: { 'content-type': 'text/plain' },
      responseBody: 'ok',
    });
    const [ra, rb, rc] = await Promise.all([
      writer.record({ claimed: a, statusCode: 204, error: null, atMs: now, attempt: attempt(12) }),
      writer.record({ claimed: b, statusCode: 503, error: 'HTTP 503', atMs: now, attempt: attempt(34) }),
      // A lease this attempt no longer holds (taken over, or redelivered): its outcome is dropped.
      writer.record({ claimed: { ...c, leaseToken: newId() }, statusCode: 204, error: null, atMs: now, attempt: attempt(5) }),
    ]);
    expect(ra?.delivery).toMatchObject({ id: a.id, status: 'DELIVERED', attempts: 1, status_code: 204, last_error: null });
    expect(ra?.delivery.delivered_at?.getTime()).toBe(now);
    expect(rb?.delivery).toMatchObject({ id: b.id, status: 'FAILED', attempts: 1, status_code: 503, last_error: 'HTTP 503' });
    expect(rb?.delivery.next_attempt_at?.getTime()).toBe(now + 60_000);
    expect(rc).toBeNull();
    expect(await deliveryRow(c.id)).toMatchObject({ status: 'PENDING', attempts: 0 });
    // Each attempt is logged by the same statement; the dropped one is not; the reset streak comes back once.
    const logged = await t.ctx.db.query<{ delivery_id: string; number: number; duration_ms: number; outcome: string }>(
      'SELECT delivery_id, number, duration_ms, outcome FROM webhook_delivery_attempts WHERE webhook_id = $1 ORDER BY duration_ms',
      [h.hook.id],
    );
    expect(logged).toEqual([
      { delivery_id: a.id, number: 1, duration_ms: 12, outcome: 'DELIVERED' },
      { delivery_id: b.id, number: 1, duration_ms: 34, outcome: 'FAILED' },
    ]);
    expect(ra?.webhook).toMatchObject({ id: h.hook.id, consecutiveFailures: 0 });
    expect(rb?.webhook).toBeNull();
    const [hook] = await t.ctx.db.query<{ consecutive_failures: number }>(
      'SELECT consecutive_failures FROM webhooks WHERE id = $1',
      [h.hook.id],
    );
    expect(hook.consecutive_failures).toBe(0);
  });
});

describe('stopping', () => {
  it('stop() lets an attempt in flight finish and record its outcome', async () => {
    const h = await setup();
    receiver.on(h.path, { delayMs: 300 });
    const worker = startWorker(t.ctx, { pollIntervalMs: 20 });
    const id = await ping(t, h.partner, h.hook.id);
    await waitFor(() => receiver.inFlightOn(h.path) === 1);
    await worker.stop();
    expect(await deliveryRow(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, locked_until: null });
  });

  it('stop() cuts short what outlasts its grace and hands the row back for another worker at once', async () => {
    const h = await setup();
    receiver.on(h.path, { hang: true });
    const worker = startWorker(t.ctx, { pollIntervalMs: 20, stopTimeoutMs: 100 });
    const id = await ping(t, h.partner, h.hook.id);
    await waitFor(() => receiver.hungCount(h.path) === 1);
    const started = Date.now();
    await worker.stop();
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(await deliveryRow(id)).toMatchObject({ status: 'PENDING', attempts: 0, locked_until: null });

    receiver.on(h.path, { status: 200 });
    const next = startWorker(t.ctx, { pollIntervalMs: 20 });
    try {
      await waitForDeliveries(t, h.partner, h.hook.id, (items) => items[0]?.status === 'DELIVERED');
    } finally {
      await next.stop();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('two processes on one PostgreSQL server', () => {
  let second: TestApp;
  beforeAll(async () => {
    second = await createSecondApp(t);
    // The second "process" has its own test clock; bring it to where this file has moved the first.
    second.clock.advance(Math.max(0, t.clock.nowMs() - second.clock.nowMs()) / 1000);
  });
  afterAll(async () => {
    await second?.close();
  });

  it('workers in two processes never send a delivery twice', async () => {
    const hooks = await Promise.all([setup(), setup()]);
    const a = startWorker(t.ctx, { concurrency: 3, pollIntervalMs: 20 });
    const b = startWorker(second.ctx, { concurrency: 3, pollIntervalMs: 20 });
    try {
      for (const h of hooks) receiver.on(h.path, { delayMs: 10 });
      const queued: string[] = [];
      for (let i = 0; i < 10; i++) {
        queued.push(await ping(t, hooks[0].partner, hooks[0].hook.id));
        queued.push(await ping(second, hooks[1].partner, hooks[1].hook.id));
      }
      for (const h of hooks) {
        await waitForDeliveries(
          t,
          h.partner,
          h.hook.id,
          (items) => items.length === 10 && items.every((d) => d.status === 'DELIVERED'),
          15_000,
        );
      }
      const received = hooks.flatMap((h) => deliveryIdsReceived(h.path));
      expect(received.sort()).toEqual([...queued].sort());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a ping queued by one process is sent by the worker of another at once (LISTEN/NOTIFY, not the poll)', async () => {
    const h = await setup();
    // The only worker polls once a minute: only NOTIFY can make it act quickly.
    const worker = startWorker(second.ctx, { pollIntervalMs: 60_000 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300)); // LISTEN established
      const started = Date.now();
      await ping(t, h.partner, h.hook.id);
      await waitForDeliveries(t, h.partner, h.hook.id, (items) => items[0]?.status === 'DELIVERED');
      expect(Date.now() - started).toBeLessThan(10_000); // the poll alone would take 60 s
    } finally {
      await worker.stop();
    }
  });
});
