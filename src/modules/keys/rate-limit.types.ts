/**
 * What the partner authentication needs from a rate limiter (implementations: rate-limiter.ts for one
 * process, redis-rate-limiter.ts shared by every process) and from the usage recorder.
 */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window after this one. */
  remaining: number;
  /**
   * Seconds until the window gains room again: when the oldest request still inside the window leaves
   * it (the `t` of the RateLimit header). For a refused request it equals `retryAfterSec`.
   */
  resetSec: number;
  /** For a refused request: whole seconds after which a retry is admitted (honest, rounded up). */
  retryAfterSec: number;
  /**
   * The values of the `watch` keys, read by the same atomic call (Redis limiter only; absent when it
   * fell back to per-process limits): the order-cache versions of read-cache.ts.
   */
  watched?: string;
}

/**
 * The limiter did not count the request because the caller's cached key record may be stale: the
 * shared key-cache generation (bumped after every key change, in any process) is not the one the
 * record was loaded under. The caller reloads the key, re-checks it and asks again.
 */
export interface StaleKeyCache {
  stale: true;
  /** The current shared generation, to adopt before reloading. */
  generation: string;
}

export type RateLimitOutcome = RateLimitDecision | StaleKeyCache;

export interface RateLimiter {
  /**
   * Counts one request for `keyId` against `limit` per `windowMs` and decides it. A limiter shared by
   * several processes also checks `cacheGeneration` in the same round trip (see StaleKeyCache); an
   * in-process limiter ignores it and never answers stale. An in-process limiter answers at once (no
   * promise: the partner hook then completes synchronously). A shared limiter also reads the Redis keys
   * of `watch` in the same call and reports their values as `watched`; an in-process one ignores them.
   */
  hit(
    keyId: string,
    limit: number,
    windowMs: number,
    cacheGeneration?: string,
    watch?: readonly [string, string],
  ): RateLimitOutcome | Promise<RateLimitOutcome>;
  /** Redis answers again after an outage: announce what could not be announced meanwhile. */
  recovered?(): Promise<void>;
}

export function isStale(outcome: RateLimitOutcome): outcome is StaleKeyCache {
  return (outcome as StaleKeyCache).stale === true;
}

/** Counters of one key for one UTC day. */
export interface DailyUsage {
  /** UTC calendar day, `YYYY-MM-DD`. */
  day: string;
  requests: number;
  /** 4xx answers, 429 included. */
  clientErrors: number;
  /** 5xx answers. */
  serverErrors: number;
}

/** Per-key per-UTC-day request counters, aggregated in memory and flushed in batches. */
export interface UsageRecorder {
  /**
   * Counts one partner request made with `keyId`, whatever its outcome. `used`: the key was accepted
   * (not revoked, of this listener's environment); only such a request moves the key's `lastUsedAt`.
   */
  record(keyId: string, statusCode: number, used: boolean): void;
  /**
   * The last `days` UTC days of `keyId` (zero-filled, oldest first, ending today by the clock).
   * Exact for everything this process recorded (flushed rows plus counts not yet flushed); rows other
   * processes flushed show within a second. `fresh` skips the short snapshot cache.
   * Answers at once (no promise) when a fresh snapshot is at hand.
   */
  series(keyId: string, days: number, options?: { fresh?: boolean }): DailyUsage[] | Promise<DailyUsage[]>;
  /** Writes everything aggregated so far. */
  flush(): Promise<void>;
  /** Stops the periodic flush after a final flush. */
  stop(): Promise<void>;
}
