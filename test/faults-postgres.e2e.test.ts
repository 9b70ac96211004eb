/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'): PostgreSQL outages under traffic and during webhook attempts.
 * Server mode only; how the faults are injected: test/faults.test-helpers.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_DB_TIMEOUT_MS } from '../src/db/db.js';
import { createWebhookVia, devAuth } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { startWorker } from '../src/worker/worker.js';
import { createKey, createPartner, type TestPartner } from './factories.js';
import { FaultProxy } from './fault-proxy.js';
import {
  type Answer,
  databaseUrl,
  directQuery,
  isUnavailableEnvelope,
  logCapture,
  sandboxOrders,
  serverMode,
  timed,
} from './faults.test-helpers.js';
import { createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';
import { WebhookReceiver } from './webhook-receiver.js';

describe.skipIf(!serverMode)('PostgreSQL outage', () => {
  let pgProxy: FaultProxy;
  beforeAll(async () => {
    pgProxy = await FaultProxy.startFor(databaseUrl as string);
  });
  afterAll(() => pgProxy.close());

  /** An app whose database is reached through the proxy, with the production deadline. */
  async function appBehindProxy(log: ReturnType<typeof logCapture>['log']): Promise<TestApp> {
    pgProxy.pass();
    const t = await createTestApp({ databaseUrl: (url) => pgProxy.url(url), dbTimeoutMs: DEFAULT_DB_TIMEOUT_MS, log });
    onTestFinished(async () => {
      pgProxy.pass();
      await t.close();
    });
    return t;
  }

  it('resetting every connection mid-traffic: 503 envelopes within 2 s, /readyz flips and back, recovery within 2 s, every event answered 2xx committed and delivered, the outage logged once', async () => {
    const { capture, t, receiver } = await appWithWorker();

    const partner = await createPartner(t.ctx);
    // Out of the rate limit's way however fast the machine runs the loops below (503s are retried at once).
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 1_000_000 });
    const hookId = (
      await createWebhookVia(t, await devAuth(t, partner), {
        apiKeyId: key.id,
        url: receiver.url('/pg'),
        events: ['order.status_changed'],
      })
    ).id;
    const codes = await sandboxOrders(t, key, 24);

    // Four clients: each walks its own orders through PICKED_UP and EN_ROUTE and reads them back; two
    // send an Idempotency-Key, two do not (all go through the group commit). A 503 is retried.
    const answers: Answer[] = [];
    const committed: Array<{ code: string; type: string }> = [];
    let stop = false;
    let finished = 0;
    const client = async (index: number) => {
      const mine = codes.filter((_, i) => i % 4 === index);
      const idempotent = index < 2;
      for (const type of ['PICKED_UP', 'EN_ROUTE']) {
        for (const code of mine) {
          const idempotencyKey = randomUUID();
          for (;;) {
            if (stop) return;
            const a = await timed(t.sandbox, {
              method: 'POST',
              url: `/v1/partner/orders/${code}/events`,
              headers: { ...key.headers, ...(idempotent ? { 'idempotency-key': idempotencyKey } : {}) },
              payload: { type },
            });
            answers.push(a);
            if (a.status === 201) committed.push({ code, type });
            // Without an Idempotency-Key, a 503 whose COMMIT did reach the database is answered 409
            // when repeated: the event is in, move on (checked below like any other).
            if (a.status !== 503) break;
            answers.push(await timed(t.sandbox, { method: 'GET', url: `/v1/partner/orders/${code}`, headers: key.headers }));
          }
        }
      }
      finished++;
      // Reads go on until the end, one per turn of the event loop: a read answered from this process's
      // caches involves no I/O, and a loop of them without a yield would starve the other clients'
      // database round trips until their deadlines pass (a load no real client over a socket makes).
      while (!stop) {
        answers.push(await timed(t.sandbox, { method: 'GET', url: `/v1/partner/orders/${mine[0]}`, headers: key.headers }));
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    onTestFinished(async () => {
      stop = true;
      await Promise.allSettled(clients);
    });

    await waitFor(() => committed.length >= 8);
    const downAtMs = Date.now();
    pgProxy.down();
    // While it is down: every request needing the database answers the 503 envelope; /readyz too.
    await waitFor(() => answers.filter((a) => a.startedMs > downAtMs && a.status === 503).length >= 20);
    const ready = await timed(t.live, { method: 'GET', url: '/readyz' });
    expect(isUnavailableEnvelope(ready), ready.body).toBe(true);
    expect((await t.live.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    const upAtMs = Date.now();
    pgProxy.pass();
    const firstSuccess = await waitFor(() => answers.find((a) => a.startedMs >= upAtMs && a.status < 300));
    const firstSuccessMs = firstSuccess.startedMs + firstSuccess.ms;
    const readyAgain = await waitFor(
      async () => (await t.live.inject({ method: 'GET', url: '/readyz' })).statusCode === 200 && Date.now(),
    );
    expect(firstSuccessMs - upAtMs).toBeLessThan(2_000);
    expect(readyAgain - upAtMs).toBeLessThan(2_000);

    await waitFor(() => finished === 4, 30_000);
    stop = true;
    await Promise.all(clients);

    // During the outage: 503 envelopes, each within 2 s of arriving; nothing else but successes and 409s.
    const during = answers.filter((a) => a.startedMs >= downAtMs && a.startedMs < upAtMs);
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThanOrEqual(20);
    for (const a of answers) {
      expect([200, 201, 409, 503], a.body).toContain(a.status);
      if (a.status === 503) expect(isUnavailableEnvelope(a), a.body).toBe(true);
      if (a.startedMs >= downAtMs) expect(a.ms, a.body).toBeLessThan(2_000);
    }

    // Every event answered 2xx is in the database.
    const target: Record<string, string> = { PICKED_UP: 'SCANNED_TO_VAN', EN_ROUTE: 'EN_ROUTE' };
    const events = await directQuery<{ code: string; status: string }>(
      t,
      `SELECT o.code, e.status FROM order_events e JOIN orders o ON o.id = e.order_id
        WHERE o.assigned_key_id = $1 AND e.actor = 'PARTNER'`,
      [key.id],
    );
    for (const c of committed) expect(events, `${c.code} ${c.type}`).toContainEqual({ code: c.code, status: target[c.type] });

    // The worker rode it out: every committed event is delivered (as order.status_changed), none DEAD.
    await waitFor(async () => {
      const rows = await directQuery<{ status: string; body: string }>(
        t,
        'SELECT status, body FROM webhook_deliveries WHERE webhook_id = $1',
        [hookId],
      );
      const delivered = new Set(
        rows.map((r) => {
          const order = (JSON.parse(r.body) as { data: { order: { code: string; status: string } } }).data.order;
          return `${order.code} ${order.status}`;
        }),
      );
      return rows.every((r) => r.status === 'DELIVERED') && events.every((e) => delivered.has(`${e.code} ${e.status}`));
    }, 30_000);

    // One outage: logged once when it started and once when it ended, naming the dependency.
    expect(capture.count(/^PostgreSQL unavailable/)).toBe(1);
    expect(capture.count(/^PostgreSQL available again/)).toBe(1);
  }, 120_000);

  it('a delivery whose outcome could not be written is recorded once the database is back: sent once, DELIVERED, one attempt', async () => {
    const { rows, requests } = await attemptCutByOutage('/cut', [{ hang: true }], 200);
    expect(rows).toMatchObject([{ status: 'DELIVERED', attempts: 1, status_code: 200 }]);
    expect(requests).toHaveLength(1);
  }, 60_000);

  it('an attempt cut short by the outage is not counted against the endpoint and is retried once the database is back', async () => {
    // The first request hangs and then fails (500) while our database is out; the next one succeeds.
    const { rows, requests } = await attemptCutByOutage('/retry', [{ hang: true }, { status: 200 }], 500);
    // Two requests reached the endpoint, but only the one whose outcome could be written counts.
    expect(requests).toHaveLength(2);
    expect(rows).toMatchObject([{ status: 'DELIVERED', attempts: 1, status_code: 200, last_error: null }]);
  }, 60_000);

  /** An app behind the proxy with its log captured, a webhook receiver and a running worker. */
  async function appWithWorker() {
    const capture = logCapture();
    const t = await appBehindProxy(capture.log);
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    const worker = startWorker(t.ctx, { pollIntervalMs: 100 });
    onTestFinished(() => worker.stop());
    return { capture, t, receiver };
  }

  /**
   * A webhook attempt in flight when the database goes down: the endpoint at `path` answers `replies`
   * (the first hangs), the hung request is released with `releaseStatus` while the database is out, and
   * the delivery's rows come back once the database is back and the delivery is DELIVERED.
   */
  async function attemptCutByOutage(path: string, replies: Array<{ hang?: boolean; status?: number }>, releaseStatus: number) {
    const { capture, t, receiver } = await appWithWorker();
    const { partner, hookId } = await webhookOf(t, receiver, path, replies);

    await ping(t, partner, hookId);
    await waitFor(() => receiver.hungCount(path) === 1);
    pgProxy.down();
    receiver.releaseHung(releaseStatus, path);
    await waitFor(() => capture.count(/attempt outcome not written/) === 1);
    pgProxy.pass();

    const rows = await waitFor(async () => {
      const found = await deliveryRows(t, hookId);
      return found[0]?.status === 'DELIVERED' && found;
    }, 20_000);
    return { rows, requests: receiver.requestsTo(path) };
  }

  async function webhookOf(
    t: TestApp,
    receiver: WebhookReceiver,
    path: string,
    replies: Array<{ hang?: boolean; status?: number }>,
  ) {
    receiver.on(path, (_request, index) => replies[Math.min(index, replies.length - 1)]);
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    return {
      partner,
      key,
      hookId: (
        await createWebhookVia(t, await devAuth(t, partner), {
          apiKeyId: key.id,
          url: receiver.url(path),
          events: ['order.status_changed'],
        })
      ).id,
    };
  }

  async function ping(t: TestApp, partner: TestPartner, hookId: string) {
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/webhooks/${hookId}/test`,
      headers: await devAuth(t, partner),
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  function deliveryRows(t: TestApp, hookId: string) {
    return directQuery<{ status: string; attempts: number; status_code: number | null; last_error: string | null }>(
      t,
      'SELECT status, attempts, status_code, last_error FROM webhook_deliveries WHERE webhook_id = $1',
      [hookId],
    );
  }
});
