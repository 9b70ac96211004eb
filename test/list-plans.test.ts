/**
 * Every paged list reads a bounded number of rows, whatever the table holds (docs/paging.md): on the
 * PostgreSQL server, each statement the list's repository sends is run again under EXPLAIN ANALYZE (as a
 * prepared statement with its very parameters; a named statement's generic plan too), and the rows its plan reads from
 * the list's table (returned by a scan node, or read and thrown away by its filter) must stay within the
 * page's own bound: the request log's count at most 10,001, its page at most offset + pageSize + 1 index
 * entries and the pageSize + 1 rows behind them, its cursor page the same from the cursor (each and a row
 * per day partition; filters combined, as many times more as the second one thins out the first's rows); a webhook's deliveries and a key's orders at most offset + pageSize
 * index entries and pageSize rows behind them. The tables hold tens of thousands of rows of the partner
 * (and as many of another), several times any bound, so a plan that reads in proportion to the table
 * (a sequential scan, a sort of every match, an index in another order) fails here. (The log is laid out
 * so that no day partition holds only a few rows: such a partition is rightly read whole, once per probe.) The benchmark
 * (`npm run bench -- --scale`, docs/scale.md) shows the times; this shows the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listVisibleOrders } from '../src/modules/orders/order-reads.repo.js';
import { listRequests, type RequestFilter, requestMatches } from '../src/modules/request-log/request-log.repo.js';
import { seedLoggedRequests } from '../src/modules/request-log/request-log.test-helpers.js';
import { listDeliveries } from '../src/modules/webhooks/queue/read-deliveries.js';
import { createKey, createPartner, type TestKey, type TestPartner } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { type Captured, expectBounded as expectBoundedOn, recording } from './plan-bounds.js';

const serverMode = Boolean(process.env.DATABASE_URL);
const LOGGED = 30_000;
const ORDERS = 20_000;
const DELIVERIES = 20_000;
const STEP_MS = 60_000;
/**
 * Slack for the log's day partitions (LOGGED minutes and a day): a range read in order across partitions
 * may take a few rows more from each before it stops.
 */
const DAYS = 4 * (Math.ceil((LOGGED * STEP_MS) / 86_400_000) + 2);

let t: TestApp;
let partner: TestPartner;
let keys: TestKey[];
let logIds: string[];
let webhookId: string;

const expectBounded = (captured: Captured[], table: string, bounds: number[]) =>
  expectBoundedOn(t.ctx.db, captured, table, bounds);

