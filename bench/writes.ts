/**
 * Operator writes as a marketplace feeds them, through the documented HTTP routes, at growing
 * numbers of orders in the table: create + assign (`POST /v1/admin/orders`, then `…/{code}/assign`,
 * one order after the other on each connection), then a status walk of the orders just created
 * (`…/{code}/status` VENDOR_ACCEPTED → RUNNER_PICKUP → AT_HUB → PACKED). Orders have every part (zone,
 * area, time window, three items, a full customer).
 *
 * It runs on a database of its own, from empty: first a short "day one" of the same writes on the
 * empty table (every session of the app plans its statements then, as in a new deployment), then, for
 * each size, the table is topped up in bulk SQL (its own session) and the writes are measured in
 * rounds, each right after a bare-route measurement. While the table grows, a burst of writes every
 * 10 s keeps every session of the app's pool in use, as a live deployment's traffic does (an idle pool
 * connection is closed after 30 s, and a new session would plan afresh on the grown table). Nothing runs ANALYZE (autovacuum is off on the
 * benchmark's server, and a deployment's table may go long without one): the plans the sessions hold
 * are the ones they made. Before migration 0013 this is where creation grew with the table.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { newId } from '../src/shared/ids.js';
import { dropRedisNamespace } from '../test/redis-namespace.js';
import { BENCH_ENV } from './bench-env.js';
import { addCpu, type CpuPerRequest, type CpuTotals, cpuSample, perRequest } from './cpu.js';
import type { Load, LoadResult } from './load-generator.js';
import { type SeedDb, seedDb, seedOrders, seedPartnersAndKeys, seedZone } from './seed.js';
import { median } from './stats.js';

export interface WriteFigure {
  orders: number;
  scenario: 'create + assign' | 'status walk (4 steps)';
  /** Orders per second (median of rounds). */
  ordersPerSec: number;
  requestsPerSec: number;
  p50: number;
  p99: number;
  /** Requests per second ÷ the bare route's, per round, median. */
  ratio: number;
  non2xx: number;
  cpu: CpuPerRequest | null;
}

export interface WriteBenchOptions {
  sizes: number[];
  rounds: number;
  duration: number;
  connections: number;
  bareUrl: string;
  load: Load;
  /** A throw-away database of the server (null: embedded). */
  database: { url: string; drop: () => Promise<void> } | null;
  redisUrl: string | null;
}

const STATUS_WALK = ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'];

