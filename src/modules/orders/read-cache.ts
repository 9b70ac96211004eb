/**
 * Partner order reads served from memory while the orders they show have not changed.
 *
 * Partners poll: the same page and the same orders are asked for again and again between two changes.
 * Each process keeps the answers it gave (single orders, 404s included, and list pages) as UTF-8 JSON
 * bytes in a bounded cache (see "Eviction"), tagged with the VERSION of the order scope they were read under (a key's orders, or an
 * environment's for a receivesAllOrders key). An entry is served only while its scope's version is
 * still the tag; otherwise the read goes to the database and the entry is replaced.
 *
 * Versions are counters: one per key, one per environment, one for everything (bulk changes: batches).
 * Every change of orders announces itself after its COMMIT and before it answers (`changed`, called
 * by commitOrderChange in order-change.ts; a key rotation, which moves orders, calls it too), so a
 * client that saw its write acknowledged never reads the order as it was before.
 * - Embedded database (one process): the counters live in this object; reading them is free.
 * - PostgreSQL server with Redis (several processes): each process keeps its own counters, and every
 *   change is published on a Redis channel (`<prefix>:orders:changed`) that every process listens to:
 *   no partner read makes a Redis call for them. The writer moves its own counters and, before it
 *   answers, waits until every listening process has moved its own and said so (src/announcements.ts,
 *   100 ms at most), so the next read anywhere sees the change. A process serves its cache only
 *   while its subscription is confirmed and Redis answers; each (re)subscription starts a new epoch of
 *   versions, so nothing cached before a gap in which messages may have been missed is served after it.
 * - PostgreSQL server without Redis: processes could not tell each other, so nothing is cached.
 *
 * Eviction. Past its byte budget the cache drops the entries not read since they were stored or last
 * passed over, oldest first (second chance, an approximation of least recently used): a read only
 * marks its entry. Moving the entry to the end of the map on every read, as an exact LRU would, costs
 * V8 a compaction of the whole map every few reads when a few answers are read again and again in a
 * big cache (0.74 µs a hit with 2,400 answers cached, 5.3 µs with 20,000, against about 40 ns for a
 * flag: bench/read-cache-hits.ts, docs/performance.md, "Partner reads").
 *
 * Failure bounds. If announcing fails (Redis unreachable from this process after the COMMIT) this process
 * drops its own entries and tells every other process through PostgreSQL instead, which it has just
 * committed on: a NOTIFY on `pgChannel` (derived from the Redis key prefix) that every process LISTENs to
 * (db.listen) and takes as a change of everything. A process serves its cache only while that LISTEN is
 * established too; each (re)start of it begins a new epoch, as a resubscription does. What is left is a
 * writer that dies between its COMMIT and its announcement (or cannot send the NOTIFY either): no entry
 * is served after MAX_AGE_MS (60 s) whatever its tag, and a change written by hand in SQL is bounded the
 * same way (docs/scale.md, "Tenants").
 * While Redis is unreachable, or either subscription is down, reads go to the database (docs/decisions-log.md,
 * 'Dependency faults': never a stale answer during an outage). When Redis answers again (`recovered`) every process drops what it
 * cached before the outage, and a process that could not announce a change announces a change of
 * everything, so nothing cached anywhere before the outage is served after it.
 */

import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Queryable } from '../../db/db.js';
import type { DependencyHealth } from '../../dependencies.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import { type PartnerOrderScope, type RequestKey, scopeOf } from './visibility.js';

/** Bytes of answers kept per process (their UTF-8 JSON plus a little per entry). */
export const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;
/**
 * No entry is served past this age, even with a matching version: the bound of a writer that died
 * between its COMMIT and its announcement (see "Failure bounds").
 */
export const MAX_AGE_MS = 60_000;
/** A single answer bigger than this is not kept (it would evict many small ones). */
const MAX_ENTRY_BYTES = 1024 * 1024;

/** Where the announcements of the processes sharing a Redis key prefix reach each other. */
export type Subscription = 'redis' | 'postgres';

/**
 * The PostgreSQL channel a failed announcement falls back to: one per Redis key prefix (so deployments,
 * and test apps, sharing a server do not hear each other), a lower-case identifier well under 63 bytes.
 */
export function postgresChannelOf(prefix: string): string {
  return `orders_changed_${createHash('sha256').update(prefix).digest('hex').slice(0, 32)}`;
}

/** What changed, announced after COMMIT: some keys' orders of one environment, or anything at all. */
export type OrderChange = { environment: ApiKeyEnvironment; keyIds: ReadonlyArray<string | null> } | 'all';

interface Entry {
  version: string;
  /** The answer's JSON as UTF-8 bytes (encoded once, not per answer), or null for "not visible" (a 404). */
  value: Buffer | null;
  bytes: number;
  storedAt: number;
  /** Read since it was stored or last passed over by an eviction (see "Eviction"). */
  used: boolean;
}

