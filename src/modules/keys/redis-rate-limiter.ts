/**
 * The sliding-log rate limiter shared by every process through Redis: one atomic Lua script decides
 * (per key, a list of millisecond runs of admitted requests and their total; see SCRIPT), so two
 * processes can never both admit the last request of a window. The log is exact at millisecond
 * resolution: a request leaves the window exactly `window` ms after it was admitted.
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
 * If Redis is unreachable the limiter degrades to the in-process limiter (per-process windows) rather
 * than failing partner traffic, at once when the connection is known to be down and after 250 ms at
 * most otherwise (redis.ts); it returns to Redis on the next successful call. The outage is logged once,
 * by the Redis health (context.ts), not per call.
 */
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

// KEYS[1] the key's sliding log: a list of "<ms>:<n>" runs (n requests admitted at that millisecond),
//         oldest first, so a window holds at most one entry per millisecond whatever the rate
// KEYS[2] the number of requests in the log (kept beside it: no walk over the log to count)
// KEYS[3] the shared key-cache generation
// KEYS[4], KEYS[5] counters to read and report (the order-cache versions of read-cache.ts), or ''
// ARGV[1] now (ms, service clock)  ARGV[2] window (ms)  ARGV[3] limit
// ARGV[4] the caller's key-cache generation ('' skips the check)  ARGV[5] how many requests to decide
// Returns { admitted (-1: stale cache, nothing counted), requests in the window before them, ms of the
// oldest entry after them (string), ms of the entry whose departure makes room for the first refused
// one (string), generation, the watched counters ('<KEYS[4]>.<KEYS[5]>', '' when none) }.
//
// Each call drops the runs that left the window from the head (amortised: about one per call under
// load), appends one run at the tail (or adds to it, same millisecond) and keeps the total: O(1) per
// call, and about 20 bytes per busy millisecond instead of a sorted-set member per request.
const SCRIPT = `
local generation = redis.call('GET', KEYS[3]) or '0'
if ARGV[4] ~= '' and ARGV[4] ~= generation then
  return {-1, 0, '0', '0', generation, ''}
end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local wanted = tonumber(ARGV[5])
local function run(entry)
  local sep = string.find(entry, ':', 1, true)
  return tonumber(string.sub(entry, 1, sep - 1)), tonumber(string.sub(entry, sep + 1))
end
local count = tonumber(redis.call('GET', KEYS[2]) or '0')
local head = redis.call('LINDEX', KEYS[1], 0)
while head do
  local at, n = run(head)
  if at > now - window then break end
  redis.call('LPOP', KEYS[1])
  count = count - n
  head = redis.call('LINDEX', KEYS[1], 0)
end
if not head then count = 0 end
local admitted = math.max(0, math.min(wanted, limit - count))
if admitted > 0 then
  local tail = redis.call('LINDEX', KEYS[1], -1)
  local stamp = now
  if tail then
    local at, n = run(tail)
    -- Never log backwards (the clock may step back a little): join the newest run instead.
    if at >= now then
      stamp = at
      redis.call('LSET', KEYS[1], -1, at .. ':' .. (n + admitted))
    else
      redis.call('RPUSH', KEYS[1], now .. ':' .. admitted)
    end
  else
    redis.call('RPUSH', KEYS[1], now .. ':' .. admitted)
  end
  redis.call('SET', KEYS[2], count + admitted, 'PX', window)
  redis.call('PEXPIRE', KEYS[1], window)
  if not head then head = stamp .. ':' .. admitted end
elseif not head then
  redis.call('DEL', KEYS[2])
end
local oldest = tostring(now)
if head then oldest = tostring(run(head)) end
local blocking = '0'
if admitted < wanted then
  -- The first refused request gets in when the request at this position (oldest first) leaves.
  local position = count + admitted - limit
  local seen = 0
  local i = 0
  while true do
    local entry = redis.call('LINDEX', KEYS[1], i)
    if not entry then break end
    local at, n = run(entry)
    seen = seen + n
    if seen > position then
      blocking = tostring(at)
      break
    end
    i = i + 1
  end
end
local watched = ''
if KEYS[4] ~= '' then
  watched = (redis.call('GET', KEYS[4]) or '0') .. '.' .. (redis.call('GET', KEYS[5]) or '0')
end
return {admitted, count, oldest, blocking, generation, watched}
`;

