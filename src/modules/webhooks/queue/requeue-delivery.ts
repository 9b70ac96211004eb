/** Queue: a delivery sent again (redeliver: docs/decisions-log.md, 'Webhooks'). */
import type { Queryable } from '../../../db/db.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from './delivery-rows.js';

/**
 * Queues a delivery again as if new (docs/decisions-log.md, 'Webhooks'): PENDING, attempts 0, due now, last outcome cleared.
 * The body (and so the event id) is kept; the signature is computed afresh at send time. Any lease is
 * dropped: an attempt still in flight from before can no longer record its result (its lease token
 * no longer matches), so the new attempts own the row.
 */
export async function requeueDelivery(
  partnerId: string,
  deliveryId: string,
  now: Date,
  q: Queryable,
): Promise<DeliveryRow | null> {
  const rows = await q.query<DeliveryRow>(
    `UPDATE webhook_deliveries d SET
        status = 'PENDING', attempts = 0, status_code = NULL, last_error = NULL, delivered_at = NULL,
        next_attempt_at = $3, locked_until = NULL, lease_token = NULL, updated_at = $3
      WHERE d.partner_id = $1 AND d.id = $2
      RETURNING ${DELIVERY_COLUMNS}`,
    [partnerId, deliveryId, now],
  );
  return rows[0] ?? null;
}
