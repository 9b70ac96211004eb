/**
 * Retention (spec 8, decisions §6): deliveries and processed outbox rows older than 35 days go, in
 * small batches so a large backlog never holds long locks or one huge transaction; the other domains'
 * expired rows go in the same periodic pass. Idempotent: running it twice deletes nothing more.
 */
import type { AppContext } from '../context.js';
import { purgeExpiredAuthRows } from '../modules/auth/auth.repo.js';
import { purgeExpiredIdempotencyKeys } from '../modules/orders/idempotency.js';
import { purgeExpiredUsage } from '../modules/usage/usage-purge.js';

export const RETENTION_MS = 35 * 86_400_000;
const BATCH = 1_000;

export interface PurgeResult {
  deliveries: number;
  outbox: number;
}

async function deleteInBatches(ctx: AppContext, sql: string, cutoff: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await ctx.db.query<{ n: number }>(sql, [cutoff, BATCH]);
    total += rows[0].n;
    if (rows[0].n < BATCH) return total;
  }
}

export async function purgeExpired(ctx: AppContext): Promise<PurgeResult> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  // A delivery queued long ago but redelivered recently is still in use: keep it until it has been
  // quiet for the retention period too.
  const deliveries = await deleteInBatches(
    ctx,
    `WITH gone AS (
       DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
          WHERE created_at < $1 AND (status IN ('DELIVERED', 'DEAD') OR updated_at < $1)
          LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    cutoff,
  );
  const outbox = await deleteInBatches(
    ctx,
    `WITH gone AS (
       DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox WHERE created_at < $1 AND processed_at IS NOT NULL LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    cutoff,
  );
  // The other domains' retention rides on the same pass (each function is theirs and idempotent).
  await purgeExpiredUsage(ctx.db, now);
  await purgeExpiredIdempotencyKeys(ctx.db, now);
  await purgeExpiredAuthRows(now, ctx.db);
  return { deliveries, outbox };
}
