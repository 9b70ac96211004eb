/**
 * Retention of courier tracking and proof of delivery (docs/tracking-and-proof.md, "Retention"),
 * run by the worker's periodic purge (src/worker/purge.ts). Each step is idempotent.
 *  - Tracking (trail and latest position): 35 days after the order ended (DELIVERED, RETURNED,
 *    CANCELLED; its last change).
 *  - Proofs: 400 days after their event; then the photos they named, and any upload older than 400
 *    days that no kept proof names.
 */
import type { Queryable } from '../../db/db.js';
import { purgeEndedTracking } from '../tracking/tracking.repo.js';
import { purgeExpiredUploads } from '../uploads/uploads.repo.js';
import { purgeExpiredProofs } from './proof.repo.js';

const DAY_MS = 86_400_000;
export const TRACKING_RETENTION_MS = 35 * DAY_MS;
export const PROOF_RETENTION_MS = 400 * DAY_MS;

export async function purgeTrackingAndProof(now: Date, q: Queryable): Promise<void> {
  await purgeEndedTracking(new Date(now.getTime() - TRACKING_RETENTION_MS), q);
  const proofCutoff = new Date(now.getTime() - PROOF_RETENTION_MS);
  await purgeExpiredProofs(proofCutoff, q);
  await purgeExpiredUploads(proofCutoff, q);
}
