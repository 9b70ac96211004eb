/**
 * The OrderTracking shape (reads, realtime `order.tracking`, webhook `order.courier_location`) from
 * what is stored, with the newer points this process still holds in memory laid over it.
 */
import type { StoredPoint, StoredTracking } from './tracking.repo.js';
import { type OrderTracking, TRAIL_LENGTH } from './tracking.schemas.js';

/** What the location buffer holds of an order that is not stored yet. */
export interface UnstoredTracking {
  latest: StoredPoint | null;
  etaAtMs: number | null;
  trail: readonly StoredPoint[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function trackingView(stored: StoredTracking, unstored?: UnstoredTracking | null): OrderTracking {
  let location = stored.location;
  if (unstored?.latest && (location === null || unstored.latest.atMs >= location.atMs)) location = unstored.latest;
  const etaAtMs = unstored?.etaAtMs ?? stored.etaAtMs;
  let trail = stored.trail;
  if (unstored && unstored.trail.length > 0) {
    const last = trail.length > 0 ? trail[trail.length - 1].atMs : 0;
    trail = [...trail, ...unstored.trail.filter((p) => p.atMs > last)].slice(-TRAIL_LENGTH);
  }
  return {
    orderCode: stored.code,
    status: stored.status,
    location:
      location === null ? null : { lat: location.lat, lng: location.lng, accuracyM: location.accuracyM, at: iso(location.atMs) },
    etaAt: etaAtMs === null ? null : iso(etaAtMs),
    trail: trail.map((p) => ({ lat: p.lat, lng: p.lng, at: iso(p.atMs) })),
  };
}
