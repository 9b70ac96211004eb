/**
 * The delivery log as partners read it (the webhooks service): every function takes the partner id
 * first and filters by it.
 */
import type { Queryable } from '../../../db/db.js';
import type { ApiKeyScope, WebhookDeliveryStatus } from '../../../shared/schemas.js';
import type { DeveloperDelivery } from '../webhooks.schemas.js';
import { DELIVERY_COLUMNS, type DeliveryRow, toDeveloperDelivery } from './delivery-rows.js';

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
