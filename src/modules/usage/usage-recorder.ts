/**
 * Usage counters without a write per request: counts are aggregated in memory per key and UTC day and
 * written in one transaction every FLUSH_MS (and on shutdown). The same flush records `last_used_at`,
 * each key's at most once a minute unless a flush is asked for (LAST_USED_PRECISION_MS).
 *
 * Reads (`series`) must be cheap enough for GET /v1/partner/me, a hot path, and exact for everything
 * this process counted. A read combines three parts that never overlap:
 *  - a snapshot of the stored rows, cached per key for SNAPSHOT_TTL_MS and tagged with the flush epoch
 *    it was taken in (the epoch advances when a flush commits);
 *  - the batch a flush is writing right now (not in any snapshot of the current epoch yet);
 *  - the counts not flushed yet.
 * When a flush commits, its batch is added to the snapshots of the current epoch, which move on to the
 * next one: what this process wrote is then in them, and the rows of every other key did not change.
 * A snapshot is read again only when it expires, whatever the number of keys, and the keys whose
 * snapshots are wanted while a read waits for its turn are read together in that one statement: a
 * process serving 600 keys reads about as often as one serving three (docs/scale.md, "Tenants").
 * An expired snapshot (SNAPSHOT_TTL_MS) is still served, for at most SNAPSHOT_SERVE_MS after it was
 * read, while its new reading is under way in the background, so a key in use never waits for it; the
 * keys that come due within RENEWAL_GATHER_MS are renewed by one read.
 * Snapshots are only taken on the same queue as flushes, so none is ever read while a flush is half
 * done. Rows flushed by other processes show within SNAPSHOT_SERVE_MS of their flush (3.5 s; the
 * contract allows five for the usage routes, which read fresh).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { DAY_MS, dayOf, daysEnding } from '../../shared/days.js';
import { PeriodicFlusher } from '../../shared/periodic-flusher.js';
import { markKeysUsed } from '../keys/keys.repo.js';
import { addUsage, readUsageOfKeys, type UsageIncrement } from './usage.repo.js';
import type { DailyUsage, UsageRecorder } from './usage.types.js';

const FLUSH_MS = 1_000;
/** A snapshot older than this is read again, in the background while it may still be served. */
const SNAPSHOT_TTL_MS = 2_000;
/**
 * Snapshots due for renewal wait this long to be read together: one statement for every key that came
 * due meanwhile, rather than one per key as each comes due (600 keys renewed every 2 s were a few
 * hundred statements a second). Well within what SNAPSHOT_SERVE_MS leaves.
 */
const RENEWAL_GATHER_MS = 250;
/** A snapshot is served at most this long after it was read; past it, a read waits for a new one. */
const SNAPSHOT_SERVE_MS = 3_500;
const MAX_SNAPSHOTS = 10_000;
/**
 * A key's `last_used_at` is written by a periodic flush at most once per this long per process (the
 * first use after a quiet spell at once); a flush asked for (`flush()`: every route that answers a
 * DeveloperKey, and shutdown) writes every key's latest. So this process's uses show exactly where a
 * key is read, and another process's within a minute (docs/scale.md, "Tenants").
 */
const LAST_USED_PRECISION_MS = 60_000;
const MAX_LAST_USED = 10_000;
/** Counters are kept, and can be read, for this many UTC days ending today (docs/decisions-log.md, 'API keys'). */
export const USAGE_RETENTION_DAYS = 35;

/** How snapshots age: real time and the renewal window by default; a test sets its own. */
export interface SnapshotOptions {
  nowMs?: () => number;
  renewalGatherMs?: number;
}

interface Snapshot {
  epoch: number;
  /** When it was read (real time). */
  readAt: number;
  rows: Map<string, DailyUsage>;
}

const counterId = (keyId: string, day: string) => `${keyId}|${day}`;

