/**
 * The worker's recovery step: recoveries in progress (POST …/webhooks/{id}/recover) fed to the queue a
 * batch at a time, each in a short transaction of its own (why, and the SQL:
 * src/modules/webhooks/queue/recover-deliveries.ts). Every run gives each active recovery one step, so
 * recoveries of several webhooks advance side by side; a recovery another worker is feeding is skipped.
 */
import type { AppContext } from '../context.js';
import { toDeveloperDelivery } from '../modules/webhooks/queue/delivery-rows.js';
import { feedRecovery, listActiveRecoveries } from '../modules/webhooks/queue/recover-deliveries.js';
import { emitDeliveryUpdated, notifyDeliveriesDue, signalDeliveriesDue } from '../modules/webhooks/signals.js';

/** Recoveries looked at per run (the rest wait for the next run). */
const MAX_RECOVERIES_PER_RUN = 50;

export interface FeedRun {
  /** Recoveries that were active at the start of the run (0: nothing to do until one is started). */
  active: number;
  requeued: number;
}

export async function feedRecoveries(ctx: AppContext, batch: number): Promise<FeedRun> {
  const ids = await listActiveRecoveries(MAX_RECOVERIES_PER_RUN, ctx.db);
  let requeued = 0;
  for (const id of ids) {
    const step = await ctx.db.tx(async (q) => {
      const fed = await feedRecovery(id, batch, ctx.clock.now(), q);
      if (fed && fed.requeued.length > 0) await notifyDeliveriesDue(ctx.db, q);
      return fed;
    });
    if (!step) continue;
    for (const row of step.requeued) emitDeliveryUpdated(ctx.events, row.partner_id, toDeveloperDelivery(row));
    requeued += step.requeued.length;
  }
  if (requeued > 0) signalDeliveriesDue(ctx.events);
  return { active: ids.length, requeued };
}
