/**
 * How the delivery pieces tell each other (and the realtime channel) that something happened to
 * deliveries. (The outbox's own signals, `outbox` and `outbox.processed` and the NOTIFY channel
 * `partner_api_outbox`, are part of the outbox contract: src/shared/outbox.ts.)
 *
 * In-process (ctx.events):
 *  - `webhooks.due`        deliveries were queued or became eligible (fan-out, ping, redeliver, re-enable)
 *  - `delivery.updated`    { partnerId, delivery: DeveloperDelivery } after every committed change
 *  - `webhook.updated`     { partnerId, webhook: DeveloperWebhook } after every committed change of a
 *                          webhook (edit, streak, isActive, secret rotation); the realtime channel sends it
 *  - `webhooks.recover`    a recovery was started: workers feed its deliveries to the queue
 *  - `wake`                the test clock moved (emitted by the context)
 * Across processes (PostgreSQL server only): NOTIFY on DELIVERIES_DUE_CHANNEL, issued inside the
 * writing transaction so listeners hear it only once it has committed.
 */
import type { EventEmitter } from 'node:events';
import type { Db, Queryable } from '../../db/db.js';
import type { DeveloperDelivery, DeveloperWebhook } from './webhooks.schemas.js';

export const DELIVERIES_DUE_EVENT = 'webhooks.due';
export const DELIVERY_UPDATED_EVENT = 'delivery.updated';
export const WEBHOOK_UPDATED_EVENT = 'webhook.updated';
export const RECOVERY_EVENT = 'webhooks.recover';

/** NOTIFY channel: deliveries were queued or re-enabled; workers should claim now. */
export const DELIVERIES_DUE_CHANNEL = 'partner_api_deliveries_due';

export interface DeliveryUpdated {
  partnerId: string;
  delivery: DeveloperDelivery;
}

export interface WebhookUpdated {
  partnerId: string;
  webhook: DeveloperWebhook;
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

export function emitWebhookUpdated(events: EventEmitter, partnerId: string, webhook: DeveloperWebhook): void {
  const payload: WebhookUpdated = { partnerId, webhook };
  events.emit(WEBHOOK_UPDATED_EVENT, payload);
}
