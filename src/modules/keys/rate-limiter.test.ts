import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { dropRedisNamespace } from '../../../test/redis-namespace.js';
import { TestClock } from '../../clock.js';
import { newId } from '../../shared/ids.js';
import { hashKey } from './key-format.js';
import { KeyResolver } from './key-resolver.js';
import { isStale, type RateLimitDecision, type RateLimitOutcome } from './rate-limit.types.js';
import { LEASE_MS, LEASE_SHARE, RedisRateLimiter } from './redis-rate-limiter.js';

const WINDOW = 60_000;
const silent = pino({ level: 'silent' });

function decided(outcome: RateLimitOutcome): RateLimitDecision {
  if (isStale(outcome)) throw new Error('unexpected stale answer');
  return outcome;
}

describe.skipIf(!process.env.REDIS_URL)('RedisRateLimiter', () => {
  let r1: Redis;
  let r2: Redis;
  const clock = new TestClock();
  beforeAll(() => {
    r1 = new Redis(process.env.REDIS_URL as string);
    r2 = new Redis(process.env.REDIS_URL as string);
  });
  afterAll(async () => {
    await r1.quit();
    await r2.quit();
  });

  it('shares one window between limiters on separate connections, with an honest Retry-After', async () => {
    const a = new RedisRateLimiter(r1, clock, silent);
    const b = new RedisRateLimiter(r2, clock, silent);
    const id = newId();
    expect(decided(await a.hit(id, 2, WINDOW))).toMatchObject({ allowed: true, remaining: 1, resetSec: 60 });
    clock.advance(10);
    expect(decided(await b.hit(id, 2, WINDOW))).toMatchObject({ allowed: true, remaining: 0, resetSec: 50 });
    const refused = decided(await a.hit(id, 2, WINDOW));
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSec: 50, resetSec: 50 });
    clock.advance(49);
    expect(decided(await b.hit(id, 2, WINDOW)).allowed).toBe(false);
    clock.advance(1);
    expect(decided(await b.hit(id, 2, WINDOW))).toMatchObject({ allowed: true, remaining: 0 });
    expect(await r1.pttl(`partner-api:ratelimit-runs:${id}`)).toBeGreaterThan(0);
    expect(await r1.pttl(`partner-api:ratelimit-runs:${id}:count`)).toBeGreaterThan(0);
  });

  it('decides the concurrent hits of one key in one call, in order, exactly as one by one', async () => {
    const a = new RedisRateLimiter(r1, clock, silent);
    const b = new RedisRateLimiter(r2, clock, silent);
    const id = newId();
    // Seven requests at once through two "processes" sharing a limit of five: exactly five pass.
    const outcomes = (
      await Promise.all([
        ...Array.from({ length: 4 }, () => a.hit(id, 5, WINDOW)),
        ...Array.from({ length: 3 }, () => b.hit(id, 5, WINDOW)),
      ])
    ).map(decided);
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(5);
    // Whichever batch Redis runs first, the five admitted requests saw 4, 3, 2, 1 and 0 remaining.
    expect(
      outcomes
        .filter((o) => o.allowed)
        .map((o) => o.remaining)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4]);
    // Within one process's batch the remaining counts go down in arrival order.
    const fromA = outcomes.slice(0, 4).filter((o) => o.allowed);
    expect(fromA.map((o) => o.remaining)).toEqual([...fromA.map((o) => o.remaining)].sort((x, y) => y - x));
    for (const refused of outcomes.filter((o) => !o.allowed)) {
      expect(refused).toMatchObject({ remaining: 0, retryAfterSec: 60, resetSec: 60 });
    }
    clock.advance(59);
    expect(decided(await a.hit(id, 5, WINDOW)).allowed).toBe(false);
    clock.advance(1);
    const again = (await Promise.all([a.hit(id, 5, WINDOW), a.hit(id, 5, WINDOW)])).map(decided);
    expect(again).toMatchObject([
      { allowed: true, remaining: 4 },
      { allowed: true, remaining: 3 },
    ]);
  });

  it('decides the hits of every key that arrive in one turn with one script call, each key as if alone', async () => {
    // A namespace of its own: no other limiter moves its key-cache generation meanwhile.
    const prefix = `test:${newId()}`;
    const a = new RedisRateLimiter(r1, clock, silent, prefix);
    const scripts: string[] = [];
    const send = r1.sendCommand.bind(r1);
    r1.sendCommand = (command, stream) => {
      scripts.push(command.name);
      return send(command, stream);
    };
    try {
      const [full, other, stale] = [newId(), newId(), newId()];
      await r2.incr(`${prefix}:keys:generation`);
      const generation = await r2.get(`${prefix}:keys:generation`);
      const outcomes = await Promise.all([
        a.hit(full, 1, WINDOW, generation ?? '0'),
        a.hit(other, 3, WINDOW),
        a.hit(full, 1, WINDOW, generation ?? '0'),
        a.hit(stale, 3, WINDOW, 'not-the-generation'),
      ]);
      expect(scripts.filter((name) => name === 'evalsha' || name === 'eval')).toHaveLength(1);
      expect(outcomes[0]).toMatchObject({ allowed: true, remaining: 0, resetSec: 60 });
      expect(outcomes[1]).toMatchObject({ allowed: true, remaining: 2, resetSec: 60 });
      expect(outcomes[2]).toMatchObject({ allowed: false, retryAfterSec: 60 });
      expect(outcomes[3]).toEqual({ stale: true, generation: generation ?? '0' });
      // Nothing was counted for the stale one.
      expect(await r2.exists(`${prefix}:ratelimit-runs:${stale}`)).toBe(0);
      await dropRedisNamespace(r2, prefix);
    } finally {
      r1.sendCommand = send;
    }
  });

  it('admits a busy key from a slice held in memory, within its share of the shared window', async () => {
    const limit = 100;
    const share = Math.floor(limit * LEASE_SHARE);
    const a = new RedisRateLimiter(r1, clock, silent);
    const b = new RedisRateLimiter(r2, clock, silent);
    const id = newId();
    // Two processes take turns until both are refused (the clock does not move: one window).
    let admitted = 0;
    let inMemory = 0;
    for (let i = 0; i < 2 * limit; i++) {
      const outcome = (i % 2 === 0 ? a : b).hit(id, limit, WINDOW);
      if (!(outcome instanceof Promise)) inMemory++;
      if (decided(await outcome).allowed) admitted++;
    }
    // Never more than the limit in a window; refused early at most by the slices the two hold.
    expect(admitted).toBeLessThanOrEqual(limit);
    expect(admitted).toBeGreaterThanOrEqual(limit - 2 * share);
    // Most decisions were made without a round trip.
    expect(inMemory).toBeGreaterThan(limit / 2);
    // A quiet key (one request, or a limit too small to slice) still goes to Redis every time.
    expect(a.hit(newId(), limit, WINDOW)).toBeInstanceOf(Promise);
    const small = newId();
    for (let i = 0; i < 5; i++) expect(a.hit(small, 2 / LEASE_SHARE - 1, WINDOW)).toBeInstanceOf(Promise);
  });

  it('gives back what a lapsed slice left unused: the window counts only the requests admitted', async () => {
    const a = new RedisRateLimiter(r1, clock, silent);
    const id = newId();
    const counted = async () => Number(await r1.get(`partner-api:ratelimit-runs:${id}:count`));
    // A busy second: the key takes a slice sized on its rate, and uses part of it.
    let inMemory = 0;
    for (let i = 0; i < 12; i++) {
      const outcome = a.hit(id, 600, WINDOW);
      if (!(outcome instanceof Promise)) inMemory++;
      expect(decided(await outcome).allowed).toBe(true);
    }
    expect(inMemory).toBeGreaterThan(0);
    // The window counts the slice whole, used or not.
    expect(await counted()).toBeGreaterThan(12);
    // The key goes quiet past the slice's life: its next request gives the rest back.
    clock.advance(LEASE_MS / 1000);
    expect(decided(await a.hit(id, 600, WINDOW))).toMatchObject({ allowed: true, remaining: 600 - 13 });
    expect(await counted()).toBe(13);
  });

  it('answers stale, without counting, when the key-cache generation has moved', async () => {
    const a = new RedisRateLimiter(r1, clock, silent);
    const id = newId();
    const first = await a.hit(id, 1, WINDOW, 'not-the-generation');
    expect(isStale(first)).toBe(true);
    const generation = isStale(first) ? first.generation : '';
    expect(decided(await a.hit(id, 1, WINDOW, generation)).allowed).toBe(true);
    await a.bumpKeyCacheGeneration();
    const after = await a.hit(id, 1, WINDOW, generation);
    expect(after).toEqual({ stale: true, generation: String(Number(generation) + 1) });
  });

  it('slides request by request over many runs, and applies a lowered limit at once', async () => {
    const a = new RedisRateLimiter(r1, clock, silent);
    const id = newId();
    // Six runs one second apart: 1, 2, 3 requests, then three single ones (9 of a limit of 9).
    const sizes = [1, 2, 3, 1, 1, 1];
    for (const size of sizes) {
      const batch = (await Promise.all(Array.from({ length: size }, () => a.hit(id, 9, WINDOW)))).map(decided);
      expect(batch.every((d) => d.allowed)).toBe(true);
      clock.advance(1);
    }
    // Now 6 s after the first run: full; room comes when the first run (1 request) leaves, in 54 s.
    expect(decided(await a.hit(id, 9, WINDOW))).toMatchObject({ allowed: false, retryAfterSec: 54 });
    // Lowered to 4: room comes when only 3 of the 9 remain, i.e. when the 6th oldest request leaves;
    // it is in the third run (admitted 2 s after the first), so 56 s from now.
    expect(decided(await a.hit(id, 4, WINDOW))).toMatchObject({ allowed: false, retryAfterSec: 56 });
    clock.advance(54);
    // The first run left: 8 in the window, one place under the limit of 9.
    expect(decided(await a.hit(id, 9, WINDOW))).toMatchObject({ allowed: true, remaining: 0, resetSec: 1 });
    clock.advance(60);
    expect(decided(await a.hit(id, 9, WINDOW))).toMatchObject({ allowed: true, remaining: 8, resetSec: 60 });
  });

  it('never logs backwards when the clock steps back', async () => {
    // Both callers' clocks stand still (the test clock flows with real time, which would move the first
    // run by a millisecond or two between reading `base` and the hit).
    const base = clock.nowMs();
    const frozenAt = (ms: number) => ({ nowMs: () => ms, now: () => new Date(ms) }) as TestClock;
    const a = new RedisRateLimiter(r1, frozenAt(base), silent);
    const id = newId();
    decided(await a.hit(id, 2, WINDOW));
    // A caller whose clock is a few seconds behind (another process, NTP): joins the newest run.
    const b = new RedisRateLimiter(r2, frozenAt(base - 5_000), silent);
    expect(decided(await b.hit(id, 2, WINDOW))).toMatchObject({ allowed: true, remaining: 0 });
    expect(await r1.lrange(`partner-api:ratelimit-runs:${id}`, 0, -1)).toEqual([`${base}:2`]);
  });

  it('falls back to per-process limits when Redis is unreachable', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    const limiter = new RedisRateLimiter(down, clock, silent);
    const id = newId();
    expect(decided(await limiter.hit(id, 1, WINDOW))).toMatchObject({ allowed: true });
    expect(decided(await limiter.hit(id, 1, WINDOW))).toMatchObject({ allowed: false });
    await limiter.bumpKeyCacheGeneration(); // logged, never thrown
    down.disconnect();
  });
});

