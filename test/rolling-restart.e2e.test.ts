/**
 * A rolling restart under load (docs/operating.md, "Restarts"): two API processes and two workers on the
 * PostgreSQL server, each replaced in turn (the new one started, then the old one sent SIGTERM) while
 * partners read orders and send events. What must hold:
 *  - every request a process accepted is answered (a refused connection was never accepted: the load
 *    balancer sends it to the other process), and every answer is a success;
 *  - a stopping API process answers /readyz 503 before its listener closes (SHUTDOWN_DRAIN_MS), so the
 *    load balancer takes it out before any connection is refused;
 *  - no webhook delivery is lost (each event answered 201 reaches the endpoint) or left leased: a
 *    stopping worker finishes or gives back what it holds, so nothing waits out a lease;
 *  - no request-log or usage entry of an answered request is lost.
 *
 * The load balancer is this file: it checks each process's /readyz every 25 ms (a health-check
 * interval, as a real one has) and sends requests, each on a connection of its own, only to processes
 * whose last check answered 200. Server mode only: processes share the database and Redis.
 */
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderFor } from '../src/modules/orders/orders.test-helpers.js';
import { createWebhookVia, devAuth } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { spawnOwned } from './child-processes.js';
import { createKey, createPartner, createUser, type TestKey } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';
import { WebhookReceiver } from './webhook-receiver.js';

const serverMode = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!serverMode) console.info('test/rolling-restart.e2e.test.ts: skipped (needs DATABASE_URL and REDIS_URL)');

/** Short in tests; what an operator sets is the load balancer's check interval times its failure threshold. */
const DRAIN_MS = 1_500;
const HEALTH_CHECK_INTERVAL_MS = 25;
/** The worker's lease (worker.ts): a delivery abandoned by a worker would wait this long to be retried. */
const LEASE_MS = 60_000;
// Up to the third failure: a fourth attempt after three failures is refused (409 ERR_DELIVERY_RETRY_LIMIT).
const EVENTS = ['PICKED_UP', 'EN_ROUTE', 'FAILED', 'EN_ROUTE', 'FAILED', 'EN_ROUTE', 'FAILED'];
const PARTNER_EVENT_STATUSES = new Set(['SCANNED_TO_VAN', 'EN_ROUTE', 'FAILED']);

interface Proc {
  name: string;
  child: ReturnType<typeof spawnOwned>;
  exited: Promise<number | null>;
  /** The live listener's port (API processes). */
  port: number | null;
}

interface Backend {
  proc: Proc;
  /** What this balancer's checks saw, consecutive repeats left out: 'ready', 'draining', 'refused', 'reset'. */
  seen: string[];
  /** Requests go here only while true. */
  inRotation: boolean;
  retired: boolean;
}

interface Answer {
  status: number;
  body: string;
  requestId: string | null;
}

