/**
 * The sliding-log rate limiter shared by every process through Redis: one atomic Lua script per
 * request (a sorted set per key, scored by admission time), so two processes can never both admit the
 * last request of a window.
 *
 * The script reads the time from its caller (the service clock), not Redis TIME, so the test clock
 * drives it like the in-process limiter. The same round trip also carries the key-cache generation
 * check (see KeyResolver): a partner request costs exactly one Redis round trip and no database one.
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

// KEYS[1] the key's sliding log (sorted set: score = admitted-at ms, member unique per request)
// KEYS[2] the shared key-cache generation
// ARGV[1] now (ms, service clock)  ARGV[2] window (ms)  ARGV[3] limit
// ARGV[4] the caller's key-cache generation ('' skips the check)  ARGV[5] a unique member
// Returns { status (1 admitted, 0 refused, -1 stale cache), remaining, score of the entry whose
// departure makes room (string), generation }.
const SCRIPT = `
local generation = redis.call('GET', KEYS[2]) or '0'
if ARGV[4] ~= '' and ARGV[4] ~= generation then
  return {-1, 0, '0', generation}
end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[1], window)
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {1, limit - count - 1, oldest[2], generation}
end
local blocking = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return {0, 0, blocking[2], generation}
`;

type ScriptReply = [number, number, string, string];

interface WithScript {
  partnerApiRateLimit(
    log: string,
    generationKey: string,
    now: number,
    windowMs: number,
    limit: number,
    cacheGeneration: string,
    member: string,
  ): Promise<ScriptReply>;
}

const WARN_EVERY_MS = 10_000;

export class RedisRateLimiter implements RateLimiter {
  private readonly client: WithScript;
  private readonly fallback: MemoryRateLimiter;
  private readonly instance = randomBytes(6).toString('base64url');
  private seq = 0;
  private lastWarnMs = 0;
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

  async hit(keyId: string, limit: number, windowMs: number, cacheGeneration = ''): Promise<RateLimitOutcome> {
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
      );
    } catch (err) {
      this.warn(err);
      return this.fallback.decide(keyId, limit, windowMs);
    }
    const [status, remaining, score, generation] = reply;
    if (status === -1) return { stale: true, generation: String(generation) };
    const waitSec = Math.ceil((Number(score) + windowMs - now) / 1000);
    if (status === 1) {
      return { allowed: true, limit, remaining, resetSec: Math.max(0, waitSec), retryAfterSec: 0 };
    }
    const wait = Math.max(1, waitSec);
    return { allowed: false, limit, remaining: 0, resetSec: wait, retryAfterSec: wait };
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
