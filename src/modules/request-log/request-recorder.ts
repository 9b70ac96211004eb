/**
 * The request log's writer (docs/decisions-log.md, 'Request log'): the capture plugin hands each entry to `add`, which only
 * pushes it on an in-memory queue (no database round trip, no promise on the request path); a timer
 * writes the queue every FLUSH_MS with ONE statement per batch (a COPY on a server, a multi-row INSERT
 * on the embedded database: request-log.repo.ts), or at once when the queue holds a whole batch
 * (`maxBatch`) and no write runs, and `stop` writes whatever is left when the process stops. A request is visible in
 * the log within about a second (the contract allows five).
 *
 * Overload. The queue has two bounds:
 *  - `maxQueued` entries: past it, successful reads (GET/HEAD answered < 400) are left out of the log
 *    and counted; errors and writes are still queued (they are what a partner debugs).
 *  - `maxQueuedBytes`: past it nothing more is queued, errors and writes included; that only happens
 *    when the database has been unreachable for a long while (docs/decisions-log.md, 'Dependency faults': keep or drop with a count,
 *    never crash, never block). Both kinds of loss are counted per partner and minute, written with
 *    the next batch (request_log_minutes), and shown by GET /v1/developer/requests/drops.
 *
 * Database faults. A batch that could not be written because the database is unreachable goes back to
 * the front of the queue and is retried on the next tick; nothing waits for it. A batch the database
 * refuses for any other reason is dropped (counted, logged) rather than retried forever behind every
 * later entry.
 *
 * Partitions. Rows go to the partition of their UTC day (migration 0016). Before a batch holding a day
 * this process has not written yet, that day's partition and the next day's are created (the next
 * day's ahead of time, so that midnight does not wait for the parent table's lock).
 *
 * Live tail. Each queued entry of a partner with a user on the realtime channel (the audience the
 * realtime hub gives, setLiveAudience) is also offered to it (`request.logged`): at most
 * `liveTailPerSecond` per partner in any one-second span (a sliding window, not clock seconds) from this
 * process; the rest are counted as not streamed, per minute, beside the drops. Nobody watching: nothing is built, sent or counted.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { isUnavailableError } from '../../db/db-errors.js';
import type { AppEventBus } from '../../events.js';
import { dayOf } from '../../shared/days.js';
import { PeriodicFlusher } from '../../shared/periodic-flusher.js';
import { addMinuteCounts, ensureDayPartitions, insertEntries, type MinuteCounts } from './request-log.repo.js';
import { type RequestLogEntry, type RequestLogged, summaryOf } from './request-log.types.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** PostgreSQL's "no partition of relation found for row": a day's partition went (purge) after we saw it. */
const NO_PARTITION = '23514';
/**
 * Errors after which a batch is kept and tried again: the database unreachable, a partition missing (made
 * again next time), a lock not granted in time (creating a partition behind a long read), a deadlock.
 */
const RETRIED = new Set([NO_PARTITION, '55P03', '40P01', '40001']);

