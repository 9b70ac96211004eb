/**
 * A manual outage run of the BUILT service (figures in docs/performance.md, 'Dependency outages'): one sandbox API
 * process and one worker process (`node dist/src/main.js api --env sandbox` and `… worker`) reach the
 * machine's PostgreSQL and Redis through fault proxies (test/fault-proxy.ts); four client loops read
 * orders and post events (with Idempotency-Key) over HTTP while PostgreSQL, then Redis, go away for 15 s
 * each. Prints answers per second, latency percentiles and status counts per phase, recovery times,
 * the processes' outage log lines, whether they stayed up, and what the worker delivered.
 *
 *   npx tsc -p tsconfig.build.json    (or npm run build)
 *   npx tsx test/outage-run.ts [--dist dist] [--database postgres://postgres@127.0.0.1:5432/outage_run]
 *                                 [--redis redis://127.0.0.1:6379] [--outage-sec 15]
 *
 * It creates the database (dropped after) and uses a Redis prefix of its own (deleted after). It never
 * touches the servers themselves: faults are injected only in the proxies.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { FaultProxy } from './fault-proxy.js';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    database: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/outage_run' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    'outage-sec': { type: 'string', default: '15' },
  },
});
const OUTAGE_MS = Number(args['outage-sec']) * 1000;
const BASELINE_MS = 10_000;
const databaseUrl = new URL(args.database as string);
const dbName = `${databaseUrl.pathname.slice(1) || 'outage_run'}_${process.pid}`;
databaseUrl.pathname = `/${dbName}`;
const adminUrl = new URL(databaseUrl);
adminUrl.pathname = '/postgres';
const prefix = `outage-run:${randomUUID()}`;
const main = resolve(args.dist as string, 'src', 'main.js');
const ADMIN_PHONE = '+994500000001';
const PARTNER_PHONE = '+994500000002';
const CODE = '123456';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc {
  name: string;
  child: ChildProcess;
  lines: string[];
  exit: number | null;
}

function start(
  name: string,
  argv: string[],
  env: Record<string, string>,
): Promise<{ proc: Proc; started: Record<string, unknown> }> {
  const child = spawn(process.execPath, [main, ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { name, child, lines: [], exit: null };
  child.on('exit', (code, signal) => {
    proc.exit = code ?? (signal ? 128 : 0);
  });
  return new Promise((resolveStart, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let i = buffer.indexOf('\n');
      while (i >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        proc.lines.push(line);
        if (line.includes('"msg":"started"')) resolveStart({ proc, started: JSON.parse(line) });
        i = buffer.indexOf('\n');
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', () => reject(new Error(`${name} exited during start-up:\n${proc.lines.join('\n')}`)));
  });
}

interface Answer {
  atMs: number;
  ms: number;
  status: number;
  kind: 'read' | 'list' | 'event';
}

async function main_(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  const pgProxy = await FaultProxy.startFor(databaseUrl.toString());
  const redisProxy = await FaultProxy.startFor(args.redis as string);
  const procs: Proc[] = [];
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered++;
      res.writeHead(200).end();
    });
  });
  let delivered = 0;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const cleanup = async () => {
    for (const p of procs) if (p.exit === null) p.child.kill('SIGTERM');
    await sleep(1000);
    for (const p of procs) if (p.exit === null) p.child.kill('SIGKILL');
    receiver.close();
    await pgProxy.close();
    await redisProxy.close();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => {});
    await admin.end();
    const redis = new Redis(args.redis as string);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  };

  try {
    const env = {
      DATABASE_URL: pgProxy.url(databaseUrl.toString()),
      REDIS_URL: redisProxy.url(args.redis as string),
      REDIS_KEY_PREFIX: prefix,
      NODE_ENV: 'development',
      OTP_FIXED_CODE: CODE,
      BOOTSTRAP_ADMIN_PHONE: ADMIN_PHONE,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      SANDBOX_PORT: '0',
      JWT_SECRET: 'outage-run-secret-outage-run-secret-0123456789',
    };
    const api = await start('api', ['api', '--env', 'sandbox'], env);
    procs.push(api.proc);
    const worker = await start('worker', ['worker'], env);
    procs.push(worker.proc);
    const base = `http://127.0.0.1:${api.started.sandboxPort}`;

    const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
      const res = await fetch(base + path, {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    };
    const signIn = async (phone: string) => {
      await call('POST', '/v1/auth/otp/request', {}, { phone });
      const res = await call('POST', '/v1/auth/otp/verify', {}, { phone, code: CODE });
      return { authorization: `Bearer ${res.json.accessToken}` };
    };
    const adminAuth = await signIn(ADMIN_PHONE);
    await call('POST', '/v1/admin/partners', adminAuth, { name: 'Outage run', phone: PARTNER_PHONE });
    const partnerAuth = await signIn(PARTNER_PHONE);
    const created = await call('POST', '/v1/developer/keys', partnerAuth, {
      name: 'outage',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
    });
    if (created.status !== 201) throw new Error(`key: ${JSON.stringify(created.json)}`);
    // The load is far above the default 600 a minute: the limit is not what is measured here.
    await call('PATCH', `/v1/admin/keys/${created.json.id}`, adminAuth, { rateLimit: 100_000 });
    const key = { 'x-api-key': created.json.key as string };
    const port = (receiver.address() as AddressInfo).port;
    const hook = await call('POST', '/v1/developer/webhooks', partnerAuth, {
      apiKeyId: created.json.id,
      url: `http://127.0.0.1:${port}/hook`,
      events: ['order.status_changed'],
    });
    if (hook.status !== 201) throw new Error(`webhook: ${JSON.stringify(hook.json)}`);
    const codes: string[] = [];
    for (let i = 0; i < 200; i++) codes.push((await call('POST', '/v1/partner/sandbox/orders', key)).json.code);

    // Four clients: a read, a list and an event per round; each event is retried with its own
    // Idempotency-Key until it is answered other than 503.
    const answers: Answer[] = [];
    let stop = false;
    const committed: string[] = [];
    const client = async (index: number) => {
      const mine = codes.filter((_, i) => i % 4 === index);
      const steps = mine.flatMap((code) => ['PICKED_UP', 'EN_ROUTE'].map((type) => ({ code, type, idem: randomUUID() })));
      let next = 0;
      const timed = async (
        kind: Answer['kind'],
        method: string,
        path: string,
        headers: Record<string, string>,
        body?: unknown,
      ) => {
        const atMs = Date.now();
        let status = 0;
        try {
          status = (await call(method, path, headers, body)).status;
        } catch {
          status = 0; // no answer at all (connection refused or reset, timeout)
        }
        answers.push({ atMs, ms: Date.now() - atMs, status, kind });
        return status;
      };
      while (!stop) {
        const code = mine[next % mine.length] ?? mine[0];
        await timed('read', 'GET', `/v1/partner/orders/${code}`, key);
        await timed('list', 'GET', '/v1/partner/orders?pageSize=20', key);
        const step = steps[next];
        if (step) {
          const status = await timed(
            'event',
            'POST',
            `/v1/partner/orders/${step.code}/events`,
            { ...key, 'idempotency-key': step.idem },
            {
              type: step.type,
            },
          );
          if (status === 201) committed.push(`${step.code} ${step.type}`);
          if (status !== 503) next++;
        }
      }
    };
    const readyz: Array<{ atMs: number; status: number }> = [];
    const probe = (async () => {
      while (!stop) {
        const atMs = Date.now();
        const status = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
          (r) => r.status,
          () => 0,
        );
        readyz.push({ atMs, status });
        await sleep(100);
      }
    })();
    const clients = [0, 1, 2, 3].map(client);

    const marks: Record<string, number> = { start: Date.now() };
    await sleep(BASELINE_MS);
    marks.pgDown = Date.now();
    pgProxy.down();
    await sleep(OUTAGE_MS);
    marks.pgBack = Date.now();
    pgProxy.pass();
    await sleep(BASELINE_MS);
    marks.redisDown = Date.now();
    redisProxy.blackhole();
    await sleep(OUTAGE_MS / 2);
    redisProxy.down();
    await sleep(OUTAGE_MS / 2);
    marks.redisBack = Date.now();
    redisProxy.pass();
    await sleep(BASELINE_MS);
    marks.end = Date.now();
    stop = true;
    await Promise.all([...clients, probe]);

    const phase = (name: string, from: number, to: number) => {
      const xs = answers.filter((a) => a.atMs >= from && a.atMs < to);
      const ms = xs.map((a) => a.ms).sort((a, b) => a - b);
      const pct = (p: number) => ms[Math.min(ms.length - 1, Math.ceil((ms.length * p) / 100) - 1)] ?? 0;
      const statuses: Record<string, number> = {};
      for (const a of xs) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      return {
        phase: name,
        seconds: +((to - from) / 1000).toFixed(1),
        answersPerSec: +(xs.length / ((to - from) / 1000)).toFixed(1),
        p50: pct(50),
        p99: pct(99),
        max: ms[ms.length - 1] ?? 0,
        statuses,
      };
    };
    const firstOkAfter = (t: number) => answers.find((a) => a.atMs >= t && a.status >= 200 && a.status < 300);
    const readyAfter = (t: number) => readyz.find((r) => r.atMs >= t && r.status === 200);
    const pgOk = firstOkAfter(marks.pgBack);
    const pgReady = readyAfter(marks.pgBack);

    // What the worker did: every committed event delivered, none dead.
    const direct = new pg.Client({ connectionString: databaseUrl.toString() });
    await direct.connect();
    const deadline = Date.now() + 60_000;
    let rows: Array<{ status: string; n: number }> = [];
    let events = 0;
    while (Date.now() < deadline) {
      events = (await direct.query("SELECT count(*)::int AS n FROM order_events WHERE actor = 'PARTNER'")).rows[0].n;
      rows = (await direct.query('SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status')).rows;
      if (rows.length === 1 && rows[0].status === 'DELIVERED' && rows[0].n >= events) break;
      await sleep(500);
    }
    await direct.end();

    const outageLines = (p: Proc) =>
      p.lines
        .map((l) => {
          try {
            return JSON.parse(l) as { msg: string; level: number };
          } catch {
            return null;
          }
        })
        .filter((l): l is { msg: string; level: number } => l !== null && /(unavailable:|available again)/.test(l.msg))
        .map((l) => l.msg.split(';')[0]);
    const report = {
      phases: [
        phase('baseline', marks.start, marks.pgDown),
        phase('PostgreSQL down (refused + reset)', marks.pgDown, marks.pgBack),
        phase('after PostgreSQL', marks.pgBack, marks.redisDown),
        phase('Redis down (blackhole, then refused + reset)', marks.redisDown, marks.redisBack),
        phase('after Redis', marks.redisBack, marks.end),
      ],
      postgresRecovery: {
        firstSuccessAfterMs: pgOk ? pgOk.atMs + pgOk.ms - marks.pgBack : null,
        readyzAfterMs: pgReady ? pgReady.atMs - marks.pgBack : null,
        readyz503During: readyz
          .filter((r) => r.atMs >= marks.pgDown + 2000 && r.atMs < marks.pgBack)
          .every((r) => r.status === 503),
      },
      eventsAnswered201: committed.length,
      partnerEventsInDatabase: events,
      deliveries: Object.fromEntries(rows.map((r) => [r.status, r.n])),
      webhookRequestsReceived: delivered,
      processesUp: procs.map((p) => `${p.name}: ${p.exit === null ? 'up' : `exited ${p.exit}`}`),
      outageLog: Object.fromEntries(procs.map((p) => [p.name, outageLines(p)])),
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await cleanup();
  }
}

main_().catch((err) => {
  console.error(err);
  process.exit(1);
});
