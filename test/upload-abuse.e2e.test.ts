/**
 * One partner cannot take the service down with uploads (docs/tracking-and-proof.md, "Upload limits";
 * docs/scale.md, "A large write is not an outage"). The API runs as a process of its own (the compiled
 * src/main.ts, `api --env live`: test/main-process.ts) on the PostgreSQL server with Redis, with the
 * default limits but a short body deadline; the test is a careless or hostile partner beside a bystander:
 *  - a burst of 5 MiB uploads, 12 at a time, from partner A (well past A's limits) while partner B reads:
 *    B gets only 200s, the process logs no PostgreSQL outage, /readyz stays 200;
 *  - many connections announcing 5 MiB and sending all but the last byte: every one is closed by the
 *    server (a 429 at once, or past the body deadline), the process's resident memory stays bounded while
 *    they are held, and the Buffers it holds (its /metrics' nodejs_external_memory_bytes) come back once
 *    they are dropped.
 * Outcomes only: no latency is asserted (the figures are printed for the record).
 *
 * Server mode only (skipped without DATABASE_URL and REDIS_URL): the limits are what matter, and they
 * are a server's. The bench beside it, with the figures: bench/upload-burst.ts (docs/performance.md,
 * "Uploads beside other partners").
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jpegBytes } from '../src/modules/uploads/uploads.test-helpers.js';
import { createKey, createPartner, type TestKey } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { type SpawnedChild, spawnChild } from './main-process.js';
import { waitFor } from './wait.js';

const serverMode = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!serverMode) console.info('test/upload-abuse.e2e.test.ts: skipped (needs DATABASE_URL and REDIS_URL)');

const MiB = 1024 * 1024;
const PHOTO = jpegBytes(5 * MiB);
/** The body deadline of the process under test (the default is 30 s; short here to keep the test short). */
const BODY_TIMEOUT_MS = 4_000;

let t: TestApp;
beforeAll(async () => {
  if (!serverMode) return;
  // The database and Redis of the process under test; this app only makes partners and keys.
  t = await createTestApp();
}, 120_000);
afterAll(() => t?.close());

