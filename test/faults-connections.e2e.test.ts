/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'): pg and ioredis clients losing their
 * connections, and a database that holds every byte; no fault ends the process.
 * Server mode only; how the faults are injected: test/faults.test-helpers.ts.
 */
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_DB_TIMEOUT_MS, openDb } from '../src/db/db.js';
import { DependencyHealth } from '../src/dependencies.js';
import { connectRedis, duplicateRedis } from '../src/redis.js';
import { FaultProxy } from './fault-proxy.js';
import { databaseUrl, logCapture, redisUrl, serverMode } from './faults.test-helpers.js';
import { freshDatabase } from './harness.js';
import { waitFor } from './wait.js';

describe.skipIf(!serverMode)('no dependency fault ends a process', () => {
  /** A database of this test's own, reached through a proxy. */
  async function proxiedDatabase(timeoutMs: number) {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const proxy = await FaultProxy.startFor(databaseUrl as string);
    onTestFinished(() => proxy.close());
    const db = await openDb({ databaseUrl: proxy.url(fresh.url as string), dataDir: '', timeoutMs });
    onTestFinished(async () => {
      proxy.pass();
      await db.close();
    });
    return { proxy, db, directUrl: fresh.url as string };
  }

  it('pg clients checked out, idle, in a transaction and LISTENing lose their connections: every error is handled', async () => {
    const { proxy, db, directUrl: direct } = await proxiedDatabase(DEFAULT_DB_TIMEOUT_MS);
    await db.query('SELECT 1');
    let listening = 0;
    const stopListening = db.listen(
      ['faults_probe'],
      () => {},
      () => listening++,
    );
    onTestFinished(() => stopListening());
    await waitFor(() => listening === 1);
    const checkedOut = await db.connect();
    let released = false;
    onTestFinished(() => {
      if (!released) checkedOut.release(true);
    });
    const settled = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (err: unknown) => err,
      );
    const inTransaction = settled(
      db.tx(async (q) => {
        await q.query('SELECT 1');
        await q.query("SELECT pg_sleep(5), 'faults-probe'");
      }),
    );
    const statement = settled(db.query("SELECT pg_sleep(5), 'faults-probe'"));
    // Both statements are running on the server (seen from a connection of the test's own).
    const probe = new pg.Client({ connectionString: direct });
    await probe.connect();
    onTestFinished(() => probe.end());
    await waitFor(async () => {
      const { rows } = await probe.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(5), ''faults-probe''' AND state = 'active'",
      );
      return rows[0].n === 2;
    });

    proxy.resetAll();
    // The checked-out client got pg's 'error' event (with no listener it would have thrown).
    await waitFor(() => (checkedOut as unknown as { _queryable: boolean })._queryable === false);
    checkedOut.release(true);
    released = true;
    expect(await inTransaction).toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect(await statement).toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect(db.health.available).toBe(false);
    // New connections work again at once, and the LISTEN connection comes back by itself.
    expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(db.health.available).toBe(true);
    await waitFor(() => listening === 2, 5_000);
  });

  it('a database that holds every byte: statements and transactions fail at their deadline and destroy the connection', async () => {
    const { proxy, db } = await proxiedDatabase(500);
    await db.query('SELECT 1');
    proxy.blackhole();
    const started = Date.now();
    const results = await Promise.allSettled([db.query('SELECT 1'), db.tx((q) => q.query('SELECT 1')), db.query('SELECT 2')]);
    expect(Date.now() - started).toBeLessThan(500 + 1_000);
    for (const r of results) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'ERR_DEPENDENCY_UNAVAILABLE' } });
    proxy.pass();
    expect(await waitFor(async () => (await db.query<{ one: number }>('SELECT 1 AS one').catch(() => []))[0]?.one)).toBe(1);
  });

  it('ioredis clients (commands, subscriber, duplicates) lose their connections with commands in flight that nobody awaits: every rejection is handled', async () => {
    const proxy = await FaultProxy.startFor(redisUrl as string);
    onTestFinished(() => proxy.close());
    const health = new DependencyHealth('Redis');
    const { log } = logCapture();
    const main = await connectRedis(proxy.url(redisUrl as string), log, health);
    const sub = duplicateRedis(main, log, 'sub', { subscriber: true });
    const pub = duplicateRedis(main, log, 'pub');
    onTestFinished(() => {
      for (const c of [main, sub, pub]) c.disconnect();
    });
    await sub.subscribe('faults-probe');
    await waitFor(() => pub.status === 'ready');

    proxy.blackhole();
    // Sent and never awaited, as the Socket.IO adapter does: they time out or fail, unobserved.
    for (let i = 0; i < 5; i++) {
      void pub.publish('faults-probe', 'x');
      void main.get('faults-probe');
    }
    await expect(main.get('faults-probe')).rejects.toThrow(/timed out|writeable|closed/i);
    expect(health.available).toBe(false);
    proxy.down();
    void pub.publish('faults-probe', 'y');
    await waitFor(() => main.status !== 'ready' && sub.status !== 'ready' && pub.status !== 'ready');
    proxy.pass();
    await waitFor(() => health.available && sub.status === 'ready' && pub.status === 'ready', 5_000);
    // The subscription came back with the connection.
    const got: string[] = [];
    sub.on('message', (_channel, message) => got.push(message));
    await waitFor(async () => {
      await pub.publish('faults-probe', 'back');
      return got.includes('back');
    }, 5_000);
  });

  it('Redis marked down by a command that missed its deadline on a connection that stayed open: back at once, though nothing else is sent', async () => {
    const health = new DependencyHealth('Redis');
    const main = await connectRedis(redisUrl as string, logCapture().log, health);
    onTestFinished(() => main.disconnect());
    let reconnects = 0;
    main.on('ready', () => reconnects++);
    // What a process starved of CPU sees: the reply was there, its deadline passed before it was read.
    health.failed(new Error('Command timed out'), health.begin());
    expect(health.available).toBe(false);
    // Shared behaviour resumes within 5 s of Redis answering (docs/decisions-log.md, 'Dependency faults').
    await waitFor(() => health.available, 5_000);
    expect(reconnects).toBe(0);
    expect(main.status).toBe('ready');
  });
});
