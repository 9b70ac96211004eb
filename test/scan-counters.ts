/**
 * Reading `pg_stat_user_tables` in the tests that guard against sequential scans of growing tables
 * (src/modules/orders/write-scans.test.ts, src/worker/queue-scans.test.ts).
 *
 * A session publishes its table counters at most once a second (or when it ends), so each reading first
 * makes every session of the app publish them with pg_stat_force_next_flush(). On the server the tests
 * seed and read through a connection of their own (`ScanSeeder`), outside the app's pool, so that the
 * app's sessions keep exactly the plans the app made them hold.
 */
import pg from 'pg';
import { expect } from 'vitest';
import type { Queryable } from '../src/db/db.js';
import type { TestApp } from './harness.js';

export interface ScanCounters {
  seqScan: number;
  idxTupFetch: number;
}

export class ScanSeeder {
  private constructor(
    private readonly t: TestApp,
    /** The seeding connection on the server (null: the embedded database's one session). */
    private readonly client: pg.Client | null,
  ) {}

  static async open(t: TestApp): Promise<ScanSeeder> {
    if (t.ctx.db.kind !== 'server') return new ScanSeeder(t, null);
    const client = new pg.Client({ connectionString: t.ctx.config.databaseUrl ?? undefined });
    await client.connect();
    return new ScanSeeder(t, client);
  }

  /** Statements on the seeding session (the embedded database: its one session). */
  get q(): Queryable {
    const client = this.client;
    if (client === null) return this.t.ctx.db;
    return {
      query: async <R>(text: string, params?: readonly unknown[]) => (await client.query(text, params as unknown[])).rows as R[],
    };
  }

  /** A transaction on the seeding session. */
  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    if (this.client === null) return this.t.ctx.db.tx(fn);
    await this.client.query('BEGIN');
    try {
      const result = await fn(this.q);
      await this.client.query('COMMIT');
      return result;
    } catch (err) {
      await this.client.query('ROLLBACK');
      throw err;
    }
  }

  /** The counters of `tables`, with every session's counters published first. */
  async counters<T extends string>(tables: readonly T[]): Promise<Record<T, ScanCounters>> {
    await this.q.query('SELECT pg_stat_force_next_flush()');
    await this.publishAppCounters();
    await this.q.query('SELECT pg_stat_clear_snapshot()');
    const rows = await this.q.query<{ relname: T; seq_scan: string; idx_tup_fetch: string | null }>(
      'SELECT relname, seq_scan, idx_tup_fetch FROM pg_stat_user_tables WHERE relname = ANY($1::text[])',
      [tables],
    );
    const counters = Object.fromEntries(
      rows.map((r) => [r.relname, { seqScan: Number(r.seq_scan), idxTupFetch: Number(r.idx_tup_fetch ?? 0) }]),
    ) as Record<T, ScanCounters>;
    for (const table of tables) expect(counters[table], `pg_stat_user_tables has no row for ${table}`).toBeDefined();
    return counters;
  }

  async close(): Promise<void> {
    await this.client?.end();
  }

  /**
   * Makes every session of the app publish its counters now. The embedded database has one session;
   * on the server, every connection of the app's pool is checked out at once (all of this database's
   * sessions but the seeder's and LISTEN connections, which read no table) and runs
   * pg_stat_force_next_flush(), so each publishes at the end of that statement, keeping the plans it
   * holds.
   */
  private async publishAppCounters(): Promise<void> {
    if (this.client === null) return;
    const sessions = (
      await this.client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            AND query NOT LIKE 'LISTEN %'`,
      )
    ).rows.map((r) => r.pid);
    const clients = await Promise.all(sessions.map(() => this.t.ctx.db.connect()));
    try {
      const flushed: number[] = [];
      for (const client of clients) {
        flushed.push(
          (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_stat_force_next_flush()')).rows[0].pid,
        );
      }
      expect(flushed.sort(), "the app's pool holds every session of the database").toEqual(sessions.sort());
    } finally {
      for (const client of clients) client.release();
    }
  }
}
