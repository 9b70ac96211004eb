/**
 * Retention of courier tracking (docs/tracking-and-proof.md, "Retention"), run by the worker's periodic
 * purge (src/worker/purge.ts): the trail and latest position of an order 35 days after it ended
 * (DELIVERED, RETURNED, CANCELLED; its last change). An ongoing order's trail is never purged.
 * Idempotent.
 */
import type { Queryable } from '../../db/db.js';
import { purgeEndedTracking } from './tracking.repo.js';

const DAY_MS = 86_400_000;
export const TRACKING_RETENTION_MS = 35 * DAY_MS;

export async function purgeExpiredTracking(now: Date, q: Queryable): Promise<void> {
  await purgeEndedTracking(new Date(now.getTime() - TRACKING_RETENTION_MS), q);
}
