/**
 * The delivery log as partners read it (the webhooks service): every function takes the partner id
 * first and filters by it.
 */
import type { Queryable } from '../../../db/db.js';
import type { ApiKeyScope, WebhookDeliveryStatus } from '../../../shared/schemas.js';
import type { DeveloperDelivery } from '../webhooks.schemas.js';
import { DELIVERY_COLUMNS, type DeliveryRow, toDeveloperDelivery } from './delivery-rows.js';

/**
 * One page of a webhook's deliveries, newest first, and how many there are (docs/paging.md, "Deliveries
 * of a webhook"). The caller has found the webhook among the partner's own.
 *
 * The total is a sum of the webhook's counter rows (webhook_delivery_counts, kept by triggers, migration
 * 0021), never a count of its deliveries. The page is found first as ids alone, an index-only range of
 * (webhook_id[, status], created_at DESC, id DESC) skipping the offset, and only its rows are then read
 * from the table: a deep page skips index entries, not table rows. The status filter is written into the
 * statement (not `$3 IS NULL OR …`) so that its index is the one planned.
 */
export async function listDeliveries(
  partnerId: string,
  webhookId: string,
  filter: { status?: WebhookDeliveryStatus; page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: DeveloperDelivery[] }> {
  const params: unknown[] = [partnerId, webhookId];
  let statusCondition = '';
  if (filter.status !== undefined) {
    params.push(filter.status);
    statusCondition = ` AND status = $${params.length}`;
  }
  const [{ total }] = await q.query<{ total: number }>(
    `SELECT coalesce(sum(n), 0)::int AS total FROM webhook_delivery_counts WHERE webhook_id = $2${statusCondition}
        AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $2 AND w.partner_id = $1)`,
    params,
  );
  const offset = (filter.page - 1) * filter.pageSize;
  if (total === 0 || offset >= total) return { total, items: [] };
  params.push(filter.pageSize, offset);
  const rows = await q.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS}
       FROM (SELECT id, created_at FROM webhook_deliveries
              WHERE webhook_id = $2${statusCondition}
              ORDER BY created_at DESC, id DESC
              LIMIT $${params.length - 1} OFFSET $${params.length}) p
       JOIN webhook_deliveries d ON d.id = p.id
      WHERE d.partner_id = $1
      ORDER BY p.created_at DESC, p.id DESC`,
    params,
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
