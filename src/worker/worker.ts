/**
 * The background worker: outbox fan-out, webhook delivery attempts, retention purges, and the
 * statistics of tables that grew (src/db/statistics.ts: plans that do not wait for autovacuum).
 *
 *   outbox ──fan-out──▶ webhook_deliveries (PENDING) ──claim + lease──▶ POST ──▶ DELIVERED / FAILED / DEAD
 *
 * Any number of workers (in one process or many) can run against one database: fan-out and claims use
 * FOR UPDATE SKIP LOCKED, results are fenced by lease tokens (the queue's SQL, one file per operation,
 * is src/modules/webhooks/queue/). Work starts
 * within milliseconds of being queued (in-process events, LISTEN/NOTIFY on a server) and a short poll
 * catches everything else (retries coming due, another process without NOTIFY, a lost connection).
 *
 * Dependency outages (docs/decisions-log.md, 'Dependency faults') stop nothing: a loop whose database work fails runs again on the
 * next wake-up or poll, the LISTEN connection comes back by itself (db.ts), an attempt whose outcome
 * cannot be written is settled once the database answers (attempt.ts), and Redis is never needed (only
 * the realtime channel uses it, and it falls back to this process). The outage is logged once, by the
 * database's health (context.ts); the loops log their own failures only when they are something else.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AppContext } from '../context.js';
import { isUnavailableError } from '../db/db-errors.js';
import { analyseGrownTables } from '../db/statistics.js';
import { sweepExpiredOffers } from '../modules/offers/offers.service.js';
import { attemptDelivery } from '../modules/webhooks/delivery/attempt.js';
import { EndpointLimits } from '../modules/webhooks/delivery/endpoint-limits.js';
import { OutcomeWriter } from '../modules/webhooks/delivery/outcome-writer.js';
import { createDeliveryAgent, type DeliveryAgentOptions } from '../modules/webhooks/delivery/ssrf-guard.js';
import { claimDueDeliveries } from '../modules/webhooks/queue/claim-due-deliveries.js';
import { readQueueStats } from '../modules/webhooks/queue/read-queue-stats.js';
import { RECOVERY_BATCH } from '../modules/webhooks/queue/recover-deliveries.js';
import { releaseClaim } from '../modules/webhooks/queue/release-leases.js';
import { fanOutBatch } from './fanout.js';
import { Pump } from './pump.js';
import { purgeExpired } from './purge.js';
import { feedRecoveries } from './recovery-feeder.js';
import { subscribeWakeups } from './wakeups.js';

export interface Worker {
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** Whole-attempt timeout (connect, headers, body). */
  attemptTimeoutMs: number;
  /** How long a claim holds a row; must exceed the attempt timeout so a live attempt never loses it. */
  leaseMs: number;
  /** Attempts in flight in this worker at most. */
  concurrency: number;
  /**
   * Attempts in flight per webhook, across all workers, where each endpoint starts; it grows while the
   * endpoint answers 2xx quickly and shrinks on timeouts, 5xx, 429 and network failures
   * (endpoint-limits.ts), up to `maxPerWebhookConcurrency`.
   */
  perWebhookConcurrency: number;
  /** The most an endpoint's adaptive cap may grow to (set it to perWebhookConcurrency for a fixed cap). */
  maxPerWebhookConcurrency: number;
  pollIntervalMs: number;
  fanoutBatchSize: number;
  purgeIntervalMs: number;
  /** How often due offers are recorded EXPIRED (docs/offers.md: within 5 s of their deadline). */
  offerSweepIntervalMs: number;
  /** How often tables that grew are looked for and analysed (src/db/statistics.ts). */
  statisticsIntervalMs: number;
  /** Deliveries of a recovery queued at a time, per webhook (queue/recover-deliveries.ts). */
  recoveryBatchSize: number;
  /** stop() waits this long for attempts in flight before cutting them short. */
  stopTimeoutMs: number;
  /** Replaces the system DNS resolver of the delivery agent (tests of the SSRF guard). */
  lookup?: DeliveryAgentOptions['lookup'];
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  attemptTimeoutMs: 10_000,
  leaseMs: 60_000,
  concurrency: 128,
  perWebhookConcurrency: 8,
  maxPerWebhookConcurrency: 64,
  pollIntervalMs: 400,
  fanoutBatchSize: 100,
  purgeIntervalMs: 15 * 60_000,
  offerSweepIntervalMs: 1_000,
  statisticsIntervalMs: 10_000,
  recoveryBatchSize: RECOVERY_BATCH,
  stopTimeoutMs: 5_000,
};

/** How long a freed slot may wait for others before it is refilled (see the wave refill below). */
const REFILL_DELAY_MS = 10;
/**
 * The worker's database deadline: no request waits on it, so a busy database gets longer than the
 * request deadline before the worker gives up on a statement (it still never hangs on a silent one).
 */
