/**
 * Sliding-log rate limiter, in process: a true sliding window (not fixed minute buckets). A request is
 * admitted while fewer than `limit` requests were admitted in the last `windowMs`; refused requests are
 * not logged, so a client that backs off for Retry-After seconds is admitted.
 *
 * Each key keeps the timestamps of its admitted requests in a ring buffer holding at most `limit`
 * entries, oldest first: expired entries are dropped from the head and a new one is appended at the
 * tail, so a decision is O(1) amortised whatever the limit (an array with splice would move up to
 * `limit` entries per request at high rates). Several processes share one window through Redis
 * instead (redis-rate-limiter.ts); create-rate-limiter.ts picks the right one.
 */
import type { Clock } from '../../clock.js';
import type { RateLimitDecision, RateLimiter } from './rate-limit.types.js';

const INITIAL_CAPACITY = 64;
/** Past this many tracked keys, logs with nothing left inside their window are dropped. */
const SWEEP_AT = 10_000;

interface Log {
  /** Admitted-at times (ms), a ring: `size` entries starting at `head`, oldest first. */
  times: Float64Array;
  head: number;
  size: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, Log>();
  private lastWindowMs = 60_000;

  constructor(private readonly clock: Clock) {}

  hit(keyId: string, limit: number, windowMs: number): RateLimitDecision {
    return this.decide(keyId, limit, windowMs);
  }

  /** The synchronous decision (the Redis limiter falls back to it while Redis is unreachable). */
  decide(keyId: string, limit: number, windowMs: number): RateLimitDecision {
    let log = this.logs.get(keyId);
    if (!log) {
      if (this.logs.size >= SWEEP_AT) this.sweep();
      log = { times: new Float64Array(Math.min(limit, INITIAL_CAPACITY)), head: 0, size: 0 };
      this.logs.set(keyId, log);
    }
    this.lastWindowMs = windowMs;
    const cap = log.times.length;
    const now = this.clock.nowMs();

    const cutoff = now - windowMs;
    while (log.size > 0 && log.times[log.head] <= cutoff) {
      log.head = (log.head + 1) % cap;
      log.size--;
    }
    // An operator may have lowered the limit: only the newest `limit` entries can matter now.
    while (log.size > limit) {
      log.head = (log.head + 1) % cap;
      log.size--;
    }

    if (log.size < limit) {
      if (log.size === log.times.length) grow(log, limit);
      const times = log.times;
      // Keep the log ordered even if the system clock steps back a little (NTP): never log an entry
      // before the newest one. Waits are still computed from the clock's own time, so they stay honest.
      const newest = log.size > 0 ? times[(log.head + log.size - 1) % times.length] : now;
      times[(log.head + log.size) % times.length] = Math.max(now, newest);
      log.size++;
      const oldest = times[log.head];
      return {
        allowed: true,
        limit,
        remaining: limit - log.size,
        resetSec: Math.max(0, Math.ceil((oldest + windowMs - now) / 1000)),
        retryAfterSec: 0,
      };
    }
    // Full: room appears when the oldest admitted request leaves the window.
    const wait = Math.max(1, Math.ceil((log.times[log.head] + windowMs - now) / 1000));
    return { allowed: false, limit, remaining: 0, resetSec: wait, retryAfterSec: wait };
  }

  private sweep(): void {
    const cutoff = this.clock.nowMs() - this.lastWindowMs;
    for (const [keyId, log] of this.logs) {
      const newest = log.size > 0 ? log.times[(log.head + log.size - 1) % log.times.length] : 0;
      if (newest <= cutoff) this.logs.delete(keyId);
    }
  }
}

/** Doubles the ring (up to `limit`), unrolling it so the oldest entry is at index 0. */
function grow(log: Log, limit: number): void {
  const old = log.times;
  const next = new Float64Array(Math.min(limit, Math.max(INITIAL_CAPACITY, old.length * 2)));
  for (let i = 0; i < log.size; i++) next[i] = old[(log.head + i) % old.length];
  log.times = next;
  log.head = 0;
}
