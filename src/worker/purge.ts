/**
 * Retention (docs/decisions-log.md, 'Webhooks'): deliveries and processed outbox rows after 35 days (the SQL:
 * src/modules/webhooks/queue/purge-expired.ts), and the other domains' expired rows in the same
 * periodic pass. Idempotent: running it twice deletes nothing more.
 */
import type { AppContext } from '../context.js';
import { purgeExpiredAuthRows } from '../modules/auth/auth.repo.js';
import { purgeExpiredProofAndUploads } from '../modules/proof/proof-purge.js';
import { purgeExpiredRequestLog } from '../modules/request-log/request-log-purge.js';
import { purgeExpiredTracking } from '../modules/tracking/tracking-purge.js';
import { purgeExpiredUsage } from '../modules/usage/usage-purge.js';
import { purgeExpiredDeliveries, purgeProcessedOutbox } from '../modules/webhooks/queue/purge-expired.js';
import { purgeExpiredIdempotencyKeys } from '../shared/idempotency.js';

export const RETENTION_MS = 35 * 86_400_000;

export interface PurgeResult {
  deliveries: number;
  outbox: number;
}

export async function purgeExpired(ctx: AppContext): Promise<PurgeResult> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  const deliveries = await purgeExpiredDeliveries(cutoff, ctx.db);
  const outbox = await purgeProcessedOutbox(cutoff, ctx.db);
  // The other domains' retention rides on the same pass (each function is theirs and idempotent).
  await purgeExpiredUsage(now, ctx.db);
  await purgeExpiredIdempotencyKeys(now, ctx.db);
  await purgeExpiredAuthRows(now, ctx.db);
  await purgeExpiredRequestLog(now, ctx.db);
  await purgeExpiredTracking(now, ctx.db);
  await purgeExpiredProofAndUploads(now, ctx.db);
  return { deliveries, outbox };
}
