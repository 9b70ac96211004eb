/**
 * "Another process" for race tests on a PostgreSQL server: a transaction of the test on a connection
 * of its own, which takes locks the service's requests then wait for (test/races.test.ts describes the
 * method). The embedded database has one session, so these tests run on a server only.
 */
import pg from 'pg';
import { onTestFinished } from 'vitest';
import type { TestApp } from './harness.js';
import { waitFor } from './wait.js';

export interface TestTransaction {
  query: (text: string, params?: unknown[]) => Promise<unknown>;
  commit: () => Promise<void>;
}

/** A transaction of the test on its own connection, committed by `commit()`, else rolled back when the test ends. */
export async function testTransaction(t: TestApp): Promise<TestTransaction> {
  const client = new pg.Client({ connectionString: t.ctx.config.databaseUrl as string });
  await client.connect();
  await client.query('BEGIN');
  let done = false;
  onTestFinished(async () => {
    if (!done) await client.query('ROLLBACK').catch(() => {});
    await client.end();
  });
  return {
    query: (text, params) => client.query(text, params),
    commit: async () => {
      done = true;
      await client.query('COMMIT');
    },
  };
}

/** Waits until `n` statements of the app's database wait for a lock (nothing to wait for embedded). */
export async function waitForLockWaiters(t: TestApp, n = 1): Promise<void> {
  if (t.ctx.db.kind !== 'server') return;
  const name = new URL(t.ctx.config.databaseUrl as string).pathname.slice(1);
  await waitFor(async () => {
    const rows = await t.ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
      [name],
    );
    return rows[0].n >= n;
  });
}
