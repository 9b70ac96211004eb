/**
 * npx tsx bench/pings.ts [--db=server] [--duration=10] [--orders=100] [--points=10] [--connections=10]
 *
 * Courier location pings (docs/tracking-and-proof.md): `--orders` EN_ROUTE orders pinged round robin,
 * `--points` points a request, by autocannon in a child process (bench/pings-load.mjs). Prints points
 * accepted per second, latency, and what the location buffer wrote: flush transactions, order writes
 * (an order's latest position and its trail points, once per flush) and the most writes any one order
 * got in a 5 s window. `--db=server` uses DATABASE_URL (a throw-away database) and REDIS_URL.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import type { TrackingUpdate } from '../src/modules/tracking/tracking-buffer.js';
import { dropRedisNamespace } from '../test/redis-namespace.js';
import { BENCH_ENV } from './bench-env.js';
import { seedDb, seededCode, seedOrders, seedPartnersAndKeys, seedZone } from './seed.js';
import { freshServerDatabase } from './server-db.js';

const run = promisify(execFile);
const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const DB_MODE = arg('db', 'embedded');
const DURATION = Number(arg('duration', '10'));
const ORDERS = Number(arg('orders', '100'));
const POINTS = Number(arg('points', '10'));
const CONNECTIONS = Number(arg('connections', '10'));

async function main() {
  let drop: (() => Promise<void>) | null = null;
  let url: string | null = null;
  if (DB_MODE === 'server') {
    const fresh = await freshServerDatabase();
    url = fresh.url;
    drop = fresh.drop;
  }
  const prefix = `bench:${randomUUID()}`;
  const config = loadConfig({
    ...BENCH_ENV,
    ...(url ? { DATABASE_URL: url, REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: prefix } : {}),
  });
  const ctx = await createContext({ ...config, isProduction: false, nodeEnv: 'development' });
  const app = await buildApp(ctx, 'LIVE');
  // What the answers said: points ignored as older than the latest (the X-Points-Ignored header).
  let ignored = 0;
  app.addHook('onSend', (_request, reply, payload, done) => {
    ignored += Number(reply.getHeader('x-points-ignored') ?? 0);
    done(null, payload);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const now = ctx.clock.now();
    const db = await seedDb(url, ctx.db);
    const keys = await seedPartnersAndKeys(db, 10, 1, now);
    const zoneId = await seedZone(db, now);
    await seedOrders(db, { from: 1, to: ORDERS }, { keyIds: keys.map((k) => k.id), zoneId, now });
    await db.query(`UPDATE orders SET status = 'EN_ROUTE' WHERE code LIKE 'B%'`);
    await db.close();
    const codes = Array.from({ length: ORDERS }, (_, i) => seededCode(i + 1));
    const apiKeys = codes.map((_, i) => keys[(i + 1) % keys.length].key);

    let flushes = 0;
    const writesByOrder = new Map<string, number[]>();
    ctx.events.on('tracking.updated', (updates: TrackingUpdate[]) => {
      flushes++;
      const t = Date.now();
      for (const u of updates) {
        const list = writesByOrder.get(u.tracking.orderCode) ?? [];
        list.push(t);
        writesByOrder.set(u.tracking.orderCode, list);
      }
    });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const scenario = { url: base, connections: CONNECTIONS, duration: DURATION, codes, apiKeys, points: POINTS };
    const { stdout } = await run(process.execPath, ['bench/pings-load.mjs', JSON.stringify(scenario)], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const r = JSON.parse(stdout) as {
      requests: { total: number; average: number };
      latency: { p50: number; p99: number };
      non2xx: number;
      errors: number;
    };
    const [{ n: stored }] = await ctx.db.query<{ n: string }>('SELECT count(*) AS n FROM order_track_points');
    let maxIn5s = 0;
    for (const times of writesByOrder.values()) {
      for (let i = 0; i < times.length; i++) {
        let j = i;
        while (j < times.length && times[j] - times[i] < 5_000) j++;
        maxIn5s = Math.max(maxIn5s, j - i);
      }
    }
    const ok = r.requests.total - r.non2xx;
    console.log(
      JSON.stringify(
        {
          db: DB_MODE,
          orders: ORDERS,
          pointsPerRequest: POINTS,
          connections: CONNECTIONS,
          durationSec: DURATION,
          requestsPerSec: Math.round(ok / DURATION),
          pointsAcceptedPerSec: Math.round((ok * POINTS - ignored) / DURATION),
          pointsIgnored: ignored,
          latencyMs: { p50: r.latency.p50, p99: r.latency.p99 },
          non2xx: r.non2xx,
          errors: r.errors,
          flushTransactions: flushes,
          orderWrites: [...writesByOrder.values()].reduce((a, l) => a + l.length, 0),
          maxWritesOfOneOrderIn5s: maxIn5s,
          storedTrailPoints: Number(stored),
        },
        null,
        2,
      ),
    );
  } finally {
    if (ctx.redis) await dropRedisNamespace(ctx.redis, prefix).catch(() => {});
    await app.close();
    await ctx.close();
    await drop?.();
  }
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
