/**
 * The write paths never read the growing tables by a sequential scan (docs/performance.md, 'Operator writes'). Every operator and
 * partner write (create, assign, status walks, batches, partner events grouped and with an
 * Idempotency-Key, the sandbox helper) goes through HTTP, and the worker fans the outbox out to a
 * webhook's deliveries, on a table of thousands of orders with every optional part filled, and `pg_stat_user_tables` must show no new sequential scan of `orders`,
 * `order_items`, `order_events`, `outbox`, `payment_intents`, `settlements`, `settlement_lines` or
 * `idempotency_keys` (thousands of keys), and
 * no index read of a large part of them either. The payment statements (capture, refund, settlement
 * creation, adjustment, remittance, the partner's reads) run with them.
 *
 * The app first serves the same writes while the table is still empty, as a deployment does on its
 * first day: each database session plans (and keeps) the statements of its triggers then. That is how
 * the O(n) writes happened: the read-model triggers of 0006/0009 joined their transition table to
 * `orders`, and a session that first ran them on an unanalysed, near-empty table kept a hash join over
 * a sequential scan of `orders` for as long as it lived (migration 0013). No ANALYZE runs between the
 * two phases, as none may run in a deployment for a long while.
 *
 * The counters are read as test/scan-counters.ts describes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser, type TestKey } from '../../../test/factories.js';
import { GatedDb } from '../../../test/gated-db.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { genericPlan, type PlanNode, planReads } from '../../../test/plan-bounds.js';
import { ScanSeeder } from '../../../test/scan-counters.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { Queryable } from '../../db/db.js';
import type { OutboxTx } from '../../shared/outbox.js';
import { fanOutBatch } from '../../worker/fanout.js';
import { ALL_EVENTS, createWebhookVia, devAuth } from '../webhooks/webhooks.test-helpers.js';
import { lockVisibleOrders } from './order-locks.repo.js';
import { recordStatusChanges } from './order-writes.repo.js';
import { type Auth, orderBody } from './orders.test-helpers.js';

/** Orders in the table when the writes are measured. */
const SEEDED = 8000;
/** Idempotency-Keys in their table then (rows of about 150 bytes: past the 1 MB of src/db/join-plans.ts). */
const SEEDED_KEYS = 16_000;
const TABLES = [
  'orders',
  'order_items',
  'order_events',
  'outbox',
  'payment_intents',
  'settlements',
  'settlement_lines',
  'idempotency_keys',
] as const;

let t: TestApp;
let admin: Auth;
let key: TestKey;
let otherKey: TestKey;
let partnerId: string;
let otherPartnerId: string;
let sandboxKey: TestKey;
let zoneId: string;
let receiver: WebhookReceiver;
let seeder: ScanSeeder;
let db: GatedDb;

