/**
 * Van batch SQL. A batch's orders are the orders whose batch_code points at it, in batch_position order.
 * The Queryable comes last, as in every repo.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { BatchStatus } from './orders.schemas.js';
import { scopeConditions } from './visibility.js';

/** One key's orders of one environment: the reach of the sandbox simulator's batches. */
export interface BatchScope {
  environment: ApiKeyEnvironment;
  keyId: string;
}

export interface BatchCandidate {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  batchCode: string | null;
  batchStatus: BatchStatus | null;
}

const lockForBatch = (scoped: boolean) =>
  `SELECT o.id, o.code, o.environment, o.batch_code, b.status AS batch_status
     FROM orders o LEFT JOIN batches b ON b.code = o.batch_code
    WHERE ${['o.code = ANY($1::text[])', ...(scoped ? scopeConditions('key', { environment: '$2', keyId: '$3' }, 'probe') : [])].join(' AND ')}
    ORDER BY o.code
      FOR UPDATE OF o`;
const LOCK_FOR_BATCH = { any: lockForBatch(false), scoped: lockForBatch(true) };

/**
 * Locks the listed orders (FOR UPDATE, in code order so two concurrent batch creations over the same
 * orders queue up instead of deadlocking) and reports the batch each is currently on. With `scope` (the
 * sandbox simulator: one key's orders), only the orders of that scope are locked or read; the others
 * are left out as if they did not exist.
 */
export async function lockOrdersForBatch(codes: string[], scope: BatchScope | null, q: Queryable): Promise<BatchCandidate[]> {
  const rows = await q.query<{
    id: string;
    code: string;
    environment: ApiKeyEnvironment;
    batch_code: string | null;
    batch_status: BatchStatus | null;
  }>(
    scope === null ? LOCK_FOR_BATCH.any : LOCK_FOR_BATCH.scoped,
    scope === null ? [codes] : [codes, scope.environment, scope.keyId],
  );
  return rows.map((r) => ({
    id: r.id,
    code: r.code,
    environment: r.environment,
    batchCode: r.batch_code,
    batchStatus: r.batch_status,
  }));
}

/** Inserts an OPEN batch; false when the code is taken (the caller draws another). */
export async function insertBatch(code: string, now: Date, q: Queryable): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO batches (code, status, created_at, updated_at) VALUES ($1, 'OPEN', $2, $2)
     ON CONFLICT (code) DO NOTHING RETURNING 1`,
    [code, now],
  );
  return rows.length > 0;
}

/** Puts the orders on the batch, in the given order. Their PartnerOrder.batch changes, so updated_at moves. */
export async function putOrdersOnBatch(batchCode: string, orderIds: string[], now: Date, q: Queryable): Promise<void> {
  await q.query(
    `UPDATE orders o SET batch_code = $1, batch_position = t.position, updated_at = $3
       FROM unnest($2::uuid[]) WITH ORDINALITY AS t(id, position)
      WHERE o.id = t.id`,
    [batchCode, orderIds, now],
  );
}

/**
 * Locks the batch. With `scope` (the sandbox simulator), only a batch whose orders all belong to the
 * scope (and which has some) is found: another key's batch, or one mixing its orders with others', is not.
 */
export async function lockBatch(
  code: string,
  scope: BatchScope | null,
  q: Queryable,
): Promise<{ code: string; status: BatchStatus } | null> {
  const rows =
    scope === null
      ? await q.query<{ code: string; status: BatchStatus }>('SELECT code, status FROM batches WHERE code = $1 FOR UPDATE', [
          code,
        ])
      : await q.query<{ code: string; status: BatchStatus }>(
          `SELECT b.code, b.status FROM batches b
            WHERE b.code = $1
              AND EXISTS (SELECT 1 FROM orders o WHERE o.batch_code = b.code)
              AND NOT EXISTS (SELECT 1 FROM orders o
                               WHERE o.batch_code = b.code AND (o.environment <> $2 OR o.assigned_key_id IS DISTINCT FROM $3::uuid))
              FOR UPDATE OF b`,
          [code, scope.environment, scope.keyId],
        );
  return rows[0] ?? null;
}

export async function updateBatchStatus(code: string, status: BatchStatus, now: Date, q: Queryable): Promise<void> {
  await q.query('UPDATE batches SET status = $2, updated_at = $3 WHERE code = $1', [code, status, now]);
  // The batch status is part of each order's partner view: incremental sync (updatedSince) must see it.
  await q.query('UPDATE orders SET updated_at = $2 WHERE batch_code = $1', [code, now]);
}

export async function batchOrders(
  code: string,
  q: Queryable,
): Promise<{ codes: string[]; environment: ApiKeyEnvironment | null }> {
  const rows = await q.query<{ code: string; environment: ApiKeyEnvironment }>(
    'SELECT code, environment FROM orders WHERE batch_code = $1 ORDER BY batch_position, code',
    [code],
  );
  return { codes: rows.map((r) => r.code), environment: rows[0]?.environment ?? null };
}
