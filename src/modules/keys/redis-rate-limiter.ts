/**
 * The sliding-log rate limiter shared by every process through Redis: one atomic Lua script decides
 * (per key, a list of millisecond runs of admitted requests and their total; see SCRIPT), so two
 * processes can never both admit the last request of a window. The log is exact at millisecond
 * resolution: a request leaves the window exactly `window` ms after it was admitted.
 *
 * Requests are decided in batches (src/shared/batcher.ts): every hit that arrives in the same turn of the event loop, whatever
 * its key, goes to Redis in ONE script call; the hits of one key (several connections of a busy client)
 * are one group in it, admitted as far as the window has room, in arrival order. Under load this
 * divides the Redis round trips, socket writes and replies by the requests per turn, with no
 * approximation: the window is still shared and exact. A quiet process costs one call per request, a
 * setImmediate later.
 *
 * The script reads the time from its caller (the service clock), not Redis TIME, so the test clock
 * drives it like the in-process limiter. The same call also carries the key-cache generation check
 * (see KeyResolver).
 *
 * Slices: a busy key does not cost a round trip per request. When a key's hits go to Redis, the call
 * also asks for as many admissions as the key's rate of the last second would use over LEASE_MS (at
 * most LEASE_SHARE of its limit), counted in the shared window at once; this process then admits the
 * key's next requests from that slice, in memory and synchronously, for at most LEASE_MS (service
 * clock). So a key costs about one round trip per slice, whatever its rate: a process serving many
 * moderately busy keys (hundreds of tenants) does not wait on Redis for a large share of its requests
 * (docs/scale.md, "Tenants"). A quiet key (one request a second or fewer) or a key with a limit under
 * 2 / LEASE_SHARE takes slices of one: exactly a round trip per request. What this costs in
 * exactness, per key and process serving it: a request admitted from a slice is counted in the window
 * from the moment the slice was taken, up to LEASE_MS before it was made, so it may leave the window up
 * to LEASE_MS early; and admissions of a slice left unused when it lapses stay counted until the key's
 * next script call gives them back (found among the newest runs; a key that never calls again keeps
 * them counted until they leave the window). In any window a key is therefore admitted at most
 * limit + P × S requests and refused at most P × S requests early, with P the processes serving it
 * and S = max(1, ⌊limit × LEASE_SHARE⌋) (30 of the default 600 a minute). The shared window stays the
 * truth: every slice is taken from it by the same atomic script. docs/performance.md has the figures.
 *
 * If Redis is unreachable the limiter degrades to the in-process limiter (per-process windows) rather
 * than failing partner traffic, at once when the connection is known to be down and after 250 ms at
 * most otherwise (redis.ts); it returns to Redis on the next successful call. The outage is logged once,
 * by the Redis health (context.ts), not per call.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { type BatchEntry, Batcher } from '../../shared/batcher.js';
import type { RateLimiter, RateLimitOutcome } from './rate-limit.types.js';
import { MemoryRateLimiter } from './rate-limiter.js';

/** Every Redis key and channel this service uses starts with the configured prefix (REDIS_KEY_PREFIX). */
export const DEFAULT_REDIS_PREFIX = 'partner-api';
export const keyCacheGenerationKey = (prefix: string) => `${prefix}:keys:generation`;
/** Hits of one key decided together at most (a larger group is split; the parts stay in order). */
const MAX_BATCH = 500;
/** Keys decided by one script call at most (its KEYS grow by two and its ARGV by six per key). */
const MAX_GROUPS_PER_CALL = 200;
/**
 * Script calls under way at once. While one is answered, the hits that arrive meanwhile gather for the
 * next: under load a call carries several requests (one command, socket write and reply for all of
 * them; about 4 in the benchmark's reads), and a request waits at most for the call ahead of it, whose
 * deadline is that of every Redis command. Quiet, a call carries one request and waits for nothing.
 */
const MAX_CALLS_IN_FLIGHT = 1;
/** The largest slice of a key's limit one process may hold (see "Slices" above). */
export const LEASE_SHARE = 1 / 20;
/** How long a slice may be used after it was taken (service clock). */
export const LEASE_MS = 5_000;
/** The period a key's demand is counted over (its requests per DEMAND_MS size its next slice). */
const DEMAND_MS = 1_000;
/** Past this many keys with a slice or a demand count, those lapsed are dropped. */
const SWEEP_AT = 10_000;

