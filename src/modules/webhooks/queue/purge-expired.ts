/**
 * Queue: retention (docs/decisions-log.md, 'Webhooks'). Deliveries and processed outbox rows older than 35 days go,
 * in small batches so a large backlog never holds long locks or one huge transaction. Idempotent:
 * running it twice deletes nothing more. The worker runs it periodically (src/worker/purge.ts).
 */
import type { Queryable } from '../../../db/db.js';

const BATCH = 1_000;

async function deleteInBatches(sql: string, cutoff: Date, q: Queryable): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await q.query<{ n: number }>(sql, [cutoff, BATCH]);
    total += rows[0].n;
    if (rows[0].n < BATCH) return total;
  }
}

/**
 * Deliveries created before `cutoff` and finished. A delivery queued long ago but redelivered recently
 * is still in use: it is kept until it has been quiet since `cutoff` too. Returns how many went.
 */
export function purgeExpiredDeliveries(cutoff: Date, q: Queryable): Promise<number> {
  return deleteInBatches(
    `WITH gone AS (
       DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries
          WHERE created_at < $1 AND (status IN ('DELIVERED', 'DEAD') OR updated_at < $1)
          LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    cutoff,
    q,
  );
}

/** Outbox rows created before `cutoff` and already fanned out. Returns how many went. */
export function purgeProcessedOutbox(cutoff: Date, q: Queryable): Promise<number> {
  return deleteInBatches(
    `WITH gone AS (
       DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox WHERE created_at < $1 AND processed_at IS NOT NULL LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    cutoff,
    q,
  );
}
