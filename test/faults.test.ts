/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'), injected for real: a fault proxy (test/fault-proxy.ts) stands
 * between the app and the machine's PostgreSQL server and Redis, and resets, refuses or blackholes
 * their connections while requests and deliveries are in flight. The app, its worker and a second app
 * instance are the real code in this process: an error that escaped every handler would reach Vitest as
 * an unhandled error and fail the run, with no process-level net to hide it.
 *
 * Server mode only: the embedded database runs inside the process and cannot be cut off.
 * Nothing here sleeps to let things settle: every wait is for a condition, with a deadline.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_DB_TIMEOUT_MS, openDb } from '../src/db/db.js';
import { DependencyHealth } from '../src/dependencies.js';
import { createLogger } from '../src/logger.js';
import { devAuth, waitFor as waitForValue } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { connectRedis, duplicateRedis, REDIS_COMMAND_TIMEOUT_MS } from '../src/redis.js';
import { startRole } from '../src/roles.js';
import { startWorker } from '../src/worker/worker.js';
import { createKey, createPartner, type TestKey, type TestPartner } from './factories.js';
import { FaultProxy } from './fault-proxy.js';
import { createSecondApp, createTestApp, freshDatabase, type TestApp, testConfig } from './harness.js';
import { WebhookReceiver } from './webhook-receiver.js';

const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
const serverMode = Boolean(databaseUrl && redisUrl);
if (!serverMode) {
  console.info('test/faults.test.ts: skipped (needs DATABASE_URL and REDIS_URL: the embedded database cannot be cut off)');
}

/** Waits (polling, with a deadline) until `fn` gives a truthy value, and returns it. */
async function waitFor<T>(
  fn: () => T | Promise<T>,
  timeoutMs = 15_000,
  what = fn.toString(),
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  try {
    return (await waitForValue(fn, timeoutMs)) as Exclude<T, false | null | undefined | 0 | ''>;
  } catch (err) {
    throw new Error(`not met within ${timeoutMs} ms: ${what.replace(/\s+/g, ' ').slice(0, 300)}`, { cause: err });
  }
}

/** Log lines written by an app, parsed, for the "logged once" checks. */
function logCapture() {
  const lines: Array<Record<string, unknown> & { msg: string; level: number }> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { log: createLogger('debug', sink), lines, count: (re: RegExp) => lines.filter((l) => re.test(l.msg)).length };
}

/** The same database, reached directly (not through the proxy): to check what was committed. */
function directUrl(proxiedUrl: string): string {
  const url = new URL(proxiedUrl);
  const direct = new URL(databaseUrl as string);
  url.hostname = direct.hostname;
  url.port = direct.port;
  return url.toString();
}

async function directQuery<R extends pg.QueryResultRow>(t: TestApp, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: directUrl(t.ctx.config.databaseUrl as string) });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

interface Answer {
  startedMs: number;
  ms: number;
  status: number;
  body: string;
}

async function timed(app: FastifyInstance, options: InjectOptions): Promise<Answer> {
  const startedMs = Date.now();
  const res = await app.inject(options);
  return { startedMs, ms: Date.now() - startedMs, status: res.statusCode, body: res.body };
}

function isUnavailableEnvelope(a: Answer): boolean {
  const body = JSON.parse(a.body) as Record<string, unknown>;
  return (
    a.status === 503 &&
    body.statusCode === 503 &&
    body.code === 'ERR_DEPENDENCY_UNAVAILABLE' &&
    typeof body.message === 'string' &&
    Object.keys(body).every((k) => ['statusCode', 'code', 'message'].includes(k))
  );
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

async function sandboxOrders(t: TestApp, key: TestKey, n: number): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key.headers });
    expect(res.statusCode, res.body).toBe(201);
    codes.push(res.json().code);
  }
  return codes;
}

