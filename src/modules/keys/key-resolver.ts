/**
 * Resolves an `X-Api-Key` to its key record without a database round trip for keys seen recently.
 *
 * The cache is keyed by the SHA-256 of the key (the plaintext is never kept). Looking a hash up in a
 * Map (or a unique index) is not a secret comparison an attacker can time usefully: finding a hash
 * prefix tells nothing about a key. A hit stays valid for TTL_MS; every key change calls
 * `invalidateAll()`. Time rules (rotation grace) are evaluated per request against the clock, never
 * cached. Unknown hashes are cached briefly too, so a client spraying bad keys cannot turn each request
 * into a query; concurrent misses for one hash share one query.
 *
 * Across processes (Redis configured) a change must take effect on the very next request everywhere.
 * The change is announced (src/announcements.ts, wired in context.ts): every process drops its cached
 * records and acknowledges, and the change answers once all have (100 ms at most). As a safeguard for a
 * process that missed it, every change also increments a shared generation counter in Redis, and each
 * cache entry remembers the generation it was loaded under: the rate-limit script compares the two
 * whenever the key's requests go to Redis (every request of a quiet key; a busy one's at least every five
 * seconds, when it takes a new slice of its window); on a mismatch the request adopts the new
 * generation, reloads the key and is checked again (api-key-auth.ts).
 *
 * While Redis is unreachable neither can work (docs/decisions-log.md, 'Dependency faults'): no change is announced and no request is
 * checked against the generation. Cached records are then served for DEGRADED_TTL_MS at most after they
 * were read (whenever that was), and records read during the outage keep that short life after it, so a
 * revocation made anywhere reaches every process within about 2 s plus one database read. The process
 * that made a change it could not announce announces it once Redis is back (redis-rate-limiter.ts).
 */
import type { Db } from '../../db/db.js';
import type { DependencyHealth } from '../../dependencies.js';
import type { ResolvedKey } from './key.types.js';
import { findKeyByHash } from './keys.repo.js';

export interface KeyLookup {
  key: ResolvedKey | null;
  /** The shared generation the record was loaded under (see the module comment). */
  generation: string;
}

const TTL_MS = 60_000;
const NEGATIVE_TTL_MS = 5_000;
/** A record's life while cross-process announcements cannot work (Redis unreachable). */
export const DEGRADED_TTL_MS = 2_000;
const MAX_ENTRIES = 50_000;
/** Before the first shared check a process knows no generation, so its first check always reloads. */
const UNKNOWN_GENERATION = '?';

interface Entry extends KeyLookup {
  loadedAt: number;
  expiresAt: number;
}

export class KeyResolver {
  private readonly cache = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<KeyLookup>>();
  /** Bumped by every local invalidation: a load that straddles one is not cached. */
  private epoch = 0;
  private generation = UNKNOWN_GENERATION;
  private publish: (() => Promise<void>) | null = null;
  private bumpGeneration: (() => Promise<void>) | null = null;
  /** Redis's health when changes are announced through it (see the module comment). */
  private shared: DependencyHealth | null = null;

  constructor(private readonly db: Db) {}

  /**
   * Wires cross-process invalidation: `publish` announces and resolves once the other processes have
   * dropped their records (src/announcements.ts); `invalidateLocal` is called on announcements.
   */
  setPublisher(publish: () => Promise<void>): void {
    this.publish = publish;
  }

  /** Changes are announced through Redis, which `health` follows: while it is out, records live 2 s. */
  setSharedInvalidation(health: DependencyHealth): void {
    this.shared = health;
  }

  /** Wires the shared generation counter (Redis); see the module comment. */
  setGenerationBump(bump: () => Promise<void>): void {
    this.bumpGeneration = bump;
  }

  async resolve(hash: string): Promise<ResolvedKey | null> {
    return (await this.lookup(hash)).key;
  }

  /** The key record of `hash` and the shared generation it was loaded under. */
  lookup(hash: string): Promise<KeyLookup> | KeyLookup {
    // Real time, not the test clock: this is cache freshness, not a business rule.
    const hit = this.cache.get(hash);
    if (hit) {
      const now = Date.now();
      if (hit.expiresAt > now && (this.shared === null || this.shared.available || now - hit.loadedAt < DEGRADED_TTL_MS)) {
        return hit;
      }
    }
    const pending = this.loading.get(hash);
    if (pending) return pending;
    const load = this.load(hash);
    this.loading.set(hash, load);
    return load;
  }

  /**
   * Called when the shared generation is not the one a record was loaded under: forget everything
   * loaded before it, so the next lookup reads the database again.
   */
  adoptGeneration(generation: string): void {
    if (generation === this.generation) return;
    this.invalidateLocal();
    this.generation = generation;
  }

  /**
   * Forget everything here and in every other process (after create, revoke, rotate, admin changes).
   * Resolves once the change is announced; await it before answering so that the next request, in
   * any process, sees the change.
   */
  async invalidateAll(): Promise<void> {
    this.invalidateLocal();
    try {
      await this.bumpGeneration?.();
    } finally {
      await this.publish?.().catch(() => {});
    }
  }

  invalidateLocal(): void {
    this.epoch++;
    this.cache.clear();
    this.loading.clear();
  }

  private async load(hash: string): Promise<KeyLookup> {
    const epoch = this.epoch;
    const generation = this.generation;
    try {
      const key = await this.query(hash);
      const now = Date.now();
      const degraded = this.shared !== null && !this.shared.available;
      const ttl = degraded ? DEGRADED_TTL_MS : key ? TTL_MS : NEGATIVE_TTL_MS;
      const lookup: Entry = { key, generation, loadedAt: now, expiresAt: now + ttl };
      // A load that started before an invalidation may have read the old row: serve it to the requests
      // that were already waiting (they began before the change), but do not keep it.
      if (epoch === this.epoch) {
        if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
        this.cache.set(hash, lookup);
      }
      return lookup;
    } finally {
      if (epoch === this.epoch) this.loading.delete(hash);
    }
  }

  private query(hash: string): Promise<ResolvedKey | null> {
    return findKeyByHash(hash, this.db);
  }
}
