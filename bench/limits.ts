/**
 * The limits the benchmark measures each path against, beside the bare hello route:
 *
 *  (a) `bytes`: a bare Fastify route answering a fixed body, the very bytes of the service's list of 50
 *      (what moving that much data costs, with nothing else to do);
 *  (b) `durable write`: a bare Fastify route running ONE durable statement per request against the same
 *      PostgreSQL (the same database, embedded or server): update one row, insert one event row and one
 *      outbox row carrying an order's JSON, in one statement, committed on its own (one WAL flush per
 *      request). The least a partner event can write; its own three small tables, one index each.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Queryable } from '../src/db/db.js';

export interface Limit {
  url: string;
  close(): Promise<void>;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** (a): answers `body` (JSON bytes) to GET /bytes. */
export async function startBytesRoute(body: Buffer): Promise<Limit> {
  const app = Fastify();
  app.get('/bytes', (_request, reply) => {
    reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
  const base = await listen(app);
  return { url: `${base}/bytes`, close: () => app.close() };
}

/** Rows of the durable-write limit's table (requests take ids 1…ROWS in turn). */
export const DURABLE_ROWS = 10_000;

/**
 * (b): POST /durable/:id runs the one statement (`url` is the base: use `durablePaths()`). `databaseUrl`: a pool of `poolSize` connections of its
 * own (server); null: `embedded`, the embedded database's one session. `orderJson`: the outbox row's
 * payload (an order as the service stores it).
 */
export async function startDurableWriteRoute(
  databaseUrl: string | null,
  embedded: Queryable,
  poolSize: number,
  orderJson: string,
): Promise<Limit> {
  const pool = databaseUrl ? new pg.Pool({ connectionString: databaseUrl, max: poolSize }) : null;
  const q: Queryable = pool
    ? { query: async <R>(text: string, params?: readonly unknown[]) => (await pool.query(text, params as unknown[])).rows as R[] }
    : embedded;
  await q.query(
    `CREATE TABLE IF NOT EXISTS bench_limit_orders (id int PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL)`,
  );
  await q.query(
    `CREATE TABLE IF NOT EXISTS bench_limit_events (id bigserial PRIMARY KEY, order_id int NOT NULL, status text NOT NULL, at timestamptz NOT NULL)`,
  );
  await q.query(
    `CREATE TABLE IF NOT EXISTS bench_limit_outbox (id bigserial PRIMARY KEY, order_id int NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL)`,
  );
  await q.query(
    `INSERT INTO bench_limit_orders (id, status, updated_at) SELECT g, 'PACKED', now() FROM generate_series(1, $1::int) g ON CONFLICT DO NOTHING`,
    [DURABLE_ROWS],
  );
  await q.query('ANALYZE bench_limit_orders');
  const statuses = ['SCANNED_TO_VAN', 'EN_ROUTE', 'DELIVERED'];
  let n = 0;
  const app = Fastify();
  app.post<{ Params: { id: string } }>('/durable/:id', async (request) => {
    await q.query(
      `WITH u AS (UPDATE bench_limit_orders SET status = $2, updated_at = now() WHERE id = $1 RETURNING id),
            e AS (INSERT INTO bench_limit_events (order_id, status, at) SELECT id, $2, now() FROM u)
       INSERT INTO bench_limit_outbox (order_id, data, created_at) SELECT id, $3::jsonb, now() FROM u`,
      [Number(request.params.id), statuses[n++ % statuses.length], orderJson],
    );
    return { ok: true };
  });
  const base = await listen(app);
  return {
    url: base,
    close: async () => {
      await app.close();
      await pool?.end();
    },
  };
}

/** Paths for (b): one per row, in turn. */
export function durablePaths(): string[] {
  return Array.from({ length: DURABLE_ROWS }, (_, i) => `/durable/${i + 1}`);
}
