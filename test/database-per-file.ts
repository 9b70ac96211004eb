/**
 * Set-ups of the tests that talk to the data layer itself rather than to an app:
 *  - `setUpFreshDatabase`: one migrated database of its own for the whole file (test/harness.ts,
 *    freshDatabase), closed and dropped when the file ends;
 *  - `dbThroughProxy`: a one-connection Db on the PostgreSQL server reached through a fault proxy
 *    (test/fault-proxy.ts), to hold what the client sends and see what it sends before any answer.
 */
import { afterAll, beforeAll } from 'vitest';
import { type Db, openDb } from '../src/db/db.js';
import { FaultProxy } from './fault-proxy.js';
import { freshDatabase, TEST_DB_TIMEOUT_MS } from './harness.js';

/** `ready` gets the file's database (and its URL on a server, null embedded) before its tests run. */
export function setUpFreshDatabase(ready: (db: Db, url: string | null) => void | Promise<void>): void {
  let drop = async () => {};
  beforeAll(async () => {
    const fresh = await freshDatabase();
    drop = async () => {
      await fresh.db.close();
      await fresh.drop();
    };
    await ready(fresh.db, fresh.url);
  });
  afterAll(() => drop());
}

export interface ProxiedDb {
  proxy: FaultProxy;
  db: Db;
  /** Lets traffic pass, closes the Db, then the proxy. */
  close(): Promise<void>;
}

/** A Db of one connection to the server at `url`, through a proxy of its own. */
export async function dbThroughProxy(url: string): Promise<ProxiedDb> {
  const proxy = await FaultProxy.startFor(url);
  const db = await openDb({ databaseUrl: proxy.url(url), dataDir: '', poolSize: 1, timeoutMs: TEST_DB_TIMEOUT_MS });
  return {
    proxy,
    db,
    close: async () => {
      proxy.pass();
      await db.close();
      await proxy.close();
    },
  };
}
