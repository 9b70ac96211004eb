/**
 * The rules of a partner event (docs/decisions-log.md, 'Orders'), apart from how events are written
 * (partner-events.ts: one at a time with an Idempotency-Key; partner-event-writer.ts: group commit).
 *
 * Check order (decisions-log "Orders"): body-only rules (400, before the order is looked up) →
 * visibility (404) → assignment (403) → order-dependent input rules (400) → transition (409).
 * Visibility is decided by the lock itself: the order is locked THROUGH the key's scope
 * (`lockVisibleOrder(s)`, visibility.ts), so an order the key may not see is never locked or read.
 *
 * An event racing its key's rotation answers as if the two ran one after the other: the key record the
 * request was authenticated with may predate the rotation, whose transaction moves the key's orders to
 * the successor (a rotated-out key acts for its successor: docs/decisions-log.md, 'API keys'). So when the lock finds nothing
 * for a key that sees only its own orders, or finds the order assigned to another key than the record
 * says (a receivesAllOrders key), the key's current successor is read in the same transaction (only
 * then: the usual path costs nothing more) and the event is judged with it, the order locked through
 * the successor's scope if need be. The order lock orders the two: a rotation that has not committed
 * waits for the event, or the event's lock waits for the rotation, then finds the order moved (a lock
 * re-checks its conditions on the row as committed) and the rotation committed. An event racing a
 * revoke is judged as having come first (it was admitted before the revoke answered); one arriving
 * after is refused at admission.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { parseInstant } from '../../shared/instants.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { withCurrentActsFor } from '../keys/keys.repo.js';
import { type LockedOrder, lockVisibleOrder } from './order-locks.repo.js';
import type { StatusChange } from './order-writes.repo.js';
import type { CreatePartnerOrderEventDto } from './orders.schemas.js';
import { partnerEventTarget, statusChangeOf } from './state-machine.js';
import { scopeOf } from './visibility.js';

/** Rules that depend on the body alone (checked before the order is even looked up). */
export function checkEventBody(body: CreatePartnerOrderEventDto): void {
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

/** The order an event is about, locked through the scope of `key`, and the key to judge the event with. */
export interface EventTarget {
  key: ResolvedKey;
  /** Null: no order of that code the key sees (404). */
  order: LockedOrder | null;
}

/**
 * The target of an event whose order was locked through `scopeOf(key, environment)` (`locked`: what
 * that found), with the key record brought up to date when it may predate a rotation (see the top of
 * the file). Answers at once (no promise) when nothing needs reading: the usual case.
 */
export function eventTarget(
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  locked: LockedOrder | null,
  q: Queryable,
): EventTarget | Promise<EventTarget> {
  if (locked === null) return key.receivesAllOrders ? { key, order: null } : afterRotation(key, environment, code, q);
  if (locked.assignedKeyId === null || locked.assignedKeyId === key.actsForKeyId) return { key, order: locked };
  return withCurrentActsFor(key, q).then((current) => ({ key: current, order: locked }));
}

/**
 * Nothing visible to a key that sees only its own orders: if the key has been rotated since its record
 * was read, its orders moved to the successor; lock the order through the successor's scope. In the
 * group commit this lock comes after the group's own, outside code order: it can only happen in that
 * race, and a deadlock it might meet fails the group, whose events are then tried one by one.
 */
async function afterRotation(key: ResolvedKey, environment: ApiKeyEnvironment, code: string, q: Queryable): Promise<EventTarget> {
  const current = await withCurrentActsFor(key, q);
  if (current === key) return { key, order: null };
  return { key: current, order: await lockVisibleOrder(scopeOf(current, environment), code, q) };
}

/** The change one partner event makes to its order (its target), or the refusal it gets (thrown). */
export function partnerEventChange(target: EventTarget, body: CreatePartnerOrderEventDto, now: Date): StatusChange {
  const { key, order } = target;
  if (!order) throw notFound('Order');
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
  return statusChangeOf(
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