type ScriptReply = [number, number, string, string, string, string];

interface WithScript {
  partnerApiRateLimit(
    log: string,
    logCount: string,
    generationKey: string,
    watchAll: string,
    watchScope: string,
    now: number,
    windowMs: number,
    limit: number,
    cacheGeneration: string,
    count: number,
  ): Promise<ScriptReply>;
}

interface PendingHit {
  keyId: string;
  limit: number;
  windowMs: number;
  cacheGeneration: string;
  watch: readonly [string, string] | undefined;
  resolve: (outcome: RateLimitOutcome) => void;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly client: WithScript;
  private readonly fallback: MemoryRateLimiter;
  /** A key change could not be announced (Redis out): announce it once Redis answers again. */
  private bumpPending = false;
  /** Hits waiting for the next batch, by key, limit, window, generation and watched keys. */
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
    // (A new name for the new structure: a sorted set left by an older version would answer WRONGTYPE.)
    this.logKeyPrefix = `${prefix}:ratelimit-runs:`;
    // defineCommand sends EVALSHA and falls back to EVAL when Redis has not cached the script yet.
    redis.defineCommand('partnerApiRateLimit', { numberOfKeys: 5, lua: SCRIPT });
    this.client = redis as unknown as WithScript;
    this.fallback = new MemoryRateLimiter(clock);
  }

  hit(
    keyId: string,
    limit: number,
    windowMs: number,
    cacheGeneration = '',
    watch?: readonly [string, string],
  ): Promise<RateLimitOutcome> {
    return new Promise((resolve) => {
      const group = `${keyId}|${limit}|${windowMs}|${cacheGeneration}|${watch ? watch[1] : ''}`;
      let hits = this.pending.get(group);
      if (!hits) {
        hits = [];
        this.pending.set(group, hits);
      }
      hits.push({ keyId, limit, windowMs, cacheGeneration, watch, resolve });
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

  /** Decides hits of one key (same limit, window, generation and watch), in order, with one script call. */
  private async decide(hits: PendingHit[]): Promise<void> {
    const { keyId, limit, windowMs, cacheGeneration, watch } = hits[0];
    const now = this.clock.nowMs();
    let reply: ScriptReply;
    try {
      reply = await this.client.partnerApiRateLimit(
        this.logKeyPrefix + keyId,
        `${this.logKeyPrefix + keyId}:count`,
        this.generationKey,
        watch ? watch[0] : '',
        watch ? watch[1] : '',
        now,
        windowMs,
        limit,
        cacheGeneration,
        hits.length,
      );
    } catch (err) {
      this.log.debug({ err }, 'Redis rate limiter unavailable; per-process limit used');
      for (const hit of hits) hit.resolve(this.fallback.decide(keyId, limit, windowMs));
      return;
    }
    const [admitted, before, oldest, blocking, generation, watchedReply] = reply;
    if (admitted === -1) {
      const stale = { stale: true as const, generation: String(generation) };
      for (const hit of hits) hit.resolve(stale);
      return;
    }
    const resetSec = Math.max(0, Math.ceil((Number(oldest) + windowMs - now) / 1000));
    const wait = Math.max(1, Math.ceil((Number(blocking) + windowMs - now) / 1000));
    const watched = watch ? String(watchedReply) : undefined;
    hits.forEach((hit, i) => {
      hit.resolve(
        i < admitted
          ? { allowed: true, limit, remaining: Math.max(0, limit - before - i - 1), resetSec, retryAfterSec: 0, watched }
          : { allowed: false, limit, remaining: 0, resetSec: wait, retryAfterSec: wait, watched },
      );
    });
  }

  /**
   * Announces a key change to every process's key cache (checked on each partner request). Never
   * throws: the change is already committed; if Redis is down, other processes fall back to their
   * short outage cache lifetime (key-resolver.ts), and the announcement is made when Redis is back.
   */
  async bumpKeyCacheGeneration(): Promise<void> {
    try {
      await this.redis.incr(this.generationKey);
      this.bumpPending = false;
    } catch (err) {
      this.bumpPending = true;
      this.log.debug({ err }, 'could not announce a key change through Redis; it will be when Redis is back');
    }
  }

  async recovered(): Promise<void> {
    if (this.bumpPending) await this.bumpKeyCacheGeneration();
  }
}
