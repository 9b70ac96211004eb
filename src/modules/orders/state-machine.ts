/**
 * The order state machine (docs/decisions-log.md, 'Orders'): platform (operator) transitions, partner events
 * and the batch lifecycle. Pure functions; the services call them with the row they locked.
 */
import { AppError } from '../../errors.js';
import { newEventId } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, OrderStatus, PartnerEventType, WebhookEvent } from '../../shared/schemas.js';
import type { OrderEventRow, StatusChange } from './order-writes.repo.js';
import type { BatchStatus } from './orders.schemas.js';

export const FINAL_STATUSES: ReadonlySet<OrderStatus> = new Set(['DELIVERED', 'RETURNED', 'CANCELLED']);

/** A partner may move an order out of FAILED back to EN_ROUTE only while it has failed fewer times. */
export const MAX_FAILED_ATTEMPTS = 3;

const PLATFORM_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  PLACED: ['VENDOR_ACCEPTED', 'CANCELLED'],
  VENDOR_ACCEPTED: ['RUNNER_PICKUP', 'CANCELLED'],
  RUNNER_PICKUP: ['AT_HUB'],
  AT_HUB: ['PACKED'],
  PACKED: ['SCANNED_TO_VAN', 'CANCELLED'],
  SCANNED_TO_VAN: ['EN_ROUTE'],
  EN_ROUTE: ['DELIVERED', 'FAILED'],
  FAILED: ['EN_ROUTE', 'RETURNED'],
  DELIVERED: [],
  RETURNED: [],
  CANCELLED: [],
};

interface PartnerEdge {
  from: readonly OrderStatus[];
  to: OrderStatus;
}

const PARTNER_EVENTS: Readonly<Record<PartnerEventType, PartnerEdge>> = {
  PICKED_UP: { from: ['PACKED'], to: 'SCANNED_TO_VAN' },
  // PACKED → EN_ROUTE is the partner-only edge for regionally fulfilled orders (docs/decisions-log.md, 'Orders').
  EN_ROUTE: { from: ['SCANNED_TO_VAN', 'PACKED', 'FAILED'], to: 'EN_ROUTE' },
  DELIVERED: { from: ['EN_ROUTE'], to: 'DELIVERED' },
  FAILED: { from: ['EN_ROUTE'], to: 'FAILED' },
};

const BATCH_TRANSITIONS: Readonly<Record<BatchStatus, BatchStatus | null>> = {
  OPEN: 'DISPATCHED',
  DISPATCHED: 'COMPLETED',
  COMPLETED: null,
};

/** The platform (marketplace) moves allowed from `from` (docs/decisions-log.md, 'Orders'): the operator's and the sandbox simulator's. */
export function platformMovesFrom(from: OrderStatus): readonly OrderStatus[] {
  return PLATFORM_TRANSITIONS[from];
}

/**
 * The statuses an order passes through from PLACED to `to` by platform transitions, both ends included:
 * the shortest way through PLATFORM_TRANSITIONS (breadth first), so the timeline a real order has on
 * reaching `to`. Null when `to` cannot be reached from PLACED that way.
 */
export function platformPathTo(to: OrderStatus): OrderStatus[] | null {
  const previous = new Map<OrderStatus, OrderStatus | null>([['PLACED', null]]);
  const queue: OrderStatus[] = ['PLACED'];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    if (at === to) {
      const path: OrderStatus[] = [];
      for (let s: OrderStatus | null = at; s !== null; s = previous.get(s) ?? null) path.unshift(s);
      return path;
    }
    for (const next of PLATFORM_TRANSITIONS[at]) {
      if (!previous.has(next)) {
        previous.set(next, at);
        queue.push(next);
      }
    }
  }
  return null;
}

/**
 * The statuses an order may be offered in, PLACED to PACKED (docs/offers.md): an open offer is withdrawn
 * when its order leaves them.
 */
export const OFFERABLE_STATUSES: ReadonlySet<OrderStatus> = new Set(platformPathTo('PACKED') ?? []);