// One call decides the hits of one turn of the event loop, for every key at once:
// KEYS[1] the shared key-cache generation, then two keys per group g (g = 0, 1, …):
//   KEYS[2+2g] the key's sliding log: a list of "<ms>:<n>" runs (n requests admitted at that
//              millisecond), oldest first, so a window holds at most one entry per millisecond whatever the rate
//   KEYS[3+2g] the number of requests in the log (kept beside it: no walk over the log to count)
// ARGV[1] now (ms, service clock)  ARGV[2] the number of groups, then six arguments per group:
//   ARGV[3+6g] window (ms)  ARGV[4+6g] limit  ARGV[5+6g] the caller's key-cache generation ('' skips the
//   check)  ARGV[6+6g] how many requests to decide  ARGV[7+6g], ARGV[8+6g] admissions of a lapsed slice
//   given back: the ms its run was stamped with and how many (0 0: none)
// Returns, per group, { admitted (-1: stale cache, nothing counted), requests in the window before them,
// ms of the oldest entry after them (string), ms of the entry whose departure makes room for the first
// refused one (string), generation }.
//
// The groups are decided one after the other, exactly as separate calls would be (a script runs
// atomically: no other client's command comes between them). Each group drops the runs that left the
// window from the head (amortised: about one per call under load), appends one run at the tail (or
// adds to it, same millisecond) and keeps the total: O(1) per group, and about 20 bytes per busy
// millisecond instead of a sorted-set member per request.
const SCRIPT = `
local generation = redis.call('GET', KEYS[1]) or '0'
local now = tonumber(ARGV[1])
local function run(entry)
  local sep = string.find(entry, ':', 1, true)
  return tonumber(string.sub(entry, 1, sep - 1)), tonumber(string.sub(entry, sep + 1))
end
local function decide(logKey, countKey, window, limit, cached, wanted, givenAt, given)
  if cached ~= '' and cached ~= generation then
    return {-1, 0, '0', '0', generation}
  end
  local count = tonumber(redis.call('GET', countKey) or '0')
  local head = redis.call('LINDEX', logKey, 0)
  while head do
    local at, n = run(head)
    if at > now - window then break end
    redis.call('LPOP', logKey)
    count = count - n
    head = redis.call('LINDEX', logKey, 0)
  end
  if not head then count = 0 end
  -- A lapsed slice's unused admissions leave its run (still in the window, near the tail: looked for
  -- among the newest 64 runs; not found, nothing is given back).
  local givenBack = 0
  if given > 0 and head then
    for i = -1, -64, -1 do
      local entry = redis.call('LINDEX', logKey, i)
      if not entry then break end
      local at, n = run(entry)
      if at < givenAt then break end
      if at == givenAt then
        givenBack = math.min(n, given)
        redis.call('LSET', logKey, i, at .. ':' .. (n - givenBack))
        count = count - givenBack
        break
      end
    end
  end
  local admitted = math.max(0, math.min(wanted, limit - count))
  if admitted > 0 then
    local tail = redis.call('LINDEX', logKey, -1)
    local stamp = now
    if tail then
      local at, n = run(tail)
      -- Never log backwards (the clock may step back a little): join the newest run instead.
      if at >= now then
        stamp = at
        redis.call('LSET', logKey, -1, at .. ':' .. (n + admitted))
      else
        redis.call('RPUSH', logKey, now .. ':' .. admitted)
      end
    else
      redis.call('RPUSH', logKey, now .. ':' .. admitted)
    end
    redis.call('SET', countKey, count + admitted, 'PX', window)
    redis.call('PEXPIRE', logKey, window)
    if not head then head = stamp .. ':' .. admitted end
  elseif not head then
    redis.call('DEL', countKey)
  elseif givenBack > 0 then
    redis.call('SET', countKey, count, 'KEEPTTL')
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
      local entry = redis.call('LINDEX', logKey, i)
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
  return {admitted, count, oldest, blocking, generation}
end
local replies = {}
for g = 0, tonumber(ARGV[2]) - 1 do
  local k = 2 + 2 * g
  local a = 3 + 6 * g
  replies[g + 1] = decide(KEYS[k], KEYS[k + 1], tonumber(ARGV[a]), tonumber(ARGV[a + 1]), ARGV[a + 2],
    tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]))
end
return replies
`;

type ScriptReply = [number, number, string, string, string];

