/**
 * Van batches (decisions §3): an operator groups orders of one environment into a batch that moves
 * OPEN → DISPATCHED → COMPLETED. Completing a batch emits `batch.completed`.
 */
import { AppError, notFound } from '../../errors.js';
import { batchOrders, insertBatch, lockBatch, lockOrdersForBatch, putOrdersOnBatch, updateBatchStatus } from './batches.repo.js';
import { CODE_ATTEMPTS, newBatchCode } from './codes.js';
import type { Batch, BatchStatus } from './orders.schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { appendOutbox } from './outbox.js';
import { assertBatchTransition } from './state-machine.js';

/**
 * POST /v1/admin/batches. Unknown codes: 404 (details.orderCodes lists them). Orders of different
 * environments, or an order already on an OPEN or DISPATCHED batch: 409 ERR_CONFLICT. An order whose
 * previous batch is COMPLETED (a failed delivery going out again) may join a new batch.
 */
export async function createBatch(deps: OrdersDeps, orderCodes: string[]): Promise<Batch> {
  const batch = await deps.db.tx(async (q) => {
    const now = deps.clock.now();
    const found = await lockOrdersForBatch(q, orderCodes);
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
      if (await insertBatch(q, candidate, now)) code = candidate;
    }
    if (code === null) throw new Error('could not draw a free batch code');
    await putOrdersOnBatch(
      q,
      code,
      orderCodes.map((c) => byCode.get(c)!.id),
      now,
    );
    return { code, status: 'OPEN', orderCodes: [...orderCodes] } satisfies Batch;
  });
  // A batch shows in each of its orders (rare, bulk: every cached read is dropped).
  await deps.orderCache.changed('all');
  return batch;
}

/** POST /v1/admin/batches/{code}/status: OPEN → DISPATCHED → COMPLETED only. */
export async function changeBatchStatus(deps: OrdersDeps, code: string, status: BatchStatus): Promise<Batch> {
  let completed = false;
  const batch = await deps.db.tx(async (q) => {
    const now = deps.clock.now();
    const current = await lockBatch(q, code);
    if (!current) throw notFound('Batch');
    assertBatchTransition(current.status, status);
    await updateBatchStatus(q, code, status, now);
    const orders = await batchOrders(q, code);
    const result: Batch = { code, status, orderCodes: orders.codes };
    if (status === 'COMPLETED' && orders.environment !== null) {
      await appendOutbox(q, {
        type: 'batch.completed',
        environment: orders.environment,
        orderId: null,
        assignedKeyId: null,
        data: { batch: result },
        createdAt: now,
      });
      completed = true;
    }
    return result;
  });
  await deps.orderCache.changed('all');
  if (completed) deps.events.emit('outbox');
  return batch;
}