function sqlState(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

export interface RequestLogOptions {
  /** Successful reads are left out of the log while this many entries wait. */
  maxQueued: number;
  /** Nothing more is queued while the waiting entries hold this many bytes (a long outage). */
  maxQueuedBytes: number;
  flushIntervalMs: number;
  /** Entries per INSERT. */
  maxBatch: number;
  /** `request.logged` messages per partner per second, from this process. */
  liveTailPerSecond: number;
  /** The live tail's one-second windows read this clock (real time: a rate, not a business rule). */
  liveNowMs: () => number;
  /** Write on a timer (tests leave it off and call `flush`). */
  autoFlush: boolean;
}

export const DEFAULT_REQUEST_LOG_OPTIONS: RequestLogOptions = {
  maxQueued: 20_000,
  maxQueuedBytes: 64 * 1024 * 1024,
  flushIntervalMs: 500,
  maxBatch: 5_000,
  liveTailPerSecond: 50,
  liveNowMs: Date.now,
  autoFlush: true,
};

/** About what an entry holds in memory (UTF-16 text plus the object); only used for the byte bound. */
function sizeOf(e: RequestLogEntry): number {
  const text =
    e.path.length +
    (e.query?.length ?? 0) +
    (e.userAgent?.length ?? 0) +
    (e.idempotencyKey?.length ?? 0) +
    (e.requestBody?.length ?? 0) +
    (e.responseBody?.length ?? 0);
  return 400 + 2 * text;
}

function isSuccessfulRead(e: RequestLogEntry): boolean {
  return e.statusCode < 400 && (e.method === 'GET' || e.method === 'HEAD');
}

export class RequestRecorder {
  private queue: RequestLogEntry[] = [];
  private queuedBytes = 0;
  /** Drops and unsent live entries not written yet, by `partnerId|minuteMs`. */
  private counts = new Map<string, MinuteCounts>();
  /** UTC day numbers whose partition this process has made sure of. */
  private readonly knownDays = new Set<number>();
  /** Writes every `flushIntervalMs` (src/shared/periodic-flusher.ts: one at a time, outages logged once). */
  private readonly flusher: PeriodicFlusher;
  private audience: ((partnerId: string) => boolean) | null = null;
  private liveSecond = -1;
  /** Entries left out since this recorder started (the metrics' request_log_dropped_total). */
  droppedTotal = 0;
  /** Per partner: the times of its last `liveTailPerSecond` live messages (a ring), and the latest. */
  private readonly liveSent = new Map<string, { times: Float64Array; next: number; latestMs: number }>();
  readonly options: RequestLogOptions;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    log: Logger,
    private readonly events: Pick<AppEventBus, 'emit'>,
    options: Partial<RequestLogOptions> = {},
  ) {
    this.options = { ...DEFAULT_REQUEST_LOG_OPTIONS, ...options };
    this.flusher = new PeriodicFlusher({
      what: 'request log',
      intervalMs: this.options.flushIntervalMs,
      log,
      flush: () => this.drain(),
    });
  }

  start(): void {
    if (this.options.autoFlush) this.flusher.start();
  }

  /** Queues one entry (or counts it as dropped, see the top of the file). Never waits, never throws. */
  add(entry: RequestLogEntry): void {
    const size = sizeOf(entry);
    if (
      (this.queue.length >= this.options.maxQueued && isSuccessfulRead(entry)) ||
      this.queuedBytes + size > this.options.maxQueuedBytes
    ) {
      this.count(entry.partnerId, 'dropped');
      return;
    }
    this.queue.push(entry);
    this.queuedBytes += size;
    // A full batch is written at once rather than at the next tick: under load the queue then stays near
    // one batch, far from `maxQueued` (at 30,000 requests a second a tick's half second would hold 15,000).
    if (this.queue.length % this.options.maxBatch === 0) this.flusher.soon();
    this.offerLive(entry);
  }

  /**
   * Who the live tail is for (the realtime hub's partners with a connected user). Returns the way to
   * take it back (which leaves another hub's audience in place).
   */
  setLiveAudience(audience: (partnerId: string) => boolean): () => void {
    this.audience = audience;
    return () => {
      if (this.audience === audience) this.audience = null;
    };
  }

  /** Entries waiting to be written. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Writes everything queued when it starts, one INSERT per batch of `maxBatch`; rejects (keeping the
   * entries) when the database cannot be reached. One flush at a time: a call during a flush waits for
   * it and then writes what arrived meanwhile.
   */
  flush(): Promise<void> {
    return this.flusher.flush();
  }

  /** Stops the timer after writing everything that waits (the process is stopping); a failure is logged. */
  stop(): Promise<void> {
    return this.flusher.close();
  }

  private async drain(): Promise<void> {
    // What was queued when the flush began, in batches; what arrives meanwhile waits for the next
    // tick (writing until the queue is empty would, under load, become a stream of tiny INSERTs).
    for (let left = this.queue.length; left > 0; left -= this.options.maxBatch) {
      await this.writeBatch(Math.min(left, this.options.maxBatch));
    }
    await this.writeCounts();
  }

  private async writeBatch(size: number): Promise<void> {
    let batch: RequestLogEntry[];
    if (this.queue.length <= size) {
      batch = this.queue;
      this.queue = [];
    } else batch = this.queue.splice(0, size);
    try {
      await this.ensurePartitions(batch);
      await insertEntries(batch, this.db);
    } catch (err) {
      if (sqlState(err) === NO_PARTITION) this.knownDays.clear();
      if (isUnavailableError(err) || RETRIED.has(sqlState(err) ?? '')) {
        // Kept, in order, for the next flush.
        this.queue = batch.concat(this.queue);
        throw err;
      }
      this.release(batch);
      for (const e of batch) this.count(e.partnerId, 'dropped');
      throw err;
    }
    this.release(batch);
  }

  private release(batch: RequestLogEntry[]): void {
    for (const e of batch) this.queuedBytes -= sizeOf(e);
  }

  private async ensurePartitions(batch: RequestLogEntry[]): Promise<void> {
    const missing = new Set<number>();
    for (const e of batch) {
      const day = Math.floor(e.createdMs / DAY_MS);
      if (!this.knownDays.has(day)) missing.add(day).add(day + 1);
    }
    if (missing.size === 0) return;
    await ensureDayPartitions([...missing].map(dayOf), this.db);
    for (const day of missing) this.knownDays.add(day);
  }

  private async writeCounts(): Promise<void> {
    if (this.counts.size === 0) return;
    const counts = this.counts;
    this.counts = new Map();
    try {
      await addMinuteCounts([...counts.values()], this.db);
    } catch (err) {
      for (const [id, c] of counts) {
        const now = this.counts.get(id);
        if (now) {
          now.dropped += c.dropped;
          now.notStreamed += c.notStreamed;
        } else this.counts.set(id, c);
      }
      throw err;
    }
  }

  private count(partnerId: string, what: 'dropped' | 'notStreamed'): void {
    const minuteMs = Math.floor(this.clock.nowMs() / MINUTE_MS) * MINUTE_MS;
    const id = `${partnerId}|${minuteMs}`;
    let c = this.counts.get(id);
    if (!c) {
      c = { partnerId, minuteMs, dropped: 0, notStreamed: 0 };
      this.counts.set(id, c);
    }
    c[what]++;
    if (what === 'dropped') this.droppedTotal++;
  }

  private offerLive(entry: RequestLogEntry): void {
    if (this.audience === null || !this.audience(entry.partnerId)) return;
    const nowMs = this.options.liveNowMs();
    const second = Math.floor(nowMs / 1000);
    if (second !== this.liveSecond) {
      // Once a second, forget the partners that sent nothing in the last second.
      this.liveSecond = second;
      for (const [partnerId, sent] of this.liveSent) if (sent.latestMs <= nowMs - 1000) this.liveSent.delete(partnerId);
    }
    let sent = this.liveSent.get(entry.partnerId);
    if (!sent) {
      sent = { times: new Float64Array(this.options.liveTailPerSecond).fill(Number.NEGATIVE_INFINITY), next: 0, latestMs: 0 };
      this.liveSent.set(entry.partnerId, sent);
    }
    // A sliding second: the oldest of the last `liveTailPerSecond` sends must be a second old or more.
    if (sent.times.length === 0 || sent.times[sent.next] > nowMs - 1000) {
      this.count(entry.partnerId, 'notStreamed');
      return;
    }
    sent.times[sent.next] = nowMs;
    sent.next = (sent.next + 1) % sent.times.length;
    sent.latestMs = nowMs;
    const message: RequestLogged = { partnerId: entry.partnerId, request: summaryOf(entry) };
    this.events.emit('request.logged', message);
  }
}
