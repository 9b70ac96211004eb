/**
 * Domain events (the transactional outbox). Every order change writes its events here IN THE SAME
 * TRANSACTION as the change, so an event exists exactly when its change committed; the caller emits
 * `ctx.events.emit('outbox')` after COMMIT to wake the worker in-process.
 *
 * Contract for consumers (webhook fan-out, realtime):
 *  - order events: `data = { order: PartnerOrder WITH customer filled, previousStatus? }`, `order_id`
 *    the order, `assigned_key_id` the order's key at that moment (null when unassigned). A consumer
 *    delivering to a key without `orders:pii` must null `customer` (see `withoutCustomer`).
 *  - `batch.completed`: `data = { batch: { code, status, orderCodes } }`, `order_id` and
 *    `assigned_key_id` null, `environment` the environment of the batch's orders.
 */
import { randomInt } from 'node:crypto';
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, OrderStatus, WebhookEvent } from '../../shared/schemas.js';
import { OUTBOX_CHANNEL } from '../webhooks/signals.js';
import type { Batch, PartnerOrder } from './orders.schemas.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `evt_` + 24 base62 characters from a CSPRNG: stable across every delivery of the event. */
export function newEventId(): string {
  let id = 'evt_';
  for (let i = 0; i < 24; i++) id += BASE62[randomInt(62)];
  return id;
}

export interface OrderEventData {
  order: PartnerOrder;
  previousStatus?: OrderStatus;
}

export interface BatchEventData {
  batch: Batch;
}

export interface OutboxEvent {
  type: WebhookEvent;
  environment: ApiKeyEnvironment;
  orderId: string | null;
  assignedKeyId: string | null;
  data: OrderEventData | BatchEventData;
  /** From ctx.clock: the event's `createdAt`. */
  createdAt: Date;
}

/**
 * Appends one event; call it with the transaction of the change it describes. The same statement
 * NOTIFYs OUTBOX_CHANNEL, which PostgreSQL delivers only when the transaction commits (and once per
 * transaction however many events it wrote), so workers in other processes wake at once; in-process
 * the caller emits `ctx.events.emit('outbox')` after COMMIT.
 */
export async function appendOutbox(q: Queryable, event: OutboxEvent): Promise<string> {
  const eventId = newEventId();
  await q.query(
    `WITH wake AS (SELECT pg_notify($8, ''))
     INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at)
     SELECT $1::text, $2::text, $3::text, $4::uuid, $5::uuid, $6::jsonb, $7::timestamptz FROM wake`,
    [
      eventId,
      event.type,
      event.environment,
      event.orderId,
      event.assignedKeyId,
      JSON.stringify(event.data),
      event.createdAt,
      OUTBOX_CHANNEL,
    ],
  );
  return eventId;
}

/** What `outboxCommitted` needs (OrdersDeps / AppContext satisfy it). */
export interface OutboxSignalDeps {
  db: { kind?: 'embedded' | 'server'; query: Queryable['query'] };
  events: { emit(event: 'outbox'): boolean };
}

/** Per database: whether a wake-up NOTIFY is in flight, and whether another commit happened meanwhile. */
const pendingNotify = new WeakMap<object, { again: boolean }>();

/**
 * Wakes outbox consumers after the COMMIT of rows written WITHOUT a NOTIFY in their transaction (the
 * status-change path, `recordStatusChange`): in-process at once, and on a PostgreSQL server other
 * processes through one NOTIFY OUTBOX_CHANNEL, coalesced: while one is in flight, further commits
 * only ask for one more after it.
 *
 * Why not NOTIFY inside the change's transaction, as `appendOutbox` does: PostgreSQL serialises the
 * commits of all transactions that NOTIFY (a database-wide lock held from pre-commit until the commit
 * record is flushed), so every partner event waited for the previous one's WAL flush. The wake-up
 * carries no data, needs no durability (synchronous_commit off for it) and may be lost in a crash
 * between COMMIT and NOTIFY: the worker's poll then picks the rows up a little later.
 */
export function outboxCommitted(deps: OutboxSignalDeps): void {
  deps.events.emit('outbox');
  if (deps.db.kind !== 'server') return;
  const db = deps.db;
  const pending = pendingNotify.get(db);
  if (pending) {
    pending.again = true;
    return;
  }
  const state = { again: false };
  pendingNotify.set(db, state);
  const send = (): void => {
    db.query("SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')", [OUTBOX_CHANNEL])
      .catch(() => {}) // the worker's poll covers a lost wake-up (database closing, connection lost)
      .finally(() => {
        if (state.again) {
          state.again = false;
          send();
        } else pendingNotify.delete(db);
      });
  };
  send();
}

/** The events a status change emits (decisions §6): always status_changed, plus delivered / cancelled. */
export function statusChangeEventTypes(to: OrderStatus): WebhookEvent[] {
  const types: WebhookEvent[] = ['order.status_changed'];
  if (to === 'DELIVERED') types.push('order.delivered');
  if (to === 'CANCELLED') types.push('order.cancelled');
  return types;
}

/** The order as a key without `orders:pii` sees it. */
export function withoutCustomer<T extends { customer: unknown }>(order: T): T {
  return order.customer === null ? order : { ...order, customer: null };
}
