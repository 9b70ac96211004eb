/**
 * The test harness: the real app on a fresh database per test file (embedded PGlite from the migrated
 * template, or a fresh clone of the template database on the PostgreSQL server when DATABASE_URL is
 * set), a test clock, and Redis when REDIS_URL is set. Requests go through `app.inject` (real Fastify
 * routing, validation and serialisation, no port) or, where a test needs a socket, a real listener.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { Logger } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { TestClock } from '../src/clock.js';
import { type Config, loadConfig } from '../src/config.js';
import { type AppContext, type ContextOverrides, createContext } from '../src/context.js';
import { type Db, dbFromPglite, openDb } from '../src/db/db.js';
import { adminUrl } from './global-setup.js';
import { dropRedisNamespace } from './redis-namespace.js';

export interface TestApp {
  ctx: AppContext;
  clock: TestClock;
  /** The live listener's app. */
  live: FastifyInstance;
  /** The sandbox listener's app. */
  sandbox: FastifyInstance;
  close(): Promise<void>;
}

export const TEST_OTP = '123456';

/**
 * The database deadline of test apps (server mode). Generous on purpose: test files run side by side on
 * a shared, busy machine, where a healthy statement can take a second; the deadlines themselves are
 * exercised by test/faults-*.e2e.test.ts, which ask for the production value (`dbTimeoutMs`).
 */
export const TEST_DB_TIMEOUT_MS = 15_000;

/** A fresh, migrated database of the mode this run is in. */
export async function freshDatabase(): Promise<{ db: Db; url: string | null; drop: () => Promise<void> }> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const dump = readFileSync(inject('pgliteTemplate'));
    const pglite = await PGlite.create({ loadDataDir: new Blob([dump]) });
    return { db: dbFromPglite(pglite), url: null, drop: async () => {} };
  }
  // Named after this run's template: the run's teardown drops its own file databases and never those
  // of another run on the same server (global-setup.ts).
  const name = `${inject('serverTemplate')}_f_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  await admin.connect();
  // CREATE DATABASE … TEMPLATE fails while another clone of the same template is in progress: retry.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${inject('serverTemplate')}"`);
      break;
    } catch (err) {
      if (attempt >= 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
    }
  }
  await admin.end();
  const url = adminUrl(databaseUrl, name);
  const db = await openDb({ databaseUrl: url, dataDir: '', poolSize: 5, timeoutMs: TEST_DB_TIMEOUT_MS });
  return {
    db,
    url,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl(databaseUrl) });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
      await c.end();
    },
  };
}

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    OTP_FIXED_CODE: TEST_OTP,
    TEST_CLOCK: '1',
    LOG_LEVEL: 'silent',
    REDIS_URL: process.env.REDIS_URL,
    // Rendering the reference pages takes a worker thread seconds of CPU; the tests that check it ask for it.
    REFERENCE_SERVER_RENDER: 'off',
    ...env,
  });
}

export interface TestAppOptions {
  env?: Record<string, string | undefined>;
  log?: Logger;
  /** Share a database with another TestApp (two "processes" on one database). */
  db?: { db: Db; url: string | null };
  /**
   * Server mode: the app reaches its database through this URL instead (a fault proxy in front of the
   * server: test/fault-proxy.ts). The fresh database is still created and dropped directly.
   */
  databaseUrl?: (url: string) => string;
  /** Server mode: the app's database deadline (default TEST_DB_TIMEOUT_MS). */
  dbTimeoutMs?: number;
  /** Use the clock the configuration asks for (a SharedTestClock on a server) instead of a TestClock. */
  configuredClock?: boolean;
  /** Wraps the app's database (test/gated-db.ts: holding a statement to force the order of a race). */
  wrapDb?: (db: Db) => Db;
  /** Request log settings (a tiny queue, no timer, a frozen live-tail window). */
  requestLog?: ContextOverrides['requestLog'];
}

