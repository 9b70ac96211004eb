/**
 * Which webhooks get an outbox event, and what each gets (docs/decisions-log.md, 'Webhooks', the contract
 * and "Routing details"); the webhooks module's rule, applied by the worker's fan-out (src/worker/fanout.ts).
 *
 * A webhook gets an event when it is active and subscribes to the type, its key is usable (not
 * revoked, or still in its rotation grace: the subscribers query, queue/fan-out-outbox.ts), its key's
 * environment is the event's, and its key may see the order (keySeesOrder, src/modules/orders/
 * visibility.ts): the key the order was assigned to when the event happened or a successor of that key
 * by rotation, or a key that receives all orders. Successors count because a rotation moves the old
 * key's orders and webhooks forward: an event raised before a rotation and fanned out after it must
 * still reach the webhook, which by then hangs on the new key. For `batch.completed`, the key must see
 * at least one order of the batch, and the orderCodes it gets are only those it sees. Order snapshots
 * are shown as the key sees them (orderAsSeenBy: `customer` only with orders:pii); the body is put in
 * its schema's field order when it is serialised (envelope.ts).
 */

import { type ApiKeyEnvironment, type ApiKeyScope, OFFER_WEBHOOK_EVENTS, PAYMENT_WEBHOOK_EVENTS } from '../../shared/schemas.js';
import { keySeesOrder, type OrderPlacement, type OrderViewer, orderAsSeenBy } from '../orders/visibility.js';

/** A webhook that may get events, with its key as the visibility rule reads it. */
export interface Subscriber extends OrderViewer {
  webhookId: string;
  partnerId: string;
  /** The webhook's key. */
  keyId: string;
  /** The keys whose orders the webhook's key holds: itself and the keys it succeeded by rotation. */
  keyIds: string[];
  events: string[];
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  receivesAllOrders: boolean;
}

/** An outbox row as routing reads it (src/shared/outbox.ts describes the rows). */
export interface RoutedEvent {
  type: string;
  environment: ApiKeyEnvironment;
  assignedKeyId: string | null;
  /** The partner a settlement event is addressed to (null for every other event). */
  partnerId?: string | null;
  data: Record<string, unknown>;
}

type BatchData = { code?: unknown; status?: unknown; orderCodes?: unknown };

function batchOf(event: RoutedEvent): BatchData | null {
  const batch = event.data.batch;
  return batch && typeof batch === 'object' ? (batch as BatchData) : null;
}

/** The order codes of a `batch.completed` event (none for other events). */
export function batchOrderCodes(event: RoutedEvent): string[] {
  if (event.type !== 'batch.completed') return [];
  const codes = batchOf(event)?.orderCodes;
  return Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
}

/**
 * The keys an event's visibility depends on: the key its order was assigned to, or those of its
 * batch's orders (`orders`: their placements by code). The subscribers query loads the webhooks of these
 * keys, of their successors, and of keys that receive all orders.
 */
export function keysOfEvent(event: RoutedEvent, orders: ReadonlyMap<string, OrderPlacement>): string[] {
  if (event.type !== 'batch.completed') return event.assignedKeyId === null ? [] : [event.assignedKeyId];
  return batchOrderCodes(event).flatMap((code) => {
    const key = orders.get(code)?.assignedKeyId;
    return key ? [key] : [];
  });
}

/** What routing reads of a receiver: a webhook (Subscriber), or a key's realtime listen session. */
export type EventViewer = OrderViewer & Pick<Subscriber, 'environment' | 'events' | 'scopes'> & { partnerId?: string };

/**
 * The event's `data` as `sub` gets it, or null when the event is not for it. `orders`: the placements
 * of the batch's orders (for `batch.completed`), by code.
 */
export function eventDataFor(
  event: RoutedEvent,
  sub: EventViewer,
  orders: ReadonlyMap<string, OrderPlacement>,
): Record<string, unknown> | null {
  if (sub.environment !== event.environment || !sub.events.includes(event.type)) return null;
  // Payment kinds only for keys holding payments:read (docs/payments.md): payment intents then go
  // where their order's events go; settlements to every webhook of their partner.
  if (PAYMENT_WEBHOOK_EVENTS.has(event.type)) {
    if (!sub.scopes.includes('payments:read')) return null;
    if (event.type.startsWith('settlement.')) {
      return event.partnerId && sub.partnerId === event.partnerId ? event.data : null;
    }
  }
  // Offer kinds (docs/offers.md) only to the webhooks of the key the order was offered to (or its
  // successor by rotation), never to keys that receive all orders: the offer is that key's alone. Their
  // data is the PartnerOffer itself, sent as it is (its `order` is no PartnerOrder: no customer to hide).
  if (OFFER_WEBHOOK_EVENTS.has(event.type)) {
    return event.environment === sub.environment && event.assignedKeyId !== null && sub.keyIds.includes(event.assignedKeyId)
      ? event.data
      : null;
  }
  if (event.type === 'batch.completed') {
    const batch = batchOf(event);
    if (!batch) return null;
    const visible = batchOrderCodes(event).filter((code) => {
      const order = orders.get(code);
      return order !== undefined && keySeesOrder(sub, order);
    });
    if (visible.length === 0) return null;
    return { ...event.data, batch: { ...batch, orderCodes: visible } };
  }
  if (!keySeesOrder(sub, { environment: event.environment, assignedKeyId: event.assignedKeyId })) return null;
  const order = event.data.order;
  if (!order || typeof order !== 'object') return event.data;
  return { ...event.data, order: orderAsSeenBy(sub, order as { customer?: unknown }) };
}
