/**
 * The plan guard of test/list-plans.test.ts on the first busy morning: one day's partition of the
 * request log holding 500,000 rows that nobody has analysed (PostgreSQL server, autovacuum off as in CI).
 * Without statistics the planner takes a filter to keep a fraction of a percent of the rows, so it
 * reads all of the partner's 400,000 rows of the day through a bitmap and sorts them for a page or a
 * count: the setup checks that it does. The service's own pass (src/db/statistics.ts, which the worker
 * runs every few seconds) analyses the partition once it passes a size, and from then on every list
 * statement reads at most its page, as with fresh statistics.
 *
 * The partition is filled as a table of its own and attached to the log (its indexes are then built
 * once, sorted, instead of entry by entry): what matters here is that it holds the rows and has never
 * been analysed, not how the rows got there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyseGrownTables, grownTables } from '../src/db/statistics.js';
import { listRequests, type RequestFilter, requestMatches } from '../src/modules/request-log/request-log.repo.js';
import { createKey, createPartner, type TestKey, type TestPartner } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { analyzed, type Captured, expectBounded, recording, rowsRead } from './plan-bounds.js';

const serverMode = Boolean(process.env.DATABASE_URL);
const ROWS = 500_000;
/** Every fifth row is another partner's: ours holds 400,000 of the day. */
const OURS = 400_000;
const DAY_MS = 86_400_000;
/** The rows span 22 hours of one UTC day, newest first from a minute before its end. */
const STEP_MS = Math.floor((22 * 3_600_000) / ROWS);

let t: TestApp;
let partner: TestPartner;
let keys: TestKey[];
let partition: string;

const bounded = (captured: Captured[], bounds: number[]) => expectBounded(t.ctx.db, captured, 'request_log', bounds);

beforeAll(async () => {
  if (!serverMode) return;
  t = await createTestApp();
  // A minute before the end of the test clock's UTC day.
  const intoDay = t.clock.nowMs() % DAY_MS;
  t.clock.advance(Math.floor((DAY_MS - 60_000 - intoDay) / 1000));
  const nowMs = t.clock.nowMs();
  const day = new Date(nowMs).toISOString().slice(0, 10);
  partition = `request_log_d${day.replaceAll('-', '')}`;
  partner = await createPartner(t.ctx);
  keys = [await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id)];
  const other = await createPartner(t.ctx);
  const seed = t.ctx.db.withTimeout(600_000);
  await seed.query(`CREATE TABLE ${partition} (LIKE request_log)`);
  // What the recorder writes (request-log.test-helpers.ts, seedLoggedRequests), four rows of ours to one of
  // the other partner's.
  await seed.query(
    `INSERT INTO ${partition} (id, created_at, partner_id, api_key_id, environment, method, path, query, status_code, error_code,
                              duration_ms, ip, user_agent, idempotency_key, request_body, response_body)
     SELECT 'req_' || lpad(to_hex(ms), 12, '0') || lpad(to_hex(g), 6, '0') || substr(md5(g::text), 1, 14),
            timestamptz 'epoch' + ms * interval '1 millisecond', CASE WHEN g % 5 = 1 THEN $2::uuid ELSE $1::uuid END,
            ($3::uuid[])[1 + g % 3], 'LIVE', CASE WHEN g % 20 = 0 THEN 'POST' ELSE 'GET' END,
            CASE WHEN g % 2 = 0 THEN '/v1/partner/me' ELSE '/v1/partner/orders/' || g END, NULL,
            s.code, CASE s.code WHEN 404 THEN 'ERR_NOT_FOUND' WHEN 503 THEN 'ERR_DEPENDENCY_UNAVAILABLE' END,
            3, '127.0.0.1', 'test', NULL, NULL, NULL
       FROM generate_series(1, $4::int) g,
            LATERAL (SELECT ($5::bigint - g * $6::bigint) AS ms) t,
            LATERAL (SELECT CASE WHEN g % 50 = 0 THEN 503 WHEN g % 10 = 0 THEN 404 ELSE 200 END AS code) s`,
    [partner.id, other.id, keys.map((k) => k.id), ROWS, nowMs, STEP_MS],
  );
  await seed.query(
    `ALTER TABLE request_log ATTACH PARTITION ${partition} FOR VALUES FROM ('${day}T00:00:00Z') TO ('${new Date(Date.parse(day) + DAY_MS).toISOString()}')`,
  );
}, 600_000);
afterAll(() => t?.close());

