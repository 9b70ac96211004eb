/**
 * The per-process sliding-window limiter on its own (the Redis limiter and the limits through the API:
 * rate-limiter.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { TestClock } from '../../clock.js';
import { newId } from '../../shared/ids.js';
import { isStale, type RateLimitDecision, type RateLimitOutcome } from './rate-limit.types.js';
import { MemoryRateLimiter } from './rate-limiter.js';

const WINDOW = 60_000;

function decided(outcome: RateLimitOutcome): RateLimitDecision {
  if (isStale(outcome)) throw new Error('unexpected stale answer');
  return outcome;
}

describe('MemoryRateLimiter', () => {
  it('admits exactly `limit` requests per window beyond its initial buffer, counting down remaining', async () => {
    const clock = new TestClock();
    const limiter = new MemoryRateLimiter(clock);
    const id = newId();
    for (let i = 1; i <= 150; i++) {
      const d = decided(await limiter.hit(id, 150, WINDOW));
      expect(d).toMatchObject({ allowed: true, remaining: 150 - i });
    }
    expect(decided(await limiter.hit(id, 150, WINDOW))).toMatchObject({ allowed: false, remaining: 0 });
    clock.advance(60);
    expect(decided(await limiter.hit(id, 150, WINDOW)).allowed).toBe(true);
  });

  it('applies a lowered limit at once and a raised one too', async () => {
    const clock = new TestClock();
    const limiter = new MemoryRateLimiter(clock);
    const id = newId();
    for (let i = 0; i < 5; i++) {
      decided(await limiter.hit(id, 5, WINDOW));
      clock.advance(10);
    }
    // t = 50: five requests at 0..40 in the window. With a limit of 2, room comes when the one at 30 leaves (t = 90).
    const lowered = decided(await limiter.hit(id, 2, WINDOW));
    expect(lowered).toMatchObject({ allowed: false, retryAfterSec: 40 });
    expect(decided(await limiter.hit(id, 10, WINDOW))).toMatchObject({ allowed: true, remaining: 7 });
  });

  it('never orders its log backwards when the clock steps back', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter({ nowMs: () => now, now: () => new Date(now) });
    const id = newId();
    decided(await limiter.hit(id, 2, WINDOW));
    now -= 5_000;
    decided(await limiter.hit(id, 2, WINDOW));
    const refused = decided(await limiter.hit(id, 2, WINDOW));
    expect(refused).toMatchObject({ allowed: false, retryAfterSec: 65 });
  });
});
