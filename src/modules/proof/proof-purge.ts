/**
 * Retention of proof of delivery (docs/tracking-and-proof.md, "Retention"), run by the worker's
 * periodic purge (src/worker/purge.ts): proofs 400 days after their event; then the photos they named,
 * and any upload older than 400 days that no kept proof names. Idempotent.
 */
import type { Queryable } from '../../db/db.js';
import { purgeExpiredUploads } from '../uploads/uploads.repo.js';
import { purgeExpiredProofs } from './proof.repo.js';

const DAY_MS = 86_400_000;
export const PROOF_RETENTION_MS = 400 * DAY_MS;

export async function purgeExpiredProofAndUploads(now: Date, q: Queryable): Promise<void> {
  const proofCutoff = new Date(now.getTime() - PROOF_RETENTION_MS);
  await purgeExpiredProofs(proofCutoff, q);
  await purgeExpiredUploads(proofCutoff, q);
}