// Two key caches on one database and one Redis, with no pub/sub at all: the generation check alone
// makes a revocation visible to the other cache on its next check.
describe.skipIf(!process.env.REDIS_URL)('key cache generation across processes', () => {
  let t: TestApp;
  let r1: Redis;
  let r2: Redis;
  beforeAll(async () => {
    t = await createTestApp();
    r1 = new Redis(process.env.REDIS_URL as string);
    r2 = new Redis(process.env.REDIS_URL as string);
  });
  afterAll(async () => {
    await r1.quit();
    await r2.quit();
    await t.close();
  });

  it('reloads a record cached in another process once the key has changed', async () => {
    const writer = new KeyResolver(t.ctx.db);
    const writerLimiter = new RedisRateLimiter(r1, t.clock, silent);
    writer.setGenerationBump(() => writerLimiter.bumpKeyCacheGeneration());
    const reader = new KeyResolver(t.ctx.db);
    const readerLimiter = new RedisRateLimiter(r2, t.clock, silent);

    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const hash = hashKey(key.key);

    // First contact: the reader learns the current generation and caches the key under it.
    let lookup = await reader.lookup(hash);
    let outcome = await readerLimiter.hit(key.id, 100, WINDOW, lookup.generation);
    expect(isStale(outcome)).toBe(true);
    if (isStale(outcome)) reader.adoptGeneration(outcome.generation);
    lookup = await reader.lookup(hash);
    expect(decided(await readerLimiter.hit(key.id, 100, WINDOW, lookup.generation)).allowed).toBe(true);
    expect(lookup.key?.revokedAtMs).toBeNull();

    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [key.id, t.clock.now()]);
    await writer.invalidateAll();

    // Still cached in the reader, but its next check in Redis says so (the next request once any slice of
    // the key's window it holds has lapsed), and the reload shows the revocation.
    lookup = await reader.lookup(hash);
    expect(lookup.key?.revokedAtMs).toBeNull();
    t.clock.advance(LEASE_MS / 1000);
    outcome = await readerLimiter.hit(key.id, 100, WINDOW, lookup.generation);
    expect(isStale(outcome)).toBe(true);
    if (isStale(outcome)) reader.adoptGeneration(outcome.generation);
    expect((await reader.lookup(hash)).key?.revokedAtMs).toBeTypeOf('number');
  });
});
