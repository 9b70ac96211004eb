/**
 * The sliding-log rate limiter shared by every process through Redis: one atomic Lua script decides
 * (a sorted set per key, scored by admission time), so two processes can never both admit the last
 * request of a window.
 *
 * Requests are decided in batches: the hits of one key that arrive in the same turn of the event loop
 * (several connections of a busy client) go to Redis as ONE script call that admits as many of them as
 * the window has room for, in arrival order. Under load this divides the Redis round trips, commands
 * and replies by the concurrency, with no approximation: the window is still shared and exact. A
 * quiet key costs one call per request, as before, a setImmediate later.
 *
 * The script reads the time from its caller (the service clock), not Redis TIME, so the test clock
 * drives it like the in-process limiter. The same call also carries the key-cache generation check
 * (see KeyResolver): a partner request costs at most one Redis round trip and no database one.
 *
 * If Redis is unreachable the limiter degrades to the in-process limiter (per-process windows, logged)
 * rather than failing partner traffic; it returns to Redis on the next successful call.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { RateLimiter, RateLimitOutcome } from './rate-limit.types.js';
import { MemoryRateLimiter } from './rate-limiter.js';

/** Every Redis key and channel this service uses starts with the configured prefix (REDIS_KEY_PREFIX). */
export const DEFAULT_REDIS_PREFIX = 'partner-api';
export const keyCacheGenerationKey = (prefix: string) => `${prefix}:keys:generation`;
/** Hits of one key decided by one script call at most (Lua's unpack has a stack limit). */
const MAX_BATCH = 500;

// KEYS[1] the key's sliding log (sorted set: score = admitted-at ms, member unique per request)
// KEYS[2] the shared key-cache generation
// ARGV[1] now (ms, service clock)  ARGV[2] window (ms)  ARGV[3] limit
// ARGV[4] the caller's key-cache generation ('' skips the check)  ARGV[5] a unique member prefix
// ARGV[6] how many requests to decide, in order
// Returns { admitted (-1: stale cache, nothing counted), entries in the window before them, score of
// the oldest entry after them (string), score of the entry whose departure makes room for the first
// refused one (string), generation }.
const SCRIPT = `
local generation = redis.call('GET', KEYS[2]) or '0'
if ARGV[4] ~= '' and ARGV[4] ~= generation then
  return {-1, 0, '0', '0', generation}
end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local wanted = tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = math.max(0, math.min(wanted, limit - count))
if admitted > 0 then
  local args = {}
  for i = 1, admitted do
    args[2 * i - 1] = now
    args[2 * i] = ARGV[5] .. ':' .. i
  end
  redis.call('ZADD', KEYS[1], unpack(args))
  redis.call('PEXPIRE', KEYS[1], window)
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local blocking = '0'
if admitted < wanted then
  local at = count + admitted - limit
  blocking = redis.call('ZRANGE', KEYS[1], at, at, 'WITHSCORES')[2]
end
return {admitted, count, oldest[2] or tostring(now), blocking, generation}
`;

type ScriptReply = [number, number, string, string, string];

interface WithScript {
  partnerApiRateLimit(
    log: string,
    generationKey: string,
    now: number,
    windowMs: number,
    limit: number,
    cacheGeneration: string,
    member: string,
    count: number,
  ): Promise<ScriptReply>;
}

interface PendingHit {
  keyId: string;
  limit: number;
  windowMs: number;
  cacheGeneration: string;
  resolve: (outcome: RateLimitOutcome) => void;
}

const WARN_EVERY_MS = 10_000;

export class RedisRateLimiter implements RateLimiter {
  private readonly client: WithScript;
  private readonly fallback: MemoryRateLimiter;
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;
  private lastWarnMs = 0;
  /** Hits waiting for the next batch, by key, limit, window and generation. */
  private pending = new Map<string, PendingHit[]>();
  private scheduled = false;
  private readonly generationKey: string;
  private readonly logKeyPrefix: string;

  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly log: Logger,
    prefix = DEFAULT_REDIS_PREFIX,
  ) {
    this.generationKey = keyCacheGenerationKey(prefix);
    this.logKeyPrefix = `${prefix}:ratelimit:`;
    // defineCommand sends EVALSHA and falls back to EVAL when Redis has not cached the script yet.
    redis.defineCommand('partnerApiRateLimit', { numberOfKeys: 2, lua: SCRIPT });
    this.client = redis as unknown as WithScript;
    this.fallback = new MemoryRateLimiter(clock);
  }

  hit(keyId: string, limit: number, windowMs: number, cacheGeneration = ''): Promise<RateLimitOutcome> {
    return new Promise((resolve) => {
      const group = `${keyId}|${limit}|${windowMs}|${cacheGeneration}`;
      let hits = this.pending.get(group);
      if (!hits) {
        hits = [];
        this.pending.set(group, hits);
      }
      hits.push({ keyId, limit, windowMs, cacheGeneration, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the poll phase: every request parsed in this turn of the loop joins the batch.
        setImmediate(() => this.decidePending());
      }
    });
  }

  private decidePending(): void {
    this.scheduled = false;
    const groups = this.pending;
    this.pending = new Map();
    for (const hits of groups.values()) {
      for (let from = 0; from < hits.length; from += MAX_BATCH) void this.decide(hits.slice(from, from + MAX_BATCH));
    }
  }

  /** Decides hits of one key (same limit, window and generation), in order, with one script call. */
  private async decide(hits: PendingHit[]): Promise<void> {
    const { keyId, limit, windowMs, cacheGeneration } = hits[0];
    const now = this.clock.nowMs();
    let reply: ScriptReply;
    try {
      reply = await this.client.partnerApiRateLimit(
        this.logKeyPrefix + keyId,
        this.generationKey,
        now,
        windowMs,
        limit,
        cacheGeneration,
        `${now}:${this.instance}:${this.seq++}`,
        hits.length,
      );
    } catch (err) {
      this.warn(err);
      for (const hit of hits) hit.resolve(this.fallback.decide(keyId, limit, windowMs));
      return;
    }
    const [admitted, before, oldest, blocking, generation] = reply;
    if (admitted === -1) {
      const stale = { stale: true as const, generation: String(generation) };
      for (const hit of hits) hit.resolve(stale);
      return;
    }
    const resetSec = Math.max(0, Math.ceil((Number(oldest) + windowMs - now) / 1000));
    const wait = Math.max(1, Math.ceil((Number(blocking) + windowMs - now) / 1000));
    hits.forEach((hit, i) => {
      hit.resolve(
        i < admitted
          ? { allowed: true, limit, remaining: Math.max(0, limit - before - i - 1), resetSec, retryAfterSec: 0 }
          : { allowed: false, limit, remaining: 0, resetSec: wait, retryAfterSec: wait },
      );
    });
  }

  /**
   * Announces a key change to every process's key cache (checked on each partner request). Never
   * throws: the change is already committed; if Redis is down, other processes fall back to their
   * cache lifetime and the pub/sub message.
   */
  async bumpKeyCacheGeneration(): Promise<void> {
    try {
      await this.redis.incr(this.generationKey);
    } catch (err) {
      this.log.error({ err }, 'could not announce a key change through Redis');
    }
  }

  private warn(err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnMs < WARN_EVERY_MS) return;
    this.lastWarnMs = now;
    this.log.warn({ err }, 'Redis rate limiter unavailable; using per-process limits until it answers');
  }
}
