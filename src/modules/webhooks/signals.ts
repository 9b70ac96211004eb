/**
 * How the webhook pieces tell each other (and the realtime channel) that something happened.
 *
 * In-process (ctx.events):
 *  - `outbox`              a producer committed outbox rows (emitted by the orders module)
 *  - `wake`                the test clock moved (emitted by the context)
 *  - `webhooks.due`        deliveries were queued or became eligible (ping, redeliver, re-enable)
 *  - `outbox.processed`    a fan-out batch committed: OutboxEvent[] (for the realtime channel)
 *  - `delivery.updated`    { partnerId, delivery: DeveloperDelivery } after every committed change
 * Across processes (PostgreSQL server only): NOTIFY on DELIVERIES_DUE_CHANNEL / OUTBOX_CHANNEL, issued
 * inside the writing transaction so listeners hear it only once it has committed.
 */
import type { EventEmitter } from 'node:events';
import type { Db, Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { DeveloperDelivery } from './webhooks.schemas.js';

export const DELIVERIES_DUE_EVENT = 'webhooks.due';
export const OUTBOX_PROCESSED_EVENT = 'outbox.processed';
export const DELIVERY_UPDATED_EVENT = 'delivery.updated';

/** NOTIFY channel: deliveries were queued or re-enabled; workers should claim now. */
export const DELIVERIES_DUE_CHANNEL = 'partner_api_deliveries_due';
/** NOTIFY channel a producer in another process may use after committing outbox rows. */
export const OUTBOX_CHANNEL = 'partner_api_outbox';

/** One processed outbox row, as the realtime channel receives it. */
export interface OutboxEvent {
  eventId: string;
  type: string;
  environment: ApiKeyEnvironment;
  orderId: string | null;
  assignedKeyId: string | null;
  data: Record<string, unknown>;
}

export interface DeliveryUpdated {
  partnerId: string;
  delivery: DeveloperDelivery;
}

/** Inside a transaction: wakes workers in other processes once it commits (server mode only). */
export async function notifyDeliveriesDue(db: Db, q: Queryable): Promise<void> {
  if (db.kind === 'server') await q.query('SELECT pg_notify($1, $2)', [DELIVERIES_DUE_CHANNEL, '']);
}

/** After commit: wakes workers in this process. */
export function signalDeliveriesDue(events: EventEmitter): void {
  events.emit(DELIVERIES_DUE_EVENT);
}

export function emitDeliveryUpdated(events: EventEmitter, partnerId: string, delivery: DeveloperDelivery): void {
  const payload: DeliveryUpdated = { partnerId, delivery };
  events.emit(DELIVERY_UPDATED_EVENT, payload);
}
