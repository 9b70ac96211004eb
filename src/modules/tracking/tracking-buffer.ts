/**
 * The location buffer: courier pings are taken in memory and written in batches, never one write per
 * point (docs/tracking-and-proof.md, "How pings are stored").
 *
 * Per order this process keeps the latest accepted point, the ETA, and the trail points not yet
 * stored (at least TRAIL_SPACING_MS apart by their own `at`). A timer (TICK_MS, real time) flushes
 * every order whose data is unstored and whose last flush is at least FLUSH_EVERY_MS old on the
 * service clock: ONE transaction for all of them (trail points, latest positions, the webhook claim,
 * the events), so an order costs at most one write every 5 s however fast it pings, and a burst of
 * 100 orders costs one transaction. The first ping of an order is flushed at the next tick.
 *
 * What that costs in consistency, on purpose:
 *  - A crash loses what was not flushed yet: at most the last ~5 s of an order's points (the partner
 *    was answered 202 "accepted", not "stored"). The process flushes everything when it closes.
 *  - Several processes: each judges "older than the latest" against what it has seen itself and what
 *    was stored when it first saw the order; a position older than the stored one never replaces it
 *    (the upsert keeps the later), and trail points are unique by (order, at). Another process's
 *    tracking read lags by up to a flush interval; the process holding the points reads them at once.
 *  - The `order.courier_location` webhook is claimed in the database (`webhook_at`), so it is written
 *    at most once a minute per order whichever process flushes.
 *
 * After a flush commits, `order.tracking` goes to the realtime channel ('tracking.updated') with
 * the stored tracking of each flushed order.
 */
import type { Logger } from 'pino';
import { newEventId } from '../../shared/outbox.js';
import { PeriodicFlusher } from '../../shared/periodic-flusher.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import { commitChange, type UnitOfWorkDeps } from '../../shared/unit-of-work.js';
import {
  appendCourierLocationEvents,
  findTrackingByIds,
  type PingTarget,
  type StoredPoint,
  type StoredTracking,
  storeTracking,
  type TrackingFlush,
} from './tracking.repo.js';
import type { OrderTracking } from './tracking.schemas.js';
import { trackingView, type UnstoredTracking } from './tracking-view.js';

/** Stored trail points are at least this far apart (their own `at`). */
export const TRAIL_SPACING_MS = 5_000;
/** An order is flushed at most this often (service clock). */
export const FLUSH_EVERY_MS = 5_000;
/** The webhook `order.courier_location`: at most once per order in this long. */
export const WEBHOOK_EVERY_MS = 60_000;
/** How often the buffer looks for orders to flush (real time). */
const TICK_MS = 250;
/** An order not pinged for this long (real time), with nothing unstored, is forgotten. */
const IDLE_MS = 10 * 60_000;

export interface TrackingUpdate {
  assignedKeyId: string | null;
  tracking: OrderTracking;
}

interface Track {
  orderId: string;
  environment: ApiKeyEnvironment;
  /** The latest point's time, accepted here or stored: an older point is ignored. */
  latestMs: number;
  /** The last trail point's time, stored or pending. */
  trailMs: number;
  /** Unstored: the latest point, the ETA, trail points. */
  latest: StoredPoint | null;
  etaAtMs: number | null;
  pending: StoredPoint[];
  /** What a flush under way is writing: still shown by reads until it has committed. */
  inFlight: UnstoredTracking | null;
  /** Service clock time of the last flush (0: never). */
  flushedAtMs: number;
  /** Real time of the last ping. */
  touchedAt: number;
}

/** What the buffer needs (AppContext satisfies it). */
export interface TrackingBufferDeps extends UnitOfWorkDeps {
  clock: { now(): Date; nowMs(): number };
  log: Pick<Logger, 'debug' | 'error'>;
  events: { emit(event: 'tracking.updated', updates: TrackingUpdate[]): boolean };
}

export class TrackingBuffer {
  private readonly tracks = new Map<string, Track>();
  /** Ticks every TICK_MS while orders are held (src/shared/periodic-flusher.ts: one flush at a time). */
  private readonly flusher: PeriodicFlusher;

  constructor(private readonly ctx: TrackingBufferDeps) {
    this.flusher = new PeriodicFlusher({
      what: 'location',
      intervalMs: TICK_MS,
      log: ctx.log,
      flush: (force) => this.flush(force),
    });
  }

