/**
 * Everything a process shares between its listeners and its worker: configuration, logger, database,
 * clock, secrets, Redis (optional) and the cross-cutting components of the partner hot path.
 */
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type Clock, SystemClock, TestClock } from './clock.js';
import { type Config, ConfigError } from './config.js';
import { type Db, openDb } from './db/db.js';
import { migrate } from './db/migrate.js';
import { createLogger } from './logger.js';
import { createRateLimiter } from './modules/keys/create-rate-limiter.js';
import { KeyResolver } from './modules/keys/key-resolver.js';
import type { RateLimiter, UsageRecorder } from './modules/keys/rate-limit.types.js';
import { PartnerOrderCache } from './modules/orders/read-cache.js';
import { BatchedUsageRecorder } from './modules/usage/usage-recorder.js';
import { loadSecrets, type Secrets } from './secrets.js';

export interface AppContext {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  secrets: Secrets;
  /** Present when REDIS_URL is set. */
  redis: Redis | null;
  keys: KeyResolver;
  rateLimiter: RateLimiter;
  usage: UsageRecorder;
  /** Partner order reads kept between changes (src/modules/orders/read-cache.ts). */
  orderCache: PartnerOrderCache;
  /**
   * In-process signals: `outbox` after a transaction that wrote outbox rows commits (wakes the
   * worker at once), `wake` after the test clock moves.
   */
  events: EventEmitter;
  close(): Promise<void>;
}

export interface ContextOverrides {
  db?: Db;
  clock?: Clock;
  log?: Logger;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? (config.testClock ? new TestClock() : new SystemClock());
  const db = overrides.db ?? (await openConfiguredDb(config));
  const closers: Array<() => Promise<unknown>> = [];
  try {
    if (!overrides.db) await migrate(db);
    const secrets = await loadSecrets(config, db);
    const keys = new KeyResolver(db);
    const events = new EventEmitter();
    events.setMaxListeners(100);

    let redis: Redis | null = null;
    if (config.redisUrl) {
      redis = await connectRedis(config.redisUrl, log);
      const invalidations = `${config.redisKeyPrefix}:keys:invalidate`;
      const subscriber = redis.duplicate();
      logRedisOutages(subscriber, log, 'key-invalidations');
      await subscriber.subscribe(invalidations);
      subscriber.on('message', (channel) => {
        if (channel === invalidations) keys.invalidateLocal();
      });
      const publisher = redis;
      keys.setPublisher(() => void publisher.publish(invalidations, '1').catch(() => {}));
      closers.push(() => subscriber.quit().catch(() => subscriber.disconnect()));
      closers.push(() => publisher.quit().catch(() => publisher.disconnect()));
    }
    if (clock instanceof TestClock) clock.onAdvance(() => events.emit('wake'));

    const usage = new BatchedUsageRecorder(db, clock, log);
    usage.start();
    const rateLimiter = createRateLimiter({ redis, prefix: config.redisKeyPrefix, clock, keys, log });
    // One process owns an embedded database; on a server, processes can only agree through Redis.
    const orderCache = new PartnerOrderCache(
      db.kind === 'embedded'
        ? { mode: 'local' }
        : redis
          ? { mode: 'redis', redis, prefix: config.redisKeyPrefix, log }
          : { mode: 'off' },
      clock,
    );

    return {
      config,
      log,
      db,
      clock,
      secrets,
      redis,
      keys,
      rateLimiter,
      usage,
      orderCache,
      events,
      async close() {
        await usage.stop().catch((err) => log.error({ err }, 'final usage flush failed'));
        for (const close of closers.reverse()) await close();
        await db.close();
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}

/** The reason of a failure in one line: the driver's own error when a wrapper hides it. */
function reasonOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
}

/**
 * Opens and reaches the configured database. A database that cannot be reached at start-up is a
 * configuration problem: the message names the variable behind it (decisions §1), not a stack.
 */
async function openConfiguredDb(config: Config): Promise<Db> {
  const variable = config.databaseUrl ? 'DATABASE_URL' : 'DATA_DIR';
  let db: Db;
  try {
    db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  } catch (err) {
    throw new ConfigError(variable, `cannot open the database (${reasonOf(err)})`);
  }
  try {
    await db.query('SELECT 1');
  } catch (err) {
    await db.close().catch(() => {});
    throw new ConfigError(variable, `cannot reach the database (${reasonOf(err)})`);
  }
  return db;
}

/**
 * Connection errors of a Redis client (ioredis reconnects by itself) are logged once per outage, instead
 * of ioredis printing "Unhandled error event" for each. Every client needs it: duplicates included.
 */
export function logRedisOutages(client: Redis, log: Logger, name: string): void {
  let down = false;
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log.warn({ err: { message: err.message }, client: name }, 'Redis connection error; reconnecting');
  });
  client.on('ready', () => {
    down = false;
  });
}

/** Connects to Redis, or names REDIS_URL. */
async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: true });
  let firstError: Error | null = null;
  const remember = (err: Error) => {
    firstError ??= err;
  };
  redis.on('error', remember);
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    // connect() rejects with "Connection is closed."; the socket's own error says why.
    throw new ConfigError('REDIS_URL', `cannot connect to Redis (${reasonOf(firstError ?? err)})`);
  }
  redis.off('error', remember);
  logRedisOutages(redis, log, 'main');
  return redis;
}
