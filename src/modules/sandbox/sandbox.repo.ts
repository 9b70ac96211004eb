/**
 * Sandbox simulator SQL that the orders module has no statement for: the van batches of a key's
 * sandbox orders, for the portal's view. The key's scope comes first, the Queryable last.
 */
import type { Queryable } from '../../db/db.js';
import type { BatchScope } from '../orders/batches.repo.js';
import type { BatchStatus } from '../orders/orders.schemas.js';

/**
 * The batches among `codes` whose orders all belong to `scope`, newest first, each with its order
 * codes in batch order (a batch mixing in another key's orders is left out: its codes are not the
 * key's to see). One statement: the batches by primary key, their orders by the batch index.
 */
export async function ownBatches(
  scope: BatchScope,
  codes: string[],
  q: Queryable,
): Promise<Array<{ code: string; status: BatchStatus; orderCodes: string[] }>> {
  if (codes.length === 0) return [];
  const rows = await q.query<{ code: string; status: BatchStatus; order_codes: string[] }>(
    `SELECT b.code, b.status, array_agg(o.code ORDER BY o.batch_position, o.code) AS order_codes
       FROM batches b JOIN orders o ON o.batch_code = b.code
      WHERE b.code = ANY($1::text[])
      GROUP BY b.code, b.status, b.created_at
     HAVING bool_and(o.environment = $2 AND o.assigned_key_id IS NOT DISTINCT FROM $3::uuid)
      ORDER BY b.created_at DESC, b.code DESC`,
    [codes, scope.environment, scope.keyId],
  );
  return rows.map((r) => ({ code: r.code, status: r.status, orderCodes: r.order_codes }));
}