export async function benchOperatorWrites(options: WriteBenchOptions): Promise<WriteFigure[]> {
  const { database } = options;
  const config = loadConfig({
    ...BENCH_ENV,
    ...(database
      ? { DATABASE_URL: database.url, REDIS_URL: options.redisUrl ?? undefined, REDIS_KEY_PREFIX: `bench:${randomUUID()}` }
      : {}),
  });
  const ctx = await createContext({ ...config, isProduction: false, nodeEnv: 'development' });
  const app = await buildApp(ctx, 'LIVE');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const seeding: SeedDb = await seedDb(database?.url ?? null, ctx.db);
  const now = ctx.clock.now();
  const [key] = await seedPartnersAndKeys(seeding, 1, 1, now);
  const zoneId = await seedZone(seeding, now);
  const adminId = newId();
  await seeding.query(`INSERT INTO users (id, phone, role, created_at) VALUES ($1, '+994509999998', 'ADMIN', $2)`, [
    adminId,
    now,
  ]);
  const token = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId: adminId, role: 'ADMIN', partnerId: null });
  const headers = { authorization: `Bearer ${token}` };
  const body = {
    environment: 'live',
    paymentMethod: 'COD',
    totalQepik: 12_000,
    codAmountQepik: 12_000,
    items: [1, 2, 3].map((i) => ({
      name: { az: `Məhsul ${i}`, ru: `Товар ${i}`, en: `Item ${i}` },
      qty: i,
      unitPriceQepik: 2000,
    })),
    area: 'Yasamal',
    zoneId,
    timeWindowStart: new Date(now.getTime() + 3_600_000).toISOString(),
    timeWindowEnd: new Date(now.getTime() + 3 * 3_600_000).toISOString(),
    customer: {
      name: 'Aysel Məmmədova',
      phone: '+994501234567',
      address: { street: 'Nizami küç. 67', details: 'Mənzil 12', lat: 40.37, lng: 49.85 },
    },
  };
  const createScenario = (duration: number) => ({
    url: base,
    connections: options.connections,
    duration,
    headers,
    create: { body, apiKeyId: key.id },
  });
  const walkScenario = (codes: string[]) => ({
    url: base,
    connections: options.connections,
    headers,
    cycle: { codes, steps: STATUS_WALK.map((status) => ({ status })), pathTemplate: '/v1/admin/orders/{code}/status' },
  });
  const servers = { postgres: ctx.db.kind === 'server', redis: Boolean(ctx.redis) };
  const figures: WriteFigure[] = [];
  let seeded = 0;
  try {
    // Day one, on the empty table.
    const first = await options.load(createScenario(2));
    await options.load(walkScenario(first.codes ?? []));

    for (const size of options.sizes) {
      const [{ n }] = await seeding.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
      if (n < size) {
        const t0 = Date.now();
        let keptAlive = Date.now();
        const keepAlive = async () => {
          if (Date.now() - keptAlive < 10_000) return;
          keptAlive = Date.now();
          await Promise.all(
            Array.from({ length: options.connections }, () =>
              fetch(`${base}/v1/admin/orders`, {
                method: 'POST',
                headers: { ...headers, 'content-type': 'application/json' },
                body: JSON.stringify(body),
              }).then((res) => res.arrayBuffer()),
            ),
          );
        };
        await seedOrders(
          seeding,
          { from: seeded + 1, to: seeded + (size - n) },
          { keyIds: [key.id], zoneId, now, progress: true, afterChunk: keepAlive },
        );
        seeded += size - n;
        console.log(`writes: topped up to ${size} orders in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      }
      const rounds: Array<{ bare: number; create: LoadResult; walk: LoadResult; walkBare: number }> = [];
      const createCpu: CpuTotals = { api: 0, postgres: 0, redis: 0 };
      const walkCpu: CpuTotals = { api: 0, postgres: 0, redis: 0 };
      for (let round = 0; round < options.rounds; round++) {
        const bare = await options.load({ url: options.bareUrl, connections: options.connections, duration: options.duration });
        let before = cpuSample();
        const create = await options.load(createScenario(options.duration));
        addCpu(createCpu, before);
        const walkBare = await options.load({
          url: options.bareUrl,
          connections: options.connections,
          duration: options.duration,
        });
        before = cpuSample();
        // Too few orders created to give every connection one (creation at a standstill): no walk.
        const codes = create.codes ?? [];
        const walk =
          codes.length >= options.connections
            ? await options.load(walkScenario(codes))
            : { requests: 0, total: 0, p50: Number.NaN, p99: Number.NaN, non2xx: 0, errors: 0, duration: 0 };
        addCpu(walkCpu, before);
        rounds.push({ bare: bare.requests, create, walk, walkBare: walkBare.requests });
      }
      const [{ orders }] = await seeding.query<{ orders: number }>('SELECT count(*)::int AS orders FROM orders');
      figures.push({
        orders: size,
        scenario: 'create + assign',
        ordersPerSec: Math.round(median(rounds.map((r) => r.create.requests / 2))),
        requestsPerSec: Math.round(median(rounds.map((r) => r.create.requests))),
        p50: median(rounds.map((r) => r.create.p50)),
        p99: median(rounds.map((r) => r.create.p99)),
        ratio: median(rounds.map((r) => r.create.requests / r.bare)),
        non2xx: rounds.reduce((sum, r) => sum + r.create.non2xx, 0),
        cpu: perRequest(
          createCpu,
          rounds.reduce((sum, r) => sum + r.create.total, 0),
          servers,
        ),
      });
      figures.push({
        orders: size,
        scenario: 'status walk (4 steps)',
        ordersPerSec: Math.round(median(rounds.map((r) => r.walk.requests / STATUS_WALK.length))),
        requestsPerSec: Math.round(median(rounds.map((r) => r.walk.requests))),
        p50: median(rounds.map((r) => r.walk.p50)),
        p99: median(rounds.map((r) => r.walk.p99)),
        ratio: median(rounds.map((r) => r.walk.requests / r.walkBare)),
        non2xx: rounds.reduce((sum, r) => sum + r.walk.non2xx, 0),
        cpu: rounds.some((r) => r.walk.total > 0)
          ? perRequest(
              walkCpu,
              rounds.reduce((sum, r) => sum + r.walk.total, 0),
              servers,
            )
          : null,
      });
      for (const f of figures.slice(-2)) {
        console.log(
          `writes @ ${size} (${orders} after): ${f.scenario.padEnd(22)} ${String(f.ordersPerSec).padStart(6)} orders/s  p50 ${f.p50} ms  p99 ${f.p99} ms  ×${f.ratio.toFixed(3)}${f.non2xx ? `  non-2xx ${f.non2xx}` : ''}`,
        );
      }
    }
  } finally {
    await app.close();
    await seeding.close();
    if (ctx.redis) await dropRedisNamespace(ctx.redis, ctx.config.redisKeyPrefix);
    await ctx.close();
    await database?.drop();
  }
  return figures;
}

export function writesTable(figures: WriteFigure[]): string {
  const us = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v.toFixed(0));
  const lines = [
    '| orders in the table | operator writes | orders/s | req/s | p50 ms | p99 ms | ratio to bare | CPU µs/req: API | PostgreSQL | Redis |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const f of figures) {
    lines.push(
      `| ${f.orders.toLocaleString('en')} | ${f.scenario} | ${f.ordersPerSec} | ${f.requestsPerSec} | ${f.p50} | ${f.p99} | ${f.ratio.toFixed(3)} | ${us(f.cpu?.api)} | ${us(f.cpu?.postgres)} | ${us(f.cpu?.redis)} |`,
    );
  }
  return lines.join('\n');
}
