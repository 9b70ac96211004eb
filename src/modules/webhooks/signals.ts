/**
 * How the delivery pieces tell each other (and the realtime channel) that something happened to
 * deliveries. (The outbox's own signals, `outbox` and `outbox.processed` and the NOTIFY channel
 * `partner_api_outbox`, are part of the outbox contract: src/shared/outbox.ts.)
 *
 * In-process (ctx.events; src/events.ts declares them with their payloads): `webhooks.due`,
 * `delivery.updated`, `webhook.updated`, `webhooks.recover`.
 * Across processes (PostgreSQL server only): NOTIFY on DELIVERIES_DUE_CHANNEL, issued inside the
 * writing transaction so listeners hear it only once it has committed.
 */
import type { Db, Queryable } from '../../db/db.js';
import { prepared } from '../../db/prepared.js';
import type { AppEventBus } from '../../events.js';
import type { DeveloperDelivery, DeveloperWebhook } from './webhooks.schemas.js';

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
  // Prepared: a statement that reads no table has one plan, and planning it costs more than running it.
  if (db.kind === 'server') await prepared('SELECT pg_notify($1, $2)', [DELIVERIES_DUE_CHANNEL, ''], q);
}

/** After commit: wakes workers in this process. */
export function signalDeliveriesDue(events: Pick<AppEventBus, 'emit'>): void {
  events.emit('webhooks.due');
}

export function emitDeliveryUpdated(events: Pick<AppEventBus, 'emit'>, partnerId: string, delivery: DeveloperDelivery): void {
  const payload: DeliveryUpdated = { partnerId, delivery };
  events.emit('delivery.updated', payload);
}

export function emitWebhookUpdated(events: Pick<AppEventBus, 'emit'>, partnerId: string, webhook: DeveloperWebhook): void {
  const payload: WebhookUpdated = { partnerId, webhook };
  events.emit('webhook.updated', payload);
}
