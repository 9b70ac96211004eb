/**
 * npm run bench -- --scale[=lists|tenants|day] [--duration=10] [--readers=8] [--log-rows=10000000]
 *                  [--scale-orders=1000000] [--scale-deliveries=1000000] [--day-rows=1000000] [--tenant-seconds=30]
 *                  [--tenant-parts=fresh,random] [--tenant-rounds=1] [--profile] [--keep] [--reuse=<database url>]
 *
 * The scale scenario (docs/scale.md), on the PostgreSQL server of DATABASE_URL (a throw-away database,
 * dropped at the end) with REDIS_URL:
 *  - `lists`: one partner with 10,000,000 logged requests over 35 days (three keys, a realistic mix of
 *    statuses, codes, methods and paths), 1,000,000 orders of one key and 1,000,000 deliveries of one
 *    webhook, seeded straight into the database (INSERT … SELECT on the server: the triggers that keep
 *    the counters run, the request path does not). Then every list route, page 1 and its deepest page
 *    (the request log also by cursor at its far end), each with `--readers` concurrent readers for
 *    `--duration` seconds: requests/s, p50, p99 and every non-2xx answer.
 *  - `tenants`: the same mix of partner reads (/me, a list, an order) from 600 keys of 200 partners
 *    against 3 keys of one partner, each phase on a freshly started API (cold caches), measured over its
 *    first 10 s and the rest, alternating, two rounds; then the same mixes with each request's key drawn
 *    at random (as a probe from outside reads them), 200 tenants → one → 200 tenants on one API process,
 *    after 10 s of one tenant's reads that are not compared (V8 optimises a new process's code first);
 *    `--tenant-rounds=N` repeats one → 200 tenants N times and prints the median of the N ratios.
 *  - `day` (only when named): `--day-rows` requests logged today in a day's partition nobody has
 *    analysed, page 1 and page 100 of three filters before and after the service's statistics pass.
 * `--profile` writes a CPU profile of this process (the API's) for each phase at random (bench/profile.ts;
 * bench/profile-top.ts sums and compares them).
 * Each part runs on a database of its own. `--keep` leaves the lists' database in place (its URL is
 * printed) and `--reuse=<url>` measures on such a database again without seeding it; drop it when done.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type AppContext, createContext } from '../src/context.js';
import { analyseGrownTables } from '../src/db/statistics.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { newId } from '../src/shared/ids.js';
import { dropRedisNamespace } from '../test/redis-namespace.js';
import { arg } from './args.js';
import { BENCH_ENV } from './bench-env.js';
import { type Measured, measured } from './figures.js';
import type { Load } from './load-generator.js';
import { startProfile } from './profile.js';
import { DAY_MS, DELIVERIES, findSeeded, LOG_ROWS, loadAverage, ORDERS, seedLists, seedRequestLog } from './scale-seed.js';
import { type SeedDb, seedDb, seededCode, seedOrders, seedPartnersAndKeys, seedZone } from './seed.js';
import { freshServerDatabase } from './server-db.js';

const DURATION = Number(arg('duration', '10'));
const READERS = Number(arg('readers', '8'));
const TENANT_SECONDS = Number(arg('tenant-seconds', '30'));
const PROFILE = process.argv.includes('--profile');
/** Reads before the phases at random, so that V8 has optimised the routes' code (see benchTenantsRandom). */
const WARM_UP_SECONDS = 10;
/** Pairs of phases one tenant → 200 tenants after the first 200 tenants (see benchTenantsRandom). */
const TENANT_ROUNDS = Math.max(1, Number(arg('tenant-rounds', '1')));
/** Which tenant measurements run: `fresh` (a fresh API per phase), `random` (keys at random, one API). */
const TENANT_PARTS = arg('tenant-parts', 'fresh,random').split(',');
const KEEP = process.argv.includes('--keep');
const REUSE = arg('reuse', '');
/** Requests of the `day` part. */
const DAY_ROWS = Number(arg('day-rows', '1000000'));