interface WithScript {
  /** numberOfKeys, then the keys, then the arguments (see SCRIPT). */
  partnerApiRateLimitMany(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<ScriptReply[]>;
}

/** One hit waiting for a script call: its key and how it is decided. */
interface Hit {
  keyId: string;
  limit: number;
  windowMs: number;
  cacheGeneration: string;
}

type PendingHit = BatchEntry<Hit, RateLimitOutcome>;

/** Hits of one key with the same limit, window and key-cache generation, in arrival order. */
interface PendingGroup extends Hit {
  hits: PendingHit[];
  /** Admissions asked for beyond the hits, to be held as a slice (0: none). */
  spare: number;
  /** A lapsed slice's unused admissions given back by this call (null: none). */
  giveBack: GiveBack | null;
}

/** Unused admissions of a lapsed slice: the ms its run was stamped with, and how many. */
interface GiveBack {
  at: number;
  slots: number;
}

/** Admissions of a key held by this process, taken from the shared window (see "Slices" above). */
interface Lease {
  limit: number;
  windowMs: number;
  /** The key-cache generation the slice was taken under (hits of another one go to Redis). */
  generation: string;
  slots: number;
  takenAtMs: number;
  /** Requests in the shared window before the slice's call admitted anything. */
  before: number;
  /** Position of the next admission after `before` (for the remaining count). */
  next: number;
  /** The oldest entry of the window, as the slice's call saw it (ms). */
  oldestMs: number;
}

/** Hits of a key in the current period of LEASE_MS and in the one before. */
interface Demand {
  startMs: number;
  count: number;
  previous: number;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly client: WithScript;
  private readonly fallback: MemoryRateLimiter;
  /** A key change could not be announced (Redis out): announce it once Redis answers again. */
  private bumpPending = false;
  /** Every hit of a turn goes in one batch (usually one script call, see decideBatch). */
  private readonly batcher = new Batcher<Hit, RateLimitOutcome>({
    maxInFlight: MAX_CALLS_IN_FLIGHT,
    run: (hits) => this.decideBatch(hits),
  });
  private readonly generationKey: string;
  private readonly logKeyPrefix: string;
  private readonly leases = new Map<string, Lease>();
  /** Unused admissions of lapsed slices, given back with their key's next script call. */
  private readonly givingBack = new Map<string, GiveBack>();
  private readonly demand = new Map<string, Demand>();

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
    // (No numberOfKeys: each call says how many keys it passes.)
    redis.defineCommand('partnerApiRateLimitMany', { lua: SCRIPT });
    this.client = redis as unknown as WithScript;
    this.fallback = new MemoryRateLimiter(clock);
  }

  hit(keyId: string, limit: number, windowMs: number, cacheGeneration = ''): RateLimitOutcome | Promise<RateLimitOutcome> {
    const now = this.clock.nowMs();
    this.count(keyId, now);
    const lease = this.leases.get(keyId);
    if (lease) {
      if (
        lease.slots > 0 &&
        lease.limit === limit &&
        lease.windowMs === windowMs &&
        (cacheGeneration === '' || cacheGeneration === lease.generation) &&
        now >= lease.takenAtMs &&
        now - lease.takenAtMs < LEASE_MS
      ) {
        lease.slots--;
        const position = lease.next++;
        return {
          allowed: true,
          limit,
          remaining: Math.max(0, limit - lease.before - position - 1),
          resetSec: Math.max(0, Math.ceil((lease.oldestMs + windowMs - now) / 1000)),
          retryAfterSec: 0,
        };
      }
      this.leases.delete(keyId);
      if (lease.slots > 0) this.givingBack.set(keyId, { at: lease.takenAtMs, slots: lease.slots });
    }
    return this.batcher.add({ keyId, limit, windowMs, cacheGeneration });
  }

  /** Counts a hit of `keyId` in the current period (what sizes its next slice). */
  private count(keyId: string, now: number): void {
    let demand = this.demand.get(keyId);
    if (!demand) {
      if (this.demand.size >= SWEEP_AT) this.sweep(now);
      demand = { startMs: now, count: 0, previous: 0 };
      this.demand.set(keyId, demand);
    } else if (now - demand.startMs >= DEMAND_MS || now < demand.startMs) {
      demand.previous = now - demand.startMs < 2 * DEMAND_MS && now >= demand.startMs ? demand.count : 0;
      demand.startMs = now;
      demand.count = 0;
    }
    demand.count++;
  }

