/**
 * The database of the scale scenario's lists (bench/scale.ts): one partner with LOG_ROWS logged
 * requests over 35 days, ORDERS orders of one key and DELIVERIES deliveries of one webhook, seeded
 * straight into the database (INSERT … SELECT on the server: the triggers that keep the counters run,
 * the request path does not); or the same found again in a kept database (`--reuse`).
 */
import { loadavg } from 'node:os';
import { newId } from '../src/shared/ids.js';
import { arg } from './args.js';
import { type SeedDb, type SeededKey, seedOrders, seedPartnersAndKeys, seedZone } from './seed.js';

export const LOG_ROWS = Number(arg('log-rows', '10000000'));
export const ORDERS = Number(arg('scale-orders', '1000000'));
export const DELIVERIES = Number(arg('scale-deliveries', '1000000'));
export const DAY_MS = 86_400_000;
const LOG_DAYS = 35;

/** The machine's load average over 1, 5 and 15 minutes. */
export function loadAverage(): string {
  return loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');
}

export interface SeededLists {
  keys: SeededKey[];
  webhookId: string;
  now: Date;
}

export async function seedLists(db: SeedDb): Promise<SeededLists> {
  const now = new Date();
  const t0 = Date.now();
  const keys = await seedPartnersAndKeys(db, 1, 3, now);
  const [a] = keys;
  console.log(`seeding ${LOG_ROWS} logged requests…`);
  await seedRequestLog(
    db,
    a.partnerId,
    keys.map((k) => k.id),
    now,
  );
  console.log(`  done in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${ORDERS} orders…`);
  const zoneId = await seedZone(db, now);
  await seedOrders(db, { from: 1, to: ORDERS }, { keyIds: [a.id], zoneId, now, progress: true });
  console.log(`  done at ${((Date.now() - t0) / 1000).toFixed(0)} s; ${DELIVERIES} deliveries…`);
  const webhookId = await seedDeliveries(db, a.partnerId, a.id, now);
  console.log(`  done at ${((Date.now() - t0) / 1000).toFixed(0)} s; VACUUM ANALYZE…`);
  // What autovacuum does to insert-only tables on its own; done now so the run does not wait for it.
  for (const table of ['request_log', 'orders', 'webhook_deliveries', 'order_counts', 'webhook_delivery_counts', 'api_keys']) {
    await db.query(`VACUUM ANALYZE ${table}`);
  }
  // The keys' full values are known only now; a reuse finds them in this table.
  await db.query('CREATE TABLE bench_scale_keys (position int, id uuid, key text)');
  await db.query(
    'INSERT INTO bench_scale_keys SELECT i, k.id, k.key FROM jsonb_to_recordset($1::jsonb) AS k(id uuid, key text, i int)',
    [JSON.stringify(keys.map((k, i) => ({ id: k.id, key: k.key, i })))],
  );
  console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s; load average ${loadAverage()}`);
  return { keys, webhookId, now };
}

/** The seeded partner, keys and webhook of a kept database (`--reuse`). */
export async function findSeeded(db: SeedDb): Promise<SeededLists> {
  const keys = await db.query<{ id: string; key: string; partner_id: string }>(
    'SELECT b.id, b.key, k.partner_id FROM bench_scale_keys b JOIN api_keys k ON k.id = b.id ORDER BY b.position',
  );
  const [{ id: webhookId }] = await db.query<{ id: string }>('SELECT id FROM webhooks LIMIT 1');
  const [{ now }] = await db.query<{ now: Date }>('SELECT max(created_at) AS now FROM request_log');
  return {
    keys: keys.map((k) => ({ id: k.id, key: k.key, partnerId: k.partner_id })),
    webhookId,
    now: new Date(now.getTime() + 1),
  };
}

/** How many requests, over how long before `now`, and whose: every fifth row the other partner's when one is given. */
export interface RequestLogShape {
  rows: number;
  spanMs: number;
  otherPartnerId: string | null;
}

/**
 * LOG_ROWS requests of one partner, one every 35 days / LOG_ROWS going back from `now` (or `shape`'s), in day-sized
 * statements. Keys 60/30/10 %; statuses 200 85 %, 201 5 %, 404 4 %, 400 3 %, 429 2 %, 500 0.5 %, 503 0.5 %;
 * methods GET, POST for the events and creations, DELETE 1 %; paths /me, the list, an order, its events.
 */
export async function seedRequestLog(
  db: SeedDb,
  partnerId: string,
  keyIds: string[],
  now: Date,
  shape: RequestLogShape = { rows: LOG_ROWS, spanMs: LOG_DAYS * DAY_MS, otherPartnerId: null },
): Promise<void> {
  const { rows, spanMs, otherPartnerId } = shape;
  const nowMs = now.getTime();
  const stepMs = spanMs / rows;
  const days = new Set<string>();
  for (let d = 0; d <= Math.ceil(spanMs / DAY_MS) + 1; d++) days.add(new Date(nowMs - d * DAY_MS).toISOString().slice(0, 10));
  await db.query('SELECT request_log_ensure_day(d::date) FROM unnest($1::text[]) AS d', [[...days]]);
  const perStatement = Math.min(Math.ceil(LOG_ROWS / LOG_DAYS), rows);
  for (let from = 0; from < rows; from += perStatement) {
    const to = Math.min(rows, from + perStatement) - 1;
    await db.query(
      `INSERT INTO request_log (id, created_at, partner_id, api_key_id, environment, method, path, query, status_code, error_code,
                                duration_ms, ip, user_agent, idempotency_key, request_body, response_body)
       SELECT 'req_' || lpad(to_hex(ms), 12, '0') || lpad(to_hex(g % 16777216), 6, '0') || substr(md5(g::text), 1, 14),
              timestamptz 'epoch' + ms * interval '1 millisecond', CASE WHEN $7::uuid IS NOT NULL AND g % 5 = 1 THEN $7::uuid ELSE $4::uuid END,
              ($5::uuid[])[CASE WHEN g % 10 < 6 THEN 1 WHEN g % 10 < 9 THEN 2 ELSE 3 END], 'LIVE',
              m.method, m.path, NULL, s.code, s.err, 12.5, '10.0.0.1', 'bench/1.0', NULL,
              CASE WHEN s.code >= 400 OR m.method <> 'GET' THEN '{}' END,
              CASE WHEN s.code >= 400 THEN '{"statusCode":' || s.code || '}' END
         FROM generate_series($1::bigint, $2::bigint) g,
              LATERAL (SELECT ($3::bigint - (g * $6::float8)::bigint) AS ms) t,
              LATERAL (SELECT CASE WHEN g % 200 < 170 THEN 200 WHEN g % 200 < 180 THEN 201 WHEN g % 200 < 188 THEN 404
                                   WHEN g % 200 < 194 THEN 400 WHEN g % 200 < 198 THEN 429 WHEN g % 200 = 198 THEN 500 ELSE 503 END AS code) s0,
              LATERAL (SELECT s0.code, CASE s0.code WHEN 404 THEN 'ERR_NOT_FOUND' WHEN 400 THEN 'ERR_VALIDATION'
                                   WHEN 429 THEN 'ERR_RATE_LIMITED' WHEN 500 THEN 'ERR_INTERNAL' WHEN 503 THEN 'ERR_DEPENDENCY_UNAVAILABLE' END AS err) s,
              LATERAL (SELECT CASE WHEN g % 100 = 7 THEN 'DELETE' WHEN s.code = 201 OR g % 100 < 10 THEN 'POST' ELSE 'GET' END AS method,
                              CASE WHEN g % 10 < 3 THEN '/v1/partner/me' WHEN g % 10 < 7 THEN '/v1/partner/orders'
                                   ELSE '/v1/partner/orders/B' || lpad((g % 100000)::text, 8, '0') || CASE WHEN g % 10 = 9 THEN '/events' ELSE '' END
                              END AS path) m`,
      [from, to, nowMs, partnerId, keyIds, stepMs, otherPartnerId],
    );
    if ((from / perStatement) % 5 === 4) console.log(`  ${to + 1} requests`);
  }
}

/** One webhook of `keyId` with DELIVERIES deliveries (DELIVERED 90 %, FAILED 5 %, DEAD 5 %), one a second back. */
async function seedDeliveries(db: SeedDb, partnerId: string, keyId: string, now: Date): Promise<string> {
  const webhookId = newId();
  await db.query(
    `INSERT INTO webhooks (id, partner_id, api_key_id, url, events, secret_ciphertext, is_active, created_at, updated_at)
     VALUES ($1, $2, $3, 'https://hooks.example.com/bench', ARRAY['order.status_changed'], 'unused', true, $4, $4)`,
    [webhookId, partnerId, keyId, now],
  );
  const chunk = 100_000;
  for (let from = 1; from <= DELIVERIES; from += chunk) {
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code, last_error,
                                       next_attempt_at, created_at, delivered_at, updated_at)
       SELECT gen_random_uuid(), $3, $4, 'evt_bench_' || g, 'order.status_changed', '{"id":"evt_bench_' || g || '"}',
              s.status, 1, CASE s.status WHEN 'DELIVERED' THEN 200 ELSE 500 END,
              CASE s.status WHEN 'DELIVERED' THEN NULL ELSE 'HTTP 500' END, NULL, c.at,
              CASE s.status WHEN 'DELIVERED' THEN c.at END, c.at
         FROM generate_series($1::int, $2::int) g,
              LATERAL (SELECT $5::timestamptz - g * interval '1 second' AS at) c,
              LATERAL (SELECT CASE WHEN g % 20 = 0 THEN 'FAILED' WHEN g % 20 = 1 THEN 'DEAD' ELSE 'DELIVERED' END AS status) s`,
      [from, Math.min(DELIVERIES, from + chunk - 1), webhookId, partnerId, now],
    );
  }
  return webhookId;
}
