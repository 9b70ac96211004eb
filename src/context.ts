/**
 * Everything a process shares between its listeners and its worker: configuration, logger, database,
 * clock, secrets, Redis (optional) and the cross-cutting components of the partner hot path.
 */
import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type Clock, SystemClock, TestClock } from './clock.js';
import type { Config } from './config.js';
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
  const db = overrides.db ?? (await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const closers: Array<() => Promise<unknown>> = [];
  try {
    if (!overrides.db) await migrate(db);
    const secrets = await loadSecrets(config, db);
    const keys = new KeyResolver(db);
    const events = new EventEmitter();
    events.setMaxListeners(100);

    let redis: Redis | null = null;
    if (config.redisUrl) {
      redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: true });
      await redis.connect();
      const invalidations = `${config.redisKeyPrefix}:keys:invalidate`;
      const subscriber = redis.duplicate();
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
