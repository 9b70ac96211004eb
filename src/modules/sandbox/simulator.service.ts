/**
 * The marketplace's moves on a key's sandbox orders (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): platform transitions and van
 * batches through COMPLETED. Each calls the operator's own service function (orders.service.ts
 * `changeOrderStatus`, batches.service.ts `createBatch` / `changeBatchStatus`) with the key's sandbox
 * scope, so it writes exactly the same rows and outbox events, hence the same webhooks and realtime
 * messages, as the operator's move; only what it can reach differs (sandbox-key.ts).
 */
import type { OrderStatus } from '../../shared/schemas.js';
import { changeBatchStatus, createBatch } from '../orders/batches.service.js';
import { listVisibleOrders } from '../orders/order-reads.repo.js';
import type { AdminOrder, Batch, BatchStatus, PageOfPartnerOrder, PartnerOrder } from '../orders/orders.schemas.js';
import { changeOrderStatus, type OrdersDeps } from '../orders/orders.service.js';
import { batchMovesFrom, partnerEventsFrom, platformMovesFrom } from '../orders/state-machine.js';
import { orderAsSeenBy, seesCustomer } from '../orders/visibility.js';
import { ownBatches } from './sandbox.repo.js';
import type { SandboxOverview } from './sandbox.schemas.js';
import { type SandboxKey, sandboxScopeOf, simulatorFor } from './sandbox-key.js';

/** How many of the key's orders the overview shows (the newest). */
export const OVERVIEW_ORDERS = 50;

/** The order of an operator answer as `key` sees it. */
function asSeenBy(key: SandboxKey, { environment: _e, assignedKeyId: _k, ...order }: AdminOrder): PartnerOrder {
  return orderAsSeenBy(key, order);
}

/** The marketplace moves the order to `status` (a platform transition of the state machine, else 409: docs/decisions-log.md, 'Orders'). */
export async function movePlatformStatus(
  deps: OrdersDeps,
  key: SandboxKey,
  code: string,
  status: OrderStatus,
): Promise<PartnerOrder> {
  return asSeenBy(key, await changeOrderStatus(deps, code, { status }, simulatorFor(key)));
}

/** A van batch of the key's sandbox orders (any other code: 404). */
export async function createSandboxBatch(deps: OrdersDeps, key: SandboxKey, orderCodes: string[]): Promise<Batch> {
  return createBatch(deps, orderCodes, sandboxScopeOf(key));
}

/** OPEN → DISPATCHED → COMPLETED on a batch of the key's sandbox orders; COMPLETED emits batch.completed. */
export async function moveSandboxBatch(deps: OrdersDeps, key: SandboxKey, code: string, status: BatchStatus): Promise<Batch> {
  return changeBatchStatus(deps, code, status, sandboxScopeOf(key));
}

/**
 * The key's newest sandbox orders with the moves each allows (marketplace moves and partner events,
 * from the state machine), and their batches with theirs: what the portal draws its buttons from.
 */
export async function sandboxOverview(deps: OrdersDeps, key: SandboxKey): Promise<SandboxOverview> {
  const scope = sandboxScopeOf(key);
  const page = JSON.parse(
    await listVisibleOrders(scope, {}, { page: 1, pageSize: OVERVIEW_ORDERS }, seesCustomer(key), deps.db),
  ) as PageOfPartnerOrder;
  const batchCodes = [...new Set(page.items.flatMap((o) => (o.batch ? [o.batch.code] : [])))];
  const batches = await ownBatches(scope, batchCodes, deps.db);
  return {
    apiKeyId: key.id,
    orders: page.items.map((order) => ({
      order,
      platformMoves: [...platformMovesFrom(order.status)],
      partnerEvents: partnerEventsFrom(order.status, order.timeline.filter((e) => e.status === 'FAILED').length),
    })),
    batches: batches.map((b) => ({ ...b, moves: batchMovesFrom(b.status) })),
  };
}
