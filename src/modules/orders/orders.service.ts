/**
 * Order rules: partner reads and events (docs/decisions-log.md, 'Orders'), the operator's order API
 * (docs/decisions-log.md, 'Operator API'). No Fastify here: handlers pass the authenticated key or nothing (admin), services
 * throw AppError. Every change runs through commitOrderChange (order-change.ts): its outbox events are
 * written with it, and after COMMIT the read cache is told and the outbox consumers are woken.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { newId } from '../../shared/ids.js';
import { parseInstant, parseOptionalInstant } from '../../shared/instants.js';
import { newEventId, type OutboxTx } from '../../shared/outbox.js';
import {
  type ApiKeyEnvironment,
  environmentName,
  environmentOf,
  type OrderStatus,
  type WebhookEvent,
} from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { withCurrentActsFor } from '../keys/keys.repo.js';
import { withdrawOpenOfferOfOrder } from '../offers/offers.repo.js';
import { holdCollectionPeriodOfKey } from '../payments/collection-period-lock.js';
import { CODE_ATTEMPTS, newOrderCode } from './codes.js';
import { commitOrderChange, type OrderChangeDeps, type OrderTx } from './order-change.js';
import { type AssignableKey, type LockedOrder, lockOrderByCode, lockOrderForAssignment } from './order-locks.repo.js';
import {
  findAdminOrderByCode,
  listVisibleOrders,
  loadPartnerOrder,
  type OrderListFilters,
  type VisibleOrderLoader,
} from './order-reads.repo.js';
import {
  assignOrderToKey,
  insertNewOrderRow,
  type NewOrder,
  type OrderEventRow,
  recordStatusChange,
} from './order-writes.repo.js';
import type {
  AdminOrder,
  CreateOrderDto,
  ListPartnerOrdersQuery,
  PageOfPartnerOrder,
  PartnerCustomer,
  PartnerOrder,
} from './orders.schemas.js';
import { scopeId } from './read-cache.js';
import { assertPlatformTransition, FINAL_STATUSES, OFFERABLE_STATUSES, statusChangeOf } from './state-machine.js';
import { type JsonBytes, type JsonText, type PartnerOrderPieces, partnerOrderText, scopeOf, seesCustomer } from './visibility.js';

/** What the order services need from the context (AppContext satisfies it). */
export interface OrdersDeps extends OrderChangeDeps {
  clock: { now(): Date; nowMs(): number };
  /** The process's metrics: an offer withdrawn by its order's status change is counted; null when off. */
  metrics?: { offerClosed(outcome: 'withdrawn', decisionSeconds: null): void } | null;
  /** Cached partner reads (read-cache.ts); every change is announced to it after COMMIT (commitOrderChange). */
  orderCache: OrderChangeDeps['orderCache'] & {
    get(key: string, version: string): Buffer | null | undefined;
    set(key: string, version: string, text: string | null): Buffer | null;
  };
  /** Single-order partner reads, coalesced (order-reads.repo.ts `VisibleOrderLoader`; one per process). */
  orderLoader: Pick<VisibleOrderLoader, 'find'>;
  /** Whether a status change's statement may be prepared (src/db/join-plans.ts); absent: planned per call. */
  joinPlans?: { readonly prepared: boolean };
}

/** The admin view from a PartnerOrder snapshot with customer (saves reading the order again). */
function adminView(snapshot: PartnerOrder, environment: ApiKeyEnvironment, assignedKeyId: string | null): AdminOrder {
  return { ...snapshot, environment: environmentName(environment), assignedKeyId };
}

async function snapshotOf(orderId: string, q: Queryable): Promise<PartnerOrder> {
  const order = await loadPartnerOrder(orderId, { pii: true }, q);
  if (!order) throw new Error(`order ${orderId} vanished inside its own transaction`);
  return order;
}

// --- Partner reads ---------------------------------------------------------------------------------

/**
 * `version`: the scope's order-cache version of this request (request.orderVersion); null reads the
 * database.
 */
