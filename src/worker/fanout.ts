/**
 * Outbox fan-out: committed domain events become queued deliveries. One batch of unprocessed outbox
 * rows, in ONE transaction (why that is safe with any number of workers, and what a crash leaves:
 * src/modules/webhooks/queue/fan-out-outbox.ts): lock the rows, load the webhooks that may get them,
 * route each row to each of them by the rule of docs/decisions-log.md, 'Webhooks' (src/modules/webhooks/routing.ts), queue
 * the deliveries, mark the rows processed. After the commit, and only then, the rest of the process
 * hears about it: 'outbox.processed' (the realtime channel), delivery.updated per delivery, and the
 * claim loop's wake-up.
 */
import type { AppContext } from '../context.js';
import { lastStatements } from '../db/db.js';
import { findOrderPlacements } from '../modules/orders/order-reads.repo.js';
import type { OrderPlacement } from '../modules/orders/visibility.js';
import { serializeEnvelope } from '../modules/webhooks/envelope.js';
import { toDeveloperDelivery } from '../modules/webhooks/queue/delivery-rows.js';
import {
  findSubscribers,
  hasUnprocessedOutbox,
  lockUnprocessedOutbox,
  markOutboxProcessed,
} from '../modules/webhooks/queue/fan-out-outbox.js';
import { insertDeliveries, type NewDelivery } from '../modules/webhooks/queue/insert-deliveries.js';
import { batchOrderCodes, eventDataFor, keysOfEvent } from '../modules/webhooks/routing.js';
import { emitDeliveryUpdated, notifyDeliveriesDue, signalDeliveriesDue } from '../modules/webhooks/signals.js';
import { newId } from '../shared/ids.js';
import type { ProcessedOutboxEvent } from '../shared/outbox.js';

export interface FanOutResult {
  /** Outbox rows processed in this batch (0: the outbox is drained). */
  processed: number;
  queued: number;
}

/** Fans out one batch of the outbox. */
export async function fanOutBatch(ctx: AppContext, batchSize: number): Promise<FanOutResult> {
  const now = ctx.clock.now();
  // Most polls find nothing to do: one probe on the partial index instead of a transaction.
  if (!(await hasUnprocessedOutbox(ctx.db))) return { processed: 0, queued: 0 };
  const outcome = await ctx.db.tx(async (q) => {
    const rows = await lockUnprocessedOutbox(batchSize, q);
    if (rows.length === 0) return { rows, queued: [] };
    const orders: Map<string, OrderPlacement> = rows.some((r) => r.type === 'batch.completed')
      ? await findOrderPlacements([...new Set(rows.flatMap(batchOrderCodes))], q)
      : new Map();
    const subscribers = await findSubscribers(
      {
        types: [...new Set(rows.map((r) => r.type))],
        environments: [...new Set(rows.map((r) => r.environment))],
        keyIds: [...new Set(rows.flatMap((r) => keysOfEvent(r, orders)))],
        partnerIds: [...new Set(rows.flatMap((r) => (r.partnerId ? [r.partnerId] : [])))],
      },
      now,
      q,
    );

    const deliveries: NewDelivery[] = [];
    for (const row of rows) {
      for (const sub of subscribers) {
        const data = eventDataFor(row, sub, orders);
        if (!data) continue;
        deliveries.push({
          id: newId(),
          webhookId: sub.webhookId,
          partnerId: sub.partnerId,
          eventId: row.eventId,
          eventType: row.type,
          body: serializeEnvelope({
            id: row.eventId,
            type: row.type,
            createdAt: row.createdAt,
            environment: row.environment,
            data,
          }),
        });
      }
    }
    // The writes and the other workers' wake-up go with the COMMIT (one round trip on a server). A
    // wake-up for deliveries that were all there already costs a worker one empty claim.
    const [queued] = await lastStatements(
      q,
      () => insertDeliveries(deliveries, now, q),
      () =>
        markOutboxProcessed(
          rows.map((r) => r.id),
          now,
          q,
        ),
      async () => (deliveries.length > 0 ? notifyDeliveriesDue(ctx.db, q) : undefined),
    );
    return { rows, queued };
  });

  // Only now, after the commit, may anyone hear about it.
  if (outcome.rows.length > 0) {
    const events: ProcessedOutboxEvent[] = outcome.rows.map((r) => ({
      eventId: r.eventId,
      type: r.type,
      environment: r.environment,
      orderId: r.orderId,
      assignedKeyId: r.assignedKeyId,
      partnerId: r.partnerId,
      data: r.data,
      createdAt: r.createdAt,
    }));
    ctx.events.emit('outbox.processed', events);
  }
  for (const row of outcome.queued) emitDeliveryUpdated(ctx.events, row.partner_id, toDeveloperDelivery(row));
  if (outcome.queued.length > 0) signalDeliveriesDue(ctx.events);
  return { processed: outcome.rows.length, queued: outcome.queued.length };
}
