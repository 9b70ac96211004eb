/**
 * The one data layer: PostgreSQL, either embedded (PGlite, in-process WASM) or a server (DATABASE_URL).
 * Both are reached through a `pg.Pool` so the same parameterised SQL runs on both: PGlite through
 * `createPgConfig` with a pool of one (PGlite is a single session), a server through a real pool.
 *
 * Faults of a server (docs/decisions-log.md, 'Dependency faults'). Nothing here may end the process or hold a request:
 *  - every client has an 'error' listener for its whole life, checked out or idle (pg emits 'error' on a
 *    checked-out client that loses its connection, and an EventEmitter with no listener throws), and so
 *    does the pool and every LISTEN connection;
 *  - every statement and every transaction has a deadline (`timeoutMs`, 1.5 s by default) that covers
 *    getting a connection too: past it the connection is destroyed (the server rolls the transaction
 *    back) and the caller gets 503 ERR_DEPENDENCY_UNAVAILABLE. A request needing the database is so
 *    answered within 2 s even when the server stops answering without closing anything (a network
 *    partition), where only a deadline can tell. An answer already received when the deadline passes
 *    (the process was busy) is kept: see `arm`;
 *  - a server that answers but is slow to finish one statement is not a partition: each statement has
 *    a server-side `statement_timeout` (statementTimeoutOf: 1 s of the 1.5 s) that falls before the deadline, so
 *    the server cancels it (SQLSTATE 57014) and the connection stays in use; the caller gets 503
 *    ERR_QUERY_TIMEOUT ("took too long"), and health records nothing (docs/scale.md, "A slow
 *    statement is not an outage"). The embedded database cannot cancel a statement (PGlite runs it to
 *    the end on the one thread), but maps a cancellation the same way should one come;
 *  - large writes (an upload's bytes) run in the bulk lane (`withTimeout(ms, { bulk: true })`): a few
 *    connections of their own, so they never hold the ones requests wait on, and a longer deadline
 *    whose passing is slowness, not an outage (a refused or reset connection there still counts);
 *  - TCP keepalive finds dead idle connections; a broken client is never given back to the pool;
 *  - a request's deadline passing is an outage only when a probe agrees (a new connection does not
 *    answer SELECT 1 within 3 s): a partition and a process too busy to read its answers in time (an
 *    overloaded host, a burst of uploads) look the same from the deadline alone;
 *  - `health` records outages (dependencies.ts): context.ts logs them, /readyz reports them.
 * The embedded database cannot become unreachable: it has no deadlines.
 */
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { from as copyStreamFrom } from 'pg-copy-streams';
import { DependencyHealth } from '../dependencies.js';
import { AppError } from '../errors.js';
import { isUnavailableError, POOL_BUSY, translate } from './db-errors.js';
import { startListening } from './listen-connection.js';

// int8 (counts, qəpik sums) as JS numbers: every value we store is far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric (lat/lng) as numbers.
pg.types.setTypeParser(1700, (v) => Number(v));

export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * In a transaction on a PostgreSQL server only (pipelined: see Db.tx): sends COMMIT at once, behind
   * the statements already sent, without waiting for their answers. Resolves once committed; rejects
   * when the transaction did not commit (a statement before it failed, and PostgreSQL ended the
   * transaction with a ROLLBACK instead). Nothing may be sent after it.
   */
  commit?(): Promise<void>;
}

export interface TxOptions {
  /**
   * `repeatable read`: every statement of the transaction reads one snapshot (a read made of several
   * statements then answers as of one moment, never half before and half after a concurrent change).
   */
  isolation?: 'repeatable read';
  readOnly?: boolean;
  /**
   * Every parameterised statement of the transaction runs on its generic plan (`SET LOCAL
   * plan_cache_mode = force_generic_plan`, sent with the BEGIN: no round trip of its own). For a
   * transaction of named prepared statements over sets given as arrays, whose generic plans are known
   * to be right (src/db/join-plans.ts): left to itself, PostgreSQL compares a generic plan costed for
   * an array of unknown length with custom plans for the few elements at hand, keeps choosing the
   * custom plan, and so plans the statement again on every call. Unnamed statements in the
   * transaction are planned without their values too: only for transactions whose every statement
   * probes by key or inserts.
   */
  genericPlans?: boolean;
  /**
   * The planner reads tables through their indexes only (`SET LOCAL enable_seqscan = off,
   * enable_bitmapscan = off`, sent with the BEGIN). For transactions whose reads take the first rows of
   * an index's order with a LIMIT (the delivery queue's claim: the oldest due rows): the planner,
   * guessing how many rows match from statistics taken when few did, otherwise reads every match
   * through a bitmap (or the whole table) and sorts them, where walking the index in its order stops at
   * the LIMIT (src/modules/webhooks/queue/claim-due-deliveries.ts has the figures).
   */
  indexWalks?: boolean;
}

