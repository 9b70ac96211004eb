/**
 * The delivery log, which is also the delivery queue (the worker's claim and result SQL lives in
 * src/worker/). Partner-facing reads take the partner id first and filter by it.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyScope, WebhookDeliveryStatus } from '../../shared/schemas.js';
import type { DeveloperDelivery } from './webhooks.schemas.js';

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

export async function listDeliveries(
  partnerId: string,
  webhookId: string,
  filter: { status?: WebhookDeliveryStatus; page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: DeveloperDelivery[] }> {
  const status = filter.status ?? null;
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM webhook_deliveries d
      WHERE d.partner_id = $1 AND d.webhook_id = $2 AND ($3::text IS NULL OR d.status = $3)`,
    [partnerId, webhookId, status],
  );
  if (total === 0) return { total, items: [] };
  const rows = await q.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
      WHERE d.partner_id = $1 AND d.webhook_id = $2 AND ($3::text IS NULL OR d.status = $3)
      ORDER BY d.created_at DESC, d.id DESC
      LIMIT $4 OFFSET $5`,
    [partnerId, webhookId, status, filter.pageSize, (filter.page - 1) * filter.pageSize],
  );
  return { total, items: rows.map(toDeveloperDelivery) };
}

/** The partner's delivery with the scopes of the key its webhook acts for. */
export async function findDeliveryWithKey(
  partnerId: string,
  deliveryId: string,
  q: Queryable,
): Promise<{ delivery: DeliveryRow; keyScopes: ApiKeyScope[] } | null> {
  const rows = await q.query<DeliveryRow & { key_scopes: ApiKeyScope[] }>(
    `SELECT ${DELIVERY_COLUMNS}, k.scopes AS key_scopes
       FROM webhook_deliveries d
       JOIN webhooks w ON w.id = d.webhook_id
       JOIN api_keys k ON k.id = w.api_key_id
      WHERE d.partner_id = $1 AND d.id = $2`,
    [partnerId, deliveryId],
  );
  const row = rows[0];
  return row ? { delivery: row, keyScopes: row.key_scopes } : null;
}

/**
 * Queues a delivery again as if new (spec 3.4): PENDING, attempts 0, due now, last outcome cleared.
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
