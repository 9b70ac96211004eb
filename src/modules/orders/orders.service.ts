/**
 * Order rules: partner reads and events (spec 3.1, 4.1; decisions §4), the operator's order API
 * (decisions §3). No Fastify here: handlers pass the authenticated key or nothing (admin), services
 * throw AppError. Every change writes its outbox events in its own transaction and wakes the worker
 * after COMMIT.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { newId } from '../../shared/ids.js';
import type { ApiKeyEnvironment, OrderStatus } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key-resolver.js';
import { CODE_ATTEMPTS, newOrderCode } from './codes.js';
import {
  claimIdempotencyKey,
  type IdempotencyScope,
  isStorableError,
  requestHash,
  saveIdempotentResponse,
} from './idempotency.js';
import { parseInstant, parseOptionalInstant } from './instants.js';
import {
  assignOrderToKey,
  findAdminOrderByCode,
  findKeyForAssignment,
  insertOrder,
  insertOrderEvents,
  type JsonText,
  listVisibleOrders,
  loadPartnerOrder,
  lockOrderByCode,
  type NewOrder,
  type OrderEventRow,
  type OrderListFilters,
  type PartnerOrderPieces,
  type PartnerOrderScope,
  partnerOrderJson,
  recordStatusChange,
  VisibleOrderLoader,
} from './orders.repo.js';
import type {
  AdminOrder,
  CreateOrderDto,
  CreatePartnerOrderEventDto,
  ListPartnerOrdersQuery,
  PageOfPartnerOrder,
  PartnerCustomer,
  PartnerOrder,
} from './orders.schemas.js';
import { appendOutbox, newEventId, outboxCommitted, statusChangeEventTypes } from './outbox.js';
import { assertPlatformTransition, FINAL_STATUSES, partnerEventTarget } from './state-machine.js';
import { zoneExists } from './zones.repo.js';

/** What the order services need from the context (AppContext satisfies it). */
export interface OrdersDeps {
  db: { kind?: 'embedded' | 'server'; query: Queryable['query']; tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> };
  clock: { now(): Date; nowMs(): number };
  events: { emit(event: 'outbox'): boolean };
}

const envOf = (e: 'live' | 'sandbox'): ApiKeyEnvironment => (e === 'live' ? 'LIVE' : 'SANDBOX');

export function hasPii(key: ResolvedKey): boolean {
  return key.scopes.includes('orders:pii');
}

/** The orders a key sees on a listener: its (acted-for) key's orders, or all of the environment's. */
export function scopeOf(key: ResolvedKey, environment: ApiKeyEnvironment): PartnerOrderScope {
  return { environment, keyId: key.receivesAllOrders ? null : key.actsForKeyId };
}

/** The admin view from a PartnerOrder snapshot with customer (saves reading the order again). */
function adminView(snapshot: PartnerOrder, environment: ApiKeyEnvironment, assignedKeyId: string | null): AdminOrder {
  return { ...snapshot, environment: environment === 'LIVE' ? 'live' : 'sandbox', assignedKeyId };
}

async function snapshotOf(q: Queryable, orderId: string): Promise<PartnerOrder> {
  const order = await loadPartnerOrder(q, orderId, { pii: true });
  if (!order) throw new Error(`order ${orderId} vanished inside its own transaction`);
  return order;
}

/**
 * Writes a status change on the caller's transaction (which holds the row lock): order row, timeline
 * entry, and its outbox events (status_changed, plus delivered / cancelled), in one statement. Returns
 * the new snapshot's JSON pieces (customer included). The caller calls `outboxCommitted` after COMMIT.
 */
function applyStatusChange(
  q: Queryable,
  order: { id: string; environment: ApiKeyEnvironment; assignedKeyId: string | null; status: OrderStatus },
  to: OrderStatus,
  event: Omit<OrderEventRow, 'orderId' | 'status' | 'at'>,
  now: Date,
): Promise<PartnerOrderPieces> {
  return recordStatusChange(q, {
    orderId: order.id,
    environment: order.environment,
    assignedKeyId: order.assignedKeyId,
    previousStatus: order.status,
    event: { ...event, status: to, at: now },
    outbox: statusChangeEventTypes(to).map((type) => ({ eventId: newEventId(), type })),
  });
}