export class PartnerOrderCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Local counters (embedded mode). */
  private readonly local = new Map<string, number>();
  private localAll = 0;
  /** A change could not be announced (Redis out): announce a change of everything once it is back. */
  private announcePending = false;
  /** The channel changes are published on (redis mode). */
  readonly channel: string;
  /** This cache's id in the messages it publishes (it has already applied its own changes). */
  private readonly instance = randomUUID();
  /** The PostgreSQL channel of failed announcements (redis mode; see "Failure bounds"). */
  readonly pgChannel: string;
  /** Redis mode: the subscriptions confirmed (set by subscribed / unsubscribed); both are needed. */
  private readonly listening = new Set<Subscription>();
  /** Redis mode: one per confirmed subscription (see the module comment). */
  private epoch = 0;
  private readonly health: DependencyHealth | null;
  readonly mode: 'local' | 'redis' | 'off';

  constructor(
    options:
      | { mode: 'local' }
      | { mode: 'off' }
      | {
          mode: 'redis';
          redis: Redis;
          prefix: string;
          /** The database changes are committed on: a failed announcement is sent there (NOTIFY). */
          db: Queryable;
          log: Logger;
          health?: DependencyHealth;
          /** Publishes on `channel` and waits for the listeners (announcements.ts); default: a bare PUBLISH. */
          announce?: (channel: string, message: string) => Promise<void>;
        },
    /** The service clock (entries' age; the test clock drives it in tests). */
    private readonly clock: { nowMs(): number },
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {
    this.mode = options.mode;
    this.channel = options.mode === 'redis' ? `${options.prefix}:orders:changed` : '';
    this.pgChannel = options.mode === 'redis' ? postgresChannelOf(options.prefix) : '';
    this.redis = options.mode === 'redis' ? options.redis : null;
    this.db = options.mode === 'redis' ? options.db : null;
    this.log = options.mode === 'redis' ? options.log : null;
    this.health = options.mode === 'redis' ? (options.health ?? null) : null;
    const redis = this.redis;
    this.announce =
      options.mode === 'redis' && options.announce
        ? options.announce
        : async (channel, message) => {
            await redis?.publish(channel, message);
          };
  }

  private readonly announce: (channel: string, message: string) => Promise<void>;

  private readonly redis: Redis | null;
  private readonly db: Queryable | null;
  private readonly log: Logger | null;

  /** versionOf for a partner request made with `key` on `environment`. */
  versionFor(key: RequestKey, environment: ApiKeyEnvironment): string | null {
    return this.versionOf(scopeOf(key, environment));
  }

  /** The scope's version for one request, from this process's counters. Null: do not use the cache. */
  versionOf(scope: PartnerOrderScope): string | null {
    if (this.mode === 'local') return `${this.localAll}.${this.local.get(scopeId(scope)) ?? 0}`;
    if (this.mode === 'redis' && this.listening.size === 2 && (this.health === null || this.health.available)) {
      return `${this.epoch}.${this.localAll}.${this.local.get(scopeId(scope)) ?? 0}`;
    }
    return null;
  }

  /**
   * Redis mode: the subscription to `channel` (redis) or the LISTEN on `pgChannel` (postgres) is
   * established (again): a new epoch begins.
   */
  subscribed(via: Subscription): void {
    this.clear();
    this.epoch++;
    this.listening.add(via);
  }

  /** Redis mode: a subscription is lost (messages may be missed until `subscribed`). */
  unsubscribed(via: Subscription): void {
    this.listening.delete(via);
    this.clear();
  }

  /** Redis mode: a message of `channel` (another process's change). */
  receive(message: string): void {
    const space = message.indexOf(' ');
    if (space < 0 || message.slice(0, space) === this.instance) return;
    this.bump(message.slice(space + 1).split(','));
  }

  /** Redis mode: a notification of `pgChannel`: another process could not announce a change. */
  receiveFailedAnnouncement(instance: string): void {
    if (instance !== this.instance) this.bump(['all']);
  }

  private bump(ids: readonly string[]): void {
    for (const id of ids) {
      if (id === 'all') this.localAll++;
      else this.local.set(id, (this.local.get(id) ?? 0) + 1);
    }
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
    entry.used = true;
    return entry.value;
  }

  /** Keeps a JSON text (or null: not visible) read under `version`; returns it as bytes to send. */
  set(key: string, version: string, text: string | null): Buffer | null {
    const value = text === null ? null : Buffer.from(text);
    const bytes = key.length + (value?.length ?? 0) + 64;
    if (bytes > MAX_ENTRY_BYTES) return value;
    const previous = this.entries.get(key);
    if (previous) this.remove(key, previous);
    this.entries.set(key, { version, value, bytes, storedAt: this.clock.nowMs(), used: false });
    this.bytes += bytes;
    if (this.bytes > this.maxBytes) this.evict(key);
    return value;
  }

  /**
   * Announces a committed change: cached reads of the scopes it touches are not served again. Awaited
   * by the writer before it answers. Never throws (the change is committed; see "Failure bounds").
   */
  async changed(change: OrderChange): Promise<void> {
    const ids = change === 'all' ? ['all'] : [`env:${change.environment}`, ...keyScopes(change.keyIds)];
    if (this.mode === 'off') return;
    this.bump(ids);
    if (this.mode !== 'redis' || !this.redis) return;
    try {
      await this.announce(this.channel, `${this.instance} ${ids.join(',')}`);
    } catch (err) {
      this.clear();
      this.announcePending = true;
      this.log?.debug({ err }, 'could not announce an order change through Redis; it will be when Redis is back');
      // Meanwhile the processes that still hear Redis hear PostgreSQL too (see "Failure bounds").
      try {
        await this.db?.query('SELECT pg_notify($1, $2)', [this.pgChannel, this.instance]);
      } catch (notifyErr) {
        this.log?.debug({ err: notifyErr }, 'could not announce an order change through PostgreSQL either');
      }
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

  /**
   * Oldest first: an entry read since it was stored or last passed over goes to the end, unmarked (its
   * second chance); one that was not is dropped, until the budget holds. `stored`, the entry just
   * stored, is not dropped to make room for itself. The loop ends: a Map's iteration reaches the
   * entries moved to its end, unmarked, and drops them if it must.
   */
  private evict(stored: string): void {
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) return;
      if (key === stored) continue;
      if (entry.used) {
        entry.used = false;
        this.entries.delete(key);
        this.entries.set(key, entry);
      } else this.remove(key, entry);
    }
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
