/**
 * The one data layer: PostgreSQL, either embedded (PGlite, in-process WASM) or a server (DATABASE_URL).
 * Both are reached through a `pg.Pool` so the same parameterised SQL runs on both: PGlite through
 * `createPgConfig` with a pool of one (PGlite is a single session), a server through a real pool.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { AppError } from '../errors.js';

// int8 (counts, qəpik sums) as JS numbers: every value we store is far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric (lat/lng) as numbers.
pg.types.setTypeParser(1700, (v) => Number(v));

export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

export interface Db extends Queryable {
  readonly kind: 'embedded' | 'server';
  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** A dedicated connection (LISTEN, advisory locks); release it when done. */
  connect(): Promise<pg.PoolClient>;
  close(): Promise<void>;
}

export interface DbOptions {
  databaseUrl: string | null;
  dataDir: string;
  /** Server pool size; the embedded database always has exactly one session. */
  poolSize?: number;
}

// SQLSTATE classes that mean "the database is not reachable or not usable right now", as opposed to
// an error in the statement: 08 connection exception, 53 insufficient resources, 57 operator
// intervention (shutdown, crash recovery), 58 system error.
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58)/;
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);

export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  return /Connection terminated|connection timeout|Cannot use a pool after calling end|PGlite is closed|Client was closed|not queryable/i.test(
    err.message,
  );
}

function translate(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isUnavailableError(err)) {
    // The driver's error stays as the cause: for the log and for start-up's message, never for a body.
    return Object.assign(new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable; try again shortly'), {
      cause: err,
    });
  }
  return err;
}

async function run<R>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]): Promise<R[]> {
  try {
    const result = await client.query(text, params as unknown[] | undefined);
    return result.rows as R[];
  } catch (err) {
    throw translate(err);
  }
}

class PoolDb implements Db {
  constructor(
    readonly kind: 'embedded' | 'server',
    private readonly pool: pg.Pool,
    private readonly onClose: () => Promise<void>,
  ) {
    // An idle client losing its connection must not crash the process; the next query reports 503.
    pool.on('error', () => {});
  }

  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> {
    return this.kind === 'embedded' ? this.queryKeepingClient<R>(text, params) : run<R>(this.pool, text, params);
  }

  /**
   * The embedded database's one session must survive a failing statement. `pool.query` destroys its
   * client when the statement fails (pg-pool releases it with the error), which for a TCP connection
   * is merely wasteful; with PGlite's node-postgres adapter, the replacement client shares the one
   * backend with the dying one, and the protocol stream goes out of step: the following statements
   * fail and then receive other statements' results (db.test.ts shows it). A client checked out and
   * released normally handles the error and stays in step, as inside transactions.
   */
  private async queryKeepingClient<R>(text: string, params?: readonly unknown[]): Promise<R[]> {
    const client = await this.connect();
    try {
      return await run<R>(client, text, params);
    } finally {
      client.release();
    }
  }

  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw translate(err);
    }
  }

  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connect();
    const q: Queryable = { query: (text, params) => run(client, text, params) };
    try {
      await run(client, 'BEGIN');
      const result = await fn(q);
      await run(client, 'COMMIT');
      client.release();
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
        client.release();
      } catch {
        // A server connection that cannot roll back is dropped. The embedded session is the only one
        // there is: a replacement client would share it and go out of step (see queryKeepingClient).
        client.release(this.kind === 'server');
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => {});
    await this.onClose();
  }
}

export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
    });
    return new PoolDb('server', pool, async () => {});
  }
  const dataDir = options.dataDir;
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  return dbFromPglite(await PGlite.create(dataDir));
}

/** Wraps an open PGlite instance; closing the Db closes it. */
export function dbFromPglite(pglite: PGlite): Db {
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  return new PoolDb('embedded', pool, async () => {
    if (!pglite.closed) await pglite.close();
  });
}
