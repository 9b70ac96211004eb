/**
 * Tracking SQL (docs/tracking-and-proof.md). Partner reads go through the key's scope (visibility.ts):
 * an order the key may not see is never read. The Queryable comes last.
 */
import type { Queryable } from '../../db/db.js';
import { OUTBOX_INSERT, type OutboxTx } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, OrderStatus } from '../../shared/schemas.js';
import { type PartnerOrderScope, scopeConditions } from '../orders/visibility.js';
import { TRAIL_LENGTH } from './tracking.schemas.js';

/** An order a ping is for, with what is stored of its tracking (the stale-point rule reads it). */
export interface PingTarget {
  orderId: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  assignedKeyId: string | null;
  /** The latest stored point's time (ms), or 0 when none is stored. */
  storedLatestMs: number;
  /** The latest stored trail point's time (ms), or 0. */
  storedTrailMs: number;
}

interface PingTargetRow {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  assigned_key_id: string | null;
  latest_ms: string | null;
  trail_ms: string | null;
}

const pingTargetSql = (kind: 'key' | 'all') => `
  SELECT o.id, o.code, o.environment, o.status, o.assigned_key_id,
         (extract(epoch FROM t.at) * 1000)::bigint AS latest_ms,
         (SELECT (extract(epoch FROM max(p.at)) * 1000)::bigint FROM order_track_points p WHERE p.order_id = o.id) AS trail_ms
    FROM orders o LEFT JOIN order_tracking t ON t.order_id = o.id
   WHERE ${['o.code = $1', ...scopeConditions(kind, { environment: '$2', keyId: '$3' }, 'probe')].join(' AND ')}`;
const PING_TARGET = { key: pingTargetSql('key'), all: pingTargetSql('all') };

/** The order `code` as `scope` sees it, with its stored tracking times; null when the scope does not see it. */
export async function findPingTarget(scope: PartnerOrderScope, code: string, q: Queryable): Promise<PingTarget | null> {
  const rows =
    scope.keyId === null
      ? await q.query<PingTargetRow>(PING_TARGET.all, [code, scope.environment])
      : await q.query<PingTargetRow>(PING_TARGET.key, [code, scope.environment, scope.keyId]);
  const r = rows[0];
  if (!r) return null;
  return {
    orderId: r.id,
    code: r.code,
    environment: r.environment,
    status: r.status,
    assignedKeyId: r.assigned_key_id,
    storedLatestMs: r.latest_ms === null ? 0 : Number(r.latest_ms),
    storedTrailMs: r.trail_ms === null ? 0 : Number(r.trail_ms),
  };
}

export interface StoredPoint {
  lat: number;
  lng: number;
  accuracyM: number | null;
  atMs: number;
}

/** What one flush writes for one order. */
export interface TrackingFlush {
  orderId: string;
  /** The latest point (the order's current position). */
  latest: StoredPoint;
  etaAtMs: number | null;
  /** Trail points, oldest first, at least 5 s apart. */
  trail: StoredPoint[];
}

/**
 * Writes the flushed orders' trail points and latest positions (two statements for any number of
 * orders), then claims the courier_location webhook of those whose last one is at least `webhookEveryMs`
 * old: `webhook_at` is moved in the same UPDATE that checks it, so of two processes flushing the same
 * order only one claims it. Returns the ids of the claimed orders.
 */