  /**
   * Takes the points (oldest first) of an order the caller has checked; returns how many were taken
   * and how many were ignored as older than the latest.
   */
  accept(target: PingTarget, points: StoredPoint[], etaAtMs: number | null): { accepted: number; ignored: number } {
    let track = this.tracks.get(target.orderId);
    if (!track) {
      track = {
        orderId: target.orderId,
        environment: target.environment,
        latestMs: 0,
        trailMs: 0,
        latest: null,
        etaAtMs: null,
        pending: [],
        inFlight: null,
        flushedAtMs: 0,
        touchedAt: 0,
      };
      this.tracks.set(target.orderId, track);
    }
    // What another process stored since this one last looked.
    track.latestMs = Math.max(track.latestMs, target.storedLatestMs);
    track.trailMs = Math.max(track.trailMs, target.storedTrailMs);
    track.touchedAt = Date.now();
    let accepted = 0;
    let ignored = 0;
    for (const p of points) {
      if (p.atMs < track.latestMs) {
        ignored++;
        continue;
      }
      accepted++;
      track.latestMs = p.atMs;
      track.latest = p;
      if (track.trailMs === 0 || p.atMs >= track.trailMs + TRAIL_SPACING_MS) {
        track.pending.push(p);
        track.trailMs = p.atMs;
      }
    }
    if (etaAtMs !== null && accepted > 0) track.etaAtMs = etaAtMs;
    if (track.latest !== null) this.flusher.start();
    return { accepted, ignored };
  }

  /** What this process holds of the order and has not stored yet (reads lay it over the stored). */
  unstored(orderId: string): UnstoredTracking | null {
    const track = this.tracks.get(orderId);
    if (!track) return null;
    const flying = track.inFlight;
    if (track.latest === null && track.pending.length === 0 && track.etaAtMs === null && flying === null) return null;
    if (flying === null) return { latest: track.latest, etaAtMs: track.etaAtMs, trail: track.pending };
    return {
      latest: track.latest ?? flying.latest,
      etaAtMs: track.etaAtMs ?? flying.etaAtMs,
      trail: [...flying.trail, ...track.pending],
    };
  }

  /**
   * Flushes every order with unstored data now, whatever its last flush (tests). One flush at a time
   * (the timer's and this one): a flush's in-flight data is never overwritten.
   */
  flushAll(): Promise<void> {
    return this.flusher.flush(true);
  }

  /** Stores everything held and stops for good (the process is stopping; createContext's close). */
  close(): Promise<void> {
    return this.flusher.close();
  }

  private async flush(force: boolean): Promise<void> {
    const nowMs = this.ctx.clock.nowMs();
    const due: Array<{ track: Track; flush: TrackingFlush }> = [];
    const idleBefore = Date.now() - IDLE_MS;
    for (const track of this.tracks.values()) {
      if (track.latest === null) {
        if (track.touchedAt < idleBefore) this.tracks.delete(track.orderId);
        continue;
      }
      if (!force && nowMs - track.flushedAtMs < FLUSH_EVERY_MS) continue;
      due.push({ track, flush: { orderId: track.orderId, latest: track.latest, etaAtMs: track.etaAtMs, trail: track.pending } });
    }
    if (due.length === 0) {
      if (this.tracks.size === 0) this.flusher.stop();
      return;
    }
    // Taken out before the write: points arriving meanwhile go to the next flush. Until the write has
    // committed, reads still see what it carries (inFlight).
    for (const { track, flush } of due) {
      track.inFlight = { latest: flush.latest, etaAtMs: flush.etaAtMs, trail: flush.trail };
      track.latest = null;
      track.etaAtMs = null;
      track.pending = [];
      track.flushedAtMs = nowMs;
    }
    let stored: StoredTracking[];
    try {
      stored = await commitChange(this.ctx, async (tx) => {
        const now = this.ctx.clock.now();
        const ids = await storeTracking(
          due.map((d) => d.flush),
          now,
          WEBHOOK_EVERY_MS,
          tx,
        );
        const trackings = await findTrackingByIds(
          due.map((d) => d.flush.orderId),
          tx,
        );
        const claimedIds = new Set(ids);
        await appendCourierLocationEvents(
          trackings
            .filter((t) => claimedIds.has(t.orderId))
            .map((t) => ({
              eventId: newEventId(),
              orderId: t.orderId,
              environment: t.environment,
              assignedKeyId: t.assignedKeyId,
              data: JSON.stringify({ tracking: trackingView(t) }),
            })),
          now,
          tx,
        );
        return trackings;
      });
    } catch (err) {
      // Nothing was stored: the data goes back (before anything that arrived meanwhile).
      for (const { track, flush } of due) {
        track.inFlight = null;
        if (track.latest === null || track.latest.atMs < flush.latest.atMs) track.latest = flush.latest;
        track.etaAtMs ??= flush.etaAtMs;
        track.pending = [...flush.trail, ...track.pending];
        track.flushedAtMs = 0;
        if (!this.tracks.has(track.orderId)) this.tracks.set(track.orderId, track);
      }
      throw err;
    }
    for (const { track } of due) track.inFlight = null;
    const updates: TrackingUpdate[] = stored.map((t) => ({
      assignedKeyId: t.assignedKeyId,
      tracking: trackingView(t, this.unstored(t.orderId)),
    }));
    this.ctx.events.emit('tracking.updated', updates);
  }
}