export async function listPartnerOrders(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  query: ListPartnerOrdersQuery,
  version: string | null,
): Promise<JsonText<PageOfPartnerOrder> | JsonBytes<PageOfPartnerOrder>> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const filters: OrderListFilters = {};
  if (query.status !== undefined) filters.status = query.status;
  if (query.from !== undefined) filters.from = parseInstant('from', query.from);
  if (query.to !== undefined) filters.to = parseInstant('to', query.to);
  if (query.updatedSince !== undefined) filters.updatedSince = parseInstant('updatedSince', query.updatedSince);
  const scope = scopeOf(key, environment);
  const pii = seesCustomer(key);
  // Instants are normalised by parseInstant: two spellings of one query share an entry.
  const cacheKey =
    version === null
      ? null
      : `${scopeId(scope)}|${pii ? 1 : 0}|list|${filters.status ?? ''}|${filters.from ?? ''}|${filters.to ?? ''}|${filters.updatedSince ?? ''}|${page}|${pageSize}`;
  if (cacheKey !== null && version !== null) {
    const cached = deps.orderCache.get(cacheKey, version);
    if (cached) return cached;
  }
  const json = await listVisibleOrders(scope, filters, { page, pageSize }, pii, deps.db);
  if (cacheKey !== null && version !== null) return deps.orderCache.set(cacheKey, version, json) ?? json;
  return json;
}

/**
 * One order the key may see; `version` as for listPartnerOrders. A 404 is cached like an order. Not
 * found through a key that sees only its own orders, the order is looked for once more after reading
 * the key it acts for (keys.repo.ts, withCurrentActsFor): a rotation that committed while the request
 * was on its way moved the key's orders to its successor, which the old key in its grace still reads.
 * That answer is not cached under the key's record as it was.
 */
export async function getPartnerOrder(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  version: string | null,
): Promise<JsonText<PartnerOrder> | JsonBytes<PartnerOrder>> {
  const scope = scopeOf(key, environment);
  const pii = seesCustomer(key);
  const cacheKey = version === null ? null : `${scopeId(scope)}|${pii ? 1 : 0}|order|${code}`;
  let order: JsonText<PartnerOrder> | JsonBytes<PartnerOrder> | null | undefined =
    cacheKey !== null && version !== null ? deps.orderCache.get(cacheKey, version) : undefined;
  if (order === undefined) {
    const text = await deps.orderLoader.find(scope, code, pii);
    const current = text === null && !key.receivesAllOrders ? await withCurrentActsFor(key, deps.db) : key;
    if (current !== key) order = await deps.orderLoader.find(scopeOf(current, environment), code, pii);
    else order = cacheKey !== null && version !== null ? deps.orderCache.set(cacheKey, version, text) : text;
  }
  if (!order) throw notFound('Order');
  return order;
}

// --- Operator API ----------------------------------------------------------------------------------

function normaliseCustomer(input: CreateOrderDto['customer']): PartnerCustomer | null {
  if (!input) return null;
  return {
    name: input.name ?? null,
    phone: input.phone ?? null,
    address: {
      street: input.address.street,
      details: input.address.details ?? null,
      lat: input.address.lat ?? null,
      lng: input.address.lng ?? null,
    },
  };
}

/**
 * Inserts an order with a fresh code (drawing again on the rare collision), its timeline, and the
 * outbox events of its creation (order.placed, and order.assigned_to_partner for an order created
 * assigned), on `tx` (commitOrderChange's, on the pool: one statement is atomic on its own; or in a
 * transaction). Returns the snapshot with customer; an unknown zone is 404.
 */
export async function insertNewOrder(
  order: Omit<NewOrder, 'code'>,
  timeline: { statuses: OrderStatus[]; actor: OrderEventRow['actor'] },
  tx: OutboxTx,
): Promise<PartnerOrder> {
  const outbox: Array<{ eventId: string; type: WebhookEvent }> = [{ eventId: newEventId(), type: 'order.placed' }];
  if (order.assignedKeyId !== null) outbox.push({ eventId: newEventId(), type: 'order.assigned_to_partner' });
  for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
    const outcome = await insertNewOrderRow({ ...order, code: newOrderCode() }, timeline, outbox, tx);
    if (outcome.kind === 'no-zone') throw notFound('Zone');
    if (outcome.kind === 'inserted') return JSON.parse(partnerOrderText(outcome.pieces, true)) as PartnerOrder;
  }
  throw new Error('could not draw a free order code');
}

