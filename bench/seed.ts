/**
 * Bulk seeding for the benchmark: partners, keys, a zone, an operator, and orders in bulk SQL.
 *
 * Orders have every part a marketplace sends (zone, area, time window, two items, a full customer) and
 * a two-entry timeline (PLACED, PACKED). Each is inserted with its items' and timeline's stored texts
 * already rendered (by the very SQL functions the read-model triggers use), so the orders trigger
 * renders it once; the item and timeline rows are then inserted with triggers off
 * (session_replication_role = replica, on the seeding session only), which would otherwise re-render
 * every order twice. `checkSeededSample` compares a sample with the triggers' own rendering.
 *
 * Seeding runs on a session of its own (`SeedDb`): on a server, a client outside the app's pool (no
 * request deadline applies, and the app's sessions keep the plans they hold); embedded, the one session.
 */
import pg from 'pg';
import type { Queryable } from '../src/db/db.js';
import { generateKey } from '../src/modules/keys/key-format.js';
import { newId } from '../src/shared/ids.js';

export interface SeedDb extends Queryable {
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A seeding session: its own client on a server (`url`), else `embedded` (the app's one session). */
export async function seedDb(url: string | null, embedded: Pick<SeedDb, 'query' | 'tx'>): Promise<SeedDb> {
  if (url === null) {
    return { query: (text, params) => embedded.query(text, params), tx: (fn) => embedded.tx(fn), close: async () => {} };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q: Queryable = {
    query: async <R>(text: string, params?: readonly unknown[]) => (await client.query(text, params as unknown[])).rows as R[],
  };
  return {
    query: q.query,
    async tx(fn) {
      await client.query('BEGIN');
      try {
        const result = await fn(q);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    },
    close: () => client.end(),
  };
}

export interface SeededKey {
  id: string;
  /** The full key (x-api-key). */
  key: string;
  partnerId: string;
}

/** `partners` partners with `keysEach` LIVE keys each (every scope, no practical rate limit). */
export async function seedPartnersAndKeys(q: Queryable, partners: number, keysEach: number, now: Date): Promise<SeededKey[]> {
  const keys: SeededKey[] = [];
  for (let p = 0; p < partners; p++) {
    const partnerId = newId();
    await q.query('INSERT INTO partners (id, name, created_at) VALUES ($1, $2, $3)', [
      partnerId,
      `Bench Logistics ${p + 1}`,
      now,
    ]);
    for (let k = 0; k < keysEach; k++) {
      const id = newId();
      const key = generateKey('LIVE');
      await q.query(
        `INSERT INTO api_keys (id, partner_id, name, prefix, key_hash, environment, scopes, rate_limit, receives_all_orders, created_at)
         VALUES ($1, $2, $3, $4, $5, 'LIVE', $6, 1000000000, false, $7)`,
        [
          id,
          partnerId,
          `bench ${k + 1}`,
          key.prefix,
          key.hash,
          ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
          now,
        ],
      );
      keys.push({ id, key: key.key, partnerId });
    }
  }
  return keys;
}

export async function seedZone(q: Queryable, now: Date): Promise<string> {
  const zoneId = newId();
  await q.query(`INSERT INTO zones (id, name, created_at) VALUES ($1, '{"az":"Mərkəz","ru":"Центр","en":"Centre"}', $2)`, [
    zoneId,
    now,
  ]);
  return zoneId;
}

/** The code of the g-th seeded order. */
export const seededCode = (g: number) => `B${String(g).padStart(8, '0')}`;

/**
 * Orders number `from` to `to` (codes `seededCode(g)`), PACKED, created one a second going back from
 * `now`, assigned to `keyIds` in turn (order g to keyIds[g % length]); none assigned if `keyIds` is empty.
 */
export async function seedOrders(
  db: SeedDb,
  range: { from: number; to: number },
  options: { keyIds: string[]; zoneId: string; now: Date; progress?: boolean; afterChunk?: () => Promise<void> },
): Promise<void> {
  const { keyIds, zoneId, now } = options;
  const item = (p: number) =>
    `'{"name":' || localized_text_json(jsonb_build_object('az', 'Məhsul ${p}', 'ru', 'Товар ${p}', 'en', 'Item ${p}')) || ',"qty":1,"unitPriceQepik":2500}'`;
  const chunk = 20_000;
  for (let from = range.from; from <= range.to; from += chunk) {
    const to = Math.min(range.to, from + chunk - 1);
    await db.tx(async (q) => {
      await q.query(
        `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area, zone_id,
                             time_window_start, time_window_end, customer, assigned_key_id, partner_assigned_at, created_at, updated_at,
                             pv_items, pv_timeline)
         SELECT gen_random_uuid(), 'B' || lpad(g::text, 8, '0'), 'LIVE', 'PACKED', 'COD', 'UNPAID', 5000, 5000, 'Yasamal', $3,
                $4::timestamptz + interval '1 hour', $4::timestamptz + interval '3 hours',
                jsonb_build_object('name', 'Customer ' || g, 'phone', '+99450' || lpad((g % 10000000)::text, 7, '0'),
                                   'address', jsonb_build_object('street', 'Nizami ' || g, 'details', null, 'lat', 40.4, 'lng', 49.8)),
                CASE WHEN cardinality($5::uuid[]) > 0 THEN ($5::uuid[])[1 + g % cardinality($5::uuid[])] END,
                CASE WHEN cardinality($5::uuid[]) > 0 THEN $4::timestamptz END, c.created_at, $4,
                '[' || ${item(1)} || ',' || ${item(2)} || ']',
                '[' || timeline_entry_json('PLACED', c.created_at) || ',' || timeline_entry_json('PACKED', c.created_at + interval '1 minute') || ']'
           FROM generate_series($1::int, $2::int) g, LATERAL (SELECT $4::timestamptz - (g || ' seconds')::interval AS created_at) c`,
        [from, to, zoneId, now, keyIds],
      );
      // Their payment intents (docs/payments.md), as an order's creation makes them: COD awaiting collection.
      await q.query(
        `INSERT INTO payment_intents (id, order_id, order_code, environment, method, status, amount_qepik, created_at, updated_at)
         SELECT 'pi_' || substr(md5(o.id::text), 1, 24), o.id, o.code, o.environment, 'COD', 'AWAITING_COLLECTION', o.cod_amount_qepik,
                o.created_at, o.created_at
           FROM orders o
          WHERE o.code BETWEEN 'B' || lpad($1::text, 8, '0') AND 'B' || lpad($2::text, 8, '0')`,
        [from, to],
      );
      await q.query('SET LOCAL session_replication_role = replica');
      await q.query(
        `INSERT INTO order_items (order_id, position, name, qty, unit_price_qepik)
         SELECT o.id, p, jsonb_build_object('az', 'Məhsul ' || p, 'ru', 'Товар ' || p, 'en', 'Item ' || p), 1, 2500
           FROM orders o CROSS JOIN generate_series(1, 2) p
          WHERE o.code BETWEEN 'B' || lpad($1::text, 8, '0') AND 'B' || lpad($2::text, 8, '0')`,
        [from, to],
      );
      await q.query(
        `INSERT INTO order_events (order_id, status, at, actor, note)
         SELECT o.id, s.status, o.created_at + s.offs, 'ADMIN', null
           FROM orders o CROSS JOIN (VALUES (1, 'PLACED', interval '0'), (2, 'PACKED', interval '1 minute')) AS s(n, status, offs)
          WHERE o.code BETWEEN 'B' || lpad($1::text, 8, '0') AND 'B' || lpad($2::text, 8, '0')
          ORDER BY o.id, s.n`,
        [from, to],
      );
    });
    if (options.progress && range.to - range.from > 200_000) console.log(`  ${to} orders`);
    await options.afterChunk?.();
  }
}

/** The seeding shortcut must give exactly what the triggers give: a sample against a fresh rendering. */
export async function checkSeededSample(q: Queryable): Promise<void> {
  const [{ wrong }] = await q.query<{ wrong: number }>(
    `SELECT count(*)::int AS wrong FROM (SELECT id, pv_items, pv_timeline FROM orders WHERE code LIKE 'B%' ORDER BY code LIMIT 500) o
      WHERE o.pv_items <> order_items_json(o.id) OR o.pv_timeline <> order_timeline_json(o.id)`,
  );
  if (wrong > 0) throw new Error(`seeding: ${wrong} of 500 sampled orders differ from the read-model triggers' rendering`);
}

/**
 * Open offers (docs/offers.md) of the unassigned orders number `from` to `to`, made to one key, open for
 * a day; returns their ids in the orders' order.
 */
export async function seedOffers(
  q: Queryable,
  range: { from: number; to: number },
  key: { id: string; partnerId: string },
  now: Date,
): Promise<string[]> {
  const rows = await q.query<{ id: string; order_code: string }>(
    `INSERT INTO offers (id, order_id, order_code, api_key_id, partner_id, environment, status, created_at, expires_at)
     SELECT 'ofr_' || substr(md5(o.id::text), 1, 24), o.id, o.code, $3, $4, 'LIVE', 'PENDING', $5, $5::timestamptz + interval '1 day'
       FROM orders o
      WHERE o.code BETWEEN 'B' || lpad($1::text, 8, '0') AND 'B' || lpad($2::text, 8, '0')
      ORDER BY o.code
     RETURNING id, order_code`,
    [range.from, range.to, key.id, key.partnerId, now],
  );
  return rows.sort((a, b) => (a.order_code < b.order_code ? -1 : 1)).map((r) => r.id);
}

/**
 * The orders of `codes` made prepaid card orders (paid at checkout: their intents SUCCEEDED), as an
 * order created so would be: a DELIVERED then moves no payment intent (docs/payments.md).
 */
export async function makePrepaid(q: Queryable, codes: string[]): Promise<void> {
  await q.query(
    `UPDATE orders SET payment_method = 'CARD', payment_status = 'PAID', cod_amount_qepik = 0 WHERE code = ANY($1::text[])`,
    [codes],
  );
  await q.query(
    `UPDATE payment_intents SET method = 'CARD', status = 'SUCCEEDED', amount_qepik = 5000, amount_received_qepik = 5000,
                                captured_at = created_at
      WHERE order_code = ANY($1::text[])`,
    [codes],
  );
}
