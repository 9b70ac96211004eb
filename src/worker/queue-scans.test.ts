/**
 * The delivery queue never reads its growing tables by a sequential scan (docs/performance.md, 'Webhook fan-out'): the claim, the
 * attempt and the batched outcome (with its attempt log row) go through indexes only, on a queue of
 * thousands of deliveries, even in database sessions that served the queue while it was empty.
 *
 * The app first delivers while the queue is empty, right after the tables were analysed empty, as
 * autovacuum does on a deployment's first day: each session plans (and keeps, for its whole life)
 * the statements it runs then. That is how a one-endpoint burst fell to ~500 deliveries/s in the
 * benchmark: the foreign key of webhook_delivery_attempts to webhook_deliveries was checked, once per
 * attempt row, by a plan made on the empty table (a sequential scan) and kept as the table grew
 * (migration 0018). No ANALYZE runs between the two phases, as none may run for a while in a
 * deployment. Counters are read as test/scan-counters.ts describes.
 *
 * The other side: statistics taken a moment before, which a burst has already made wrong. The claim
 * and the probe walk the due index whatever they say (claim-due-deliveries.ts, "Plans").
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createKey, createPartner, type TestPartner } from '../../test/factories.js';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { ScanSeeder } from '../../test/scan-counters.js';
import { waitFor } from '../../test/wait.js';
import { WebhookReceiver } from '../../test/webhook-receiver.js';
import { claimDueDeliveries } from '../modules/webhooks/queue/claim-due-deliveries.js';
import { ALL_EVENTS, createWebhookVia, devAuth } from '../modules/webhooks/webhooks.test-helpers.js';
import { startWorker } from './worker.js';

/** Delivered deliveries (one attempt each) in the queue when the delivery path is measured. */
const SEEDED = 5000;
/**
 * Deliveries made on day one (enough for every session to run each statement past the five custom
 * plans after which PostgreSQL may keep a generic one) and again on the full queue.
 */
const DAY_ONE = 100;
const MEASURED = 40;
const TABLES = ['webhook_deliveries', 'webhook_delivery_attempts', 'outbox'] as const;
/**
 * The claim's plan test: a backlog of BACKLOG due deliveries, of which ANALYSED_BACKLOG were there when
 * the table was last analysed (the planner then expects a few hundred due rows), in an order of due
 * times unrelated to the rows' places in the table (as leases and retries leave a busy queue); a
 * claim of CLAIMED.
 */
const BACKLOG = 20_000;
const ANALYSED_BACKLOG = 200;
const CLAIMED = 8;

let t: TestApp;
let seeder: ScanSeeder;
let receiver: WebhookReceiver;
let partner: TestPartner;
let webhookId: string;

beforeAll(async () => {
  t = await createTestApp();
  seeder = await ScanSeeder.open(t);
  receiver = await WebhookReceiver.start();
  partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id);
  webhookId = (
    await createWebhookVia(t, await devAuth(t, partner), { apiKeyId: key.id, url: receiver.url('/hook'), events: ALL_EVENTS })
  ).id;
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await seeder?.close();
  await t?.close();
});

async function queueTestEvent(): Promise<string> {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/webhooks/${webhookId}/test`,
    headers: await devAuth(t, partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

/**
 * Delivers `count` test events queued through the API (a worker runs) and returns their ids:
 * `trickle`, one at a time, each received before the next is queued (a new deployment's first
 * deliveries, planned while the queue holds a handful of rows); `burst`, queued back to back, so the
 * worker has several attempts in flight and writes their outcomes in batches, as under load. Waits by
 * the receiver's count: reading the queue to wait would add reads to what is measured.
 */
async function deliver(count: number, mode: 'trickle' | 'burst'): Promise<string[]> {
  const queued: string[] = [];
  const received = () => receiver.requestsTo('/hook').length;
  const start = received();
  for (let i = 0; i < count; i++) {
    queued.push(await queueTestEvent());
    if (mode === 'trickle') await waitFor(() => received() >= start + i + 1, 30_000);
  }
  await waitFor(() => received() >= start + count, 30_000);
  return queued;
}

async function expectDelivered(ids: string[]): Promise<void> {
  const delivered = await seeder.q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ANY($1::uuid[]) AND status = 'DELIVERED'`,
    [ids],
  );
  expect(delivered[0].n).toBe(ids.length);
}

/**
 * Queues due deliveries behind the worker's back, event ids `prefix` + `from`…`to`, their due times in
 * no order of the rows' places in the table.
 */