export async function storeTracking(
  flushes: TrackingFlush[],
  now: Date,
  webhookEveryMs: number,
  q: Queryable,
): Promise<string[]> {
  const points = flushes.flatMap((f) => f.trail.map((p) => ({ orderId: f.orderId, ...p })));
  if (points.length > 0) {
    await q.query(
      `INSERT INTO order_track_points (order_id, at, lat, lng, accuracy_m)
       SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::float8[], $4::float8[], $5::float8[])
       ON CONFLICT DO NOTHING`,
      [
        points.map((p) => p.orderId),
        points.map((p) => new Date(p.atMs)),
        points.map((p) => p.lat),
        points.map((p) => p.lng),
        points.map((p) => p.accuracyM),
      ],
    );
  }
  // A position older than the stored one (another process stored a later one) does not replace it.
  await q.query(
    `INSERT INTO order_tracking AS t (order_id, lat, lng, accuracy_m, at, eta_at, updated_at)
     SELECT u.*, $7::timestamptz
       FROM unnest($1::uuid[], $2::float8[], $3::float8[], $4::float8[], $5::timestamptz[], $6::timestamptz[]) AS u
     ON CONFLICT (order_id) DO UPDATE
        SET lat = CASE WHEN excluded.at >= t.at THEN excluded.lat ELSE t.lat END,
            lng = CASE WHEN excluded.at >= t.at THEN excluded.lng ELSE t.lng END,
            accuracy_m = CASE WHEN excluded.at >= t.at THEN excluded.accuracy_m ELSE t.accuracy_m END,
            at = greatest(t.at, excluded.at),
            eta_at = coalesce(excluded.eta_at, t.eta_at),
            updated_at = excluded.updated_at`,
    [
      flushes.map((f) => f.orderId),
      flushes.map((f) => f.latest.lat),
      flushes.map((f) => f.latest.lng),
      flushes.map((f) => f.latest.accuracyM),
      flushes.map((f) => new Date(f.latest.atMs)),
      flushes.map((f) => (f.etaAtMs === null ? null : new Date(f.etaAtMs))),
      now,
    ],
  );
  const claimed = await q.query<{ order_id: string }>(
    `UPDATE order_tracking SET webhook_at = $2
      WHERE order_id = ANY($1::uuid[])
        AND (webhook_at IS NULL OR webhook_at <= $2::timestamptz - make_interval(secs => $3::float8 / 1000))
     RETURNING order_id`,
    [flushes.map((f) => f.orderId), now, webhookEveryMs],
  );
  return claimed.map((r) => r.order_id);
}

/** An order's stored tracking, as the reads and the events show it (before the buffer's newer points). */
export interface StoredTracking {
  orderId: string;
  code: string;
  status: OrderStatus;
  environment: ApiKeyEnvironment;
  assignedKeyId: string | null;
  location: StoredPoint | null;
  etaAtMs: number | null;
  /** The last TRAIL_LENGTH stored points, oldest first. */
  trail: StoredPoint[];
}

interface StoredTrackingRow {
  id: string;
  code: string;
  status: OrderStatus;
  environment: ApiKeyEnvironment;
  assigned_key_id: string | null;
  lat: number | null;
  lng: number | null;
  accuracy_m: number | null;
  at_ms: string | null;
  eta_ms: string | null;
  trail: Array<{ lat: number; lng: number; a: number | null; t: number }>;
}

const TRACKING_COLUMNS = `
  o.id, o.code, o.status, o.environment, o.assigned_key_id, t.lat, t.lng, t.accuracy_m,
  (extract(epoch FROM t.at) * 1000)::bigint AS at_ms, (extract(epoch FROM t.eta_at) * 1000)::bigint AS eta_ms,
  (SELECT coalesce(json_agg(json_build_object('lat', p.lat, 'lng', p.lng, 'a', p.accuracy_m,
                                              't', (extract(epoch FROM p.at) * 1000)::bigint) ORDER BY p.at), '[]'::json)
     FROM (SELECT * FROM order_track_points p WHERE p.order_id = o.id ORDER BY p.at DESC LIMIT ${TRAIL_LENGTH}) p) AS trail`;

function storedTracking(r: StoredTrackingRow): StoredTracking {
  return {
    orderId: r.id,
    code: r.code,
    status: r.status,
    environment: r.environment,
    assignedKeyId: r.assigned_key_id,
    location:
      r.lat === null || r.lng === null || r.at_ms === null
        ? null
        : { lat: r.lat, lng: r.lng, accuracyM: r.accuracy_m, atMs: Number(r.at_ms) },
    etaAtMs: r.eta_ms === null ? null : Number(r.eta_ms),
    trail: r.trail.map((p) => ({ lat: p.lat, lng: p.lng, accuracyM: p.a, atMs: Number(p.t) })),
  };
}