  /**
   * Admissions to ask for beyond `waiting` hits of a key: what its recent demand would use over a
   * slice's life, within its share. A key making fewer than two requests a second takes none.
   */
  private spareFor(keyId: string, limit: number, waiting: number): number {
    const most = Math.floor(limit * LEASE_SHARE);
    if (most < 2) return 0;
    const demand = this.demand.get(keyId);
    const recent = demand ? Math.max(demand.count, demand.previous) : 0;
    return recent < 2 ? 0 : Math.max(0, Math.min(most, recent * (LEASE_MS / DEMAND_MS)) - waiting);
  }

  private sweep(now: number): void {
    for (const [keyId, demand] of this.demand) if (now - demand.startMs >= 2 * DEMAND_MS) this.demand.delete(keyId);
    for (const [keyId, lease] of this.leases) if (now - lease.takenAtMs >= LEASE_MS) this.leases.delete(keyId);
    this.givingBack.clear();
  }

  /**
   * Every hit of this turn, whatever its key, grouped by key in arrival order and decided in as few
   * script calls as the limits allow (usually one).
   */
  private async decideBatch(batch: PendingHit[]): Promise<void> {
    const byId = new Map<string, PendingGroup>();
    for (const hit of batch) {
      const { keyId, limit, windowMs, cacheGeneration } = hit.item;
      const id = `${keyId}|${limit}|${windowMs}|${cacheGeneration}`;
      let group = byId.get(id);
      if (!group) {
        group = { keyId, limit, windowMs, cacheGeneration, hits: [], spare: 0, giveBack: null };
        byId.set(id, group);
      }
      group.hits.push(hit);
    }
    const groups: PendingGroup[] = [];
    for (const group of byId.values()) {
      // A slice for the key's next requests rides on its last group of this call, and what a lapsed
      // slice left unused on its first.
      group.spare = this.spareFor(group.keyId, group.limit, group.hits.length);
      group.giveBack = this.givingBack.get(group.keyId) ?? null;
      this.givingBack.delete(group.keyId);
      if (group.hits.length <= MAX_BATCH) groups.push(group);
      else {
        for (let from = 0; from < group.hits.length; from += MAX_BATCH) {
          const last = from + MAX_BATCH >= group.hits.length;
          groups.push({
            ...group,
            hits: group.hits.slice(from, from + MAX_BATCH),
            spare: last ? group.spare : 0,
            giveBack: from === 0 ? group.giveBack : null,
          });
        }
      }
    }
    const calls: Promise<void>[] = [];
    for (let from = 0; from < groups.length; from += MAX_GROUPS_PER_CALL) {
      calls.push(this.decide(groups.slice(from, from + MAX_GROUPS_PER_CALL)));
    }
    await Promise.all(calls);
  }

  /** Decides the groups with one script call; each group's hits in order. */
  private async decide(groups: PendingGroup[]): Promise<void> {
    const now = this.clock.nowMs();
    const keys: string[] = [this.generationKey];
    const args: Array<string | number> = [now, groups.length];
    for (const { keyId, limit, windowMs, cacheGeneration, hits, spare, giveBack } of groups) {
      const log = this.logKeyPrefix + keyId;
      keys.push(log, `${log}:count`);
      args.push(windowMs, limit, cacheGeneration, hits.length + spare, giveBack?.at ?? 0, giveBack?.slots ?? 0);
    }
    let replies: ScriptReply[];
    try {
      replies = await this.client.partnerApiRateLimitMany(keys.length, ...keys, ...args);
    } catch (err) {
      this.log.debug({ err }, 'Redis rate limiter unavailable; per-process limit used');
      for (const { keyId, limit, windowMs, hits } of groups) {
        for (const hit of hits) hit.resolve(this.fallback.decide(keyId, limit, windowMs));
      }
      return;
    }
    groups.forEach((group, g) => {
      const lease = settle(group, replies[g], now);
      if (lease) this.leases.set(group.keyId, lease);
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

/** Answers a group's hits from its part of the script's reply; returns the slice admitted beyond them. */
function settle(group: PendingGroup, reply: ScriptReply, now: number): Lease | null {
  const { limit, windowMs, hits } = group;
  const [admitted, before, oldest, blocking, generation] = reply;
  if (admitted === -1) {
    const stale = { stale: true as const, generation: String(generation) };
    for (const hit of hits) hit.resolve(stale);
    return null;
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
  if (admitted <= hits.length) return null;
  return {
    limit,
    windowMs,
    generation: group.cacheGeneration,
    slots: admitted - hits.length,
    takenAtMs: now,
    before,
    next: hits.length,
    oldestMs: Number(oldest),
  };
}
