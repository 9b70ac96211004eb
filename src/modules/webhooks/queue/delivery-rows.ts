/**
 * A row of webhook_deliveries (the delivery log, which is also the delivery queue) as every statement
 * of this folder returns it, and its partner-facing form.
 */
import type { WebhookDeliveryStatus } from '../../../shared/schemas.js';
import type { DeveloperDelivery } from '../webhooks.schemas.js';

/** The columns every reader maps to DeveloperDelivery. */
export const DELIVERY_COLUMNS =
  'd.id, d.webhook_id, d.partner_id, d.event_id, d.event_type, d.status, d.attempts, d.status_code, d.last_error, d.created_at, d.delivered_at, d.next_attempt_at';

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  partner_id: string;
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  status_code: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date | null;
}

export function toDeveloperDelivery(row: DeliveryRow): DeveloperDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    event: row.event_type,
    status: row.status,
    attempts: row.attempts,
    statusCode: row.status_code,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    deliveredAt: row.delivered_at ? row.delivered_at.toISOString() : null,
    // Spec 2.8 and 3.4: the time of a scheduled retry, i.e. of a FAILED delivery. A PENDING one is being
    // sent now (its first attempt, or a redelivery), so it has none.
    nextAttemptAt: row.status === 'FAILED' && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
  };
}
