/**
 * Queue: new deliveries (the fan-out of outbox rows, a ping). A delivery is due at once: PENDING, no
 * attempt yet, next_attempt_at now. Whoever queues wakes the workers once its transaction commits
 * (signals.ts: notifyDeliveriesDue inside it, signalDeliveriesDue after).
 */
import type { Queryable } from '../../../db/db.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from './delivery-rows.js';

export interface NewDelivery {
  id: string;
  webhookId: string;
  partnerId: string;
  eventId: string;
  eventType: string;
  /** The exact JSON that will be sent and signed. */
  body: string;
}

/**
 * Queues deliveries (PENDING, due at `now`) in one statement. An event already queued for a webhook
 * is skipped (unique webhook_id + event_id), so a repeated fan-out never sends twice.
 */
export async function insertDeliveries(deliveries: NewDelivery[], now: Date, q: Queryable): Promise<DeliveryRow[]> {
  if (deliveries.length === 0) return [];
  return q.query<DeliveryRow>(
    `INSERT INTO webhook_deliveries AS d (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT i, w, p, e, t, b, 'PENDING', 0, $7, $7, $7
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[]) AS x(i, w, p, e, t, b)
     ON CONFLICT (webhook_id, event_id) DO NOTHING
     RETURNING ${DELIVERY_COLUMNS}`,
    [
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.webhookId),
      deliveries.map((d) => d.partnerId),
      deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.eventType),
      deliveries.map((d) => d.body),
      now,
    ],
  );
}