export const WORKER_DB_TIMEOUT_MS = 10_000;

export function startWorker(appCtx: AppContext, overrides: Partial<WorkerOptions> = {}): Worker {
  const options: WorkerOptions = { ...DEFAULT_WORKER_OPTIONS, ...overrides };
  if (options.leaseMs <= options.attemptTimeoutMs) {
    throw new RangeError('worker leaseMs must be longer than attemptTimeoutMs');
  }
  const ctx: AppContext = { ...appCtx, db: appCtx.db.withTimeout(WORKER_DB_TIMEOUT_MS) };
  const log = ctx.log.child({ component: 'worker' });
  // A database outage is logged once by its health; anything else a loop runs into is logged here.
  const failed = (what: string) => (err: unknown) => {
    if (isUnavailableError(err)) log.debug({ err }, `${what} (database unavailable)`);
    else log.warn({ err }, what);
  };
  const dispatcher = createDeliveryAgent({
    production: ctx.config.isProduction,
    connectTimeoutMs: options.attemptTimeoutMs,
    lookup: options.lookup,
  });
  // `closing`: no new claims or batches; `stopping`: attempts still running are cut short.
  let closing = false;
  const stopping = new AbortController();
  // Every attempt in flight listens for the stop (and stops listening when it ends): many at once is normal.
  setMaxListeners(0, stopping.signal);
  const inFlight = new Set<Promise<void>>();
  const outcomes = new OutcomeWriter(ctx.db);
  // The queue's gauges come from the processes that work it, read when scraped (metrics.ts).
  const untrackQueue = ctx.metrics?.trackQueue(() => readQueueStats(ctx.clock.nowMs(), ctx.db));
  const endpointLimits = new EndpointLimits(
    options.perWebhookConcurrency,
    Math.max(options.perWebhookConcurrency, options.maxPerWebhookConcurrency),
  );
  // The next claim skips the "anything due?" probe when something is likely due: the last claim found
  // work (`busy`), or since then this process's fan-out queued deliveries (`queuedHere`; they are due at
  // once). A probe would then only find what the claim is about to read. (A slot freed by an attempt
  // is no such sign: most refills during a burst find every due row already leased, and an empty claim
  // costs several times an empty probe.)
  let busy = false;
  let queuedHere = false;
  // Refill in waves: after a claim, the next one waits until half of what was then in flight has
  // finished, or REFILL_DELAY_MS has passed since the first of them finished (any other wake-up, the
  // poll included, still claims at once). One claim per completion costs a transaction per delivery;
  // a wave costs one per dozens, and the delay bounds what a slow endpoint's attempts can hold back.
  let inFlightAtClaim = 0;
  let doneSinceClaim = 0;
  let refillTimer: NodeJS.Timeout | null = null;
  const refill = () => {
    if (refillTimer) clearTimeout(refillTimer);
    refillTimer = null;
    deliveries.trigger();
  };

  // Claims whose transaction failed with the database unreachable: they may have committed (the
  // connection was lost around COMMIT), so their leases are given back once the database answers,
  // before anything else is claimed, instead of holding those rows for a whole lease with no attempt.
  const unsettledClaims = new Map<string, number>();

  const deliveries = new Pump(async () => {
    for (const [token, atMs] of unsettledClaims) {
      await releaseClaim(token, atMs, ctx.db);
      unsettledClaims.delete(token);
    }
    while (!closing) {
      const free = options.concurrency - inFlight.size;
      if (free <= 0) return;
      const nowMs = ctx.clock.nowMs();
      const leaseToken = randomUUID();
      const probe = !busy && !queuedHere;
      queuedHere = false;
      let claimed: Awaited<ReturnType<typeof claimDueDeliveries>>;
      try {
        claimed = await claimDueDeliveries(
          {
            nowMs,
            wallClockMs: Date.now(),
            leaseMs: options.leaseMs,
            limit: free,
            perWebhookLimit: options.perWebhookConcurrency,
            adjustedLimits: endpointLimits.adjusted(),
            probe,
            leaseToken,
          },
          ctx.db,
        );
      } catch (err) {
        if (isUnavailableError(err)) unsettledClaims.set(leaseToken, nowMs);
        throw err;
      }
      busy = claimed.length > 0;
      for (const c of claimed) {
        const attempt = attemptDelivery(
          { ctx, dispatcher, timeoutMs: options.attemptTimeoutMs, signal: stopping.signal, outcomes },
          c,
        )
          .then((signal) => {
            if (signal) endpointLimits.record(c.webhookId, signal);
          })
          .catch((err) => {
            // The lease expires and the delivery is attempted again, uncounted.
            if (isUnavailableError(err)) log.debug({ err, deliveryId: c.id }, 'delivery attempt cut short by the database');
            else log.error({ err, deliveryId: c.id }, 'delivery attempt failed unexpectedly');
          })
          .finally(() => {
            inFlight.delete(attempt);
            // A slot (and possibly the webhook's cap) is free again.
            doneSinceClaim++;
            if (doneSinceClaim * 2 >= inFlightAtClaim) refill();
            else refillTimer ??= setTimeout(refill, REFILL_DELAY_MS);
          });
        inFlight.add(attempt);
      }
      inFlightAtClaim = inFlight.size;
      doneSinceClaim = 0;
      if (claimed.length < free) {
        // The queue has room: a recovery in progress may feed it its next batch.
        if (recovering) recoveries.trigger();
        return;
      }
    }
  }, failed('claiming deliveries failed'));

  // Whether the last feed found recoveries in progress: then every claim that leaves room feeds them;
  // otherwise only the poll, a recovery started in this process, and the clock do.
  let recovering = false;
  const recoveries = new Pump(async () => {
    if (closing) return;
    const run = await feedRecoveries(ctx, options.recoveryBatchSize);
    recovering = run.active > 0;
  }, failed('feeding recoveries failed'));
  const onRecovery = () => {
    recovering = true;
    recoveries.trigger();
  };
  ctx.events.on('webhooks.recover', onRecovery);

  const fanout = new Pump(async () => {
    while (!closing) {
      const { processed, queued } = await fanOutBatch(ctx, options.fanoutBatchSize);
      if (queued > 0) {
        queuedHere = true;
        deliveries.trigger();
      }
      if (processed < options.fanoutBatchSize) return;
    }
  }, failed('outbox fan-out failed'));

  const purge = new Pump(async () => {
    const purged = await purgeExpired(ctx);
    if (purged.deliveries || purged.outbox) log.info(purged, 'purged expired webhook data');
  }, failed('retention purge failed'));

  // Offers past their deadline: one indexed statement per tick (src/modules/offers/offers.repo.ts).
  const offerSweep = new Pump(async () => {
    await sweepExpiredOffers(ctx);
  }, failed('offer expiry sweep failed'));
  // Background work: minutes of ANALYZE are fine, a request's deadline is not.
  const statisticsDb = ctx.db.withTimeout(120_000);
  const statistics = new Pump(async () => {
    const analysed = await analyseGrownTables(statisticsDb);
    if (analysed.length > 0) log.debug({ analysed }, 'analysed tables that grew');
  }, failed('analysing grown tables failed'));

  // This process's commits wake the fan-out in-process from now on, with no NOTIFY (src/shared/outbox.ts).
  const releaseOutbox = ctx.outbox.consumedHere();
  const unsubscribe = subscribeWakeups(ctx, {
    outbox: fanout.trigger,
    deliveries: deliveries.trigger,
    clock: () => {
      fanout.trigger();
      deliveries.trigger();
      recoveries.trigger();
      purge.trigger();
      offerSweep.trigger();
    },
  });
  const pollTimer = setInterval(() => {
    fanout.trigger();
    deliveries.trigger();
    recoveries.trigger();
  }, options.pollIntervalMs);
  pollTimer.unref();
  const purgeTimer = setInterval(purge.trigger, options.purgeIntervalMs);
  purgeTimer.unref();
  const offerSweepTimer = setInterval(offerSweep.trigger, options.offerSweepIntervalMs);
  offerSweepTimer.unref();
  const statisticsTimer = setInterval(statistics.trigger, options.statisticsIntervalMs);
  statisticsTimer.unref();
  fanout.trigger();
  deliveries.trigger();
  recoveries.trigger();
  purge.trigger();
  offerSweep.trigger();

  let stopped: Promise<void> | null = null;
  return {
    stop() {
      stopped ??= (async () => {
        closing = true;
        // Commits from now on wake other processes' workers again.
        releaseOutbox();
        untrackQueue?.();
        clearInterval(pollTimer);
        if (refillTimer) clearTimeout(refillTimer);
        clearInterval(purgeTimer);
        clearInterval(offerSweepTimer);
        clearInterval(statisticsTimer);
        await unsubscribe();
        ctx.events.off('webhooks.recover', onRecovery);
        // No new claims; finish what is running.
        await Promise.all([
          fanout.stop(),
          deliveries.stop(),
          recoveries.stop(),
          purge.stop(),
          statistics.stop(),
          offerSweep.stop(),
        ]);
        if (inFlight.size > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            Promise.allSettled([...inFlight]),
            new Promise((resolve) => {
              timer = setTimeout(resolve, options.stopTimeoutMs);
            }),
          ]);
          clearTimeout(timer);
        }
        // Whatever still runs is cut short; its lease is given back so another worker retries it.
        stopping.abort();
        await Promise.allSettled([...inFlight]);
        await dispatcher.close().catch(() => dispatcher.destroy());
      })();
      return stopped;
    },
  };
}