// --- Partner reads ---------------------------------------------------------------------------------

export async function listPartnerOrders(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  query: ListPartnerOrdersQuery,
): Promise<JsonText<PageOfPartnerOrder>> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const filters: OrderListFilters = {};
  if (query.status !== undefined) filters.status = query.status;
  if (query.from !== undefined) filters.from = parseInstant('from', query.from);
  if (query.to !== undefined) filters.to = parseInstant('to', query.to);
  if (query.updatedSince !== undefined) filters.updatedSince = parseInstant('updatedSince', query.updatedSince);
  return listVisibleOrders(scopeOf(key, environment), filters, { page, pageSize }, hasPii(key), deps.db);
}

/** One coalescing loader per database (see VisibleOrderLoader). */
const loaders = new WeakMap<object, VisibleOrderLoader>();
function loaderFor(db: OrdersDeps['db']): VisibleOrderLoader {
  let loader = loaders.get(db);
  if (!loader) {
    loader = new VisibleOrderLoader(db);
    loaders.set(db, loader);
  }
  return loader;
}

export async function getPartnerOrder(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
): Promise<JsonText<PartnerOrder>> {
  const order = await loaderFor(deps.db).find(scopeOf(key, environment), code, hasPii(key));
  if (!order) throw notFound('Order');
  return order;
}

// --- Partner events --------------------------------------------------------------------------------