async function post(path: string, headers: Record<string, string>, payload: object, sandbox = false) {
  const app = sandbox ? t.sandbox : t.live;
  const res = await app.inject({ method: 'POST', url: path, headers, payload });
  expect(res.statusCode, `${path}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

const event = (code: string, body: Record<string, unknown>, extra: Record<string, string> = {}) =>
  post(`/v1/partner/orders/${code}/events`, { ...key.headers, ...extra }, body);

/**
 * Every write path, a few times: orders of every part (zone, area, time window, three items,
 * customer), created and assigned four at a time, walked to PACKED, two put on a batch that is
 * dispatched and completed, partner events in groups (arriving together) and one with an
 * Idempotency-Key, a sandbox test order; `seeded` orders (already in the table) are reassigned and
 * picked up too.
 */
async function exerciseWritePaths(seeded: string[]): Promise<number> {
  let requests = 0;
  const all = async <T>(work: Array<Promise<T>>) => {
    requests += work.length;
    return Promise.all(work);
  };
  const items = [1, 2, 3].map((i) => ({
    name: { az: `Mal ${i}`, ru: `Товар ${i}`, en: `Item ${i}` },
    qty: i,
    unitPriceQepik: 1000,
  }));
  const created = await all(
    Array.from({ length: 4 }, () =>
      post('/v1/admin/orders', admin, orderBody({ zoneId, items, totalQepik: 6000, codAmountQepik: 6000 })),
    ),
  );
  const codes = created.map((o) => o.code as string);
  await all(codes.map((code) => post(`/v1/admin/orders/${code}/assign`, admin, { apiKeyId: key.id })));
  for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED']) {
    await all(codes.map((code) => post(`/v1/admin/orders/${code}/status`, admin, { status })));
  }
  const batch = await post('/v1/admin/batches', admin, { orderCodes: codes.slice(0, 2) });
  requests++;
  await all([post(`/v1/admin/batches/${batch.code}/status`, admin, { status: 'DISPATCHED' })]);
  await all([event(codes[3], { type: 'PICKED_UP' }, { 'idempotency-key': `ws-${codes[3]}` })]);
  await all(codes.slice(0, 3).map((code) => event(code, { type: 'PICKED_UP' })));
  await all(codes.map((code) => event(code, { type: 'EN_ROUTE' })));
  await all([
    ...codes.slice(0, 2).map((code) => event(code, { type: 'DELIVERED', codCollectedQepik: 6000 })),
    ...codes.slice(2).map((code) => event(code, { type: 'FAILED', failReason: 'NOT_HOME' })),
  ]);
  await all([post(`/v1/admin/batches/${batch.code}/status`, admin, { status: 'COMPLETED' })]);
  await all([post('/v1/partner/sandbox/orders', sandboxKey.headers, {}, true)]);
  requests += await exercisePayments(codes.slice(0, 2));
  if (seeded.length > 0) {
    await all(seeded.slice(0, 2).map((code) => post(`/v1/admin/orders/${code}/assign`, admin, { apiKeyId: otherKey.id })));
    await all(seeded.slice(2, 5).map((code) => event(code, { type: 'PICKED_UP' })));
  }
  return requests;
}

/**
 * The payment statements (docs/payments.md): a card order captured and refunded, the period of the
 * `delivered` collections closed, adjusted and remitted on, and the partner's reads of intents,
 * balance, settlements and lines. The list of intents is left out: its total counts the key's
 * matching intents (an index range as long as the key's orders).
 */
async function exercisePayments(delivered: string[]): Promise<number> {
  const card = await post(
    '/v1/admin/orders',
    admin,
    orderBody({
      paymentMethod: 'CARD',
      codAmountQepik: 0,
      totalQepik: 6000,
      items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: 1, unitPriceQepik: 6000 }],
    }),
  );
  await post(`/v1/admin/orders/${card.code}/payment/capture`, admin, {});
  await post(`/v1/admin/orders/${card.code}/payment/refunds`, admin, { amountQepik: 100 });
  t.clock.advance(1);
  const settlement = await post(`/v1/admin/partners/${partnerId}/settlements`, admin, {
    environment: 'live',
    periodEnd: t.clock.now().toISOString(),
  });
  expect(settlement.collectionsCount).toBe(delivered.length);
  await post(`/v1/admin/settlements/${settlement.id}/adjustments`, admin, { amountQepik: -10, note: 'rounding' });
  await post(`/v1/admin/settlements/${settlement.id}/remittances`, admin, { amountQepik: 100, reference: 'WS-BANK' });
  const read = async (url: string) => {
    const res = await t.live.inject({ method: 'GET', url, headers: key.headers });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    return res;
  };
  const intent = (
    await t.ctx.db.query<{ id: string }>(
      'SELECT p.id FROM payment_intents p JOIN orders o ON o.id = p.order_id WHERE o.code = $1',
      [delivered[0]],
    )
  )[0];
  await read(`/v1/partner/payment-intents/${intent.id}`);
  await read('/v1/partner/balance');
  await read('/v1/partner/settlements');
  await read(`/v1/partner/settlements/${settlement.id}`);
  await read(`/v1/partner/settlements/${settlement.id}/lines`);
  await read(`/v1/partner/settlements/${settlement.id}/lines.csv`);
  return 14;
}

/**
 * The worker's fan-out of the outbox (what it does after every write): batches until the outbox is
 * drained. (The worker's periodic retention purge is not a write path and is left out: see
 * docs/performance.md.)
 */
async function fanOut(): Promise<void> {
  for (let round = 0; round < 100; round++) {
    if ((await fanOutBatch(t.ctx, 100)).processed === 0) return;
  }
  throw new Error('the outbox did not drain');
}

/**
 * Thousands of PACKED orders of `key` with every part (two batches, zone, area, time window, three
 * items, customer, a two-entry timeline) and a processed outbox row each, in bulk SQL with every
 * trigger on. (`session_replication_role`, the usual way to skip them, resets the session's plan
 * cache, which on the embedded database's one session would hide exactly what this test looks for.)
 * The orders carry their timeline text and last event id already, so the timeline trigger has
 * nothing to render; the items trigger renders each order's items once.
 */
async function seed(inTx: <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>): Promise<string[]> {
  const now = t.clock.now();
  await inTx(async (q) => {
    for (const code of ['WSB1', 'WSB2']) {
      await q.query(`INSERT INTO batches (code, status, created_at, updated_at) VALUES ($1, 'COMPLETED', $2, $2)`, [code, now]);
    }
    // Event ids 2g - 1 and 2g above `base` are order g's.
    const [{ base }] = await q.query<{ base: string }>(
      `SELECT setval('order_events_id_seq', nextval('order_events_id_seq') + 2 * $1::int) - 2 * $1::int AS base`,
      [SEEDED],
    );
    await q.query(
      `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area, zone_id,
                           time_window_start, time_window_end, customer, assigned_key_id, partner_assigned_at, batch_code,
                           batch_position, created_at, updated_at, pv_timeline, pv_last_event)
       SELECT gen_random_uuid(), 'WS' || lpad(g::text, 8, '0'), 'LIVE', 'PACKED', 'COD', 'UNPAID', 6000, 6000, 'Yasamal', $2,
              $4::timestamptz + interval '1 hour', $4::timestamptz + interval '3 hours',
              jsonb_build_object('name', 'Customer ' || g, 'phone', '+99450' || lpad(g::text, 7, '0'),
                                 'address', jsonb_build_object('street', 'Nizami ' || g, 'details', 'Flat 1', 'lat', 40.4, 'lng', 49.8)),
              $3, $4, 'WSB' || (1 + g % 2), g, c.at, c.at,
              '[' || timeline_entry_json('PLACED', c.at) || ',' || timeline_entry_json('PACKED', c.at) || ']', $5::bigint + 2 * g
         FROM generate_series(1, $1::int) g, LATERAL (SELECT $4::timestamptz - g * interval '1 minute' AS at) c`,
      [SEEDED, zoneId, key.id, now, base],
    );
    await q.query(
      `INSERT INTO order_items (order_id, position, name, qty, unit_price_qepik)
       SELECT o.id, p - 1, jsonb_build_object('az', 'Mal ' || p, 'ru', 'Товар ' || p, 'en', 'Item ' || p), p, 1000
         FROM orders o CROSS JOIN generate_series(1, 3) p WHERE o.code LIKE 'WS%'`,
    );
    await q.query(
      `INSERT INTO order_events (id, order_id, status, at, actor)
       SELECT o.pv_last_event - 2 + s.n, o.id, s.status, o.created_at, 'ADMIN'
         FROM orders o CROSS JOIN (VALUES (1, 'PLACED'), (2, 'PACKED')) AS s(n, status) WHERE o.code LIKE 'WS%'`,
    );
    // Their payment intents: half awaiting collection, half collected by another partner and on no
    // settlement (what a settlement of this partner must not read).
    await q.query(
      `INSERT INTO payment_intents (id, order_id, order_code, environment, method, status, amount_qepik, amount_received_qepik,
                                    partner_id, created_at, updated_at, captured_at)
       SELECT 'pi_ws' || o.code, o.id, o.code, 'LIVE', 'COD', CASE WHEN n % 2 = 0 THEN 'COLLECTED' ELSE 'AWAITING_COLLECTION' END,
              6000, CASE WHEN n % 2 = 0 THEN 6000 ELSE 0 END, CASE WHEN n % 2 = 0 THEN $1::uuid END, o.created_at, o.created_at,
              CASE WHEN n % 2 = 0 THEN o.created_at END
         FROM (SELECT o.*, row_number() OVER (ORDER BY o.code) AS n FROM orders o WHERE o.code LIKE 'WS%') o`,
      [otherPartnerId],
    );
    await q.query(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       SELECT gen_random_uuid(), 'ws-key-' || n, 'hash-' || n, 201, '{"code":"WS00000000","status":"PACKED"}'::jsonb, $2::timestamptz
         FROM generate_series(1, $1::int) AS n`,
      [SEEDED_KEYS, now],
    );
    await q.query(
      `INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at, processed_at)
       SELECT 'evt_ws' || o.code, 'order.placed', 'LIVE', o.id, o.assigned_key_id, jsonb_build_object('order', jsonb_build_object('code', o.code)),
              o.created_at, o.created_at
         FROM orders o WHERE o.code LIKE 'WS%'`,
    );
  });
  return ['WS00000001', 'WS00000002', 'WS00000003', 'WS00000004', 'WS00000005'];
}

