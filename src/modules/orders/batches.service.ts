/**
 * Van batches (docs/decisions-log.md, 'Operator API'): an operator groups orders of one environment into a batch that moves
 * OPEN → DISPATCHED → COMPLETED. Completing a batch emits `batch.completed`. A batch shows in each of
 * its orders, so every change announces a change of everything to the read cache (rare, bulk).
 * The sandbox simulator (src/modules/sandbox/) runs the same functions with a `BatchScope`: only the
 * orders and batches of its key are reached; the others answer 404 as if they did not exist.
 */
import { AppError, notFound } from '../../errors.js';
import { appendOutbox } from '../../shared/outbox.js';
import {
  type BatchScope,
  batchOrders,
  insertBatch,
  lockBatch,
  lockOrdersForBatch,
  putOrdersOnBatch,
  updateBatchStatus,
} from './batches.repo.js';
import { CODE_ATTEMPTS, newBatchCode } from './codes.js';
import { commitOrderChange } from './order-change.js';
import type { Batch, BatchStatus } from './orders.schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { assertBatchTransition } from './state-machine.js';

/**
 * POST /v1/admin/batches. Unknown codes: 404 (details.orderCodes lists them). Orders of different
 * environments, or an order already on an OPEN or DISPATCHED batch: 409 ERR_CONFLICT. An order whose
 * previous batch is COMPLETED (a failed delivery going out again) may join a new batch.
 */
export async function createBatch(deps: OrdersDeps, orderCodes: string[], scope: BatchScope | null = null): Promise<Batch> {
  return commitOrderChange(deps, async (tx) => {
    const now = deps.clock.now();
    const found = await lockOrdersForBatch(orderCodes, scope, tx);
    const byCode = new Map(found.map((o) => [o.code, o]));
    const missing = orderCodes.filter((c) => !byCode.has(c));
    if (missing.length > 0) {
      throw new AppError('ERR_NOT_FOUND', `Order not found: ${missing.join(', ')}`, { orderCodes: missing });
    }
    if (new Set(found.map((o) => o.environment)).size > 1) {
      throw new AppError('ERR_CONFLICT', 'All orders of a batch must belong to one environment (live or sandbox)');
    }
    const busy = found.filter((o) => o.batchStatus === 'OPEN' || o.batchStatus === 'DISPATCHED');
    if (busy.length > 0) {
      throw new AppError(
        'ERR_CONFLICT',
        `Already on an open or dispatched batch: ${busy.map((o) => `${o.code} (${o.batchCode})`).join(', ')}`,
        { orderCodes: busy.map((o) => o.code) },
      );
    }
    let code: string | null = null;
    for (let attempt = 0; attempt < CODE_ATTEMPTS && code === null; attempt++) {
      const candidate = newBatchCode();
      if (await insertBatch(candidate, now, tx)) code = candidate;
    }
    if (code === null) throw new Error('could not draw a free batch code');
    await putOrdersOnBatch(
      code,
      orderCodes.map((c) => byCode.get(c)!.id),
      now,
      tx,
    );
    tx.changed('all');
    return { code, status: 'OPEN', orderCodes: [...orderCodes] } satisfies Batch;
  });
}

/** POST /v1/admin/batches/{code}/status: OPEN → DISPATCHED → COMPLETED only. */
export async function changeBatchStatus(
  deps: OrdersDeps,
  code: string,
  status: BatchStatus,
  scope: BatchScope | null = null,
): Promise<Batch> {
  return commitOrderChange(deps, async (tx) => {
    const now = deps.clock.now();
    const current = await lockBatch(code, scope, tx);
    if (!current) throw notFound('Batch');
    assertBatchTransition(current.status, status);
    await updateBatchStatus(code, status, now, tx);
    const orders = await batchOrders(code, tx);
    const result: Batch = { code, status, orderCodes: orders.codes };
    if (status === 'COMPLETED' && orders.environment !== null) {
      await appendOutbox(
        {
          type: 'batch.completed',
          environment: orders.environment,
          orderId: null,
          assignedKeyId: null,
          data: { batch: result },
          createdAt: now,
        },
        tx,
      );
    }
    tx.changed('all');
    return result;
  });
}