async function startApi(
  url: string,
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ ctx: AppContext; base: string; close: () => Promise<void> }> {
  const config = loadConfig({
    ...BENCH_ENV,
    ...env,
    DATABASE_URL: url,
    REDIS_URL: process.env.REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
  });
  const ctx = await createContext({ ...config, isProduction: false, nodeEnv: 'development' });
  const app = await buildApp(ctx, 'LIVE');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    ctx,
    base,
    close: async () => {
      await app.close();
      if (ctx.redis) await dropRedisNamespace(ctx.redis, ctx.config.redisKeyPrefix).catch(() => {});
      await ctx.close();
    },
  };
}

export async function benchScale(options: { load: Load; only: string }): Promise<void> {
  const parts = options.only ? options.only.split(',') : ['lists', 'tenants'];
  const prefix = `bench:${newId()}`;
  console.log(`scale scenario; load average before: ${loadAverage()}`);
  // Each part on a throw-away database of its own (the lists' may be kept or reused, below).
  const onFreshDatabase = async (part: (url: string) => Promise<void>) => {
    const server = await freshServerDatabase();
    try {
      await part(server.url);
    } finally {
      await server.drop();
    }
  };
  if (parts.includes('tenants')) await onFreshDatabase((url) => benchTenants(options.load, url, prefix));
  if (parts.includes('day')) await onFreshDatabase((url) => benchDay(options.load, url, prefix));
  if (parts.includes('lists')) {
    const server = REUSE ? null : await freshServerDatabase();
    try {
      await benchLists(options.load, REUSE || (server as { url: string }).url, prefix, REUSE === '');
    } finally {
      if (server && !KEEP) await server.drop();
      else if (server) console.log(`kept: ${server.url}`);
    }
  }
}

/** A user of `partnerId` made in the database, and the Authorization header of its access token (the developer routes). */
async function partnerUserBearer(db: SeedDb, ctx: AppContext, partnerId: string): Promise<Record<string, string>> {
  const userId = newId();
  await db.query(`INSERT INTO users (id, phone, role, partner_id, created_at) VALUES ($1, $2, 'PARTNER', $3, now())`, [
    userId,
    `+99457${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`,
    partnerId,
  ]);
  const token = await signAccessToken(ctx.secrets.jwtKey, ctx.clock, { userId, role: 'PARTNER', partnerId });
  return { authorization: `Bearer ${token}` };
}