/**
 * The apps of the running test file not closed yet. The api tier runs a worker's files one after another
 * in one process (vitest.config.ts), so an app a file fails to close (its afterAll never ran, or its
 * beforeAll timed out while the app was still being made) would go on running beside the next files:
 * test/file-end.ts closes what is left when each file ends.
 */
const openApps = new Set<TestApp>();
/** Counts the files ended in this process: an app made for a file that has ended is closed at once. */
let filesEnded = 0;

/** Closes every app the file left open (test/file-end.ts, after each file's own hooks). */
export async function closeLeftoverApps(): Promise<void> {
  filesEnded++;
  const left = [...openApps];
  openApps.clear();
  for (const app of left) await app.close().catch(() => {});
}

/** A complete app (both listeners) on a fresh database. Call `close()` in afterAll. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const forFile = filesEnded;
  const app = await makeTestApp(options);
  if (filesEnded !== forFile) {
    await app.close();
    throw new Error('the test file ended before its app was ready');
  }
  openApps.add(app);
  return app;
}

async function makeTestApp(options: TestAppOptions): Promise<TestApp> {
  const fresh = options.db ? { ...options.db, drop: async () => {} } : await freshDatabase();
  // A second app on the same database gets its own pool, like a second process would; so does an app
  // that reaches the database another way (through a proxy) or with another deadline.
  const ownPool =
    fresh.url !== null && (options.db !== undefined || options.databaseUrl !== undefined || options.dbTimeoutMs !== undefined);
  const url = fresh.url && options.databaseUrl ? options.databaseUrl(fresh.url) : fresh.url;
  const db =
    ownPool && url
      ? await openDb({ databaseUrl: url, dataDir: '', poolSize: 5, timeoutMs: options.dbTimeoutMs ?? TEST_DB_TIMEOUT_MS })
      : fresh.db;
  if (db !== fresh.db && !options.db) await fresh.db.close();
  const appDb = options.wrapDb ? options.wrapDb(db) : db;
  // Each app gets its own Redis namespace (test files run in parallel on one Redis): a second "process"
  // on the same database is given the first one's by createSecondApp.
  const config = testConfig({
    REDIS_KEY_PREFIX: `test:${randomUUID()}`,
    ...(url ? { DATABASE_URL: url } : {}),
    ...options.env,
  });
  const ctx = await createContext(config, {
    db: appDb,
    clock: options.configuredClock ? undefined : new TestClock(),
    log: options.log,
    requestLog: options.requestLog,
  });
  if (!(ctx.clock instanceof TestClock)) throw new Error('test apps run with TEST_CLOCK=1');
  const clock = ctx.clock;
  const live = await buildApp(ctx, 'LIVE');
  const sandbox = await buildApp(ctx, 'SANDBOX');
  await live.ready();
  await sandbox.ready();
  let closed: Promise<void> | undefined;
  const app: TestApp = {
    ctx,
    clock,
    live,
    sandbox,
    // Once only: the file's afterAll and the leftover closing may both ask.
    close() {
      openApps.delete(app);
      closed ??= (async () => {
        await live.close();
        await sandbox.close();
        // The first app of a namespace removes its Redis keys (a second "process" shares them).
        if (ctx.redis && !options.db) await dropRedisNamespace(ctx.redis, config.redisKeyPrefix).catch(() => {});
        await ctx.close();
        await fresh.drop();
      })();
      return closed;
    },
  };
  return app;
}

/** Builds one more app on the database of `base`, as a second process would (multi-process tests). */
export async function createSecondApp(
  base: TestApp,
  env: Record<string, string | undefined> = {},
  options: Pick<TestAppOptions, 'dbTimeoutMs' | 'configuredClock' | 'log'> = {},
): Promise<TestApp> {
  if (base.ctx.db.kind !== 'server') throw new Error('a second process needs the PostgreSQL server mode');
  const url = base.ctx.config.databaseUrl;
  return createTestApp({
    ...options,
    db: { db: base.ctx.db, url },
    env: { REDIS_KEY_PREFIX: base.ctx.config.redisKeyPrefix, ...env },
  });
}