describe.skipIf(!serverMode)('no dependency fault ends a process', () => {
  /** A database of this test's own, reached through a proxy. */
  async function proxiedDatabase(timeoutMs: number) {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const proxy = await FaultProxy.startFor(databaseUrl as string);
    onTestFinished(() => proxy.close());
    const db = await openDb({ databaseUrl: proxy.url(fresh.url as string), dataDir: '', timeoutMs });
    onTestFinished(async () => {
      proxy.pass();
      await db.close();
    });
    return { proxy, db, directUrl: fresh.url as string };
  }

  it('pg clients checked out, idle, in a transaction and LISTENing lose their connections: every error is handled', async () => {
    const { proxy, db, directUrl: direct } = await proxiedDatabase(DEFAULT_DB_TIMEOUT_MS);
    await db.query('SELECT 1');
    let listening = 0;
    const stopListening = db.listen(
      ['faults_probe'],
      () => {},
      () => listening++,
    );
    onTestFinished(() => stopListening());
    await waitFor(() => listening === 1);
    const checkedOut = await db.connect();
    let released = false;
    onTestFinished(() => {
      if (!released) checkedOut.release(true);
    });
    const settled = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (err: unknown) => err,
      );
    const inTransaction = settled(
      db.tx(async (q) => {
        await q.query('SELECT 1');
        await q.query("SELECT pg_sleep(5), 'faults-probe'");
      }),
    );
    const statement = settled(db.query("SELECT pg_sleep(5), 'faults-probe'"));
    // Both statements are running on the server (seen from a connection of the test's own).
    const probe = new pg.Client({ connectionString: direct });
    await probe.connect();
    onTestFinished(() => probe.end());
    await waitFor(async () => {
      const { rows } = await probe.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(5), ''faults-probe''' AND state = 'active'",
      );
      return rows[0].n === 2;
    });

    proxy.resetAll();
    // The checked-out client got pg's 'error' event (with no listener it would have thrown).
    await waitFor(() => (checkedOut as unknown as { _queryable: boolean })._queryable === false);
    checkedOut.release(true);
    released = true;
    expect(await inTransaction).toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect(await statement).toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect(db.health.available).toBe(false);
    // New connections work again at once, and the LISTEN connection comes back by itself.
    expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(db.health.available).toBe(true);
    await waitFor(() => listening === 2, 5_000);
  });

  it('a database that holds every byte: statements and transactions fail at their deadline and destroy the connection', async () => {
    const { proxy, db } = await proxiedDatabase(500);
    await db.query('SELECT 1');
    proxy.blackhole();
    const started = Date.now();
    const results = await Promise.allSettled([db.query('SELECT 1'), db.tx((q) => q.query('SELECT 1')), db.query('SELECT 2')]);
    expect(Date.now() - started).toBeLessThan(500 + 1_000);
    for (const r of results) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'ERR_DEPENDENCY_UNAVAILABLE' } });
    proxy.pass();
    expect(await waitFor(async () => (await db.query<{ one: number }>('SELECT 1 AS one').catch(() => []))[0]?.one)).toBe(1);
  });

  it('ioredis clients (commands, subscriber, duplicates) lose their connections with commands in flight that nobody awaits: every rejection is handled', async () => {
    const proxy = await FaultProxy.startFor(redisUrl as string);
    onTestFinished(() => proxy.close());
    const health = new DependencyHealth('Redis');
    const { log } = logCapture();
    const main = await connectRedis(proxy.url(redisUrl as string), log, health);
    const sub = duplicateRedis(main, log, 'sub', { subscriber: true });
    const pub = duplicateRedis(main, log, 'pub');
    onTestFinished(() => {
      for (const c of [main, sub, pub]) c.disconnect();
    });
    await sub.subscribe('faults-probe');
    await waitFor(() => pub.status === 'ready');

    proxy.blackhole();
    // Sent and never awaited, as the Socket.IO adapter does: they time out or fail, unobserved.
    for (let i = 0; i < 5; i++) {
      void pub.publish('faults-probe', 'x');
      void main.get('faults-probe');
    }
    await expect(main.get('faults-probe')).rejects.toThrow(/timed out|writeable|closed/i);
    expect(health.available).toBe(false);
    proxy.down();
    void pub.publish('faults-probe', 'y');
    await waitFor(() => main.status !== 'ready' && sub.status !== 'ready' && pub.status !== 'ready');
    proxy.pass();
    await waitFor(() => health.available && sub.status === 'ready' && pub.status === 'ready', 5_000);
    // The subscription came back with the connection.
    const got: string[] = [];
    sub.on('message', (_channel, message) => got.push(message));
    await waitFor(async () => {
      await pub.publish('faults-probe', 'back');
      return got.includes('back');
    }, 5_000);
  });
});

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
    const capture = logCapture();
    const t = await appBehindProxy(capture.log);
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    const worker = startWorker(t.ctx, { pollIntervalMs: 100 });
    onTestFinished(() => worker.stop());

    const partner = await createPartner(t.ctx);
    // Out of the rate limit's way however fast the machine runs the loops below (503s are retried at once).
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 1_000_000 });
    const hookRes = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: await devAuth(t, partner),
      payload: { apiKeyId: key.id, url: receiver.url('/pg'), events: ['order.status_changed'] },
    });
    expect(hookRes.statusCode, hookRes.body).toBe(201);
    const hookId = hookRes.json().id as string;
    const codes = await sandboxOrders(t, key, 24);

    // Four clients: each walks its own orders through PICKED_UP and EN_ROUTE and reads them back; two
    // send an Idempotency-Key (their own transaction), two do not (the group commit). A 503 is retried.
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
      while (!stop) {
        answers.push(await timed(t.sandbox, { method: 'GET', url: `/v1/partner/orders/${mine[0]}`, headers: key.headers }));
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
    const capture = logCapture();
    const t = await appBehindProxy(capture.log);
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    const worker = startWorker(t.ctx, { pollIntervalMs: 100 });
    onTestFinished(() => worker.stop());
    const { partner, hookId } = await webhookOf(t, receiver, '/cut', [{ hang: true }]);

    await ping(t, partner, hookId);
    await waitFor(() => receiver.hungCount('/cut') === 1);
    pgProxy.down();
    receiver.releaseHung(200, '/cut');
    await waitFor(() => capture.count(/attempt outcome not written/) === 1);
    pgProxy.pass();

    const rows = await waitFor(async () => {
      const found = await deliveryRows(t, hookId);
      return found[0]?.status === 'DELIVERED' && found;
    }, 20_000);
    expect(rows).toMatchObject([{ status: 'DELIVERED', attempts: 1, status_code: 200 }]);
    expect(receiver.requestsTo('/cut')).toHaveLength(1);
  }, 60_000);

  it('an attempt cut short by the outage is not counted against the endpoint and is retried once the database is back', async () => {
    const capture = logCapture();
    const t = await appBehindProxy(capture.log);
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    const worker = startWorker(t.ctx, { pollIntervalMs: 100 });
    onTestFinished(() => worker.stop());
    // The first request hangs and then fails (500) while our database is out; the next one succeeds.
    const { partner, hookId } = await webhookOf(t, receiver, '/retry', [{ hang: true }, { status: 200 }]);

    await ping(t, partner, hookId);
    await waitFor(() => receiver.hungCount('/retry') === 1);
    pgProxy.down();
    receiver.releaseHung(500, '/retry');
    await waitFor(() => capture.count(/attempt outcome not written/) === 1);
    pgProxy.pass();

    const rows = await waitFor(async () => {
      const found = await deliveryRows(t, hookId);
      return found[0]?.status === 'DELIVERED' && found;
    }, 20_000);
    // Two requests reached the endpoint, but only the one whose outcome could be written counts.
    expect(receiver.requestsTo('/retry')).toHaveLength(2);
    expect(rows).toMatchObject([{ status: 'DELIVERED', attempts: 1, status_code: 200, last_error: null }]);
  }, 60_000);

  async function webhookOf(
    t: TestApp,
    receiver: WebhookReceiver,
    path: string,
    replies: Array<{ hang?: boolean; status?: number }>,
  ) {
    receiver.on(path, (_request, index) => replies[Math.min(index, replies.length - 1)]);
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: await devAuth(t, partner),
      payload: { apiKeyId: key.id, url: receiver.url(path), events: ['order.status_changed'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    return { partner, key, hookId: res.json().id as string };
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

describe.skipIf(!serverMode)('Redis outage', () => {
  let redisProxy: FaultProxy;
  beforeAll(async () => {
    redisProxy = await FaultProxy.startFor(redisUrl as string);
  });
  afterAll(() => redisProxy.close());

  it('blackholed, then refused: answers keep coming (p99 under 1 s), a key revoked meanwhile is refused by the other instance within 5 s, shared limits resume within 5 s after, each outage logged once', async () => {
    const capture = logCapture();
    const viaProxy = { REDIS_URL: redisProxy.url(redisUrl as string) };
    const a = await createTestApp({ env: viaProxy, log: capture.log });
    onTestFinished(() => a.close());
    const b = await createSecondApp(a, viaProxy);
    onTestFinished(() => b.close());

    const partner = await createPartner(a.ctx);
    // A limit the loops below cannot reach however fast the machine is: while Redis is out each process
    // keeps its own window, and the default 600 a minute turned every answer of a fast run into a 429.
    const reader = await createKey(a.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 1_000_000 });
    const doomed = await createKey(a.ctx, partner.id, { environment: 'SANDBOX' });
    const [code] = await sandboxOrders(a, reader, 1);

    // Clients on both instances: reads of one order (the cached path), lists and /me, with two keys.
    const answers: Answer[] = [];
    let stop = false;
    const client = async (app: TestApp, i: number) => {
      const urls = [`/v1/partner/orders/${code}`, '/v1/partner/orders?pageSize=5', '/v1/partner/me'];
      for (let n = i; !stop; n++) {
        answers.push(await timed(app.sandbox, { method: 'GET', url: urls[n % urls.length], headers: reader.headers }));
      }
    };
    const clients = [client(a, 0), client(a, 1), client(b, 0), client(b, 1)];
    onTestFinished(async () => {
      stop = true;
      await Promise.allSettled(clients);
    });
    const okSince = (ms: number) => answers.filter((x) => x.startedMs >= ms && x.status === 200).length;
    // The doomed key is in both instances' key caches before the outage.
    for (const app of [a, b]) {
      expect((await app.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: doomed.headers })).statusCode).toBe(200);
    }
    await waitFor(() => okSince(0) >= 40);

    // 1. Blackhole: Redis holds every byte and answers nothing.
    const outageMs = Date.now();
    redisProxy.blackhole();
    await waitFor(() => !a.ctx.redisHealth.available && !b.ctx.redisHealth.available);
    const revoke = await timed(a.live, {
      method: 'DELETE',
      url: `/v1/developer/keys/${doomed.id}`,
      headers: await devAuth(a, partner),
    });
    expect(revoke.status, revoke.body).toBe(200);
    const revokedMs = Date.now();
    const refusedMs = await waitFor(async () => {
      const res = await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: doomed.headers });
      return res.statusCode === 401 && res.json().code === 'ERR_API_KEY_REVOKED' && Date.now();
    }, 10_000);
    expect(refusedMs - revokedMs).toBeLessThan(5_000);
    await waitFor(() => okSince(revokedMs) >= 60);

    // 2. Refused: every connection reset, new ones reset at once.
    const refusedFromMs = Date.now();
    redisProxy.down();
    await waitFor(() => okSince(refusedFromMs) >= 60);

    // 3. Back.
    const backMs = Date.now();
    redisProxy.pass();
    await waitFor(() => a.ctx.redisHealth.available && b.ctx.redisHealth.available, 10_000);
    expect(Date.now() - backMs).toBeLessThan(5_000);
    stop = true;
    await Promise.all(clients);

    const during = answers.filter((x) => x.startedMs >= outageMs && x.startedMs < backMs);
    // (At least 60 answered in each of the two phases above: enough for a p99 that means something.)
    expect(during.length).toBeGreaterThanOrEqual(120);
    expect(during.every((x) => x.status === 200)).toBe(true);
    expect(p99(during.map((x) => x.ms))).toBeLessThan(1_000);
    // No call waited much past its deadline.
    expect(Math.max(...during.map((x) => x.ms))).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS * 4 + 1_000);

    // Shared rate limits again: 10 a minute across both instances, not 10 each.
    const limited = await createKey(a.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const app = i % 2 === 0 ? a : b;
      statuses.push((await app.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: limited.headers })).statusCode);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429]);

    // The key cache is shared again too: a revocation is seen by the other instance on its next request.
    const later = await createKey(a.ctx, partner.id, { environment: 'SANDBOX' });
    expect((await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: later.headers })).statusCode).toBe(200);
    const revokeLater = await a.live.inject({
      method: 'DELETE',
      url: `/v1/developer/keys/${later.id}`,
      headers: await devAuth(a, partner),
    });
    expect(revokeLater.statusCode).toBe(200);
    expect((await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: later.headers })).statusCode).toBe(401);

    // One outage (blackhole and refusal back to back), logged once at its start and once at its end.
    expect(capture.count(/^Redis unavailable/)).toBe(1);
    expect(capture.count(/^Redis available again/)).toBe(1);
  }, 120_000);
});

describe.skipIf(!serverMode)('the worker process', () => {
  let pgProxy: FaultProxy;
  let redisProxy: FaultProxy;
  beforeAll(async () => {
    pgProxy = await FaultProxy.startFor(databaseUrl as string);
    redisProxy = await FaultProxy.startFor(redisUrl as string);
  });
  afterAll(async () => {
    await pgProxy.close();
    await redisProxy.close();
  });

  it('rides out a Redis outage and then a PostgreSQL outage, and delivers what was queued meanwhile', async () => {
    const api = await createTestApp();
    onTestFinished(() => api.close());
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    // The worker role, as `main.ts worker` starts it, reaching both dependencies through the proxies.
    const config = testConfig({
      DATABASE_URL: pgProxy.url(api.ctx.config.databaseUrl as string),
      REDIS_URL: redisProxy.url(redisUrl as string),
      REDIS_KEY_PREFIX: api.ctx.config.redisKeyPrefix,
    });
    const worker = await startRole(config, { kind: 'worker' });
    onTestFinished(async () => {
      pgProxy.pass();
      redisProxy.pass();
      await worker.stop();
    });

    const partner = await createPartner(api.ctx);
    const key = await createKey(api.ctx, partner.id);
    const res = await api.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: await devAuth(api, partner),
      payload: { apiKeyId: key.id, url: receiver.url('/w'), events: ['order.status_changed'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    const hookId = res.json().id as string;
    const pingVia = async () => {
      const sent = await api.live.inject({
        method: 'POST',
        url: `/v1/developer/webhooks/${hookId}/test`,
        headers: await devAuth(api, partner),
      });
      expect(sent.statusCode, sent.body).toBe(200);
    };

    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 1);

    // Redis: blackholed, then refused. The worker publishes realtime updates through it all along (and
    // needs it for nothing else: its own idle connection notices the outage only once it is refused).
    redisProxy.blackhole();
    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 2);
    redisProxy.down();
    await waitFor(() => !worker.ctx.redisHealth.available);
    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 3);
    redisProxy.pass();
    await waitFor(() => worker.ctx.redisHealth.available, 10_000);

    // PostgreSQL: every connection reset and refused; deliveries queued meanwhile wait, then go.
    pgProxy.down();
    await pingVia();
    await pingVia();
    await waitFor(() => !worker.ctx.db.health.available);
    expect(receiver.requestsTo('/w')).toHaveLength(3);
    pgProxy.pass();
    await waitFor(() => receiver.requestsTo('/w').length === 5, 20_000);
    await waitFor(async () => {
      const rows = await api.ctx.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE webhook_id = $1', [
        hookId,
      ]);
      return rows.length === 5 && rows.every((r) => r.status === 'DELIVERED');
    });
  }, 90_000);
});
