/**
 * The process's in-process events (`ctx.events`), declared once with each event's payload. Emitting an
 * event not listed here, or with another payload, does not compile. Events go no further than this
 * process: what other processes must hear travels through PostgreSQL (NOTIFY) or Redis.
 *
 * Who emits each event is named beside it; the realtime hub (src/modules/realtime/realtime.hub.ts)
 * turns some of them into updates for the portal's sockets through the publishers the domains give it
 * (src/modules/realtime/rooms.ts).
 */
import { EventEmitter } from 'node:events';
import type { RequestLogged } from './modules/request-log/request-log.types.js';
import type { TrackingUpdate } from './modules/tracking/tracking-buffer.js';
import type { DeliveryUpdated, WebhookUpdated } from './modules/webhooks/signals.js';
import type { ProcessedOutboxEvent } from './shared/outbox.js';

export interface AppEvents {
  /** Outbox rows committed: the worker fans out now (the unit of work's `OutboxSignal`, src/shared/outbox.ts). */
  outbox: [];
  /** A fan-out batch committed, with its rows (src/worker/fanout.ts). */
  'outbox.processed': [rows: ProcessedOutboxEvent[]];
  /** The test clock moved (src/context.ts): time-driven work looks again. */
  wake: [];
  /** Deliveries were queued or became eligible (src/modules/webhooks/signals.ts). */
  'webhooks.due': [];
  /** A webhook recovery started: workers feed its deliveries to the queue (webhook-operations.service.ts). */
  'webhooks.recover': [];
  /** A delivery changed, committed (src/modules/webhooks/signals.ts). */
  'delivery.updated': [update: DeliveryUpdated];
  /** A webhook changed, committed: edit, streak, isActive, secret rotation (src/modules/webhooks/signals.ts). */
  'webhook.updated': [update: WebhookUpdated];
  /** A partner request was queued for the request log, for its live tail (request-log/request-recorder.ts). */
  'request.logged': [entry: RequestLogged];
  /** The location buffer stored these orders' tracking (tracking/tracking-buffer.ts). */
  'tracking.updated': [updates: TrackingUpdate[]];
  /** SIGTERM: the process drains before it stops, /readyz answers 503 (src/roles.ts, health.routes.ts). */
  draining: [];
}

export type AppEventBus = EventEmitter<AppEvents>;

export function createEventBus(): AppEventBus {
  const events = new EventEmitter<AppEvents>();
  events.setMaxListeners(100);
  return events;
}
