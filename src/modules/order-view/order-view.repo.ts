/**
 * The order of the portal's order page: an order assigned to any key of the partner (either environment,
 * as the other developer order reads), as that key sees it (`customer` only when the key holds
 * orders:pii, visibility.ts). Partner id first, the Queryable last.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { PartnerOrder } from '../orders/orders.schemas.js';
import { orderJsonSql } from '../orders/visibility.js';

export interface PartnerOrderOfKey {
  orderId: string;
  environment: ApiKeyEnvironment;
  assignedKeyId: string;
  order: PartnerOrder;
}

const ORDER_OF_PARTNER = `
  SELECT o.id, o.environment, o.assigned_key_id,
         (CASE WHEN 'orders:pii' = ANY (k.scopes) THEN ${orderJsonSql(true)} ELSE ${orderJsonSql(false)} END)::json AS j
    FROM orders o JOIN api_keys k ON k.id = o.assigned_key_id
   WHERE o.code = $2 AND k.partner_id = $1`;

/** The order `code` if it is assigned to a key of the partner, else null. */
export async function findPartnerOrderOfKey(partnerId: string, code: string, q: Queryable): Promise<PartnerOrderOfKey | null> {
  const rows = await q.query<{ id: string; environment: ApiKeyEnvironment; assigned_key_id: string; j: PartnerOrder }>(
    ORDER_OF_PARTNER,
    [partnerId, code],
  );
  const r = rows[0];
  return r ? { orderId: r.id, environment: r.environment, assignedKeyId: r.assigned_key_id, order: r.j } : null;
}