/** POST /v1/admin/orders: a new order in PLACED. */
export async function createOrder(deps: OrdersDeps, body: CreateOrderDto): Promise<AdminOrder> {
  if (body.paymentMethod === 'CARD' && body.codAmountQepik !== 0) {
    throw validationError('codAmountQepik', 'must be 0 for a CARD order');
  }
  if (body.paymentMethod === 'COD' && body.paymentStatus !== undefined && body.paymentStatus !== 'UNPAID') {
    throw validationError('paymentStatus', 'must be UNPAID for a COD order (the cash collected shows on its payment intent)');
  }
  if (body.codAmountQepik > body.totalQepik) {
    throw validationError('codAmountQepik', 'must not be above totalQepik');
  }
  const timeWindowStart = parseOptionalInstant('timeWindowStart', body.timeWindowStart);
  const timeWindowEnd = parseOptionalInstant('timeWindowEnd', body.timeWindowEnd);
  if (timeWindowStart !== null && timeWindowEnd !== null && Date.parse(timeWindowEnd) <= Date.parse(timeWindowStart)) {
    throw validationError('timeWindowEnd', 'must be after timeWindowStart');
  }
  const environment = environmentOf(body.environment);
  // One statement (insertNewOrderRow): no transaction of its own needed.
  const snapshot = await commitOrderChange(
    deps,
    async (tx) => {
      const order = await insertNewOrder(
        {
          id: newId(),
          environment,
          status: 'PLACED',
          paymentMethod: body.paymentMethod,
          paymentStatus: body.paymentStatus ?? 'UNPAID',
          totalQepik: body.totalQepik,
          codAmountQepik: body.codAmountQepik,
          area: body.area ?? null,
          zoneId: body.zoneId ?? null,
          timeWindowStart,
          timeWindowEnd,
          customer: normaliseCustomer(body.customer),
          assignedKeyId: null,
          partnerAssignedAt: null,
          items: body.items,
          createdAt: deps.clock.now(),
        },
        { statuses: ['PLACED'], actor: 'ADMIN' },
        tx,
      );
      tx.changed({ environment, keyIds: [] });
      return order;
    },
    { transaction: false },
  );
  return adminView(snapshot, environment, null);
}

export async function getAdminOrder(deps: OrdersDeps, code: string): Promise<AdminOrder> {
  const order = await findAdminOrderByCode(code, deps.db);
  if (!order) throw notFound('Order');
  return order;
}

/**
 * POST /v1/admin/orders/{code}/assign. Unknown order or key: 404. A key that is revoked or rotated
 * out (revokedAt set, even in its grace period), a key of the other environment, or an order in a
 * final state: 409 ERR_CONFLICT. Assigning to the key it already has changes nothing.
 */
export async function assignOrder(deps: OrdersDeps, code: string, apiKeyId: string): Promise<AdminOrder> {
  return commitOrderChange(deps, async (tx) => {
    const now = deps.clock.now();
    const { order, key } = await lockOrderForAssignment(code, apiKeyId, tx);
    if (!order) throw notFound('Order');
    if (!key) throw notFound('API key');
    assertAssignable(order, key);
    if (order.assignedKeyId === key.id) {
      return adminView(await snapshotOf(order.id, tx), order.environment, key.id);
    }
    const pieces = await assignLockedOrder(order, key.id, now, tx);
    if (!pieces) {
      throw new AppError(
        'ERR_CONFLICT',
        'The order is offered to a key and the offer is still open; withdraw the offer (DELETE /v1/admin/offers/{id}) or wait for its answer',
      );
    }
    return adminView(JSON.parse(partnerOrderText(pieces, true)) as PartnerOrder, order.environment, key.id);
  });
}

/**
 * What an assignment requires of the locked order and its key (a direct assignment, and an accepted
 * offer: src/modules/offers/): 409 ERR_CONFLICT for a key revoked or rotated out (revokedAt set, even in
 * its grace period), a key of the other environment, or an order in a final state.
 */