/** One HTTP request on a connection of its own. Rejects with the socket error, if any. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { ...headers, connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text, requestId: (res.headers['x-request-id'] as string) ?? null }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.skipIf(!serverMode)('a rolling restart under load', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let key: TestKey;
  let direct: pg.Client;
  const codes: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    receiver = await WebhookReceiver.start();
    // Slow enough that a stopping worker has attempts in flight.
    receiver.on('/hook', { status: 200, delayMs: 100 });
    const partner = await createPartner(t.ctx);
    key = await createKey(t.ctx, partner.id, { rateLimit: 1_000_000 });
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    for (let i = 0; i < 12; i++) codes.push(await orderFor(t, admin, key.id, 'PACKED'));
    await createWebhookVia(t, await devAuth(t, partner), {
      apiKeyId: key.id,
      url: receiver.url('/hook'),
      events: ['order.status_changed'],
    });
    direct = new pg.Client({ connectionString: t.ctx.config.databaseUrl as string });
    await direct.connect();
  });
  afterAll(async () => {
    await direct?.end();
    await receiver?.close();
    await t?.close();
  });

  it('answers every accepted request, takes each process out before it closes, and loses no delivery or log entry', async () => {
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: 'off',
      DATABASE_URL: t.ctx.config.databaseUrl as string,
      REDIS_URL: process.env.REDIS_URL as string,
      REDIS_KEY_PREFIX: t.ctx.config.redisKeyPrefix,
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      TEST_CLOCK: '',
      OTP_FIXED_CODE: '',
    };
    let serial = 0;
    /**
     * The built entry point (`dist/src/main.js <args>`, rebuilt by the e2e set-up when stale; see
     * test/main-process.ts for why not src/main.ts through tsx) as a child; resolves once it logged
     * `started` (with its live port).
     */
    const start = async (args: string[]): Promise<Proc> => {
      const name = `${args[0]}-${++serial}`;
      const child = spawnOwned(process.execPath, ['dist/src/main.js', ...args], { env, deadlineMs: 300_000 });
      let buffered = '';
      let errors = '';
      let started: ((port: number | null) => void) | null = null;
      const startedPort = new Promise<number | null>((resolve) => {
        started = resolve;
      });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.includes('"started"')) continue;
          const entry = JSON.parse(line) as { msg: string; port?: number };
          if (entry.msg === 'started') started?.(args[0] === 'api' ? (entry.port ?? null) : null);
        }
      });
      child.stderr.on('data', (d) => {
        errors += d;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const port = await Promise.race([
        startedPort,
        exited.then((code) => {
          throw new Error(`${name} exited (${code}) before it started: ${errors}`);
        }),
      ]);
      return { name, child, exited, port };
    };

    // --- the load balancer ---
    const backends: Backend[] = [];
    let checking = true;
    const check = async (backend: Backend) => {
      const note = (state: string) => {
        if (backend.seen.at(-1) !== state) backend.seen.push(state);
      };
      while (checking) {
        try {
          const res = await send(backend.proc.port as number, 'GET', '/readyz', {});
          note(res.status === 200 ? 'ready' : 'draining');
          backend.inRotation = res.status === 200 && !backend.retired;
        } catch (err) {
          // Refused, or reset: a check that connected as the listener closed (the connection not yet
          // read, so idle, is closed with it). A request is never sent after a 503, only checks.
          note((err as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? 'refused' : 'reset');
          backend.inRotation = false;
          if (backend.retired) return;
        }
        await sleep(HEALTH_CHECK_INTERVAL_MS);
      }
    };
    const checks: Promise<void>[] = [];
    const addBackend = async (proc: Proc) => {
      const backend: Backend = { proc, seen: [], inRotation: false, retired: false };
      backends.push(backend);
      checks.push(check(backend));
      await waitFor(() => backend.inRotation, { timeoutMs: 60_000, what: `${proc.name} in rotation` });
      return backend;
    };

    const answered: Array<{ method: string; path: string; answer: Answer }> = [];
    const unanswered: string[] = [];
    let refusedConnections = 0;
    /** Sends through the balancer: a refused connection (never accepted) goes to another process. */
    const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
      for (;;) {
        const backend = await waitFor(
          () => {
            const ready = backends.filter((b) => b.inRotation);
            return ready[Math.floor(Math.random() * ready.length)];
          },
          { timeoutMs: 60_000, what: 'a process in rotation' },
        );
        try {
          const answer = await send(backend.proc.port as number, method, path, headers, body);
          answered.push({ method, path, answer });
          return answer;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') {
            refusedConnections++;
            backend.inRotation = false;
            continue;
          }
          unanswered.push(`${method} ${path} on ${backend.proc.name}: ${(err as Error).message}`);
          return null;
        }
      }
    };

    // --- the processes ---
    const apis = [await start(['api', '--env', 'live']), await start(['api', '--env', 'live'])];
    const workers = [await start(['worker']), await start(['worker'])];
    const apiBackends = [];
    for (const api of apis) apiBackends.push(await addBackend(api));

    // --- the load: partners reading their orders and moving them along ---
    let loading = true;
    const eventsAnswered = new Map<string, number>(codes.map((c) => [c, 0]));
    const loop = async (mine: string[]) => {
      const next = new Map(mine.map((c) => [c, 0]));
      for (let i = 0; loading; i++) {
        const code = mine[i % mine.length];
        await call('GET', `/v1/partner/orders/${code}`, key.headers);
        const n = next.get(code) ?? 0;
        if (n < EVENTS.length) {
          const answer = await call(
            'POST',
            `/v1/partner/orders/${code}/events`,
            { ...key.headers, 'idempotency-key': `${code}-${n}` },
            JSON.stringify(EVENTS[n] === 'FAILED' ? { type: 'FAILED', failReason: 'NOT_HOME' } : { type: EVENTS[n] }),
          );
          if (answer?.status === 201) {
            next.set(code, n + 1);
            eventsAnswered.set(code, (eventsAnswered.get(code) ?? 0) + 1);
          }
        }
      }
    };
    const loops = [0, 1, 2].map((k) => loop(codes.filter((_, i) => i % 3 === k)));
    const progress = async (more: number) => {
      const target = answered.length + more;
      await waitFor(() => answered.length >= target, { timeoutMs: 60_000, what: `${more} more answers` });
    };

    // --- the rolling restart: each process replaced in turn, the new one first ---
    const exits: Array<{ name: string; code: number | null }> = [];
    const stopped: Backend[] = [];
    await progress(30);
    for (let i = 0; i < apis.length; i++) {
      const replacement = await start(['api', '--env', 'live']);
      await addBackend(replacement);
      const old = apiBackends[i];
      old.retired = true;
      old.proc.child.kill('SIGTERM');
      exits.push({ name: old.proc.name, code: await old.proc.exited });
      stopped.push(old);
      apis[i] = replacement;
      await progress(30);
    }
    for (let i = 0; i < workers.length; i++) {
      const replacement = await start(['worker']);
      workers[i].child.kill('SIGTERM');
      exits.push({ name: workers[i].name, code: await workers[i].exited });
      workers[i] = replacement;
      await progress(30);
    }

    // --- load ends; every process stops the same way (SIGTERM), so what each holds is flushed ---
    loading = false;
    await Promise.all(loops);
    for (const backend of backends) backend.retired = true;
    for (const proc of [...apis, ...workers]) proc.child.kill('SIGTERM');
    for (const proc of [...apis, ...workers]) exits.push({ name: proc.name, code: await proc.exited });
    checking = false;
    await Promise.all(checks);

    // Every accepted request answered, and with a success.
    expect(unanswered).toEqual([]);
    const failures = answered.filter((a) => a.answer.status !== (a.method === 'POST' ? 201 : 200));
    expect(failures.map((f) => `${f.method} ${f.path}: ${f.answer.status} ${f.answer.body}`)).toEqual([]);
    expect(
      exits.every((e) => e.code === 0),
      JSON.stringify(exits),
    ).toBe(true);
    // Readiness went down (503) before the listener closed, for each process stopped under load.
    for (const backend of stopped) {
      const { seen } = backend;
      const gone = seen.findIndex((state) => state === 'refused' || state === 'reset');
      expect(seen.indexOf('draining'), `${backend.proc.name}: ${seen.join(' → ')}`).toBeGreaterThan(seen.indexOf('ready'));
      expect(gone, `${backend.proc.name}: ${seen.join(' → ')}`).toBeGreaterThan(seen.indexOf('draining'));
    }
    const events = [...eventsAnswered.values()].reduce((a, b) => a + b, 0);
    expect(events).toBeGreaterThan(20);

    // No delivery lost: each event answered 201 reached the endpoint (a delivery attempted twice, its
    // first attempt cut short by a stop, counts once: by event id).
    const received = new Map<string, Set<string>>(codes.map((c) => [c, new Set()]));
    for (const r of receiver.requestsTo('/hook')) {
      const body = JSON.parse(r.body) as { id: string; type: string; data: { order?: { code: string; status: string } } };
      const order = body.data.order;
      if (body.type === 'order.status_changed' && order && PARTNER_EVENT_STATUSES.has(order.status)) {
        received.get(order.code)?.add(body.id);
      }
    }
    // Deliveries still being worked when the last worker stopped were given back: a worker delivers them now.
    const { rows: pending } = await direct.query<{ n: string }>(
      "SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'DELIVERED'",
    );
    const lastWorker = Number(pending[0].n) > 0 ? await start(['worker']) : null;
    let left = '';
    await waitFor(
      async () => {
        const { rows } = await direct.query<{ status: string; attempts: number; last_error: string | null; n: string }>(
          "SELECT status, attempts, last_error, count(*) AS n FROM webhook_deliveries WHERE status <> 'DELIVERED' GROUP BY 1, 2, 3",
        );
        left = JSON.stringify(rows);
        return rows.length === 0;
      },
      { timeoutMs: 60_000, what: () => `every delivery delivered (left: ${left})` },
    );
    if (lastWorker) {
      lastWorker.child.kill('SIGTERM');
      expect(await lastWorker.exited).toBe(0);
      for (const r of receiver.requestsTo('/hook')) {
        const body = JSON.parse(r.body) as { id: string; type: string; data: { order?: { code: string; status: string } } };
        const order = body.data.order;
        if (body.type === 'order.status_changed' && order && PARTNER_EVENT_STATUSES.has(order.status)) {
          received.get(order.code)?.add(body.id);
        }
      }
    }
    for (const code of codes) expect(received.get(code)?.size, code).toBe(eventsAnswered.get(code));
    // None left leased, and none waited out a lease: a stopping worker gave back what it could not finish.
    const { rows: leases } = await direct.query<{ leased: string; slowest_ms: number | null }>(
      `SELECT count(*) FILTER (WHERE locked_until IS NOT NULL OR lease_token IS NOT NULL) AS leased,
              max(extract(epoch FROM delivered_at - created_at) * 1000)::float8 AS slowest_ms
         FROM webhook_deliveries`,
    );
    expect(Number(leases[0].leased)).toBe(0);
    expect(leases[0].slowest_ms ?? 0).toBeLessThan(LEASE_MS);

    // No request-log or usage entry of an answered request lost.
    const ids = answered.map((a) => a.answer.requestId);
    expect(ids.every((id) => id !== null)).toBe(true);
    const { rows: logged } = await direct.query<{ id: string }>('SELECT id FROM request_log WHERE api_key_id = $1', [key.id]);
    const loggedIds = new Set(logged.map((r) => r.id));
    expect(ids.filter((id) => !loggedIds.has(id as string))).toEqual([]);
    const { rows: usage } = await direct.query<{ n: string }>(
      'SELECT coalesce(sum(requests), 0) AS n FROM api_key_usage WHERE api_key_id = $1',
      [key.id],
    );
    expect(Number(usage[0].n)).toBe(answered.length);
    console.info(
      `rolling restart: ${answered.length} answers, ${events} events, ${refusedConnections} refused connections retried elsewhere`,
    );
  }, 300_000);
});