beforeAll(async () => {
  t = await createTestApp({
    wrapDb: (inner) => {
      db = new GatedDb(inner);
      return db;
    },
  });
  admin = (await createUser(t.ctx, 'ADMIN')).auth;
  const partner = await createPartner(t.ctx);
  partnerId = partner.id;
  otherPartnerId = (await createPartner(t.ctx)).id;
  key = await createKey(t.ctx, partner.id, {
    rateLimit: 100_000,
    scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'],
  });
  otherKey = await createKey(t.ctx, partner.id, { rateLimit: 100_000 });
  sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 100_000 });
  zoneId = (await post('/v1/admin/zones', admin, { name: { az: 'Mərkəz', ru: 'Центр', en: 'Centre' } })).id;
  receiver = await WebhookReceiver.start();
  await createWebhookVia(t, await devAuth(t, partner), { apiKeyId: key.id, url: receiver.url('/hook'), events: ALL_EVENTS });
  seeder = await ScanSeeder.open(t);
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await seeder?.close();
  await t.close();
});

describe('write paths on a table of thousands of orders', () => {
  it('read orders, order_items, order_events and outbox through indexes only: no sequential scan, no index read of a large part', async () => {
    // Day one: the same writes on an empty table, in every session of the pool. The partner events'
    // group statements are planned on every call while the tables are this small (src/db/join-plans.ts).
    const joinPlans = t.ctx.joinPlans;
    expect(await joinPlans.check()).toBe(false);
    expect(await t.ctx.answerPlans.check()).toBe(false);
    await exerciseWritePaths([]);
    await fanOut();
    const seeded = await seed((fn) => seeder.tx(fn));
    // Grown: from now on they are prepared, and their generic plans are made on tables of this size
    // (with the keys' answers too: idempotency_keys has grown with them).
    expect(await joinPlans.check()).toBe(true);
    expect(await t.ctx.answerPlans.check()).toBe(true);
    // Everything so far is counted before the baseline (day one's scans of a near-empty table are
    // the right plan for it).
    const before = await seeder.counters(TABLES);

    // What each transaction's session has prepared, read at its end: the events' lock must never have
    // been planned for its values once prepared (Db.tx's genericPlans).
    const sessions: PreparedStatement[] = [];
    db.beforeEachCommit(async (q) => {
      sessions.push(...(await q.query<PreparedStatement>(PREPARED_LOCKS)));
    });
    const requests = await exerciseWritePaths(seeded);
    db.beforeEachCommit(null);
    await fanOut();
    const after = await seeder.counters(TABLES);
    const seqScans = Object.fromEntries(TABLES.map((table) => [table, after[table].seqScan - before[table].seqScan]));
    expect(seqScans).toEqual({
      orders: 0,
      order_items: 0,
      order_events: 0,
      outbox: 0,
      payment_intents: 0,
      settlements: 0,
      settlement_lines: 0,
      idempotency_keys: 0,
    });
    // A full index scan would not count as a sequential scan: rows fetched through indexes stay a
    // few per request (a tenth of one table's size would mean a scan in all but name).
    for (const table of TABLES) {
      expect(after[table].idxTupFetch - before[table].idxTupFetch, table).toBeLessThan(Math.min(SEEDED / 10, requests * 20));
    }

    // The events' lock of several orders ran prepared, on its generic plan every time. Left to choose,
    // PostgreSQL plans it for the values on every call: it costs the generic plan for an array of
    // unknown length against custom plans for the few codes at hand.
    expect(sessions.length).toBeGreaterThan(0);
    for (const statement of sessions) {
      expect(statement, statement.statement).toMatchObject({ custom_plans: 0 });
      expect(statement.generic_plans).toBeGreaterThan(0);
    }

    // The group statements now run prepared, and a session keeps a generic plan after five runs: the
    // writes above may not have run them that often in any one session, so their generic plans are
    // made here, on these tables (grown, never analysed), and must probe orders, payment intents and
    // (the write that stores Idempotency-Key answers) the keys by index, never read them whole.
    const plans = await groupStatementPlans(seeded.slice(5, 10));
    // The write storing answers reads the keys it answers (and only by index, below).
    expect(planReads(plans[2], ['idempotency_keys']).length, JSON.stringify(plans[2])).toBeGreaterThan(0);
    for (const plan of plans) {
      const reads = planReads(plan, TABLES);
      expect(reads.length, JSON.stringify(plan)).toBeGreaterThan(0);
      expect(
        reads.map((n) => n['Node Type']),
        JSON.stringify(plan),
      ).not.toContain('Seq Scan');
    }
  });
});

