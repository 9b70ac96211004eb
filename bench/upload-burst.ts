/**
 * npx tsx bench/upload-burst.ts --db=server [--rounds=3] [--quiet-reads=100] [--uploads=40] [--concurrency=12]
 *                               [--body=random|filler] [--profile]
 *
 * A bystander partner beside another partner's upload burst (docs/performance.md, "Uploads beside other
 * partners"; the rules: docs/tracking-and-proof.md, "Upload limits", and docs/scale.md, "A large write is
 * not an outage"). The API (default upload limits) runs in this process on a throw-away database of the
 * server of DATABASE_URL, with REDIS_URL; the clients run in child processes of their own
 * (bench/upload-burst-load.mjs). Each round: partner B (200 orders with their payment intents) reads
 * `GET /v1/partner/orders` and `GET /v1/partner/payment-intents` one at a time on a quiet API
 * (`--quiet-reads` reads), then again while a fresh partner A sends `--uploads` photos of 5 MiB,
 * `--concurrency` at a time (40 × 5 MiB, 12 at a time: twice A's budget of a minute, three times its
 * cap in flight, as test/upload-abuse.e2e.test.ts does); /readyz is probed between B's reads.
 *
 * Prints and writes to bench/results/upload-burst.json: B's p50/p99 quiet and during (as B saw them and
 * as the API timed them), their ratios, B's non-200 answers, A's answers by status, /readyz's non-200
 * answers, PostgreSQL outages the API logged, how late the API's event loop turned, the CPU the bursts
 * took, and the load average at the start and at the end. `--body=filler` sends the test's compressible bytes
 * instead of random ones (a photo does not compress). `--profile` writes the API's CPU profile of the
 * bursts to bench/results/profiles/upload-burst.cpuprofile (its figures are then not comparable).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { dropRedisNamespace } from '../test/redis-namespace.js';
import { arg } from './args.js';
import { BENCH_ENV } from './bench-env.js';
import { addCpu, type CpuTotals, cpuSample } from './cpu.js';
import { startProfile } from './profile.js';
import { seedDb, seedOrders, seedPartnersAndKeys, seedZone } from './seed.js';
import { freshServerDatabase } from './server-db.js';
import { percentile } from './stats.js';

const ROUNDS = Number(arg('rounds', '3'));
const QUIET_READS = Number(arg('quiet-reads', '100'));
const UPLOADS = Number(arg('uploads', '40'));
const CONCURRENCY = Number(arg('concurrency', '12'));
const BODY = arg('body', 'random');
const PROFILE = process.argv.includes('--profile');
const PHOTO_BYTES = 5 * 1024 * 1024;
const BYSTANDER_ORDERS = 200;

interface Read {
  status: number;
  ms: number;
  /** A 5xx answer's error code. */
  code?: string | null;
}

/** bench/upload-burst-load.mjs in a child process; `onLine` gets its stdout lines, the last is the result. */
function client(scenario: Record<string, unknown>, onLine: (line: string) => void = () => {}) {
  const child = spawn(process.execPath, ['bench/upload-burst-load.mjs', JSON.stringify(scenario)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let last = '';
  createInterface({ input: child.stdout }).on('line', (line) => {
    last = line;
    onLine(line);
  });
  const result = new Promise<unknown>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(last)) : reject(new Error(`client exited ${code}`)))),
  );
  return { say: (line: string) => child.stdin.write(`${line}\n`), result };
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const counts = (values: number[]) => {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
};

