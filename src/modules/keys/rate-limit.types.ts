/**
 * What the partner authentication needs from a rate limiter (implementations: rate-limiter.ts for one
 * process, redis-rate-limiter.ts shared by every process). The usage recorder's are usage/usage.types.ts.
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
   * promise: the partner hook then completes synchronously).
   */
  hit(keyId: string, limit: number, windowMs: number, cacheGeneration?: string): RateLimitOutcome | Promise<RateLimitOutcome>;
  /** Redis answers again after an outage: announce what could not be announced meanwhile. */
  recovered?(): Promise<void>;
}

export function isStale(outcome: RateLimitOutcome): outcome is StaleKeyCache {
  return (outcome as StaleKeyCache).stale === true;
}