const visibleTrackingSql = (kind: 'key' | 'all') => `
  SELECT ${TRACKING_COLUMNS}
    FROM orders o LEFT JOIN order_tracking t ON t.order_id = o.id
   WHERE ${['o.code = $1', ...scopeConditions(kind, { environment: '$2', keyId: '$3' }, 'probe')].join(' AND ')}`;
const VISIBLE_TRACKING = { key: visibleTrackingSql('key'), all: visibleTrackingSql('all') };

/** The stored tracking of the order `code` as `scope` sees it; null when it does not see it. */
export async function findVisibleTracking(scope: PartnerOrderScope, code: string, q: Queryable): Promise<StoredTracking | null> {
  const rows =
    scope.keyId === null
      ? await q.query<StoredTrackingRow>(VISIBLE_TRACKING.all, [code, scope.environment])
      : await q.query<StoredTrackingRow>(VISIBLE_TRACKING.key, [code, scope.environment, scope.keyId]);
  return rows[0] ? storedTracking(rows[0]) : null;
}

/** The stored tracking of the order `code` (the operator sees every order). */
export async function findTrackingByCode(code: string, q: Queryable): Promise<StoredTracking | null> {
  const rows = await q.query<StoredTrackingRow>(
    `SELECT ${TRACKING_COLUMNS} FROM orders o LEFT JOIN order_tracking t ON t.order_id = o.id WHERE o.code = $1`,
    [code],
  );
  return rows[0] ? storedTracking(rows[0]) : null;
}

/** The stored tracking of several orders, by id (after a flush: the events' payloads). */
export async function findTrackingByIds(orderIds: string[], q: Queryable): Promise<StoredTracking[]> {
  if (orderIds.length === 0) return [];
  const rows = await q.query<StoredTrackingRow>(
    `SELECT ${TRACKING_COLUMNS} FROM orders o LEFT JOIN order_tracking t ON t.order_id = o.id WHERE o.id = ANY($1::uuid[])`,
    [orderIds],
  );
  return rows.map(storedTracking);
}

/** Writes one `order.courier_location` outbox row per order (`data = { tracking }`). */
export async function appendCourierLocationEvents(
  events: Array<{ eventId: string; orderId: string; environment: ApiKeyEnvironment; assignedKeyId: string | null; data: string }>,
  now: Date,
  tx: OutboxTx,
): Promise<void> {
  if (events.length === 0) return;
  await tx.query(
    `${OUTBOX_INSERT}
     SELECT e.event_id, 'order.courier_location', e.environment, e.order_id, e.assigned_key_id, e.data, $6
       FROM unnest($1::text[], $2::text[], $3::uuid[], $4::uuid[], $5::jsonb[]) AS e(event_id, environment, order_id, assigned_key_id, data)`,
    [
      events.map((e) => e.eventId),
      events.map((e) => e.environment),
      events.map((e) => e.orderId),
      events.map((e) => e.assignedKeyId),
      events.map((e) => e.data),
      now,
    ],
  );
  tx.wroteOutbox();
}

/**
 * Retention: the trail and latest position of orders that ended (DELIVERED, RETURNED, CANCELLED) before
 * `cutoff`. Idempotent.
 */
export async function purgeEndedTracking(cutoff: Date, q: Queryable): Promise<number> {
  const points = await q.query<{ n: string }>(
    `WITH gone AS (
       DELETE FROM order_track_points p USING orders o
        WHERE o.id = p.order_id AND o.status IN ('DELIVERED', 'RETURNED', 'CANCELLED') AND o.updated_at < $1
       RETURNING 1
     ) SELECT count(*) AS n FROM gone`,
    [cutoff],
  );
  await q.query(
    `DELETE FROM order_tracking t USING orders o
      WHERE o.id = t.order_id AND o.status IN ('DELIVERED', 'RETURNED', 'CANCELLED') AND o.updated_at < $1`,
    [cutoff],
  );
  return Number(points[0]?.n ?? 0);
}
