/**
 * Partner order reads served from memory while the orders they show have not changed.
 *
 * Partners poll: the same page and the same orders are asked for again and again between two changes.
 * Each process keeps the answers it gave (single orders, 404s included, and list pages) as UTF-8 JSON
 * bytes in a bounded LRU, tagged with the VERSION of the order scope they were read under (a key's orders, or an
 * environment's for a receivesAllOrders key). An entry is served only while its scope's version is
 * still the tag; otherwise the read goes to the database and the entry is replaced.
 *
 * Versions are counters: one per key, one per environment, one for everything (bulk changes: batches).
 * Every change of orders announces itself after its COMMIT and before it answers (`changed`, called
 * by commitOrderChange in order-change.ts; a key rotation, which moves orders, calls it too), so a
 * client that saw its write acknowledged never reads the order as it was before.
 * - Embedded database (one process): the counters live in this object; reading them is free.
 * - PostgreSQL server with Redis (several processes): the counters are Redis keys. A read needs them
 *   fresh, and a partner request already makes one Redis call, the rate-limit script: the script reads
 *   the counters too (`watchKeys`), so the check costs no extra round trip. The announcement is an
 *   INCR of the counters, awaited before the writer answers.
 * - PostgreSQL server without Redis: processes could not tell each other, so nothing is cached.
 *
 * Failure bounds. If announcing fails (Redis unreachable after the COMMIT) this process drops its own
 * entries; another process could keep serving an entry tagged with the unchanged counter, so no entry
 * is served after MAX_AGE_MS whatever its tag. The same bound covers counters that Redis loses
 * (a restart without persistence, eviction) and so could count up to an old tag again. While the
 * limiter cannot reach Redis it reports no counters and reads go to the database (docs/decisions-log.md, 'Dependency faults': never
 * a stale answer during an outage). When Redis answers again (`recovered`) every process drops what it
 * cached before the outage, and a process that could not announce a change announces a change of
 * everything, so nothing cached anywhere before the outage is served after it.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import { type PartnerOrderScope, type RequestKey, scopeOf } from './visibility.js';

/** Bytes of answers kept per process (their UTF-8 JSON plus a little per entry). */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
/** No entry is served past this age, even with a matching version (see "Failure bounds"). */
export const MAX_AGE_MS = 10_000;
/** A single answer bigger than this is not kept (it would evict many small ones). */
const MAX_ENTRY_BYTES = 1024 * 1024;

/** What changed, announced after COMMIT: some keys' orders of one environment, or anything at all. */
export type OrderChange = { environment: ApiKeyEnvironment; keyIds: ReadonlyArray<string | null> } | 'all';

interface Entry {
  version: string;
  /** The answer's JSON as UTF-8 bytes (encoded once, not per answer), or null for "not visible" (a 404). */
  value: Buffer | null;
  bytes: number;
  storedAt: number;
}

export class PartnerOrderCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Local counters (embedded mode). */
  private readonly local = new Map<string, number>();
  private localAll = 0;
  /** A change could not be announced (Redis out): announce a change of everything once it is back. */
  private announcePending = false;
  private readonly redisPrefix: string;
  readonly mode: 'local' | 'redis' | 'off';

  constructor(
    options: { mode: 'local' } | { mode: 'off' } | { mode: 'redis'; redis: Redis; prefix: string; log: Logger },
    /** The service clock (entries' age; the test clock drives it in tests). */
    private readonly clock: { nowMs(): number },
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {
    this.mode = options.mode;
    this.redisPrefix = options.mode === 'redis' ? `${options.prefix}:orders:version:` : '';
    this.redis = options.mode === 'redis' ? options.redis : null;
    this.log = options.mode === 'redis' ? options.log : null;
  }

  private readonly redis: Redis | null;
  private readonly log: Logger | null;

  /** Redis keys the rate-limit script reads for a request on `scope` (redis mode only). */
  watchKeys(scope: PartnerOrderScope): readonly [string, string] | undefined {
    if (this.mode !== 'redis') return undefined;
    return [`${this.redisPrefix}all`, this.redisPrefix + scopeId(scope)];
  }

  /** watchKeys of a partner request made with `key` on `environment` (its scope: visibility.ts). */
  watchKeysFor(key: RequestKey, environment: ApiKeyEnvironment): readonly [string, string] | undefined {
    return this.mode === 'redis' ? this.watchKeys(scopeOf(key, environment)) : undefined;
  }

  /** versionOf for a partner request made with `key` on `environment`. */
  versionFor(key: RequestKey, environment: ApiKeyEnvironment, watched: string | undefined): string | null {
    return this.versionOf(scopeOf(key, environment), watched);
  }

  /**
   * The scope's version for one request: the counters the rate-limit script read (redis mode; absent
   * when the limiter fell back to per-process limits) or the local ones. Null: do not use the cache.
   */
  versionOf(scope: PartnerOrderScope, watched: string | undefined): string | null {
    if (this.mode === 'local') return `${this.localAll}.${this.local.get(scopeId(scope)) ?? 0}`;
    if (this.mode === 'redis') return watched ?? null;
    return null;
  }

  /**
   * The cached answer for `key` under `version`: the JSON bytes, null for a cached "not visible", or
   * undefined when there is none to serve (then read the database and `set`).
   */
  get(key: string, version: string): Buffer | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version !== version || this.clock.nowMs() - entry.storedAt > MAX_AGE_MS) {
      this.remove(key, entry);
      return undefined;
    }
    // Least recently used first: move the entry to the end of the map's order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps a JSON text (or null: not visible) read under `version`; returns it as bytes to send. */
  set(key: string, version: string, text: string | null): Buffer | null {
    const value = text === null ? null : Buffer.from(text);
    const bytes = key.length + (value?.length ?? 0) + 64;
    if (bytes > MAX_ENTRY_BYTES) return value;
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, { version, value, bytes, storedAt: this.clock.nowMs() });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest, entry);
    }
    return value;
  }

  /**
   * Announces a committed change: cached reads of the scopes it touches are not served again. Awaited
   * by the writer before it answers. Never throws (the change is committed; see "Failure bounds").
   */
  async changed(change: OrderChange): Promise<void> {
    const ids = change === 'all' ? ['all'] : [`env:${change.environment}`, ...keyScopes(change.keyIds)];
    if (this.mode === 'local') {
      if (change === 'all') this.localAll++;
      else for (const id of ids) this.local.set(id, (this.local.get(id) ?? 0) + 1);
      return;
    }
    if (this.mode !== 'redis' || !this.redis) return;
    try {
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.incr(this.redisPrefix + id);
      const results = await pipeline.exec();
      const failed = results?.find(([err]) => err !== null);
      if (failed) throw failed[0];
    } catch (err) {
      this.clear();
      this.announcePending = true;
      this.log?.debug({ err }, 'could not announce an order change through Redis; it will be when Redis is back');
    }
  }

  /** Redis answers again after an outage (see "Failure bounds"). Never throws. */
  async recovered(): Promise<void> {
    this.clear();
    if (this.mode !== 'redis' || !this.announcePending) return;
    this.announcePending = false;
    await this.changed('all');
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private remove(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

/** The counter behind a scope: its key's, or its environment's (receivesAllOrders). */
export function scopeId(scope: PartnerOrderScope): string {
  return scope.keyId === null ? `env:${scope.environment}` : `key:${scope.keyId}`;
}

function keyScopes(keyIds: ReadonlyArray<string | null>): string[] {
  const ids: string[] = [];
  for (const id of keyIds) if (id !== null && !ids.includes(`key:${id}`)) ids.push(`key:${id}`);
  return ids;
}