export function assertAssignable(order: LockedOrder, key: AssignableKey): void {
  if (key.revokedAt !== null) {
    throw new AppError(
      'ERR_CONFLICT',
      'This API key is revoked or rotated out; assign the order to an active key (after a rotation, the new key)',
    );
  }
  if (key.environment !== order.environment) {
    throw new AppError(
      'ERR_CONFLICT',
      `The key is a ${key.environment} key but the order is a ${order.environment} order; environments must match`,
    );
  }
  if (FINAL_STATUSES.has(order.status)) {
    throw new AppError('ERR_CONFLICT', `The order is ${order.status}; a finished order cannot be assigned`);
  }
}

/**
 * Assigns the locked order to the key (`partnerAssignedAt` = `now`) with its `order.assigned_to_partner`
 * outbox event, and records the scopes it touched: the one assignment path (a direct assignment, an
 * accepted offer). Returns the order's new pieces; null, with nothing written, while the order has an
 * open offer (docs/offers.md).
 */
export async function assignLockedOrder(
  order: LockedOrder,
  keyId: string,
  now: Date,
  tx: OrderTx,
  options: { prepare?: boolean } = {},
): Promise<PartnerOrderPieces | null> {
  const pieces = await assignOrderToKey(
    { orderId: order.id, apiKeyId: keyId, environment: order.environment, eventId: newEventId() },
    now,
    tx,
    options,
  );
  if (pieces) tx.changed({ environment: order.environment, keyIds: [order.assignedKeyId, keyId] });
  return pieces;
}

/**
 * Who makes a platform move and which orders it reaches: the operator reaches every order by code; the
 * sandbox simulator (src/modules/sandbox/) only its key's sandbox orders, locked through that scope.
 */
export interface PlatformMover {
  /** Locks the order `code` for the move; null (404) when this mover cannot reach it. */
  lock(code: string, q: Queryable): Promise<LockedOrder | null>;
  /** The actor of the timeline entry. */
  actor: OrderEventRow['actor'];
}

export const OPERATOR: PlatformMover = { lock: lockOrderByCode, actor: 'ADMIN' };

/** POST /v1/admin/orders/{code}/status: the platform transitions of the state machine (docs/decisions-log.md, 'Orders'; also the sandbox simulator's). */
export async function changeOrderStatus(
  deps: OrdersDeps,
  code: string,
  body: { status: OrderStatus; note?: string },
  by: PlatformMover = OPERATOR,
): Promise<AdminOrder> {
  let withdrawn = 0;
  const changed = await commitOrderChange(deps, async (tx) => {
    let now = deps.clock.now();
    const order = await by.lock(code, tx);
    if (!order) throw notFound('Order');
    assertPlatformTransition(order.status, body.status);
    if (body.status === 'DELIVERED' && order.assignedKeyId !== null) {
      // A DELIVERED may collect cash for the order's partner: its instant is read once no settlement of
      // that partner is being made (src/modules/payments/collection-period-lock.ts).
      await holdCollectionPeriodOfKey(order.assignedKeyId, order.environment, tx);
      now = deps.clock.now();
    }
    const pieces = await recordStatusChange(
      statusChangeOf(order, body.status, { actor: by.actor, note: body.note ?? null }, now),
      tx,
      { prepare: deps.joinPlans?.prepared ?? false },
    );
    // An order leaving PLACED…PACKED (cancelled, or moved on by the platform) withdraws its open offer,
    // under the same row lock (docs/offers.md). Only an unassigned order can have one.
    if (order.assignedKeyId === null && !OFFERABLE_STATUSES.has(body.status)) {
      withdrawn = await withdrawOpenOfferOfOrder(order.id, now, tx);
    }
    tx.changed({ environment: order.environment, keyIds: [order.assignedKeyId] });
    return adminView(JSON.parse(partnerOrderText(pieces, true)) as PartnerOrder, order.environment, order.assignedKeyId);
  });
  if (withdrawn > 0) deps.metrics?.offerClosed('withdrawn', null);
  return changed;
}
