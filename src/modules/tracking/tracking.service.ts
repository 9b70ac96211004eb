/**
 * Courier tracking (docs/tracking-and-proof.md): location pings and the tracking reads.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { parseInstantMs } from '../../shared/instants.js';
import type { ApiKeyEnvironment, OrderStatus } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { scopeOf } from '../orders/visibility.js';
import { findPingTarget, findTrackingByCode, findVisibleTracking, type PingTarget, type StoredPoint } from './tracking.repo.js';
import { type CreateLocationsDto, type LocationsAccepted, MAX_FUTURE_MS, type OrderTracking } from './tracking.schemas.js';
import type { TrackingBuffer } from './tracking-buffer.js';
import { trackingView } from './tracking-view.js';

/** Statuses in which a courier is on the way: pings are taken only then. */
const TRACKABLE: ReadonlySet<OrderStatus> = new Set(['SCANNED_TO_VAN', 'EN_ROUTE', 'FAILED']);

const MAX_TARGETS = 20_000;

/**
 * The orders pings were last found for, by scope and code, tagged with the scope's read-cache version
 * (read-cache.ts): while the version is unchanged no change of the scope's orders has committed, so
 * the status and assignment are still right and a ping costs no query. Bounded; cleared when full.
 * One per process (createContext).
 */
export class PingTargetCache {
  private readonly targets = new Map<string, { version: string; target: PingTarget }>();

  get(cacheKey: string, version: string | null): PingTarget | undefined {
    const hit = version === null ? undefined : this.targets.get(cacheKey);
    return hit && hit.version === version ? hit.target : undefined;
  }

  set(cacheKey: string, version: string, target: PingTarget): void {
    if (this.targets.size >= MAX_TARGETS) this.targets.clear();
    this.targets.set(cacheKey, { version, target });
  }
}

/** What the tracking services need (AppContext satisfies it). */
export interface TrackingDeps {
  db: Queryable;
  clock: { nowMs(): number };
  /** The location buffer (tracking-buffer.ts): pings go to it, reads lay what it holds over the stored. */
  tracking: Pick<TrackingBuffer, 'accept' | 'unstored'>;
  pingTargets: PingTargetCache;
}

async function pingTarget(
  deps: TrackingDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  version: string | null,
): Promise<PingTarget | null> {
  const scope = scopeOf(key, environment);
  const cacheKey = `${scope.keyId ?? '*'}:${environment}:${code}`;
  const hit = deps.pingTargets.get(cacheKey, version);
  if (hit) return hit;
  const target = await findPingTarget(scope, code, deps.db);
  if (target && version !== null) deps.pingTargets.set(cacheKey, version, target);
  return target;
}

/** POST /v1/partner/orders/{code}/locations. */
export async function recordLocations(
  ctx: TrackingDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  body: CreateLocationsDto,
  version: string | null,
): Promise<LocationsAccepted & { ignored: number }> {
  const latestAllowed = ctx.clock.nowMs() + MAX_FUTURE_MS;
  const points: StoredPoint[] = body.points.map((p, i) => {
    const atMs = parseInstantMs(`points.${i}.at`, p.at);
    if (atMs > latestAllowed)
      throw validationError(`points.${i}.at`, "must not be more than 5 minutes ahead of the server's clock");
    return { lat: p.lat, lng: p.lng, accuracyM: p.accuracyM ?? null, atMs };
  });
  const etaAtMs = body.etaAt === undefined ? null : parseInstantMs('etaAt', body.etaAt);
  const target = await pingTarget(ctx, key, environment, code, version);
  if (!target) throw notFound('Order');
  if (target.assignedKeyId !== key.actsForKeyId) {
    throw new AppError('ERR_PARTNER_ORDER_NOT_ASSIGNED', 'This order is not assigned to this API key; it is readable only');
  }
  if (!TRACKABLE.has(target.status)) {
    throw new AppError(
      'ERR_INVALID_TRANSITION',
      `Locations are taken while an order is SCANNED_TO_VAN, EN_ROUTE or FAILED; this one is ${target.status}`,
    );
  }
  return ctx.tracking.accept(target, points, etaAtMs);
}

/** GET /v1/partner/orders/{code}/tracking. */
export async function getPartnerTracking(
  ctx: TrackingDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
): Promise<OrderTracking> {
  const stored = await findVisibleTracking(scopeOf(key, environment), code, ctx.db);
  if (!stored) throw notFound('Order');
  return trackingView(stored, ctx.tracking.unstored(stored.orderId));
}

/** GET /v1/admin/orders/{code}/tracking. */
export async function getAdminTracking(ctx: TrackingDeps, code: string): Promise<OrderTracking> {
  const stored = await findTrackingByCode(code, ctx.db);
  if (!stored) throw notFound('Order');
  return trackingView(stored, ctx.tracking.unstored(stored.orderId));
}