export class BatchedUsageRecorder implements UsageRecorder {
  private pending = new Map<string, UsageIncrement>();
  /** The days `pending` has counters of (so that a read looks up only those days there). */
  private pendingDays = new Set<string>();
  /** The batch the running flush is writing, by counterId, and its days. */
  private inFlight: Map<string, UsageIncrement> | null = null;
  private inFlightDays: Set<string> | null = null;
  /** Advances each time a flush commits. */
  private epoch = 0;
  private readonly snapshots = new Map<string, Snapshot>();
  /** Keys whose snapshot is being read again in the background. */
  private readonly refreshing = new Set<string>();
  /** The renewals gathered for the next background read, and its timer (null: none gathered). */
  private renewals: { keys: Set<string>; timer: NodeJS.Timeout } | null = null;
  /** Flushes and snapshot reads run one after another on this queue (it never rejects). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Writes every FLUSH_MS (src/shared/periodic-flusher.ts: one at a time, outages logged once). */
  private readonly flusher: PeriodicFlusher;
  /** Each key's latest accepted use not written to `last_used_at` yet. */
  private readonly unwrittenUse = new Map<string, number>();
  /** When (the clock's time) this process last wrote each key's `last_used_at`. */
  private readonly lastUseWrittenAt = new Map<string, number>();
  /** The next flush writes every key's latest use (a flush was asked for, not a tick). */
  private exactWanted = false;
  /** Keys whose snapshots the next queued read takes, and that read (null: none queued yet). */
  private wanted: { keys: Set<string>; read: Promise<Map<string, Map<string, DailyUsage>>> } | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    log: Logger,
    private readonly snapshotOptions: SnapshotOptions = {},
  ) {
    // A failed flush keeps its counts for the next one.
    this.flusher = new PeriodicFlusher({
      what: 'usage',
      intervalMs: FLUSH_MS,
      log,
      flush: () => this.enqueue(() => this.flushOnce()),
    });
  }

  /** Real time for the snapshots' ages (cache freshness, not a business rule). */
  private realNowMs(): number {
    return this.snapshotOptions.nowMs?.() ?? Date.now();
  }

  start(): void {
    this.flusher.start();
  }

  record(keyId: string, statusCode: number, used: boolean): void {
    const now = this.clock.nowMs();
    const day = dayOf(Math.floor(now / DAY_MS));
    const id = counterId(keyId, day);
    let c = this.pending.get(id);
    if (!c) {
      c = { keyId, day, requests: 0, clientErrors: 0, serverErrors: 0, lastUsedMs: null };
      this.pending.set(id, c);
      this.pendingDays.add(day);
    }
    c.requests++;
    if (statusCode >= 400 && statusCode < 500) c.clientErrors++;
    else if (statusCode >= 500) c.serverErrors++;
    if (used && (c.lastUsedMs === null || now > c.lastUsedMs)) c.lastUsedMs = now;
  }

  series(keyId: string, days: number, options: { fresh?: boolean } = {}): DailyUsage[] | Promise<DailyUsage[]> {
    const snapshot = this.snapshots.get(keyId);
    const age = snapshot ? this.realNowMs() - snapshot.readAt : Number.POSITIVE_INFINITY;
    if (!options.fresh && snapshot && snapshot.epoch === this.epoch && age < SNAPSHOT_SERVE_MS) {
      // Past its lifetime it is still served while a new one is read for the key's next requests: a
      // busy key's /me never waits for the database (docs/scale.md, "Tenants").
      if (age >= SNAPSHOT_TTL_MS && !this.refreshing.has(keyId)) this.renewLater(keyId);
      return this.compose(keyId, snapshot.rows, days);
    }
    return this.readSnapshot(keyId).then((rows) => this.compose(keyId, rows, days));
  }

  /** Renews the key's snapshot in the background, read together with the others gathered meanwhile. */
  private renewLater(keyId: string): void {
    this.refreshing.add(keyId);
    if (this.renewals === null) {
      const keys = new Set<string>();
      const timer = setTimeout(() => {
        this.renewals = null;
        // All join one read (readSnapshot's `wanted`): one statement.
        for (const key of keys) {
          this.readSnapshot(key)
            .catch(() => {})
            .finally(() => this.refreshing.delete(key));
        }
      }, this.snapshotOptions.renewalGatherMs ?? RENEWAL_GATHER_MS);
      timer.unref();
      this.renewals = { keys, timer };
    }
    this.renewals.keys.add(keyId);
  }

  /** The key's stored rows, read with every other key wanted meanwhile, one read on the queue. */
  private async readSnapshot(keyId: string): Promise<Map<string, DailyUsage>> {
    if (this.wanted === null) {
      const keys = new Set<string>();
      const read = this.enqueue(async () => {
        // Keys wanted from now on wait for the next read: this one's list is closed.
        if (this.wanted?.keys === keys) this.wanted = null;
        const nowMs = this.clock.nowMs();
        const [from] = daysEnding(nowMs, USAGE_RETENTION_DAYS);
        const byKey = await readUsageOfKeys([...keys], from, dayOf(Math.floor(nowMs / DAY_MS)), this.db);
        if (this.snapshots.size + keys.size > MAX_SNAPSHOTS) this.snapshots.clear();
        // Real time, not the test clock: this is cache freshness, not a business rule.
        const readAt = this.realNowMs();
        const read = new Map<string, Map<string, DailyUsage>>();
        for (const [id, rows] of byKey) {
          const byDay = new Map(rows.map((r) => [r.day, r]));
          read.set(id, byDay);
          this.snapshots.set(id, { epoch: this.epoch, readAt, rows: byDay });
        }
        return read;
      });
      this.wanted = { keys, read };
      // A failed read fails its callers; the next caller starts another.
      read.catch(() => {
        if (this.wanted?.keys === keys) this.wanted = null;
      });
    }
    this.wanted.keys.add(keyId);
    return (await this.wanted.read).get(keyId) ?? new Map();
  }

  /** Writes what is counted, every key's latest use included. */
  flush(): Promise<void> {
    this.exactWanted = true;
    return this.flusher.flush();
  }

  /** Stops the timer after a final flush (the process is stopping); a failure is logged. */
  stop(): Promise<void> {
    if (this.renewals) clearTimeout(this.renewals.timer);
    this.renewals = null;
    this.refreshing.clear();
    this.exactWanted = true;
    return this.flusher.close();
  }

  private compose(keyId: string, stored: Map<string, DailyUsage>, days: number): DailyUsage[] {
    const inFlight = this.inFlight;
    const inFlightDays = this.inFlightDays;
    return daysEnding(this.clock.nowMs(), days).map((day) => {
      const out: DailyUsage = { day, requests: 0, clientErrors: 0, serverErrors: 0 };
      add(out, stored.get(day));
      // Unwritten counts exist for the days counted since the last flush only (today, as a rule).
      if (inFlight !== null && inFlightDays?.has(day)) add(out, inFlight.get(counterId(keyId, day)));
      if (this.pendingDays.has(day)) add(out, this.pending.get(counterId(keyId, day)));
      return out;
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {});
    return run;
  }

  private async flushOnce(): Promise<void> {
    const exact = this.exactWanted;
    this.exactWanted = false;
    if (this.pending.size === 0 && this.unwrittenUse.size === 0) return;
    const now = this.clock.nowMs();
    const batch = this.pending;
    const batchDays = this.pendingDays;
    this.pending = new Map();
    this.pendingDays = new Set();
    for (const c of batch.values()) {
      if (c.lastUsedMs !== null)
        this.unwrittenUse.set(c.keyId, latest(this.unwrittenUse.get(c.keyId) ?? null, c.lastUsedMs) as number);
    }
    const uses: Array<{ keyId: string; lastUsedMs: number }> = [];
    for (const [keyId, lastUsedMs] of this.unwrittenUse) {
      const writtenAt = this.lastUseWrittenAt.get(keyId);
      if (exact || writtenAt === undefined || now - writtenAt >= LAST_USED_PRECISION_MS) uses.push({ keyId, lastUsedMs });
    }
    if (batch.size === 0 && uses.length === 0) return;
    this.inFlight = batch;
    this.inFlightDays = batchDays;
    const sorted = [...batch.values()].sort((a, b) => (a.keyId === b.keyId ? cmp(a.day, b.day) : cmp(a.keyId, b.keyId)));
    try {
      await this.db.tx(async (q) => {
        await addUsage(sorted, q);
        await markKeysUsed(uses, q);
      });
      if (this.lastUseWrittenAt.size + uses.length > MAX_LAST_USED) this.lastUseWrittenAt.clear();
      for (const use of uses) {
        this.unwrittenUse.delete(use.keyId);
        this.lastUseWrittenAt.set(use.keyId, now);
      }
      // Committed: the batch is in the database now. Snapshots of this epoch take it in and move on to
      // the next (the stored rows of keys outside the batch did not change); older ones are stale.
      for (const snapshot of this.snapshots.values()) if (snapshot.epoch === this.epoch) snapshot.epoch = this.epoch + 1;
      for (const c of batch.values()) {
        const snapshot = this.snapshots.get(c.keyId);
        if (snapshot?.epoch !== this.epoch + 1) continue;
        const stored = snapshot.rows.get(c.day);
        snapshot.rows.set(c.day, {
          day: c.day,
          requests: (stored?.requests ?? 0) + c.requests,
          clientErrors: (stored?.clientErrors ?? 0) + c.clientErrors,
          serverErrors: (stored?.serverErrors ?? 0) + c.serverErrors,
        });
      }
      this.epoch++;
      this.inFlight = null;
      this.inFlightDays = null;
    } catch (err) {
      // Put the counts back so the next flush retries them: nothing is lost to a passing outage.
      for (const [id, c] of batch) {
        const existing = this.pending.get(id);
        if (existing) {
          existing.requests += c.requests;
          existing.clientErrors += c.clientErrors;
          existing.serverErrors += c.serverErrors;
          existing.lastUsedMs = latest(existing.lastUsedMs, c.lastUsedMs);
        } else {
          this.pending.set(id, c);
          this.pendingDays.add(c.day);
        }
      }
      this.inFlight = null;
      this.inFlightDays = null;
      throw err;
    }
  }
}

function add(out: DailyUsage, part: { requests: number; clientErrors: number; serverErrors: number } | undefined): void {
  if (part === undefined) return;
  out.requests += part.requests;
  out.clientErrors += part.clientErrors;
  out.serverErrors += part.serverErrors;
}

function latest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