beforeAll(async () => {
  if (!serverMode) return;
  t = await createTestApp();
  // Rows land in the partition of their UTC day. A partition of a handful of rows is rightly read whole
  // instead of through an index, and the bounds would count that read once per probe: today's just after
  // midnight, or the oldest day's when the log began just before a midnight. The log spans 20 days and
  // 20 hours; starting it at 10:00 UTC leaves 600 rows in both end partitions, whatever the time of day
  // the test runs at (so the clock goes forward to the next 10:00).
  const intoDay = t.clock.nowMs() % 86_400_000;
  t.clock.advance(Math.ceil(((36_000_000 - intoDay + 86_400_000) % 86_400_000) / 1000));
  // Seeding tens of thousands of rows outlasts a request's statement timeout on a busy machine.
  const seed = t.ctx.db.withTimeout(300_000);
  partner = await createPartner(t.ctx);
  keys = [await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id)];
  const nowMs = t.clock.nowMs();
  logIds = await seedLoggedRequests(seed, {
    partnerId: partner.id,
    keyIds: keys.map((k) => k.id),
    count: LOGGED,
    nowMs,
    stepMs: STEP_MS,
  });
  // Another partner's log over the same days: its rows share every index with ours.
  const other = await createPartner(t.ctx);
  const otherKey = await createKey(t.ctx, other.id);
  await seedLoggedRequests(seed, { partnerId: other.id, keyIds: [otherKey.id], count: LOGGED, nowMs, stepMs: STEP_MS });

  await seed.query(
    `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area,
                         time_window_start, time_window_end, customer, assigned_key_id, partner_assigned_at, created_at, updated_at)
     SELECT gen_random_uuid(), 'LP' || lpad(g::text, 8, '0'), 'LIVE', CASE WHEN g % 4 = 0 THEN 'EN_ROUTE' ELSE 'PACKED' END,
            'COD', 'UNPAID', 100, 100, 'Yasamal', $2, $2,
            '{"name":"C","phone":"+994500000000","address":{"street":"S","details":null,"lat":null,"lng":null}}',
            ($1::uuid[])[1 + g % 2], $2, $2::timestamptz - g * interval '1 minute', $2
       FROM generate_series(1, $3::int) g`,
    [[keys[0].id, keys[1].id], t.clock.now(), ORDERS],
  );
  const [{ id }] = await seed.query<{ id: string }>(
    `INSERT INTO webhooks (id, partner_id, api_key_id, url, events, secret_ciphertext, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, $2, 'https://hooks.example.com/plans', ARRAY['order.status_changed'], 'unused', $3, $3) RETURNING id`,
    [partner.id, keys[0].id, t.clock.now()],
  );
  webhookId = id;
  await seed.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, 'evt_' || g, 'order.status_changed', '{}',
            CASE WHEN g % 10 = 0 THEN 'DEAD' ELSE 'DELIVERED' END, 1, $3::timestamptz - g * interval '1 second', $3
       FROM generate_series(1, $4::int) g`,
    [webhookId, partner.id, t.clock.now(), DELIVERIES],
  );
  // What autovacuum does to tables this size: statistics and the visibility map.
  for (const table of ['request_log', 'orders', 'order_counts', 'webhook_deliveries', 'webhook_delivery_counts']) {
    await seed.query(`VACUUM ANALYZE ${table}`);
  }
}, 300_000);
afterAll(() => t?.close());

describe.skipIf(!serverMode)('the request log reads at most its page and its capped count', () => {
  const since = () => new Date(t.clock.nowMs() - 10 * 86_400_000);
  const until = () => new Date(t.clock.nowMs() - 9 * 86_400_000);
  const filters: Array<[string, () => RequestFilter, number?]> = [
    ['no filter', () => ({})],
    ['a key', () => ({ apiKeyId: keys[2].id })],
    ['a status class', () => ({ status: { class: 4 } })],
    ['one status', () => ({ status: { code: 503 } })],
    ['an error code', () => ({ code: 'ERR_DEPENDENCY_UNAVAILABLE' })],
    ['a method', () => ({ method: 'POST' })],
    ['an exact path', () => ({ path: { value: '/v1/partner/me', prefix: false } })],
    ['one day', () => ({ since: since(), until: until() })],
    // The values most requests have (status 200, 2xx, GET) have no index of their own (migration 0033):
    // the partner's time index, the value checked on its rows, of which it keeps nine in ten here.
    ['status 200', () => ({ status: { code: 200 } }), 2],
    ['the 2xx class', () => ({ status: { class: 2 } }), 2],
    ['GET', () => ({ method: 'GET' }), 2],
    // Combined filters read the index of one and check the others on its rows: here the status's, of
    // which the key has a third.
    ['a key and a status', () => ({ apiKeyId: keys[1].id, status: { code: 503 } }), 3],
  ];
  for (const [name, filter, share = 1] of filters) {
    /** The page statement: the page's index entries (after `offset`) and as many rows behind them. */
    const pageBound = (offset: number) => (offset + 2 * 51) * share + DAYS;
    const count = 10_001 * share + DAYS;
    it(`${name}: page 1, the deepest page by number and a cursor at the far end`, async () => {
      const first = recording(t.ctx.db);
      await listRequests(partner.id, filter(), { offset: 0 }, 50, first.q);
      await expectBounded(first.captured, 'request_log', [count, pageBound(0)]);

      const deepest = recording(t.ctx.db);
      const { counted } = await listRequests(partner.id, filter(), { offset: 9_950 }, 50, deepest.q);
      await expectBounded(deepest.captured, 'request_log', counted > 9_950 ? [count, pageBound(9_950)] : [count]);

      // The far end: the oldest matching requests but a few.
      const all = recording(t.ctx.db);
      await listRequests(partner.id, filter(), { offset: 0 }, 1, all.q);
      const oldest = await t.ctx.db.query<{ id: string; created_at: Date }>(
        `SELECT id, created_at FROM request_log WHERE ${all.captured[1].text.split('WHERE ')[1].split('ORDER BY')[0]}
          ORDER BY created_at, id LIMIT 1 OFFSET ${60 * share}`,
        all.captured[1].params,
      );
      if (oldest.length === 0) return;
      const after = { id: oldest[0].id, createdAt: oldest[0].created_at };
      const cursor = recording(t.ctx.db);
      expect(await requestMatches(partner.id, filter(), after.id, after.createdAt, cursor.q)).toBe(true);
      const page = await listRequests(partner.id, filter(), { after }, 50, cursor.q);
      expect(page.rows).toHaveLength(50);
      await expectBounded(cursor.captured, 'request_log', [1 + DAYS, count, pageBound(0)]);
    });
  }
  it('the helper made a log of the size the bounds assume', () => {
    expect(logIds).toHaveLength(LOGGED);
  });
});

describe.skipIf(!serverMode)("a webhook's deliveries and a key's orders read at most offset + pageSize", () => {
  for (const [name, status] of [
    ['every delivery', undefined],
    ['one status', 'DELIVERED'],
  ] as const) {
    it(`deliveries, ${name}: page 1 and page 350 of 50`, async () => {
      for (const page of [1, 350]) {
        const run = recording(t.ctx.db);
        const { items } = await listDeliveries(partner.id, webhookId, { status, page, pageSize: 50 }, run.q);
        expect(items).toHaveLength(50);
        await expectBounded(run.captured, 'webhook_deliveries', [0, (page - 1) * 50 + 50 + 50]);
      }
    });
  }
  for (const [name, status] of [
    ['every order', undefined],
    ['one status', 'PACKED'],
  ] as const) {
    it(`orders of a key, ${name}: page 1 and page 140 of 50`, async () => {
      for (const page of [1, 140]) {
        const run = recording(t.ctx.db);
        await listVisibleOrders({ environment: 'LIVE', keyId: keys[0].id }, { status }, { page, pageSize: 50 }, false, run.q);
        await expectBounded(run.captured, 'orders', [(page - 1) * 50 + 50 + 50]);
      }
    });
  }
});