/** A successful answer (always 201); refusals, replayed ones included, are thrown. */
export interface PartnerEventResult {
  /** The JSON text of the answer, or (a replay) the stored answer. */
  order: JsonText<PartnerOrder> | PartnerOrder;
  /** True when the answer is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** Rules that depend on the body alone (checked before the order is even looked up). */
function checkEventBody(body: CreatePartnerOrderEventDto): void {
  if (body.type === 'FAILED' && body.failReason === undefined) {
    throw validationError('failReason', 'is required for a FAILED event');
  }
  if (body.failReason !== undefined && body.type !== 'FAILED') {
    throw new AppError('ERR_BAD_REQUEST', 'failReason is only allowed on a FAILED event');
  }
  if (body.codCollectedQepik !== undefined && body.type !== 'DELIVERED') {
    throw new AppError('ERR_BAD_REQUEST', 'codCollectedQepik is only allowed on a DELIVERED event');
  }
  if (body.at !== undefined) parseInstant('at', body.at);
}

const hasText = (note: string | undefined) => note !== undefined && note.trim() !== '';

/**
 * Applies one partner event on transaction `q`. Check order (decisions-log "Orders"): body-only rules
 * (400, done by the caller) → visibility (404) → assignment (403) → order-dependent input rules (400)
 * → transition (409).
 */
async function applyPartnerEvent(
  q: Queryable,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  body: CreatePartnerOrderEventDto,
  now: Date,
): Promise<PartnerOrderPieces> {
  // The row lock serialises racing events on one order: the loser waits, then sees the new status.
  const order = await lockOrderByCode(q, code);
  const visible =
    order !== null && order.environment === environment && (key.receivesAllOrders || order.assignedKeyId === key.actsForKeyId);
  if (!order || !visible) throw notFound('Order');
  if (order.assignedKeyId !== key.actsForKeyId) {
    throw new AppError('ERR_PARTNER_ORDER_NOT_ASSIGNED', 'This order is not assigned to this API key; it is readable only');
  }
  if (body.codCollectedQepik !== undefined) {
    if (order.paymentMethod !== 'COD') {
      throw new AppError('ERR_BAD_REQUEST', 'codCollectedQepik is only allowed on a COD order');
    }
    if (body.codCollectedQepik > order.codAmountQepik) {
      throw validationError('codCollectedQepik', `must not be above the order's COD amount (${order.codAmountQepik})`);
    }
    if (body.codCollectedQepik !== order.codAmountQepik && !hasText(body.note)) {
      throw new AppError(
        'ERR_COD_VARIANCE_NOTE_REQUIRED',
        `codCollectedQepik (${body.codCollectedQepik}) differs from the COD amount (${order.codAmountQepik}); explain it in note`,
      );
    }
  }
  const to = partnerEventTarget(body.type, order.status, order.failedAttempts);
  return applyStatusChange(
    q,
    order,
    to,
    {
      actor: 'PARTNER',
      note: `partner:${key.partnerName}`,
      partnerNote: body.note ?? null,
      failReason: body.failReason ?? null,
      codCollectedQepik: body.codCollectedQepik ?? null,
      partnerReportedAt: body.at === undefined ? null : parseInstant('at', body.at),
      apiKeyId: key.id,
    },
    now,
  );
}

/** POST /v1/partner/orders/{code}/events, with the optional Idempotency-Key. */
export async function recordPartnerEvent(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  body: CreatePartnerOrderEventDto,
  idempotencyKey: string | undefined,
): Promise<PartnerEventResult> {
  checkEventBody(body);
  const pii = hasPii(key);
  const idem: IdempotencyScope | null =
    idempotencyKey === undefined
      ? null
      : { apiKeyId: key.id, key: idempotencyKey, requestHash: requestHash(`POST /v1/partner/orders/${code}/events`, body) };

  type Outcome = { kind: 'ok'; result: PartnerEventResult } | { kind: 'error'; error: AppError };
  const outcome = await deps.db.tx<Outcome>(async (q) => {
    const now = deps.clock.now();
    if (idem) {
      const claim = await claimIdempotencyKey(q, idem, now);
      if (claim.kind === 'replay') {
        if (claim.statusCode >= 400) {
          const stored = claim.response as { code: AppError['code']; message: string; details?: never };
          return {
            kind: 'error',
            error: new AppError(stored.code, stored.message, stored.details, { 'Idempotent-Replayed': 'true' }),
          };
        }
        return { kind: 'ok', result: { order: claim.response as PartnerOrder, replayed: true } };
      }
      // The change runs under a savepoint so a refused event can be undone while its answer is kept.
      await q.query('SAVEPOINT partner_event');
    }
    try {
      const pieces = await applyPartnerEvent(q, key, environment, code, body, now);
      const order = partnerOrderJson(pieces, pii);
      if (idem) await saveIdempotentResponse(q, idem, 201, order);
      return { kind: 'ok', result: { order, replayed: false } };
    } catch (err) {
      if (!idem || !(err instanceof AppError) || !isStorableError(err)) throw err;
      await q.query('ROLLBACK TO SAVEPOINT partner_event');
      const envelope = { statusCode: err.statusCode, code: err.code, message: err.message, details: err.details };
      await saveIdempotentResponse(q, idem, err.statusCode, JSON.stringify(envelope));
      return { kind: 'error', error: err };
    }
  });
  if (outcome.kind === 'error') throw outcome.error;
  if (!outcome.result.replayed) outboxCommitted(deps);
  return outcome.result;
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
 * outbox events of its creation, on transaction `q`. Returns the snapshot with customer.
 */
export async function insertNewOrder(
  q: Queryable,
  order: Omit<NewOrder, 'code'>,
  timeline: { statuses: OrderStatus[]; actor: OrderEventRow['actor'] },
): Promise<PartnerOrder> {
  let inserted = false;
  for (let attempt = 0; attempt < CODE_ATTEMPTS && !inserted; attempt++) {
    inserted = await insertOrder(q, { ...order, code: newOrderCode() });
  }
  if (!inserted) throw new Error('could not draw a free order code');
  await insertOrderEvents(
    q,
    timeline.statuses.map((status) => ({ orderId: order.id, status, at: order.createdAt, actor: timeline.actor })),
  );
  const snapshot = await snapshotOf(q, order.id);
  await appendOutbox(q, {
    type: 'order.placed',
    environment: order.environment,
    orderId: order.id,
    assignedKeyId: order.assignedKeyId,
    data: { order: snapshot },
    createdAt: order.createdAt,
  });
  if (order.assignedKeyId !== null) {
    await appendOutbox(q, {
      type: 'order.assigned_to_partner',
      environment: order.environment,
      orderId: order.id,
      assignedKeyId: order.assignedKeyId,
      data: { order: snapshot },
      createdAt: order.createdAt,
    });
  }
  return snapshot;
}

/** POST /v1/admin/orders: a new order in PLACED. */
export async function createOrder(deps: OrdersDeps, body: CreateOrderDto): Promise<AdminOrder> {
  if (body.paymentMethod === 'CARD' && body.codAmountQepik !== 0) {
    throw validationError('codAmountQepik', 'must be 0 for a CARD order');
  }
  if (body.codAmountQepik > body.totalQepik) {
    throw validationError('codAmountQepik', 'must not be above totalQepik');
  }
  const timeWindowStart = parseOptionalInstant('timeWindowStart', body.timeWindowStart);
  const timeWindowEnd = parseOptionalInstant('timeWindowEnd', body.timeWindowEnd);
  if (timeWindowStart !== null && timeWindowEnd !== null && Date.parse(timeWindowEnd) <= Date.parse(timeWindowStart)) {
    throw validationError('timeWindowEnd', 'must be after timeWindowStart');
  }
  const zoneId = body.zoneId ?? null;
  const environment = envOf(body.environment);
  const snapshot = await deps.db.tx(async (q) => {
    if (zoneId !== null && !(await zoneExists(q, zoneId))) throw notFound('Zone');
    return insertNewOrder(
      q,
      {
        id: newId(),
        environment,
        status: 'PLACED',
        paymentMethod: body.paymentMethod,
        paymentStatus: body.paymentStatus ?? 'UNPAID',
        totalQepik: body.totalQepik,
        codAmountQepik: body.codAmountQepik,
        area: body.area ?? null,
        zoneId,
        timeWindowStart,
        timeWindowEnd,
        customer: normaliseCustomer(body.customer),
        assignedKeyId: null,
        partnerAssignedAt: null,
        items: body.items,
        createdAt: deps.clock.now(),
      },
      { statuses: ['PLACED'], actor: 'ADMIN' },
    );
  });
  deps.events.emit('outbox');
  return adminView(snapshot, environment, null);
}

export async function getAdminOrder(deps: OrdersDeps, code: string): Promise<AdminOrder> {
  const order = await findAdminOrderByCode(deps.db, code);
  if (!order) throw notFound('Order');
  return order;
}

/**
 * POST /v1/admin/orders/{code}/assign. Unknown order or key: 404. A key that is revoked or rotated
 * out (revokedAt set, even in its grace period), a key of the other environment, or an order in a
 * final state: 409 ERR_CONFLICT. Assigning to the key it already has changes nothing.
 */
export async function assignOrder(deps: OrdersDeps, code: string, apiKeyId: string): Promise<AdminOrder> {
  let changed = false;
  const view = await deps.db.tx(async (q) => {
    const now = deps.clock.now();
    const order = await lockOrderByCode(q, code);
    if (!order) throw notFound('Order');
    const key = await findKeyForAssignment(q, apiKeyId);
    if (!key) throw notFound('API key');
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
    if (order.assignedKeyId === key.id) {
      return adminView(await snapshotOf(q, order.id), order.environment, key.id);
    }
    await assignOrderToKey(q, order.id, key.id, now);
    const snapshot = await snapshotOf(q, order.id);
    await appendOutbox(q, {
      type: 'order.assigned_to_partner',
      environment: order.environment,
      orderId: order.id,
      assignedKeyId: key.id,
      data: { order: snapshot },
      createdAt: now,
    });
    changed = true;
    return adminView(snapshot, order.environment, key.id);
  });
  if (changed) deps.events.emit('outbox');
  return view;
}

/** POST /v1/admin/orders/{code}/status: the platform transitions of decisions §4. */
export async function changeOrderStatus(
  deps: OrdersDeps,
  code: string,
  body: { status: OrderStatus; note?: string },
): Promise<AdminOrder> {
  const view = await deps.db.tx(async (q) => {
    const now = deps.clock.now();
    const order = await lockOrderByCode(q, code);
    if (!order) throw notFound('Order');
    assertPlatformTransition(order.status, body.status);
    const pieces = await applyStatusChange(q, order, body.status, { actor: 'ADMIN', note: body.note ?? null }, now);
    return adminView(JSON.parse(partnerOrderJson(pieces, true)) as PartnerOrder, order.environment, order.assignedKeyId);
  });
  outboxCommitted(deps);
  return view;
}
