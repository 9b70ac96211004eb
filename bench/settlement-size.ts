/**
 * How long creating a settlement takes with many collections on hand (docs/performance.md, "Settlement
 * creation"): a scratch database on the PostgreSQL server of DATABASE_URL, N COD orders collected by one
 * partner (bulk SQL), then the settlement's one set-based statement timed inside its transaction.
 * Usage: DATABASE_URL=postgres://… npx tsx bench/settlement-size.ts [N=100000]
 */
import pg from 'pg';
import { openDb } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { insertSettlement } from '../src/modules/payments/settlements.repo.js';

const n = Number(process.argv[2] ?? 100_000);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required');
const name = `settlement_size_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
const target = new URL(url);
target.pathname = `/${name}`;
const db = await openDb({ databaseUrl: target.toString(), dataDir: '', poolSize: 2, timeoutMs: 600_000 });
try {
  await migrate(db);
  const partnerId = '7c1f0b5e-0000-4000-8000-000000000001';
  const now = new Date();
  await db.query('INSERT INTO partners (id, name, created_at) VALUES ($1, $2, $3)', [partnerId, 'Bench', now]);
  const seeded = Date.now();
  await db.query(
    `WITH o AS (
       INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik,
                           created_at, updated_at)
       SELECT gen_random_uuid(), 'S' || lpad(g::text, 9, '0'), 'LIVE', 'DELIVERED', 'COD', 'UNPAID', 5000, 5000,
              $2::timestamptz - g * interval '1 second', $2::timestamptz
         FROM generate_series(1, $1::int) g
       RETURNING id, code, created_at
     )
     INSERT INTO payment_intents (id, order_id, order_code, environment, method, status, amount_qepik, amount_received_qepik,
                                  partner_id, created_at, updated_at, captured_at)
     SELECT 'pi_' || o.code, o.id, o.code, 'LIVE', 'COD', 'COLLECTED', 5000, 4990 + (random() * 10)::int, $3,
            o.created_at, o.created_at, o.created_at FROM o`,
    [n, now, partnerId],
  );
  await db.query('ANALYZE payment_intents');
  console.log(`seeded ${n} collections in ${Date.now() - seeded} ms`);
  const started = process.hrtime.bigint();
  const settlement = await db.tx((q) =>
    insertSettlement(
      partnerId,
      { id: 'stl_bench', environment: 'LIVE', periodStart: null, periodEnd: new Date(now.getTime() + 1) },
      now,
      q,
    ),
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(
    `settlement of ${settlement.collectionsCount} collections (${settlement.collectedQepik} qəpik): ${ms.toFixed(0)} ms`,
  );
} finally {
  await db.close();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