function printRow(r: Measured): void {
  console.log(
    `${r.name.padEnd(58)} ${String(r.requestsPerSec).padStart(6)} req/s  p50 ${String(r.p50).padStart(5)} ms  p99 ${String(r.p99).padStart(5)} ms${r.non2xx ? `  non-2xx ${r.non2xx}` : ''}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Lists at 10,000,000 / 1,000,000 / 1,000,000 rows

async function benchLists(load: Load, url: string, prefix: string, seed: boolean): Promise<void> {
  const api = await startApi(url, `${prefix}:lists`);
  const db = await seedDb(url, api.ctx.db);
  try {
    const seeded = seed ? await seedLists(db) : await findSeeded(db);
    const { keys, webhookId, now } = seeded;
    const [a, b, c] = keys;
    const partnerId = a.partnerId;

    const bearer = await partnerUserBearer(db, api.ctx, partnerId);

    // The request log's far end, per filter: a cursor 1,000 requests before the oldest that matches.
    const deep = async (where: string, params: unknown[] = []) => {
      const rows = await db.query<{ id: string }>(
        `SELECT id FROM request_log WHERE partner_id = $1 AND ${where} ORDER BY created_at, id LIMIT 1001`,
        [partnerId, ...params],
      );
      return rows[rows.length - 1]?.id ?? '';
    };
    const since = new Date(now.getTime() - 20 * DAY_MS).toISOString();
    const until = new Date(now.getTime() - 19 * DAY_MS).toISOString();
    const filters: Array<{ name: string; query: string; where: string; params?: unknown[] }> = [
      { name: 'no filter', query: '', where: 'true' },
      { name: `apiKeyId (10 %)`, query: `apiKeyId=${c.id}`, where: 'api_key_id = $2', params: [c.id] },
      { name: 'status=4xx', query: 'status=4xx', where: 'status_code / 100 = 4' },
      // The values most requests have: no index of their own (docs/paging.md, "Request log").
      { name: 'status=200 (85 %)', query: 'status=200', where: 'status_code = 200' },
      { name: 'status=2xx (90 %)', query: 'status=2xx', where: 'status_code >= 200 AND status_code < 300' },
      { name: 'method=GET (84 %)', query: 'method=GET', where: "method = 'GET'" },
      { name: 'status=503 (0.5 %)', query: 'status=503', where: 'status_code = 503' },
      { name: 'code=ERR_RATE_LIMITED', query: 'code=ERR_RATE_LIMITED', where: "error_code = 'ERR_RATE_LIMITED'" },
      { name: 'method=DELETE (1 %)', query: 'method=DELETE', where: "method = 'DELETE'" },
      { name: 'path=/v1/partner/me', query: 'path=/v1/partner/me', where: "path = '/v1/partner/me'" },
      {
        name: 'path=/v1/partner/orders/* (prefix)',
        query: 'path=/v1/partner/orders/*',
        where: "path LIKE '/v1/partner/orders/%'",
      },
      {
        name: 'since/until (one day, 20 days back)',
        query: `since=${since}&until=${until}`,
        where: 'created_at >= $2 AND created_at < $3',
        params: [since, until],
      },
      {
        name: 'apiKeyId + status=5xx',
        query: `apiKeyId=${b.id}&status=5xx`,
        where: 'api_key_id = $2 AND status_code / 100 = 5',
        params: [b.id],
      },
    ];
    const rows: Measured[] = [];
    const measure = async (name: string, paths: string[], headers: Record<string, string> = bearer) => {
      const r = await load({ url: api.base, connections: READERS, duration: DURATION, headers, paths });
      const row = measured(name, r);
      rows.push(row);
      printRow(row);
    };
    console.log(`\nrequest log, ${LOG_ROWS} rows, ${READERS} readers, ${DURATION} s each`);
    for (const f of filters) {
      const q = f.query ? `${f.query}&` : '';
      await measure(`requests ${f.name}: page 1`, [`/v1/developer/requests?${q}pageSize=50`]);
      await measure(`requests ${f.name}: page 200 (the deepest by number)`, [`/v1/developer/requests?${q}page=200&pageSize=50`]);
      const cursor = await deep(f.where, f.params);
      await measure(`requests ${f.name}: cursor at the far end`, [
        `/v1/developer/requests?${q}startingAfter=${cursor}&pageSize=50`,
      ]);
    }
    console.log(`\norders (${ORDERS}) and deliveries (${DELIVERIES}), ${READERS} readers`);
    const key = { 'x-api-key': a.key };
    await measure('orders: page 1', ['/v1/partner/orders?pageSize=50'], key);
    await measure('orders: page 10000 (the deepest)', ['/v1/partner/orders?page=10000&pageSize=50'], key);
    await measure('orders status=PACKED: page 10000', ['/v1/partner/orders?status=PACKED&page=10000&pageSize=50'], key);
    await measure('deliveries: page 1', [`/v1/developer/webhooks/${webhookId}/deliveries?pageSize=50`]);
    await measure('deliveries: page 10000 (the deepest)', [
      `/v1/developer/webhooks/${webhookId}/deliveries?page=10000&pageSize=50`,
    ]);
    await measure('deliveries status=DELIVERED: page 10000', [
      `/v1/developer/webhooks/${webhookId}/deliveries?status=DELIVERED&page=10000&pageSize=50`,
    ]);
    await measure('key usage: 35 days', [`/v1/developer/keys/${a.id}/usage?days=35`]);
    console.log(`load average after: ${loadAverage()}`);
  } finally {
    await db.close();
    await api.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// One busy day of the request log, never analysed

/**
 * DAY_ROWS requests logged today (every fifth another partner's), in a partition nobody has analysed
 * (this machine's PostgreSQL, like CI's, runs with autovacuum off). Page 1 and page 100 (offset 4,950)
 * with `--readers` readers: first page 100 before any statistics exist (what the planner does without
 * them), then the pass the worker runs every 10 s (src/db/statistics.ts), timed, then every read.
 */
async function benchDay(load: Load, url: string, prefix: string): Promise<void> {
  // Its first reads time out by design (answered 503, counted in the figures): not logged as errors.
  const api = await startApi(url, `${prefix}:day`, { LOG_LEVEL: 'fatal' });
  const db = await seedDb(url, api.ctx.db);
  try {
    const now = new Date();
    const [a, b, c] = await seedPartnersAndKeys(db, 1, 3, now);
    const [other] = await seedPartnersAndKeys(db, 1, 1, now);
    // Inside today's UTC day: from its first second (or the last hour, just after midnight) to now.
    const intoDayMs = now.getTime() % DAY_MS;
    const spanMs = Math.max(intoDayMs - 1000, Math.min(intoDayMs, 1000));
    const t0 = Date.now();
    console.log(`\nseeding ${DAY_ROWS} requests of today (${(spanMs / 3_600_000).toFixed(1)} h)…`);
    await seedRequestLog(db, a.partnerId, [a.id, b.id, c.id], now, { rows: DAY_ROWS, spanMs, otherPartnerId: other.partnerId });
    const partition = `request_log_d${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
    const [state] = await db.query<{ reltuples: number; pages: number }>(
      `SELECT reltuples::float8 AS reltuples, pg_relation_size(oid) / 8192 AS pages FROM pg_class WHERE relname = $1`,
      [partition],
    );
    console.log(
      `  done in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${partition}, ${state.pages} pages, ${state.reltuples < 0 ? 'never analysed' : `analysed (${state.reltuples} rows)`}`,
    );

    const headers = await partnerUserBearer(db, api.ctx, a.partnerId);
    const measure = async (name: string, path: string, seconds = DURATION) => {
      printRow(measured(name, await load({ url: api.base, connections: READERS, duration: seconds, headers, paths: [path] })));
    };
    const filters = [
      { name: 'no filter', query: '' },
      { name: 'status=4xx', query: 'status=4xx&' },
      { name: `apiKeyId (10 %)`, query: `apiKeyId=${c.id}&` },
    ];

    console.log(`request log, ${DAY_ROWS} rows of one day, ${READERS} readers; before any statistics:`);
    await measure('no filter: page 100 (never analysed)', '/v1/developer/requests?page=100&pageSize=50', Math.min(DURATION, 5));
    const passStart = Date.now();
    const analysed = await analyseGrownTables(api.ctx.db.withTimeout(600_000));
    console.log(`the service's statistics pass: ${Date.now() - passStart} ms (${analysed.join(', ') || 'nothing'}); then:`);
    for (const f of filters) {
      await measure(`${f.name}: page 1`, `/v1/developer/requests?${f.query}pageSize=50`);
      await measure(`${f.name}: page 100`, `/v1/developer/requests?${f.query}page=100&pageSize=50`);
    }
    console.log(`load average after: ${loadAverage()}`);
  } finally {
    await db.close();
    await api.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// 200 tenants against one

const ORDERS_PER_KEY = 5;

async function benchTenants(load: Load, url: string, prefix: string): Promise<void> {
  const seeder = await startApi(url, `${prefix}:seed`);
  const db = await seedDb(url, seeder.ctx.db);
  const now = new Date();
  const many = await seedPartnersAndKeys(db, 200, 3, now);
  const one = await seedPartnersAndKeys(db, 1, 3, now);
  const zoneId = await seedZone(db, now);
  const all = [...one, ...many];
  const codes = new Map<string, string[]>();
  await seedOrders(db, { from: 1, to: all.length * ORDERS_PER_KEY }, { keyIds: all.map((k) => k.id), zoneId, now });
  for (let g = 1; g <= all.length * ORDERS_PER_KEY; g++) {
    const key = all[g % all.length];
    codes.set(key.id, [...(codes.get(key.id) ?? []), seededCode(g)]);
  }
  await db.query('VACUUM ANALYZE orders');
  await db.close();
  await seeder.close();

  /** Paired arrays (same length): request j uses paths[j] with keys[j]. The same mix for every key. */
  const mix = (keys: typeof all) => {
    const paths: string[] = [];
    const apiKeys: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const k of keys) {
        const code = (codes.get(k.id) ?? [])[round % ORDERS_PER_KEY];
        for (const path of ['/v1/partner/me', '/v1/partner/orders?pageSize=20', `/v1/partner/orders/${code}`]) {
          paths.push(path);
          apiKeys.push(k.key);
        }
      }
    }
    // 600 keys' list is 200 times the 3 keys'; the 3 keys' is repeated to the same length so that both
    // runs walk a list of the same shape.
    return { paths, apiKeys };
  };
  const phases = { 'one tenant (3 keys)': mix(one), '200 tenants (600 keys)': mix(many) };
  if (TENANT_PARTS.includes('fresh')) await benchTenantsFresh(load, url, prefix, phases);
  if (TENANT_PARTS.includes('random')) await benchTenantsRandom(load, url, prefix, phases);
}

type TenantPhases = Record<'one tenant (3 keys)' | '200 tenants (600 keys)', { paths: string[]; apiKeys: string[] }>;

/** Each phase on a freshly started API (cold caches), its first 10 s and the rest measured apart. */
async function benchTenantsFresh(load: Load, url: string, prefix: string, phases: TenantPhases): Promise<void> {
  const results: Record<string, Array<{ first: Measured; rest: Measured }>> = {};
  console.log(
    `\n200 tenants against one: ${READERS * 2} connections, first 10 s then ${TENANT_SECONDS - 10} s, fresh API each phase`,
  );
  for (let round = 0; round < 2; round++) {
    const order = round === 0 ? Object.keys(phases) : Object.keys(phases).reverse();
    for (const name of order) {
      const { paths, apiKeys } = phases[name as keyof typeof phases];
      const api = await startApi(url, `${prefix}:tenants:${round}:${name.length}`);
      const scenario = { url: api.base, connections: READERS * 2, paths, apiKeys };
      const first = await load({ ...scenario, duration: 10 });
      const rest = await load({ ...scenario, duration: TENANT_SECONDS - 10 });
      await api.close();
      const row = (r: typeof first, part: string) => measured(`${name} ${part}`, r);
      results[name] = [...(results[name] ?? []), { first: row(first, 'first 10 s'), rest: row(rest, 'after') }];
      printRow(row(first, `round ${round + 1}, first 10 s`));
      printRow(row(rest, `round ${round + 1}, after`));
    }
  }
  const [oneName, manyName] = Object.keys(phases);
  for (const part of ['first', 'rest'] as const) {
    const mean = (name: string, f: (r: Measured) => number) =>
      results[name].reduce((s, r) => s + f(r[part]), 0) / results[name].length;
    console.log(
      `${part === 'first' ? 'first 10 s' : 'after     '}: throughput ×${(mean(manyName, (r) => r.requestsPerSec) / mean(oneName, (r) => r.requestsPerSec)).toFixed(2)}, p99 ×${(mean(manyName, (r) => r.p99) / mean(oneName, (r) => r.p99)).toFixed(2)} (200 tenants / one)`,
    );
  }
}

async function benchTenantsRandom(load: Load, url: string, prefix: string, phases: TenantPhases): Promise<void> {
  // The same mixes in random order (each request's key drawn at random, as a probe from outside reads
  // them: no key's three requests in a row), phases many → one → many on ONE API process, so that what
  // the first phase left behind (per-key caches, windows, usage rows) is carried into the next.
  const api = await startApi(url, `${prefix}:tenants:random`);
  console.log(
    `\nkeys at random, one process, ${TENANT_SECONDS} s per phase: 200 tenants, then one → 200 tenants ${TENANT_ROUNDS} time(s)`,
  );
  // A process's first seconds run code V8 has not optimised yet, every route's alike: measured first, the
  // 200 tenants would pay for the process's start, not for being many. The warm-up reads with one
  // tenant's keys (the same routes), so the 600 keys' caches are still cold when their phase begins.
  const warm = await load({
    url: api.base,
    connections: READERS * 2,
    ...shuffled(phases['one tenant (3 keys)']),
    duration: WARM_UP_SECONDS,
  });
  printRow(measured('warm-up, one tenant (not compared)', warm));
  const random: Measured[] = [];
  const many = shuffled(phases['200 tenants (600 keys)']);
  const one = shuffled(phases['one tenant (3 keys)']);
  const order: Array<[string, typeof many]> = [['200 tenants (600 keys), at random', many]];
  for (let round = 0; round < TENANT_ROUNDS; round++) {
    order.push(['one tenant (3 keys), at random', one], ['200 tenants (600 keys), at random, again', many]);
  }
  for (const [name, m] of order) {
    // The API runs in this process and the load in a child: this process's CPU is the API's. Database
    // transactions (each statement outside one counts as one) show what the caches did not answer.
    const cpu = process.cpuUsage();
    const xacts = await databaseTransactions(api.ctx);
    const profile = PROFILE ? await startProfile() : null;
    const r = measured(name, await load({ url: api.base, connections: READERS * 2, ...m, duration: TENANT_SECONDS }));
    const spent = process.cpuUsage(cpu);
    if (profile) await profile.stop(`tenants ${name}`);
    const requests = r.requestsPerSec * TENANT_SECONDS;
    // Statistics reach pg_stat_database within a second of a transaction's end.
    await sleep(1_000);
    const transactions = (await databaseTransactions(api.ctx)) - xacts;
    printRow(r);
    console.log(
      `${''.padEnd(58)} API CPU ${Math.round((spent.user + spent.system) / requests)} µs/request, ${(transactions / requests).toFixed(3)} database transactions/request`,
    );
    random.push(r);
  }
  await api.close();
  const ratio = (i: number, j: number) =>
    `throughput ×${(random[i].requestsPerSec / random[j].requestsPerSec).toFixed(2)}, p99 ×${(random[i].p99 / random[j].p99).toFixed(2)}`;
  console.log(`at random, 200 tenants before one: ${ratio(0, 1)}`);
  // Each 200-tenant phase against the one-tenant phase just before it: on a machine whose speed drifts
  // from minute to minute, neighbouring phases are what compare.
  const after = Array.from({ length: TENANT_ROUNDS }, (_, r) => 2 + 2 * r);
  for (const i of after) console.log(`at random, 200 tenants after  one: ${ratio(i, i - 1)}`);
  if (TENANT_ROUNDS > 1) {
    const median = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    };
    const throughput = after.map((i) => random[i].requestsPerSec / random[i - 1].requestsPerSec);
    const p99 = after.map((i) => random[i].p99 / random[i - 1].p99);
    console.log(
      `median of ${TENANT_ROUNDS} rounds after one: throughput ×${median(throughput).toFixed(2)} (×${Math.min(...throughput).toFixed(2)}–${Math.max(...throughput).toFixed(2)}), p99 ×${median(p99).toFixed(2)} (×${Math.min(...p99).toFixed(2)}–${Math.max(...p99).toFixed(2)})`,
    );
  }
}

/** Transactions committed in the API's database so far (PostgreSQL's statistics, flushed within a second). */
async function databaseTransactions(ctx: AppContext): Promise<number> {
  const rows = await ctx.db.query<{ n: number }>(
    'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
  );
  return Number(rows[0]?.n ?? 0);
}

/** The pairs of a mix in a fixed pseudo-random order (the same in every run). */
function shuffled(mix: { paths: string[]; apiKeys: string[] }): { paths: string[]; apiKeys: string[] } {
  const order = mix.paths.map((_, i) => i);
  let seed = 0x2545f491;
  for (let i = order.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    const j = seed % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return { paths: order.map((i) => mix.paths[i]), apiKeys: order.map((i) => mix.apiKeys[i]) };
}