describe.skipIf(!serverMode)("a day's partition of 500,000 rows never analysed", () => {
  it('as seeded: no statistics, and the count of a page reads every row of the partner', async () => {
    const [{ n }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stats WHERE tablename = $1', [
      partition,
    ]);
    expect(n).toBe(0);
    const run = recording(t.ctx.db);
    await listRequests(partner.id, {}, { offset: 4_950 }, 50, run.q);
    // The proof that this setup is the first busy morning: the capped count reads the whole day.
    expect(rowsRead(await analyzed(t.ctx.db, run.captured[0], 'custom'), 'request_log')).toBeGreaterThan(OURS / 2);
  });

  it("the service's pass vacuums and analyses the partition once, and not again before it doubles", async () => {
    expect((await grownTables(t.ctx.db)).map((c) => c.name)).toContain(partition);
    expect(await analyseGrownTables(t.ctx.db.withTimeout(120_000))).toContain(partition);
    expect((await grownTables(t.ctx.db)).map((c) => c.name)).not.toContain(partition);
  });

  const filters: Array<[string, () => RequestFilter, number?]> = [
    ['no filter', () => ({})],
    ['a key', () => ({ apiKeyId: keys[2].id })],
    ['a status class', () => ({ status: { class: 4 } })],
    ['one status', () => ({ status: { code: 503 } })],
    ['an error code', () => ({ code: 'ERR_DEPENDENCY_UNAVAILABLE' })],
    ['a method', () => ({ method: 'POST' })],
    ['an exact path', () => ({ path: { value: '/v1/partner/me', prefix: false } })],
    // The values most requests have (status 200, 2xx, GET) have no index of their own (migration 0033):
    // the partner's time index, the value checked on its rows, of which it keeps nine in ten here.
    ['status 200', () => ({ status: { code: 200 } }), 2],
    ['the 2xx class', () => ({ status: { class: 2 } }), 2],
    ['GET', () => ({ method: 'GET' }), 2],
    ['a key and a status', () => ({ apiKeyId: keys[1].id, status: { code: 503 } }), 3],
  ];
  for (const [name, filter, share = 1] of filters) {
    const pageBound = (offset: number) => (offset + 2 * 51) * share;
    const count = 10_001 * share;
    it(`then, ${name}: page 1, page 100 (offset 4,950), the deepest page by number, a cursor`, async () => {
      for (const offset of [0, 4_950, 9_950]) {
        const run = recording(t.ctx.db);
        const { counted } = await listRequests(partner.id, filter(), { offset }, 50, run.q);
        await bounded(run.captured, counted > offset ? [count, pageBound(offset)] : [count]);
      }
      const all = recording(t.ctx.db);
      await listRequests(partner.id, filter(), { offset: 0 }, 1, all.q);
      const [middle] = await t.ctx.db.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM request_log WHERE ${all.captured[1].text.split('WHERE ')[1].split('ORDER BY')[0]}
          ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET 1000`,
        all.captured[1].params,
      );
      const cursor = recording(t.ctx.db);
      expect(await requestMatches(partner.id, filter(), middle.id, middle.created_at, cursor.q)).toBe(true);
      const page = await listRequests(
        partner.id,
        filter(),
        { after: { id: middle.id, createdAt: middle.created_at } },
        50,
        cursor.q,
      );
      expect(page.rows).toHaveLength(50);
      await bounded(cursor.captured, [1, count, pageBound(0)]);
    });
  }
});