/** The API as a process of its own on `t`'s database; its port and its /metrics once it has started. */
async function startApi(): Promise<{ child: SpawnedChild; base: string; metrics: string }> {
  const child = spawnChild(['api', '--env', 'live'], {
    DATABASE_URL: t.ctx.config.databaseUrl ?? '',
    REDIS_URL: process.env.REDIS_URL ?? '',
    REDIS_KEY_PREFIX: t.ctx.config.redisKeyPrefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    REQUEST_LOG: 'off',
    UPLOAD_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
    METRICS_PORT: '0',
  });
  const started = await child.waitForLine((line) => line.includes('"started"'), 45_000);
  const { port, metricsPort } = JSON.parse(started) as { port: number; metricsPort: number };
  return { child, base: `http://127.0.0.1:${port}`, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
}

/**
 * What the process holds outside the JavaScript heap (Buffers: upload bodies), in MiB, as its own
 * /metrics says (`nodejs_external_memory_bytes`). Unlike the resident size, this falls when the
 * process lets the bytes go, whatever the allocator keeps mapped for later.
 */
async function externalMiB(metrics: string): Promise<number> {
  const text = await (await fetch(metrics)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_external_memory_bytes '));
  return Number(line?.split(' ')[1] ?? Number.NaN) / MiB;
}

/**
 * Lines the process logged about a `dependency` outage ("PostgreSQL unavailable: …"). Redis's are
 * printed, not asserted: its 250 ms command deadline (src/redis.ts) still reads an overloaded host as
 * an outage, which no upload limit can change.
 */
function outageLines(child: SpawnedChild, dependency: 'PostgreSQL' | 'Redis' = 'PostgreSQL'): string[] {
  return child
    .stdout()
    .split('\n')
    .filter((line) => line.includes(`"dependency":"${dependency}"`) && /unavailable/i.test(line));
}

/** The process's resident memory, in MiB (Linux). */
function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? 0) / 1024;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function partnerKey(options: Parameters<typeof createKey>[2]): Promise<TestKey> {
  return createKey(t.ctx, (await createPartner(t.ctx)).id, options);
}

describe.skipIf(!serverMode)('an upload burst from one partner', () => {
  it('leaves another partner’s reads answered 200, logs no PostgreSQL outage and keeps /readyz 200', async () => {
    const { child, base } = await startApi();
    const a = await partnerKey({ scopes: ['logistics:write'] });
    const b = await partnerKey({ scopes: ['orders:read', 'payments:read'], rateLimit: 100_000 });
    const read = async (path: string, key: TestKey) => {
      const started = Date.now();
      const res = await fetch(`${base}${path}`, { headers: key.headers });
      await res.arrayBuffer();
      return { status: res.status, ms: Date.now() - started };
    };
    // B's reads on a quiet process, for the record.
    const quiet: number[] = [];
    for (let i = 0; i < 20; i++) quiet.push((await read('/v1/partner/orders', b)).ms);

    // A: 40 photos of 5 MiB (200 MiB: twice A's budget of a minute), 12 at a time (3 × its cap in flight).
    const uploads: number[] = [];
    let next = 0;
    const burst = Promise.all(
      Array.from({ length: 12 }, async () => {
        while (next < 40) {
          next++;
          const res = await fetch(`${base}/v1/partner/uploads`, {
            method: 'POST',
            headers: { ...a.headers, 'content-type': 'image/jpeg' },
            body: new Uint8Array(PHOTO),
          }).catch(() => null);
          await res?.arrayBuffer().catch(() => null);
          uploads.push(res?.status ?? 0);
        }
      }),
    );
    // B reads its orders and payment intents, and the load balancer probes /readyz, until A is done.
    let bursting = true;
    void burst.finally(() => {
      bursting = false;
    });
    const during: Array<{ status: number; ms: number }> = [];
    const ready: number[] = [];
    while (bursting || during.length < 20) {
      during.push(await read('/v1/partner/orders', b));
      during.push(await read('/v1/partner/payment-intents', b));
      ready.push((await fetch(`${base}/readyz`)).status);
    }
    await burst;

    console.info(
      `upload burst: A ${JSON.stringify(Object.fromEntries(count(uploads)))}; B quiet p50 ${percentile(quiet, 50)} ms ` +
        `p99 ${percentile(quiet, 99)} ms, during p50 ${percentile(
          during.map((d) => d.ms),
          50,
        )} ms p99 ${percentile(
          during.map((d) => d.ms),
          99,
        )} ms over ${during.length} reads`,
    );
    // A was held to its limits: some stored, the rest refused with 429 (a body may miss its deadline
    // on a loaded machine: 400); never a 5xx.
    expect(uploads.filter((s) => s === 201).length).toBeGreaterThan(0);
    expect(uploads.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(uploads.filter((s) => ![201, 429, 400].includes(s))).toEqual([]);
    // B was answered every time, and the process never thought a dependency was down.
    expect(during.filter((d) => d.status !== 200)).toEqual([]);
    expect(ready.filter((s) => s !== 200)).toEqual([]);
    console.info(`Redis outages logged: ${outageLines(child, 'Redis').length}`);
    expect(outageLines(child)).toEqual([]);
  }, 120_000);
});

describe.skipIf(!serverMode)('held-open upload bodies', () => {
  it('are all closed by the server, within the body deadline or at once, and the memory they held comes back', async () => {
    const { child, base, metrics } = await startApi();
    const pid = child.process.pid as number;
    const port = Number(new URL(base).port);
    // Warm the upload path once (code loaded, pools opened), then take the baseline.
    const warm = await partnerKey({ scopes: ['logistics:write'] });
    const first = await fetch(`${base}/v1/partner/uploads`, {
      method: 'POST',
      headers: { ...warm.headers, 'content-type': 'image/jpeg' },
      body: new Uint8Array(PHOTO),
    });
    expect(first.status).toBe(201);
    const baseline = rssMiB(pid);
    const externalBaseline = await externalMiB(metrics);

    // 6 partners × 10 connections, each announcing 5 MiB and sending all but the last byte.
    const keys = await Promise.all(Array.from({ length: 6 }, () => partnerKey({ scopes: ['logistics:write'] })));
    const held = keys.flatMap((key) =>
      Array.from({ length: 10 }, () => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (d) => {
          answer += d;
        });
        socket.on('error', () => {});
        const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        socket.write(
          `POST /v1/partner/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${key.key}\r\n` +
            `Content-Type: image/jpeg\r\nContent-Length: ${PHOTO.length}\r\n\r\n`,
        );
        socket.write(PHOTO.subarray(0, PHOTO.length - 1));
        return { socket, closed, answer: () => answer };
      }),
    );
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 50);
    try {
      // Every connection is closed by the server: the refused ones at once (429), the admitted ones
      // once the body deadline has passed (400). None is left open.
      await Promise.all(held.map((h) => h.closed));
    } finally {
      clearInterval(sampler);
    }
    const statuses = held.map((h) => Number(h.answer().match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0));
    console.info(
      `held bodies: ${JSON.stringify(Object.fromEntries(count(statuses)))}; RSS baseline ${baseline.toFixed(0)} MiB, ` +
        `peak ${peak.toFixed(0)} MiB`,
    );
    // Admitted ones answered 400 at their deadline, the others 429 before their bodies were read (how
    // many of each depends on when each connection's headers were read: a place freed at a deadline
    // may admit a late one).
    expect(statuses.filter((s) => s !== 400 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    // What was held is bounded by the limits (16 × 5 MiB), not by the connections (60 × 5 MiB = 300 MiB).
    expect(peak - baseline).toBeLessThan(16 * 5 + 80);
    // And the process lets it go once they are gone, while it goes on serving uploads (whose garbage is
    // what makes the runtime collect: an idle process has no reason to). Asserted on the Buffers the
    // process holds; its resident size is printed only: the C allocator may keep freed chunks mapped.
    let after = await partnerKey({ scopes: ['logistics:write'] });
    let sent = 0;
    const small = new Uint8Array(jpegBytes(MiB));
    const samples: string[] = [];
    await waitFor(
      async () => {
        // A fresh partner every 40 MiB: each has 100 MiB a minute.
        if (++sent % 40 === 0) after = await partnerKey({ scopes: ['logistics:write'] });
        const res = await fetch(`${base}/v1/partner/uploads`, { method: 'POST', headers: after.headers, body: small });
        expect(res.status).toBeLessThan(500);
        const external = await externalMiB(metrics);
        samples.push(`${Math.round(external)}/${Math.round(rssMiB(pid))}`);
        // Less than the 16 × 5 MiB the held bodies could hold stays above the baseline.
        return external - externalBaseline < 32;
      },
      { timeoutMs: 30_000, what: `Buffers held back within 32 MiB of the baseline ${externalBaseline.toFixed(0)} MiB` },
    ).finally(() => console.info(`held outside the heap / resident after the held bodies: ${samples.join(' ')} MiB`));
    console.info(`Redis outages logged: ${outageLines(child, 'Redis').length}`);
    expect(outageLines(child)).toEqual([]);
  }, 120_000);
});

function count(values: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const v of values) out.set(v, (out.get(v) ?? 0) + 1);
  return out;
}