async function main() {
  if (arg('db', 'embedded') !== 'server')
    throw new Error('upload-burst: run with --db=server (the upload limits are a server’s)');
  if (!process.env.REDIS_URL) throw new Error('upload-burst: --db=server needs REDIS_URL too');
  const loadStart = loadavg();
  const fresh = await freshServerDatabase();
  const prefix = `bench:${randomUUID()}`;
  const config = loadConfig({
    ...BENCH_ENV,
    DATABASE_URL: fresh.url,
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    // The upload paces may be set to compare (0: unpaced); the defaults otherwise.
    UPLOAD_BYTES_PER_SECOND: process.env.UPLOAD_BYTES_PER_SECOND,
    UPLOAD_DRAIN_BYTES_PER_SECOND: process.env.UPLOAD_DRAIN_BYTES_PER_SECOND,
  });
  const ctx = await createContext({ ...config, isProduction: false, nodeEnv: 'development' });
  let outages = 0;
  ctx.db.health.onChange((change) => {
    if (!change.available) outages++;
  });
  const app = await buildApp(ctx, 'LIVE');
  // B's reads as the API timed them (from its first byte to its answer), apart from the client's round trip.
  let serverSide: number[] | null = null;
  app.addHook('onResponse', (request, reply, done) => {
    if (serverSide && request.url.startsWith('/v1/partner/') && !request.url.startsWith('/v1/partner/uploads')) {
      serverSide.push(Math.round(reply.elapsedTime * 10) / 10);
    }
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const now = ctx.clock.now();
    const db = await seedDb(fresh.url, ctx.db);
    // B, then one fresh A per round (an A's budget is 100 MiB a minute).
    const [b, ...as] = await seedPartnersAndKeys(db, 1 + ROUNDS, 1, now);
    await db.query(`UPDATE api_keys SET scopes = array_append(scopes, 'payments:read') WHERE id = $1`, [b.id]);
    await seedOrders(db, { from: 1, to: BYSTANDER_ORDERS }, { keyIds: [b.id], zoneId: await seedZone(db, now), now });
    await db.close();

    const quiet: Read[] = [];
    const during: Read[] = [];
    const ready: number[] = [];
    const statuses: number[] = [];
    const uploadMs: number[] = [];
    const burstMs: number[] = [];
    const quietServer: number[] = [];
    const duringServer: number[] = [];
    const cpu: CpuTotals = { api: 0, postgres: 0, redis: 0 };
    let clientCpuMs = 0;
    // How late the API's event loop turned (it runs in this process): blocked by body handling, hashing,
    // copies or garbage collection, it would answer everyone late.
    // (A histogram per phase: one enabled again would count the time it was off as one long delay.)
    const loopQuiet: LoopFigures[] = [];
    const loopDuring: LoopFigures[] = [];
    const profile = PROFILE ? await startProfile() : null;
    for (let round = 0; round < ROUNDS; round++) {
      const calm = client({ role: 'reads', base, key: b.key, count: QUIET_READS });
      serverSide = quietServer;
      calm.say('go');
      const quietLoop = watchLoop();
      const q = (await calm.result) as { reads: Read[]; ready: number[] };
      loopQuiet.push(quietLoop.stop());
      serverSide = null;
      quiet.push(...q.reads);
      ready.push(...q.ready);

      const reads = client({ role: 'reads', base, key: b.key });
      const burst = client(
        { role: 'burst', base, key: as[round].key, uploads: UPLOADS, concurrency: CONCURRENCY, bytes: PHOTO_BYTES, body: BODY },
        (line) => {
          if (line === 'sending') reads.say('go');
        },
      );
      serverSide = duringServer;
      const duringLoop = watchLoop();
      const cpuBefore = cpuSample();
      const startedMs = Date.now();
      const a = (await burst.result) as { statuses: number[]; ms: number[]; cpuMs: number };
      burstMs.push(Date.now() - startedMs);
      addCpu(cpu, cpuBefore);
      clientCpuMs += a.cpuMs;
      loopDuring.push(duringLoop.stop());
      reads.say('stop');
      const d = (await reads.result) as { reads: Read[]; ready: number[] };
      serverSide = null;
      during.push(...d.reads);
      ready.push(...d.ready);
      statuses.push(...a.statuses);
      uploadMs.push(...a.ms);
      console.log(
        `round ${round + 1}: A ${JSON.stringify(counts(a.statuses))}; B ${d.reads.length} reads during, p99 ${percentile(
          sorted(d.reads.map((r) => r.ms)),
          99,
        )} ms`,
      );
    }
    await profile?.stop('upload-burst');

    const quietMs = sorted(quiet.map((r) => r.ms));
    const duringMs = sorted(during.map((r) => r.ms));
    const out = {
      at: new Date().toISOString(),
      commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
      database: 'server',
      node: process.version,
      cpus: cpus().length,
      rounds: ROUNDS,
      uploads: UPLOADS,
      concurrency: CONCURRENCY,
      photoBytes: PHOTO_BYTES,
      body: BODY,
      profiled: PROFILE,
      pacing: { bytesPerSecond: config.uploads.bytesPerSecond, drainBytesPerSecond: config.uploads.drainBytesPerSecond },
      bystander: {
        quiet: { reads: quietMs.length, p50: percentile(quietMs, 50), p99: percentile(quietMs, 99) },
        during: { reads: duringMs.length, p50: percentile(duringMs, 50), p99: percentile(duringMs, 99) },
        // From the API's first byte of a read to its answer: what the client's figures add is the time
        // before the API turned to the read (its event loop, the machine) and the round trip.
        asTheApiTimedThem: {
          quiet: { p50: percentile(sorted(quietServer), 50), p99: percentile(sorted(quietServer), 99) },
          during: { p50: percentile(sorted(duringServer), 50), p99: percentile(sorted(duringServer), 99) },
        },
        ratioP50: round2(percentile(duringMs, 50) / percentile(quietMs, 50)),
        ratioP99: round2(percentile(duringMs, 99) / percentile(quietMs, 99)),
        non200: { quiet: quiet.filter((r) => r.status !== 200).length, during: during.filter((r) => r.status !== 200).length },
        non200ByStatus: counts([...quiet, ...during].filter((r) => r.status !== 200).map((r) => r.status)),
        errorCodes: [...quiet, ...during].flatMap((r) => (r.code ? [r.code] : [])),
      },
      partnerA: {
        byStatus: counts(statuses),
        uploadMs: { p50: percentile(sorted(uploadMs), 50), p99: percentile(sorted(uploadMs), 99) },
      },
      burstMs,
      // CPU used while the bursts ran: this process (the API), partner A's client, and every PostgreSQL
      // process on the machine (bench/cpu.ts: run nothing else against the server meanwhile).
      burstCpuMs: {
        api: Math.round(cpu.api / 1000),
        clientA: clientCpuMs,
        postgres: cpu.postgres === null ? null : Math.round(cpu.postgres / 1000),
      },
      readyzNon200: ready.filter((s) => s !== 200).length,
      apiEventLoopDelayMs: { quiet: worstOf(loopQuiet), during: worstOf(loopDuring) },
      postgresOutagesLogged: outages,
      loadAverage: { start: loadStart.map(round2), end: loadavg().map(round2) },
    };
    console.log(JSON.stringify(out, null, 2));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/upload-burst.json', `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    if (ctx.redis) await dropRedisNamespace(ctx.redis, prefix).catch(() => {});
    await app.close();
    await ctx.close();
    await fresh.drop();
  }
}

interface LoopFigures {
  p99: number;
  max: number;
}

/** Starts measuring how late this process's event loop turns; `stop` gives the p99 and maximum in ms. */
function watchLoop(): { stop(): LoopFigures } {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    stop: () => {
      h.disable();
      return { p99: round2(h.percentile(99) / 1e6), max: round2(h.max / 1e6) };
    },
  };
}

/** The worst p99 and maximum of the rounds. */
function worstOf(rounds: LoopFigures[]): LoopFigures {
  return { p99: Math.max(...rounds.map((r) => r.p99)), max: Math.max(...rounds.map((r) => r.max)) };
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