/** Whether the retry limit refuses `type` from `from`: EN_ROUTE out of FAILED after MAX_FAILED_ATTEMPTS failures. */
function retryLimitReached(type: PartnerEventType, from: OrderStatus, failedAttempts: number): boolean {
  return type === 'EN_ROUTE' && from === 'FAILED' && failedAttempts >= MAX_FAILED_ATTEMPTS;
}

/** The partner events an order in `from` accepts, after `failedAttempts` failed deliveries (docs/decisions-log.md, 'Orders'). */
export function partnerEventsFrom(from: OrderStatus, failedAttempts: number): PartnerEventType[] {
  return (Object.keys(PARTNER_EVENTS) as PartnerEventType[]).filter(
    (type) => PARTNER_EVENTS[type].from.includes(from) && !retryLimitReached(type, from, failedAttempts),
  );
}

/** The status a partner event moves an order to. */
export function partnerEventStatus(type: PartnerEventType): OrderStatus {
  return PARTNER_EVENTS[type].to;
}

/** The batch moves allowed from `from`: the next status, if any. */
export function batchMovesFrom(from: BatchStatus): BatchStatus[] {
  const next = BATCH_TRANSITIONS[from];
  return next === null ? [] : [next];
}

/** The operator's move `from → to`, or 409 ERR_INVALID_TRANSITION. */
export function assertPlatformTransition(from: OrderStatus, to: OrderStatus): void {
  if (!PLATFORM_TRANSITIONS[from].includes(to)) {
    throw new AppError('ERR_INVALID_TRANSITION', `An order cannot move from ${from} to ${to}`, { from, to });
  }
}

/**
 * The status a partner event leads to from `from`, or 409: ERR_DELIVERY_RETRY_LIMIT for a fourth
 * attempt after three failures, ERR_INVALID_TRANSITION for any other source state.
 */
export function partnerEventTarget(type: PartnerEventType, from: OrderStatus, failedAttempts: number): OrderStatus {
  const edge = PARTNER_EVENTS[type];
  if (!edge.from.includes(from)) {
    throw new AppError('ERR_INVALID_TRANSITION', `Event ${type} is not allowed while the order is ${from}`, {
      from,
      event: type,
    });
  }
  if (retryLimitReached(type, from, failedAttempts)) {
    throw new AppError(
      'ERR_DELIVERY_RETRY_LIMIT',
      `The order has failed ${failedAttempts} delivery attempts; no further attempt is allowed`,
      { failedAttempts, limit: MAX_FAILED_ATTEMPTS },
    );
  }
  return edge.to;
}

/** OPEN → DISPATCHED → COMPLETED only, else 409 ERR_BATCH_INVALID_TRANSITION. */
export function assertBatchTransition(from: BatchStatus, to: BatchStatus): void {
  if (BATCH_TRANSITIONS[from] !== to) {
    throw new AppError('ERR_BATCH_INVALID_TRANSITION', `A batch cannot move from ${from} to ${to}`, { from, to });
  }
}

/** The events a status change emits (docs/decisions-log.md, 'Webhooks'): always status_changed, plus delivered / cancelled. */
export function statusChangeEventTypes(to: OrderStatus): WebhookEvent[] {
  const types: WebhookEvent[] = ['order.status_changed'];
  if (to === 'DELIVERED') types.push('order.delivered');
  if (to === 'CANCELLED') types.push('order.cancelled');
  return types;
}

/**
 * The status change of an order (row, timeline entry, and its outbox events: status_changed, plus
 * delivered / cancelled), to be written by recordStatusChange(s) on the transaction holding the row lock.
 */
export function statusChangeOf(
  order: { id: string; environment: ApiKeyEnvironment; assignedKeyId: string | null; status: OrderStatus },
  to: OrderStatus,
  event: Omit<OrderEventRow, 'orderId' | 'status' | 'at'>,
  now: Date,
): StatusChange {
  return {
    orderId: order.id,
    environment: order.environment,
    assignedKeyId: order.assignedKeyId,
    previousStatus: order.status,
    event: { ...event, status: to, at: now },
    outbox: statusChangeEventTypes(to).map((type) => ({ eventId: newEventId(), type })),
  };
}