export interface Db extends Queryable {
  readonly kind: 'embedded' | 'server';
  /** Whether the database answers, as this process last saw it (outages are logged by context.ts). */
  readonly health: DependencyHealth;
  /**
   * Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws.
   *
   * On a PostgreSQL server the transaction is pipelined: its connection runs in node-postgres's
   * pipeline mode while the transaction lasts, so a statement is sent as soon as it is called, without
   * waiting for the answers of those before it (each is still answered, or fails, on its own, in
   * order). The BEGIN travels with the first statement, and `q.commit()` sends COMMIT with the last
   * ones (a lock and a write then take two round trips instead of four). A statement sent behind one
   * that fails fails too (the transaction is aborted), so nothing is written out of order. The
   * connection leaves pipeline mode before it goes back to the pool (a COPY cannot run in it). The
   * embedded database sends one statement at a time and has no `commit()` (its round trips cost no
   * network wait).
   */
  tx<T>(fn: (q: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  /** A dedicated connection (advisory locks, migrations); release it when done. No deadline applies. */
  connect(): Promise<pg.PoolClient>;
  /**
   * Server only: runs `copy` (a `COPY … FROM STDIN` statement) with `data` in the statement's format (a
   * string in COPY's text format, or buffers written one after another as they are, never joined), under
   * the same deadline and fault handling as a statement. Many rows cost far less than through INSERT
   * (the server writes them with multi-row inserts, a fraction of the WAL). The embedded database
   * cannot: COPY FROM STDIN through PGlite's node-postgres adapter ends its WASM program (seen with
   * PGlite 0.5.16), so callers keep an INSERT for it.
   */
  copyFrom(copy: string, data: string | readonly Buffer[]): Promise<void>;
  /**
   * The same database (same pool, same health) with another deadline per statement and transaction:
   * background work (the worker) may wait longer than a request. Closing the view closes nothing.
   * `bulk`: the view runs on a few connections of its own (server; BULK_POOL_SIZE) instead of the pool
   * requests wait on, and its deadline passing is slowness, never an outage (see the top).
   */
  withTimeout(timeoutMs: number, options?: { bulk?: boolean }): Db;
  /**
   * LISTENs on `channels` over a connection of its own (server only; embedded: nothing to hear), kept up
   * through outages: a lost connection is opened again with a short backoff, and `onListening` runs
   * each time listening (re)starts, so the caller can catch up with what it may have missed;
   * `onNotListening` runs each time an attempt fails or an established connection is lost (notifications
   * may be missed until the next `onListening`). Returns a function that stops listening.
   */
  listen(
    channels: readonly string[],
    onNotification: (channel: string, payload: string) => void,
    onListening?: () => void,
    onNotListening?: () => void,
  ): () => Promise<void>;
  close(): Promise<void>;
}

export interface DbOptions {
  databaseUrl: string | null;
  dataDir: string;
  /** Server pool size; the embedded database always has exactly one session. */
  poolSize?: number;
  /** Server only: the deadline of a statement or transaction, connection included (see the top). */
  timeoutMs?: number;
}

/** A request's database work answers or fails within this (plus at most MIN_STATEMENT_MS): < 2 s. */
export const DEFAULT_DB_TIMEOUT_MS = 1_500;
/** Connections of the bulk lane (withTimeout's `bulk`): large writes never take more of the server. */
export const BULK_POOL_SIZE = 4;
const BULK_CONNECT_WAIT_MS = 10_000;
/** A statement that got its connection late still gets this long (a busy pool is not an outage). */
const MIN_STATEMENT_MS = 250;

/**
 * The server-side statement_timeout under a deadline of `timeoutMs`: 500 ms before it, so that a slow
 * statement is cancelled by the server (the connection kept) before the deadline would destroy its
 * connection and call it an outage: 1 s under the request deadline. (A statement that waited more than
 * 500 ms for a connection of a saturated pool can still meet the deadline first.)
 */
export function statementTimeoutOf(timeoutMs: number): number {
  return Math.max(MIN_STATEMENT_MS, timeoutMs - 500);
}

/** The statement_timeout each server connection currently has (set at start-up, changed by a view). */
const connectionStatementTimeout = new WeakMap<pg.PoolClient, number>();
/** TCP keepalive probes on idle connections start after this (a silent peer is found, then dropped). */
const KEEPALIVE_DELAY_MS = 10_000;

async function run<R>(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]): Promise<R[]> {
  try {
    const result = await client.query(text, params as unknown[] | undefined);
    return result.rows as R[];
  } catch (err) {
    throw translate(err);
  }
}

/**
 * Switches a connection into node-postgres's pipeline mode or out of it. node-postgres reads the mode
 * (`pipeline`, set from its constructor's option) each time it sends; switched only while the connection
 * has nothing in flight (checked out and idle, or every statement answered), it sends in the mode asked.
 * The pool's connections stay out of it but for a pipelined transaction: a COPY cannot run in it.
 */
function setPipelineMode(client: pg.PoolClient, on: boolean): void {
  (client as unknown as { pipeline: boolean }).pipeline = on;
}

/**
 * Statements sent together: on a PostgreSQL server (a pipelined transaction, see Db.tx) all at once, one
 * round trip; on the embedded database one after another. Resolves with their results in order; the
 * first statement to fail is the error (the ones behind it fail because the transaction is aborted).
 */
export async function together<T extends unknown[]>(
  q: Queryable,
  ...statements: { [K in keyof T]: () => Promise<T[K]> }
): Promise<T> {
  if (q.commit) return (await Promise.all(statements.map((send) => send()))) as T;
  const results: unknown[] = [];
  for (const send of statements) results.push(await send());
  return results as T;
}

/**
 * A transaction's last statements with its COMMIT: on a PostgreSQL server (a pipelined transaction, see
 * Db.tx) all sent at once, one round trip; on the embedded database one after another, the COMMIT then
 * sent by Db.tx. Resolves with their results in order; the first statement to fail is the error (the
 * ones behind it fail because the transaction is aborted, and the COMMIT is answered with a ROLLBACK).
 * Nothing may be sent on `q` afterwards.
 */
export async function lastStatements<T extends unknown[]>(
  q: Queryable,
  ...statements: { [K in keyof T]: () => Promise<T[K]> }
): Promise<T> {
  if (q.commit) {
    const results = await Promise.all([...statements.map((send) => send()), q.commit()]);
    return results.slice(0, -1) as T;
  }
  return together<T>(q, ...statements);
}

/**
 * COMMIT in a pipelined transaction. PostgreSQL answers a COMMIT of a transaction that a failed
 * statement aborted with ROLLBACK, not an error: that answer is the transaction's failure.
 */
async function commitPipelined(client: pg.PoolClient): Promise<void> {
  let command: string;
  try {
    command = (await client.query('COMMIT')).command;
  } catch (err) {
    throw translate(err);
  }
  if (command !== 'COMMIT') throw new Error(`the transaction was rolled back (COMMIT answered ${command})`);
}

/** The client's socket (pg-pool destroys it the same way when a connection attempt times out). */
function destroyConnection(client: pg.PoolClient, err: Error): void {
  (client as unknown as { connection?: { stream?: Socket } }).connection?.stream?.destroy(err);
}

const DEADLINE = Symbol('deadline');

function deadlineError(timeoutMs: number): Error {
  return Object.assign(new Error(`PostgreSQL did not answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT', [DEADLINE]: true });
}

/** Whether `err` is (or was caused by) our own deadline destroying a connection, not the server's doing. */
function isOwnDeadline(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as { [DEADLINE]?: boolean })[DEADLINE]) return true;
  }
  return false;
}

/** Whether a client may go back to the pool after `err` (a statement error leaves it usable). */
function clientBroken(client: pg.PoolClient, err: unknown): boolean {
  const c = client as unknown as { _queryable?: boolean; _ending?: boolean };
  return c._queryable === false || c._ending === true || isUnavailableError(err);
}

interface Shared {
  kind: 'embedded' | 'server';
  pool: pg.Pool;
  /** The bulk lane's pool, opened on first use (server); the embedded database has only `pool`. */
  bulkPool: () => pg.Pool;
  /**
   * Whether the server answers a new connection now (server): asked when a deadline passed, which a
   * partition and a merely slow process look alike from. Concurrent asks share one probe.
   */
  probe: () => Promise<boolean>;
  health: DependencyHealth;
  /** Options of a LISTEN connection (server). */
  clientConfig: pg.ClientConfig | null;
  onClose: () => Promise<void>;
}

class PoolDb implements Db {
  readonly kind: 'embedded' | 'server';
  readonly health: DependencyHealth;
  private readonly pool: pg.Pool;
  /** Deadlines apply to a server only. */
  private readonly deadlines: boolean;

  constructor(
    private readonly shared: Shared,
    private readonly timeoutMs: number,
    private readonly owner: boolean,
    /** The bulk lane: its own connections, and its deadline passing is not an outage. */
    private readonly bulk = false,
  ) {
    this.kind = shared.kind;
    this.health = shared.health;
    this.pool = bulk ? shared.bulkPool() : shared.pool;
    this.deadlines = shared.kind === 'server';
  }

  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> {
    // Both run on a client checked out for the one statement (what pool.query does), so that a deadline
    // can destroy exactly that connection and a broken one is dropped. For the embedded database it is
    // also what keeps the one session in step (see queryKeepingClient).
    return this.queryKeepingClient<R>(text, params);
  }

  /**
   * The embedded database's one session must survive a failing statement. `pool.query` destroys its
   * client when the statement fails (pg-pool releases it with the error), which for a TCP connection
   * is merely wasteful; with PGlite's node-postgres adapter, the replacement client shares the one
   * backend with the dying one, and the protocol stream goes out of step: the following statements
   * fail and then receive other statements' results (db.test.ts shows it). A client checked out and
   * released normally handles the error and stays in step, as inside transactions.
   */
  private queryKeepingClient<R>(text: string, params?: readonly unknown[]): Promise<R[]> {
    return this.withClient((client) => run<R>(client, text, params));
  }

  /**
   * `work` on a client checked out for it alone, under the deadline (server), reported to `health`, the
   * client released after: a server connection that failed (deadline, reset) is dropped, the embedded
   * session never is.
   */
  private async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const token = this.health.begin();
    const startedMs = Date.now();
    const client = await this.checkout(token);
    const deadline = this.arm(client, startedMs);
    let failure: unknown;
    try {
      await this.setStatementTimeout(client);
      const result = await work(client);
      this.health.succeeded(token);
      return result;
    } catch (err) {
      failure = err;
      throw this.failed(err, token);
    } finally {
      deadline?.cancel();
      client.release(this.kind === 'server' && failure !== undefined && clientBroken(client, failure));
    }
  }

  connect(): Promise<pg.PoolClient> {
    return this.checkout();
  }

  async copyFrom(copy: string, data: string | readonly Buffer[]): Promise<void> {
    if (this.kind !== 'server') throw new Error('COPY FROM STDIN is not available on the embedded database');
    // A COPY the server refuses (a missing partition, a bad value) fails the stream with the server's
    // error, SQLSTATE included, and leaves the connection usable, as a failed statement does.
    await this.withClient((client) =>
      pipeline(Readable.from(typeof data === 'string' ? [data] : data), client.query(copyStreamFrom(copy))),
    );
  }

  /**
   * Gives the connection this view's statement_timeout when it has another one (a connection last used
   * by a view with another deadline): one round trip then, none otherwise.
   */
  private async setStatementTimeout(client: pg.PoolClient): Promise<void> {
    if (!this.deadlines) return;
    const wanted = statementTimeoutOf(this.timeoutMs);
    if (connectionStatementTimeout.get(client) === wanted) return;
    await run(client, `SET statement_timeout = ${wanted}`);
    connectionStatementTimeout.set(client, wanted);
  }

  private async checkout(token?: number): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw this.failed(err, token);
    }
  }

  /**
   * Reports an unreachable database to `health` (for an operation begun at `token`) and turns the error
   * into the 503 AppError.
   */
  private failed(err: unknown, token?: number): unknown {
    const translated = translate(err);
    // A statement the server cancelled (ERR_QUERY_TIMEOUT) is slowness, never an outage: not recorded.
    if (translated instanceof AppError && translated.code === 'ERR_DEPENDENCY_UNAVAILABLE') {
      const cause = (translated as { cause?: unknown }).cause ?? err;
      // A full pool is load, not an outage: answered 503 all the same, but not logged as one. Nor is
      // the bulk lane's deadline: a large write that is slow says nothing about whether the server
      // answers (its refused or reset connections still count).
      const busy = cause instanceof Error && POOL_BUSY.test(cause.message);
      if (busy || (this.bulk && isOwnDeadline(cause))) return translated;
      if (isOwnDeadline(cause)) {
        // A request's deadline passing proves nothing alone: a partition and a process too busy to read
        // its answers in time (a burst of large uploads, an overloaded host) look the same from here.
        // A fresh connection answering SELECT 1 tells them apart; only a failed probe is an outage.
        void this.shared.probe().then((answers) => {
          if (!answers) this.health.failed(cause, token);
        });
      } else this.health.failed(cause, token);
    }
    return translated;
  }

  /**
   * The deadline of work that began at `startedMs` on `client`: past it, the connection is destroyed,
   * unless its answer is already here. A process that was busy (a burst of uploads, an overloaded host)
   * runs its due timers before it reads the sockets that became readable meanwhile, so an answer that
   * came in time would be thrown away with its connection and the request answered 503. The timer
   * therefore yields to the loop's I/O once (setImmediate runs after it), and cuts off only work still
   * unanswered then: a real partition is cut off one turn of the loop later, nothing more.
   */
  private arm(client: pg.PoolClient, startedMs: number): { cancel(): void } | null {
    if (!this.deadlines) return null;
    const left = Math.max(MIN_STATEMENT_MS, startedMs + this.timeoutMs - Date.now());
    let check: NodeJS.Immediate | undefined;
    const timer = setTimeout(() => {
      check = setImmediate(() => destroyConnection(client, deadlineError(this.timeoutMs)));
    }, left);
    return {
      cancel: () => {
        clearTimeout(timer);
        if (check) clearImmediate(check);
      },
    };
  }

  async tx<T>(fn: (q: Queryable) => Promise<T>, options: TxOptions = {}): Promise<T> {
    const token = this.health.begin();
    const startedMs = Date.now();
    const client = await this.checkout(token);
    const deadline = this.arm(client, startedMs);
    const begin = `BEGIN${options.isolation ? ' ISOLATION LEVEL REPEATABLE READ' : ''}${options.readOnly ? ' READ ONLY' : ''}${
      options.genericPlans ? '; SET LOCAL plan_cache_mode = force_generic_plan' : ''
    }${options.indexWalks ? '; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off' : ''}`;
    const pipelined = this.kind === 'server';
    let committing: Promise<void> | undefined;
    const q: Queryable = pipelined
      ? {
          query: (text, params) => run(client, text, params),
          commit: () => {
            committing ??= commitPipelined(client);
            return committing;
          },
        }
      : { query: (text, params) => run(client, text, params) };
    try {
      await this.setStatementTimeout(client);
      if (pipelined) setPipelineMode(client, true);
      const began = run(client, begin);
      // Pipelined, the BEGIN is answered with the first statement's round trip. A BEGIN that fails (the
      // connection is lost) fails every statement behind it, so it is awaited once they have answered.
      if (pipelined) began.catch(() => {});
      else await began;
      const result = await fn(q);
      await began;
      await (q.commit ? q.commit() : run(client, 'COMMIT'));
      if (pipelined) setPipelineMode(client, false);
      deadline?.cancel();
      client.release();
      this.health.succeeded(token);
      return result;
    } catch (err) {
      deadline?.cancel();
      // A COMMIT already sent is answered before the ROLLBACK below (the connection answers in order);
      // its own failure is this error's consequence, not news.
      committing?.catch(() => {});
      if (this.kind === 'server' && clientBroken(client, err)) {
        // The connection is gone or past its deadline: nothing to roll back on it (the server rolls the
        // transaction back when the connection ends), and a ROLLBACK would only wait behind it.
        client.release(true);
      } else {
        try {
          await client.query('ROLLBACK');
          if (pipelined) setPipelineMode(client, false);
          client.release();
        } catch {
          // A server connection that cannot roll back is dropped. The embedded session is the only one
          // there is: a replacement client would share it and go out of step (see queryKeepingClient).
          client.release(this.kind === 'server');
        }
      }
      throw this.failed(err, token);
    }
  }

  withTimeout(timeoutMs: number, options: { bulk?: boolean } = {}): Db {
    return new PoolDb(this.shared, timeoutMs, false, (options.bulk ?? this.bulk) && this.kind === 'server');
  }

  listen(
    channels: readonly string[],
    onNotification: (channel: string, payload: string) => void,
    onListening?: () => void,
    onNotListening?: () => void,
  ): () => Promise<void> {
    const config = this.shared.clientConfig;
    if (!config) return async () => {};
    return startListening(config, this.health, channels, onNotification, onListening, onNotListening);
  }

  async close(): Promise<void> {
    if (!this.owner) return;
    await this.pool.end().catch(() => {});
    await this.shared.onClose();
  }
}

export async function openDb(options: DbOptions): Promise<Db> {
  if (options.databaseUrl) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_DB_TIMEOUT_MS;
    const clientConfig: pg.ClientConfig = {
      connectionString: options.databaseUrl,
      connectionTimeoutMillis: timeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    };
    const health = new DependencyHealth('PostgreSQL');
    const openPool = (max: number, bulk: boolean): pg.Pool => {
      const pool = new pg.Pool({
        ...clientConfig,
        // pg-pool waits this long for a connection to open or come free: a bulk write may queue
        // behind the others for longer than a request would (it is bounded by its uploads' limits).
        connectionTimeoutMillis: bulk ? BULK_CONNECT_WAIT_MS : timeoutMs,
        // Every pooled connection starts with the request deadline's statement_timeout (set in the
        // start-up packet: no round trip); a view with another deadline sets its own (setStatementTimeout).
        statement_timeout: statementTimeoutOf(timeoutMs),
        max,
        idleTimeoutMillis: 30_000,
      });
      // Idle clients losing their connection: pg-pool drops them and emits here.
      pool.on('error', (err) => health.failed(err));
      // Every client, for its whole life: pg-pool listens only while a client is idle, and pg emits
      // 'error' on a checked-out client whose connection fails (no listener: the process would crash).
      pool.on('connect', (client) => {
        connectionStatementTimeout.set(client, statementTimeoutOf(timeoutMs));
        client.on('error', (err) => {
          // Our own deadline destroying the connection is judged where the work failed (PoolDb.failed).
          if (isUnavailableError(err) && !isOwnDeadline(err)) health.failed(err);
        });
      });
      return pool;
    };
    const pool = openPool(options.poolSize ?? 10, false);
    let bulkPool: pg.Pool | null = null;
    let probing: Promise<boolean> | null = null;
    const probe = () => {
      probing ??= probeServer(clientConfig).finally(() => {
        probing = null;
      });
      return probing;
    };
    return new PoolDb(
      {
        kind: 'server',
        pool,
        bulkPool: () => {
          bulkPool ??= openPool(BULK_POOL_SIZE, true);
          return bulkPool;
        },
        probe,
        health,
        clientConfig,
        onClose: async () => {
          await bulkPool?.end().catch(() => {});
        },
      },
      timeoutMs,
      true,
    );
  }
  const dataDir = options.dataDir;
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  return dbFromPglite(await PGlite.create(dataDir));
}

/** How long the probe after a passed deadline may take to connect and answer SELECT 1. */
const PROBE_TIMEOUT_MS = 3_000;

/** Whether a new connection to the server answers SELECT 1 within PROBE_TIMEOUT_MS. */
async function probeServer(config: pg.ClientConfig): Promise<boolean> {
  const client = new pg.Client({ ...config, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => {});
  const timer = setTimeout(
    () => destroyConnection(client as unknown as pg.PoolClient, deadlineError(PROBE_TIMEOUT_MS)),
    PROBE_TIMEOUT_MS,
  );
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    client.end().catch(() => {});
  }
}

/** Wraps an open PGlite instance; closing the Db closes it. */
export function dbFromPglite(pglite: PGlite): Db {
  const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
  pool.on('error', () => {});
  return new PoolDb(
    {
      kind: 'embedded',
      pool,
      bulkPool: () => pool,
      probe: async () => true,
      health: new DependencyHealth('PostgreSQL'),
      clientConfig: null,
      onClose: async () => {
        if (!pglite.closed) await pglite.close();
      },
    },
    0,
    true,
  );
}