function queueBacklog(prefix: string, from: number, to: number) {
  return seeder.q.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, attempt_seq,
                                     next_attempt_at, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, $7 || g, 'ping', '{"type":"ping"}', 'PENDING', 0, 0,
            $3::timestamptz - (g * 7919 % $6) * interval '1 millisecond', $3, $3
       FROM generate_series($4::int, $5::int) g`,
    [webhookId, partner.id, t.clock.now(), from, to, BACKLOG, prefix],
  );
}

describe('the delivery queue on a table of thousands of deliveries', () => {
  it('claims, delivers and records outcomes through indexes only, in sessions that served the empty queue', async () => {
    // Day one: the tables analysed empty, then deliveries, in every session the worker uses. One
    // worker serves both days (its retention purge, which runs when a worker starts, is not measured).
    await seeder.q.query('ANALYZE webhook_deliveries, webhook_delivery_attempts, outbox');
    const worker = startWorker(t.ctx, { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 50 });
    onTestFinished(() => worker.stop());
    await deliver(DAY_ONE, 'trickle');

    // Thousands of delivered deliveries of the same webhook, one attempt each, in bulk SQL.
    await seeder.tx(async (q) => {
      await q.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, attempt_seq,
                                         status_code, created_at, delivered_at, updated_at)
         SELECT gen_random_uuid(), $1, $2, 'evt_seed_' || g, 'ping', '{"type":"ping"}', 'DELIVERED', 1, 1, 204,
                $3::timestamptz - g * interval '1 second', $3, $3
           FROM generate_series(1, $4::int) g`,
        [webhookId, partner.id, t.clock.now(), SEEDED],
      );
      await q.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, number, webhook_id, at, duration_ms, outcome, status_code, request_headers)
         SELECT id, 1, webhook_id, delivered_at, 3, 'DELIVERED', 204, '{}'::jsonb
           FROM webhook_deliveries WHERE event_id LIKE 'evt_seed_%'`,
      );
      await q.query(
        `INSERT INTO outbox (event_id, type, environment, data, created_at, processed_at)
         SELECT 'evt_seed_' || g, 'ping', 'LIVE', '{}'::jsonb, $1::timestamptz - g * interval '1 second', $1
           FROM generate_series(1, $2::int) g`,
        [t.clock.now(), SEEDED],
      );
    });
    const before = await seeder.counters(TABLES);

    const measured = await deliver(MEASURED, 'burst');
    // Stopping the worker waits for the outcomes of its attempts to be written.
    await worker.stop();
    const after = await seeder.counters(TABLES);
    await expectDelivered(measured);
    const seqScans = Object.fromEntries(TABLES.map((table) => [table, after[table].seqScan - before[table].seqScan]));
    expect(seqScans).toEqual({ webhook_deliveries: 0, webhook_delivery_attempts: 0, outbox: 0 });
    // Nor a full index scan in all but name: rows fetched through indexes stay a few per delivery.
    for (const table of TABLES) {
      expect(after[table].idxTupFetch - before[table].idxTupFetch, table).toBeLessThan(SEEDED / 10);
    }
  });

  it('claims the oldest due rows by walking the due index, though the statistics say almost none are due', async () => {
    // Statistics taken while a few hundred rows were due, then a backlog of thousands, as a burst
    // queues them faster than the worker sends: planned from those statistics, the claim read every due
    // row through a bitmap and sorted them all to keep 50 (20,015 rows fetched for a claim of 8).
    await queueBacklog('evt_backlog_', 1, ANALYSED_BACKLOG);
    await seeder.q.query('ANALYZE webhook_deliveries');
    await queueBacklog('evt_backlog_', ANALYSED_BACKLOG + 1, BACKLOG);
    onTestFinished(async () => {
      await seeder.q.query(`DELETE FROM webhook_deliveries WHERE event_id LIKE 'evt_backlog_%'`);
    });
    const claim = { nowMs: t.clock.nowMs(), wallClockMs: Date.now(), leaseMs: 10_000, perWebhookLimit: BACKLOG };
    const oldest = await seeder.q.query<{ event_id: string }>(
      `SELECT event_id FROM webhook_deliveries WHERE status = 'PENDING' AND locked_until IS NULL
        ORDER BY next_attempt_at, id LIMIT $1`,
      [CLAIMED],
    );
    const before = await seeder.counters(['webhook_deliveries']);
    const claimed = await claimDueDeliveries({ ...claim, limit: CLAIMED }, t.ctx.db);
    const after = await seeder.counters(['webhook_deliveries']);
    // The oldest due first.
    expect(claimed.map((c) => c.eventId)).toEqual(oldest.map((r) => r.event_id));
    expect(after.webhook_deliveries.seqScan - before.webhook_deliveries.seqScan).toBe(0);
    // A walk stops after the candidates it needs (50 here, and the probe's one) plus the claimed rows'
    // updates; a bitmap reads all 20,000.
    expect(after.webhook_deliveries.idxTupFetch - before.webhook_deliveries.idxTupFetch).toBeLessThan(200);
  });

  it('probes for due work through the due index, though the statistics say most rows are due', async () => {
    // Statistics taken while thousands of rows were due; then all of them delivered, and one new row
    // due, at the end of the table: planned from those statistics, the probe read the table from its
    // first page, expecting a due row at once, and passed every delivered row to reach it.
    await queueBacklog('evt_backlog_', 1, BACKLOG);
    await seeder.q.query('ANALYZE webhook_deliveries');
    await seeder.q.query(
      `UPDATE webhook_deliveries SET status = 'DELIVERED', attempts = 1, status_code = 204, delivered_at = $1
        WHERE event_id LIKE 'evt_backlog_%'`,
      [t.clock.now()],
    );
    await queueBacklog('evt_last_', 1, 1);
    onTestFinished(async () => {
      await seeder.q.query(`DELETE FROM webhook_deliveries WHERE event_id LIKE 'evt_backlog_%' OR event_id LIKE 'evt_last_%'`);
    });
    const before = await seeder.counters(['webhook_deliveries']);
    const claimed = await claimDueDeliveries(
      { nowMs: t.clock.nowMs(), wallClockMs: Date.now(), leaseMs: 10_000, perWebhookLimit: 8, limit: 1 },
      t.ctx.db,
    );
    const after = await seeder.counters(['webhook_deliveries']);
    expect(claimed.map((c) => c.eventId)).toEqual(['evt_last_1']);
    expect(after.webhook_deliveries.seqScan - before.webhook_deliveries.seqScan).toBe(0);
  });
});
