/**
 * A slow statement is not an outage (docs/scale.md, "A slow statement is not an outage"), on the
 * PostgreSQL server with the production deadline: a statement that runs past its statement_timeout is
 * cancelled by the server (SQLSTATE 57014) and the request answers 503 ERR_QUERY_TIMEOUT, while the
 * database stays healthy (no outage recorded or logged, /readyz 200) and the connection that ran it keeps
 * serving. The statement is made slow by a lock held on another connection: the wait counts towards the
 * timeout exactly as a slow plan would.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEFAULT_DB_TIMEOUT_MS, openDb, statementTimeoutOf } from '../src/db/db.js';
import { createLogger } from '../src/logger.js';
import { expectError } from './expect-error.js';
import { createPartner } from './factories.js';
import { createTestApp, freshDatabase, type TestApp } from './harness.js';
import { waitFor } from './wait.js';

const serverMode = Boolean(process.env.DATABASE_URL);

function logCapture() {
  const lines: Array<{ msg: string; level: number }> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { log: createLogger('debug', sink), lines };
}

/** Holds an exclusive lock on `table` from a connection of its own until the returned function is called. */
async function lockTable(t: TestApp, table: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: t.ctx.config.databaseUrl ?? undefined });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('ROLLBACK');
    await client.end();
  };
  onTestFinished(release);
  return release;
}

describe.skipIf(!serverMode)('a statement past its deadline', () => {
  it('is cancelled by the server and answered 503 ERR_QUERY_TIMEOUT, with no outage recorded or logged, and the next request succeeds', async () => {
    const capture = logCapture();
    const t = await createTestApp({ dbTimeoutMs: DEFAULT_DB_TIMEOUT_MS, log: capture.log });
    onTestFinished(() => t.close());
    const partner = await createPartner(t.ctx);
    const outages: unknown[] = [];
    onTestFinished(t.ctx.db.health.onChange((change) => outages.push(change)));

    const release = await lockTable(t, 'webhooks');
    const started = Date.now();
    const slow = await Promise.all(
      [0, 1, 2].map(() => t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: partner.auth })),
    );
    const tookMs = Date.now() - started;
    for (const res of slow) {
      expectError(res, 503, 'ERR_QUERY_TIMEOUT');
      expect(res.json().message).toMatch(/too long/);
      expect(res.json().message).not.toMatch(/unavailable/i);
    }
    // Cancelled by the server at its statement_timeout, before the deadline would destroy the connection.
    expect(tookMs).toBeGreaterThanOrEqual(statementTimeoutOf(DEFAULT_DB_TIMEOUT_MS) - 50);
    expect(tookMs).toBeLessThan(DEFAULT_DB_TIMEOUT_MS + 1_000);

    expect(t.ctx.db.health.available).toBe(true);
    expect(outages).toEqual([]);
    expect(capture.lines.filter((l) => /PostgreSQL/.test(l.msg))).toEqual([]);
    const ready = await t.live.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);

    await release();
    const after = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: partner.auth });
    expect(after.statusCode, after.body).toBe(200);
    expect(after.json()).toEqual({ items: [] });
  });

  it('keeps its connection: the pool does not open new ones after cancellations', async () => {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const db = await openDb({ databaseUrl: fresh.url, dataDir: '', poolSize: 1 });
    onTestFinished(() => db.close());
    const [{ pid }] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    for (let i = 0; i < 2; i++) {
      const err = await db.query('SELECT pg_sleep(5)').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ERR_QUERY_TIMEOUT', statusCode: 503 });
    }
    const [again] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(again.pid).toBe(pid);
    expect(db.health.available).toBe(true);
    // A view with a longer deadline gets the longer statement_timeout on the same connection, and back.
    const worker = db.withTimeout(30_000);
    const setting = "SELECT setting::int AS ms FROM pg_settings WHERE name = 'statement_timeout'";
    const [longer] = await worker.query<{ ms: number }>(setting);
    expect(longer.ms).toBe(statementTimeoutOf(30_000));
    const [back] = await db.query<{ ms: number }>(setting);
    expect(back.ms).toBe(statementTimeoutOf(DEFAULT_DB_TIMEOUT_MS));
  });
});

describe.skipIf(!serverMode)('the bulk lane (large writes: an upload’s bytes)', () => {
  it('runs on connections of its own, and its deadline passing answers 503 without recording an outage', async () => {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const db = await openDb({ databaseUrl: fresh.url, dataDir: '', poolSize: 1 });
    onTestFinished(() => db.close());
    const outages: unknown[] = [];
    onTestFinished(db.health.onChange((change) => outages.push(change)));
    const bulk = db.withTimeout(600, { bulk: true });

    // The pool requests wait on is all taken: the bulk lane still has connections.
    const held = await db.connect();
    const [{ pid: heldPid }] = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const [{ pid: bulkPid }] = await bulk.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(bulkPid).not.toBe(heldPid);
    held.release();

    // A write that outlasts the lane's deadline (the server would let it run: no statement_timeout):
    // the connection is destroyed and the caller answered 503, but the database is not declared down.
    const slow = await bulk
      .tx(async (q) => {
        await q.query('SET LOCAL statement_timeout = 0');
        await q.query('SELECT pg_sleep(3)');
      })
      .catch((e: unknown) => e);
    expect(slow).toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE', statusCode: 503 });
    expect(db.health.available).toBe(true);
    expect(outages).toEqual([]);
    expect(await bulk.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe.skipIf(!serverMode)('a deadline that passes while the process is busy', () => {
  it('keeps an answer that arrived in time: the statement succeeds, no outage, the same connection', async () => {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const deadlineMs = 3_000;
    const db = await openDb({ databaseUrl: fresh.url, dataDir: '', poolSize: 1, timeoutMs: deadlineMs });
    onTestFinished(() => db.close());
    const outages: unknown[] = [];
    onTestFinished(db.health.onChange((change) => outages.push(change)));
    await db.query('CREATE TABLE gate (a int)');
    const [{ pid }] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const locker = new pg.Client({ connectionString: fresh.url ?? undefined });
    await locker.connect();
    onTestFinished(() => locker.end());
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE gate IN ACCESS EXCLUSIVE MODE');

    const started = Date.now();
    const answer = db.query<{ n: number }>('SELECT count(*)::int AS n FROM gate');
    // The statement is on the server, waiting for the lock; let go, it is answered at once…
    await waitFor(async () => (await locker.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [pid])).rowCount, {
      timeoutMs: 1_000,
      what: 'the statement waiting for the lock',
    });
    // (ROLLBACK is sent, not awaited: its answer and the statement's come while the thread is blocked.)
    const rollback = locker.query('ROLLBACK');
    // …while this process is busy (its thread blocked, as by a long task) until past the deadline.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, started + deadlineMs + 300 - Date.now()));
    await rollback;
    expect(await answer).toEqual([{ n: 0 }]);
    expect(db.health.available).toBe(true);
    expect(outages).toEqual([]);
    expect(await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).toEqual([{ pid }]);
  });
});
