/**
 * Everything a process shares between its listeners and its worker: configuration, logger, database,
 * clock, secrets, Redis (optional) and the cross-cutting components of the partner hot path.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Announcer } from './announcements.js';
import { type Clock, SharedTestClock, SystemClock, TestClock } from './clock.js';
import { type Config, ConfigError } from './config.js';
import { type Db, openDb } from './db/db.js';
import { JoinPlans } from './db/join-plans.js';
import { migrate } from './db/migrate.js';
import { DependencyHealth, logOutages, reasonOf } from './dependencies.js';
import { type AppEventBus, createEventBus } from './events.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { createRateLimiter } from './modules/keys/create-rate-limiter.js';
import { KeyResolver } from './modules/keys/key-resolver.js';
import type { RateLimiter } from './modules/keys/rate-limit.types.js';
import { offerRealtime } from './modules/offers/offer-realtime.js';
import { VisibleOrderLoader } from './modules/orders/order-reads.repo.js';
import { orderRealtime } from './modules/orders/order-realtime.js';
import { PartnerEventWriter } from './modules/orders/partner-event-writer.js';
import { PartnerOrderCache } from './modules/orders/read-cache.js';
import { paymentRealtime } from './modules/payments/payment-realtime.js';
import { RealtimeHub } from './modules/realtime/realtime.hub.js';
import { CappedCounts } from './modules/request-log/request-log.service.js';
import { requestLogRealtime } from './modules/request-log/request-log-realtime.js';
import { type RequestLogOptions, RequestRecorder } from './modules/request-log/request-recorder.js';
import { PingTargetCache } from './modules/tracking/tracking.service.js';
import { TrackingBuffer } from './modules/tracking/tracking-buffer.js';
import { trackingRealtime } from './modules/tracking/tracking-realtime.js';
import { createUploadPacing, type UploadPacing } from './modules/uploads/byte-pacer.js';
import { UploadLimiter } from './modules/uploads/upload-limiter.js';
import type { UsageRecorder } from './modules/usage/usage.types.js';
import { BatchedUsageRecorder } from './modules/usage/usage-recorder.js';
import { webhookRealtime } from './modules/webhooks/webhook-realtime.js';
import { connectRedis, duplicateRedis } from './redis.js';
import { loadSecrets, type Secrets } from './secrets.js';
import { OutboxSignal } from './shared/outbox.js';
import { startTracing, type Tracing, traceDb, traceRedis } from './tracing/tracing.js';

export interface AppContext {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  secrets: Secrets;
  /** Present when REDIS_URL is set. */
  redis: Redis | null;
  /**
   * Whether Redis answers, as this process last saw it (always available without REDIS_URL). The
   * database's is `db.health`. Each outage of either is logged once when it starts and once when it ends.
   */
  redisHealth: DependencyHealth;
  keys: KeyResolver;
  rateLimiter: RateLimiter;
  usage: UsageRecorder;
  /** The request log's writer (src/modules/request-log/request-recorder.ts): batched, off the request path. */
  requestLog: RequestRecorder;
  /** Partner order reads kept between changes (src/modules/orders/read-cache.ts). */
  orderCache: PartnerOrderCache;
  /** Uploads in flight and bytes per partner, this process's (src/modules/uploads/upload-limiter.ts). */
  uploads: UploadLimiter;
  /** How fast this process reads upload bodies, admitted and refused (src/modules/uploads/byte-pacer.ts). */
  uploadPacing: UploadPacing;
  /** Single-order partner reads, coalesced (src/modules/orders/order-reads.repo.ts). */
  orderLoader: VisibleOrderLoader;
  /** The group-commit writer of partner events (src/modules/orders/partner-event-writer.ts). */
  partnerEvents: PartnerEventWriter;
  /** Whether status changes' statements may be prepared yet (src/db/join-plans.ts). */
  joinPlans: JoinPlans;
  /** Whether the status changes' statement that stores Idempotency-Key answers may be prepared yet (src/db/join-plans.ts). */
  answerPlans: JoinPlans;
  /** Whether an offer acceptance's statements may be prepared yet (src/db/join-plans.ts). */
  offerPlans: JoinPlans;
  /** Wakes the outbox consumers after a commit that wrote outbox rows (src/shared/outbox.ts). */
  outbox: OutboxSignal;
  /** The courier location buffer (src/modules/tracking/tracking-buffer.ts). */
  tracking: TrackingBuffer;
  /** Where pings were last found (src/modules/tracking/tracking.service.ts). */
  pingTargets: PingTargetCache;
  /** Request-log lists known to count past the cap (src/modules/request-log/request-log.service.ts). */
  cappedRequestCounts: CappedCounts;
  /** The realtime channel's hub (src/modules/realtime/realtime.hub.ts); listeners attach to it. */
  realtime: RealtimeHub;
  /**
   * In-process signals: `outbox` after a transaction that wrote outbox rows commits (wakes the
   * worker at once), `wake` after the test clock moves, and the domains' updates for the realtime hub.
   */
  events: AppEventBus;
  /** This process's Prometheus metrics (src/metrics/metrics.ts); null when METRICS_PORT is off. */
  metrics: Metrics | null;
  /** OpenTelemetry traces (src/tracing/tracing.ts); null unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing: Tracing | null;
  close(): Promise<void>;
}

export interface ContextOverrides {
  db?: Db;
  clock?: Clock;
  log?: Logger;
  /** Request log settings (tests: a tiny queue, no timer, a frozen live-tail window). */
  requestLog?: Partial<RequestLogOptions>;
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const redisHealth = new DependencyHealth('Redis');
  // Redis first: an unreachable REDIS_URL fails start-up at once, before the database is opened and
  // migrated (seconds on the embedded database).
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, log, redisHealth) : null;
  let db: Db;
  let tracing: Tracing | null;
  try {
    db = overrides.db ?? (await openConfiguredDb(config));
    // Off (the default), nothing of OpenTelemetry is loaded and nothing is wrapped.
    tracing = await startTracing(config);
  } catch (err) {
    redis?.disconnect();
    throw err;
  }
  if (tracing) {
    db = traceDb(db, tracing);
    if (redis) traceRedis(redis, tracing);
  }
  const closers: Array<() => Promise<unknown>> = [];
  if (redis) closers.push(() => redis.quit().catch(() => redis.disconnect()));
  const stopDbLog = logOutages(db.health, log);
  const stopRedisLog = logOutages(redisHealth, log);
  try {
    if (!overrides.db) await migrate(db);
    // One time for every process of a deployment on a server (docs/decisions-log.md, 'Dependency faults'); in process otherwise.
    let clock: Clock;
    if (overrides.clock) clock = overrides.clock;
    else if (config.testClock && db.kind === 'server') {
      const shared = await SharedTestClock.open(db, log);
      closers.push(() => shared.close());
      clock = shared;
    } else clock = config.testClock ? new TestClock() : new SystemClock();
    const secrets = await loadSecrets(config, db);
    const keys = new KeyResolver(db);
    const events = createEventBus();

    // Key and order changes reach every process through Redis, acknowledged (src/announcements.ts).
    const announcer = redis ? new Announcer(redis, config.redisKeyPrefix) : null;
    // One process owns an embedded database; on a server, processes can only agree through Redis.
    const orderCache = new PartnerOrderCache(
      db.kind === 'embedded'
        ? { mode: 'local' }
        : redis && announcer
          ? {
              mode: 'redis',
              redis,
              prefix: config.redisKeyPrefix,
              db,
              log,
              health: redisHealth,
              announce: (channel, message) => announcer.announce(channel, message),
            }
          : { mode: 'off' },
      clock,
    );
    if (redis && announcer) {
      const invalidations = `${config.redisKeyPrefix}:keys:invalidate`;
      announcer.on(invalidations, () => keys.invalidateLocal());
      if (orderCache.mode === 'redis') announcer.on(orderCache.channel, (payload) => orderCache.receive(payload));
      const channels = announcer.channels();
      const subscriber = duplicateRedis(redis, log, 'change-announcements', { subscriber: true });
      closers.push(() => subscriber.quit().catch(() => subscriber.disconnect()));
      subscriber.on('message', (channel, message) => announcer.message(channel, message));
      // Announcements missed while the subscription was down: whatever was cached before is dropped
      // once it is confirmed again (a subscribe answered: every later message reaches this process).
      const confirm = async () => {
        await subscriber.subscribe(...channels);
        keys.invalidateLocal();
        orderCache.subscribed('redis');
      };
      await confirm();
      subscriber.on('close', () => orderCache.unsubscribed('redis'));
      subscriber.on('ready', () => {
        void confirm().catch((err) => log.debug({ err }, 'could not subscribe to change announcements'));
      });
      if (orderCache.mode === 'redis') closers.push(await listenForFailedAnnouncements(db, orderCache));
      keys.setPublisher(() => announcer.announce(invalidations, '1'));
      // While Redis is out, no change can be announced: cached keys are re-read every 2 s instead.
      keys.setSharedInvalidation(redisHealth);
    }
    if (clock instanceof TestClock) clock.onAdvance(() => events.emit('wake'));

    const usage = new BatchedUsageRecorder(db, clock, log);
    usage.start();
    const requestLog = new RequestRecorder(db, clock, log, events, overrides.requestLog);
    const uploadPacing = createUploadPacing(config.uploads);
    requestLog.start();
    const metrics = config.metricsPort === null ? null : new Metrics();
    const untrack: Array<() => void> = [];
    if (metrics) {
      untrack.push(metrics.trackDependency(db.health));
      if (redis) untrack.push(metrics.trackDependency(redisHealth));
      metrics.trackRequestLog(requestLog);
    }
    const rateLimiter = createRateLimiter({ redis, prefix: config.redisKeyPrefix, clock, keys, log });
    // Back from an outage: what could not be announced meanwhile is announced now, and answers cached
    // before it are dropped (another process's change may not have been announced at all).
    const outbox = new OutboxSignal(db, events);
    const orderLoader = new VisibleOrderLoader(db);
    // Status changes (partner events' groups, the operator's) join orders and payment intents to the
    // changes given: prepared once those tables have grown (src/db/join-plans.ts).
    const joinPlans = new JoinPlans(db, ['orders', 'payment_intents']);
    // An offer's acceptance joins offers to orders: the same rule, on those two tables.
    const offerPlans = new JoinPlans(db, ['orders', 'offers']);
    // Events under Idempotency-Keys store their answers with the same statement, which joins the keys too.
    const answerPlans = new JoinPlans(db, ['orders', 'payment_intents', 'idempotency_keys']);
    const partnerEvents = new PartnerEventWriter({ db, clock, outbox, orderCache, joinPlans, answerPlans });
    const tracking = new TrackingBuffer({ db, clock, log, events, outbox });
    const pingTargets = new PingTargetCache();
    const cappedRequestCounts = new CappedCounts();
    // Each domain turns its own events into the channel's updates; the hub keeps rooms and audiences.
    const realtime = new RealtimeHub({ config, log, db, clock, secrets, redis, events, metrics }, [
      orderRealtime,
      paymentRealtime,
      offerRealtime,
      trackingRealtime,
      webhookRealtime,
      requestLogRealtime(requestLog),
    ]);
    const stopRecovery = redisHealth.onChange((change) => {
      if (!change.available) return;
      void orderCache.recovered();
      void rateLimiter.recovered?.();
    });

    return {
      config,
      log,
      db,
      clock,
      secrets,
      redis,
      redisHealth,
      keys,
      rateLimiter,
      usage,
      requestLog,
      orderCache,
      uploads: new UploadLimiter(config.uploads, () => clock.now().getTime()),
      uploadPacing,
      orderLoader,
      partnerEvents,
      joinPlans,
      answerPlans,
      offerPlans,
      outbox,
      tracking,
      pingTargets,
      cappedRequestCounts,
      realtime,
      events,
      metrics,
      tracing,
      // In order: nothing more is published, then what is held in memory is written (each writer logs
      // a failed final flush), then the connections go.
      async close() {
        for (const stop of untrack) stop();
        await realtime.close();
        uploadPacing.close();
        await tracking.close();
        await usage.stop();
        await requestLog.stop();
        // Closing is not an outage: stop reporting before the connections go.
        stopRecovery();
        stopRedisLog();
        stopDbLog();
        for (const close of closers.reverse()) await close();
        await db.close();
        await tracing?.shutdown().catch((err) => log.warn({ err }, 'traces could not be sent at shutdown'));
      },
    };
  } catch (err) {
    stopDbLog();
    stopRedisLog();
    for (const close of closers.reverse()) await close().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}

/**
 * Opens and reaches the configured database. A database that cannot be reached at start-up is a
 * configuration problem: the message names the variable behind it (docs/decisions-log.md, 'Processes and configuration'), not a stack.
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
 * The LISTEN on the channel a process that cannot reach Redis announces its order changes on
 * (src/modules/orders/read-cache.ts, "Failure bounds"). Start-up waits for the first attempt, so a
 * process serves cached reads from its first request; db.listen keeps it up after that.
 */
async function listenForFailedAnnouncements(db: Db, orderCache: PartnerOrderCache): Promise<() => Promise<void>> {
  let firstAttempt!: () => void;
  const attempted = new Promise<void>((resolve) => {
    firstAttempt = resolve;
  });
  const stop = db.listen(
    [orderCache.pgChannel],
    (_channel, instance) => orderCache.receiveFailedAnnouncement(instance),
    () => {
      orderCache.subscribed('postgres');
      firstAttempt();
    },
    () => {
      orderCache.unsubscribed('postgres');
      firstAttempt();
    },
  );
  await attempted;
  return stop;
}