interface PreparedStatement {
  statement: string;
  generic_plans: number;
  custom_plans: number;
}

/** The prepared locks of several orders (lockVisibleOrders) in the session that reads it. */
const PREPARED_LOCKS = `SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements
                         WHERE statement LIKE '%JOIN unnest($1::text[], $2::text[], $3::uuid[])%FOR UPDATE OF o%'`;

/**
 * The generic plans (not run: EXPLAIN without ANALYZE) of the partner events' group statements, the
 * lock of `codes` (with a DELIVERED's collection periods) and their status changes to DELIVERED, with
 * and without the answers of Idempotency-Keys (one written, one refusal), as the writer sends them
 * prepared.
 */
async function groupStatementPlans(codes: string[]): Promise<PlanNode[]> {
  const captured: Array<{ text: string; params: unknown[] }> = [];
  const orders = await t.ctx.db.query<{ id: string }>('SELECT id FROM orders WHERE code = ANY($1::text[]) ORDER BY code', [
    codes,
  ]);
  const capture: OutboxTx = {
    query: (async (text: string | { text: string }, params?: readonly unknown[]) => {
      captured.push({ text: typeof text === 'string' ? text : text.text, params: [...(params ?? [])] });
      return orders.map((o) => ({ id: o.id, head: '', customer: null, tail: '' }));
    }) as Queryable['query'],
    wroteOutbox: () => {},
  };
  await lockVisibleOrders(
    codes.map((code) => ({ scope: { environment: 'LIVE' as const, keyId: key.id }, code })),
    capture,
    [{ partnerId, environment: 'LIVE' }],
    { prepare: true },
  );
  const at = t.clock.now();
  const changes = orders.map((o, i) => ({
    orderId: o.id,
    environment: 'LIVE' as const,
    assignedKeyId: key.id,
    previousStatus: 'EN_ROUTE' as const,
    event: { status: 'DELIVERED' as const, at, actor: 'PARTNER' as const, apiKeyId: key.id, codCollectedQepik: 6000 },
    outbox: [{ eventId: `evt_plan${i}`, type: 'order.status_changed' as const }],
  }));
  await recordStatusChanges(changes, capture, { prepare: true });
  const scope = (k: string) => ({ apiKeyId: key.id, key: k, requestHash: 'h' });
  await recordStatusChanges(changes, capture, {
    prepare: true,
    answers: {
      written: [{ orderId: randomUUID(), apiKeyId: key.id, key: 'plan-written', pii: true }],
      made: [{ scope: scope('plan-refused'), statusCode: 409, json: '{}' }],
    },
  });
  expect(captured).toHaveLength(3);
  const plans: PlanNode[] = [];
  for (const statement of captured) plans.push(await genericPlan(t.ctx.db, statement.text, statement.params.length));
  return plans;
}
