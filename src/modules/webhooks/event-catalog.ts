/**
 * The webhook event catalog (docs/decisions-log.md, 'Webhook operations'): one TypeBox schema per event kind for the whole envelope
 * `{ id, type, createdAt, environment, data }`, what each kind means and when it fires, and a valid
 * example (event-samples.ts). The same schemas put every body in field order when it is serialised (envelope.ts), describe
 * the events in `GET /v1/developer/event-types`, sit under the OpenAPI document's components and on the
 * reference page, and shape the sample events of `POST …/webhooks/{id}/test`: docs and payloads cannot
 * drift, and a test checks real deliveries of every kind against them.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { DateTime, OrderStatus, PartnerEnvironment, Uuid, WEBHOOK_EVENTS, type WebhookEvent } from '../../shared/schemas.js';
import { PartnerOffer } from '../offers/offers.schemas.js';
import { Batch, PartnerOrder } from '../orders/orders.schemas.js';
import { PaymentIntent, Settlement } from '../payments/payments.schemas.js';
import { OrderTracking } from '../tracking/tracking.schemas.js';
import { exampleEnvelope } from './event-samples.js';

/** Every kind a delivery can carry: the WebhookEvent kinds and `ping`. */
export const EVENT_TYPES = ['ping', ...WEBHOOK_EVENTS] as const;
export type EventType = (typeof EVENT_TYPES)[number];

function envelope<T extends EventType, D extends TSchema>(name: string, type: T, data: D, description: string) {
  return Type.Object(
    {
      id: Type.String({
        pattern: '^evt_',
        description:
          'Event id (`evt_…`), the same in every delivery and redelivery of the event: de-duplicate by it. Sample events start with `evt_test_`.',
      }),
      type: Type.Literal(type, { description: 'The event kind (also in the X-Partner-Event header)' }),
      createdAt: DateTime({ description: 'When the event happened' }),
      environment: PartnerEnvironment,
      data,
    },
    { $id: name, additionalProperties: false, description },
  );
}

const OrderData = Type.Object(
  { order: PartnerOrder },
  { additionalProperties: false, description: 'The order as your key sees it (`customer` only with orders:pii)' },
);
const OrderChangeData = Type.Object(
  {
    order: PartnerOrder,
    previousStatus: OrderStatus,
  },
  { additionalProperties: false, description: 'The order after the change, as your key sees it, and its status before' },
);

export const PingEvent = envelope(
  'PingEvent',
  'ping',
  Type.Object({ webhookId: Uuid({ description: 'The webhook tested' }) }, { additionalProperties: false }),
  'A test delivery: `POST /v1/developer/webhooks/{id}/test`',
);
export const OrderPlacedEvent = envelope('OrderPlacedEvent', 'order.placed', OrderData, 'An order was placed');
export const OrderStatusChangedEvent = envelope(
  'OrderStatusChangedEvent',
  'order.status_changed',
  OrderChangeData,
  'An order changed status',
);
export const OrderDeliveredEvent = envelope('OrderDeliveredEvent', 'order.delivered', OrderChangeData, 'An order was delivered');
export const OrderCancelledEvent = envelope('OrderCancelledEvent', 'order.cancelled', OrderChangeData, 'An order was cancelled');
export const BatchCompletedEvent = envelope(
  'BatchCompletedEvent',
  'batch.completed',
  Type.Object({ batch: Batch }, { additionalProperties: false, description: 'The batch; orderCodes only those your key sees' }),
  'A van batch was completed',
);
export const OrderAssignedToPartnerEvent = envelope(
  'OrderAssignedToPartnerEvent',
  'order.assigned_to_partner',
  OrderData,
  'An order was assigned to your key',
);

const PaymentIntentData = Type.Object(
  { paymentIntent: PaymentIntent },
  { additionalProperties: false, description: 'The payment intent after the change' },
);
const SettlementData = Type.Object(
  { settlement: Settlement },
  { additionalProperties: false, description: 'The settlement after the change' },
);
export const PaymentIntentSucceededEvent = envelope(
  'PaymentIntentSucceededEvent',
  'payment_intent.succeeded',
  PaymentIntentData,
  'A card payment was captured',
);
export const PaymentIntentRefundedEvent = envelope(
  'PaymentIntentRefundedEvent',
  'payment_intent.refunded',
  PaymentIntentData,
  'A card payment was refunded, in part or in full',
);
export const PaymentIntentCollectedEvent = envelope(
  'PaymentIntentCollectedEvent',
  'payment_intent.collected',
  PaymentIntentData,
  'Cash was collected at the door',
);
export const PaymentIntentCanceledEvent = envelope(
  'PaymentIntentCanceledEvent',
  'payment_intent.canceled',
  PaymentIntentData,
  'A payment intent was canceled with its order',
);
export const SettlementCreatedEvent = envelope(
  'SettlementCreatedEvent',
  'settlement.created',
  SettlementData,
  'A settlement was created',
);
export const SettlementUpdatedEvent = envelope(
  'SettlementUpdatedEvent',
  'settlement.updated',
  SettlementData,
  'A remittance or adjustment was added to a settlement',
);
export const SettlementSettledEvent = envelope(
  'SettlementSettledEvent',
  'settlement.settled',
  SettlementData,
  'A settlement was settled',
);

export const OrderCourierLocationEvent = envelope(
  'OrderCourierLocationEvent',
  'order.courier_location',
  Type.Object(
    { tracking: OrderTracking },
    { additionalProperties: false, description: 'The order’s tracking, as GET /v1/partner/orders/{code}/tracking answers it' },
  ),
  'Where the courier of an order is (at most once a minute per order)',
);

// The offer kinds' `data` is the PartnerOffer itself (docs/offers.md, "Events"), not wrapped in an object.
export const OfferCreatedEvent = envelope(
  'OfferCreatedEvent',
  'offer.created',
  PartnerOffer,
  'An order was offered to your key; `data` is the offer (its order without the customer)',
);
export const OfferExpiredEvent = envelope(
  'OfferExpiredEvent',
  'offer.expired',
  PartnerOffer,
  'An offer to your key expired undecided; `data` is the offer',
);
export const OfferWithdrawnEvent = envelope(
  'OfferWithdrawnEvent',
  'offer.withdrawn',
  PartnerOffer,
  'An offer to your key was withdrawn; `data` is the offer',
);

/** The envelope schema of each kind. */
export const EVENT_SCHEMAS = {
  ping: PingEvent,
  'order.placed': OrderPlacedEvent,
  'order.status_changed': OrderStatusChangedEvent,
  'order.delivered': OrderDeliveredEvent,
  'order.cancelled': OrderCancelledEvent,
  'batch.completed': BatchCompletedEvent,
  'order.assigned_to_partner': OrderAssignedToPartnerEvent,
  'payment_intent.succeeded': PaymentIntentSucceededEvent,
  'payment_intent.refunded': PaymentIntentRefundedEvent,
  'payment_intent.collected': PaymentIntentCollectedEvent,
  'payment_intent.canceled': PaymentIntentCanceledEvent,
  'settlement.created': SettlementCreatedEvent,
  'settlement.updated': SettlementUpdatedEvent,
  'settlement.settled': SettlementSettledEvent,
  'order.courier_location': OrderCourierLocationEvent,
  'offer.created': OfferCreatedEvent,
  'offer.expired': OfferExpiredEvent,
  'offer.withdrawn': OfferWithdrawnEvent,
} as const satisfies Record<EventType, TSchema>;

/** Any delivery body: one of the envelopes, told apart by `type`. */
export const WebhookEventEnvelope = Type.Union(
  EVENT_TYPES.map((t) => EVENT_SCHEMAS[t]),
  { $id: 'WebhookEventEnvelope', description: 'The body of a webhook delivery; `type` tells which envelope it is' },
);

/** When each kind fires (the catalog's `description`, the reference page). */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  ping: 'Sent only when you ask for it (`POST /v1/developer/webhooks/{id}/test`, the portal\'s "Send test event"), to check your endpoint and its signature verification.',
  'order.placed':
    'A customer placed an order. Reaches keys that receive all orders (an operator setting), before any key is assigned.',
  'order.status_changed':
    'An order moved to another status: by an operator, or by your own partner events (PICKED_UP, EN_ROUTE, DELIVERED, FAILED). Carries the status before.',
  'order.delivered':
    'An order reached DELIVERED. Sent together with the order.status_changed of the same move; subscribe to one of them.',
  'order.cancelled': 'An order was cancelled. Sent together with the order.status_changed of the same move.',
  'batch.completed': 'A van batch was completed. Reaches keys that see at least one of its orders; orderCodes lists only those.',
  'order.assigned_to_partner':
    'An operator assigned an order to your key: from now on the key reads it and reports its delivery.',
  'payment_intent.succeeded':
    "A card order's payment was captured (the order's paymentStatus is PAID). Needs the scope payments:read; reaches the keys that see the order.",
  'payment_intent.refunded':
    "Part or all of a card payment was refunded (the order's paymentStatus is PARTIALLY_REFUNDED or REFUNDED). Needs payments:read.",
  'payment_intent.collected':
    'Your courier collected the cash of a COD order (your accepted DELIVERED event): amountReceivedQepik is what was collected. Needs payments:read.',
  'payment_intent.canceled': 'The order was cancelled (or a COD order returned) before it was paid. Needs payments:read.',
  'settlement.created':
    "The marketplace closed a period of your cash collections into a statement: what you owe. Needs payments:read; reaches every webhook of your partner account in the settlement's environment.",
  'settlement.updated': 'A remittance or an adjustment was recorded on one of your settlements. Needs payments:read.',
  'settlement.settled': 'Nothing is outstanding on a settlement any more; its collections are SETTLED. Needs payments:read.',
  'order.courier_location':
    'The courier of an order assigned to your key sent locations (POST /v1/partner/orders/{code}/locations): its latest position, ETA and trail. At most once a minute per order; sent only to webhooks subscribed to it.',
  'offer.created':
    'The marketplace offered an order to your key: accept (POST /v1/partner/offers/{id}/accept) or decline (…/decline) before expiresAt. The offer shows the order without the customer. Only to webhooks of the offered key subscribed to it.',
  'offer.expired':
    'An offer to your key reached its expiresAt undecided; the order is no longer yours to take. Sent within 5 s of the deadline, only to webhooks subscribed to it.',
  'offer.withdrawn':
    'The marketplace withdrew an offer to your key, or cancelled its order, before you decided. Only to webhooks subscribed to it.',
};

export const EventTypeItem = Type.Object(
  {
    type: Type.String({ description: 'The event kind: `ping` or one of WebhookEvent', examples: ['order.status_changed'] }),
    description: Type.String({ description: 'What it means and when it fires' }),
    schema: Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description:
        'The JSON Schema of the whole envelope of this kind, self-contained: named parts under `$defs`, referenced as `#/$defs/<name>`; compiles on its own in draft-07 and 2020-12 validators',
    }),
    example: WebhookEventEnvelope,
  },
  { $id: 'EventTypeItem', additionalProperties: false },
);

export const EventTypes = Type.Object(
  { items: Type.Array(EventTypeItem, { description: '`ping` first, then every WebhookEvent kind' }) },
  { $id: 'EventTypes', additionalProperties: false },
);
export type EventTypes = Static<typeof EventTypes>;

/** Every kind, its self-contained JSON Schema, an example. */
export function eventCatalog(): EventTypes {
  return {
    items: EVENT_TYPES.map((type) => ({
      type,
      description: EVENT_DESCRIPTIONS[type],
      schema: standaloneSchema(EVENT_SCHEMAS[type]),
      example: exampleEnvelope(type) as EventTypes['items'][number]['example'],
    })),
  };
}

type Json = Record<string, unknown>;

/**
 * docs/openapi.md, "Event catalog schemas": a schema a receiver can compile on its own. Every named
 * part (a TypeBox schema with `$id`, such as LocalizedText, used several times) is kept once under
 * `$defs` and referenced by `#/$defs/<name>`, so no `$id` appears twice and every `$ref` resolves
 * inside the schema. `$ref`s by bare name (`Type.Ref`) point at the same `$defs`. Plain JSON: the
 * TypeBox schema is not changed.
 */
export function standaloneSchema(schema: TSchema): Json {
  const defs: Record<string, Json> = {};
  const rootId = (schema as Json).$id;
  const visit = (node: unknown, isRoot = false): unknown => {
    if (Array.isArray(node)) return node.map((n) => visit(n));
    if (typeof node !== 'object' || node === null) return node;
    const { $id, ...rest } = node as Json;
    if (typeof rest.$ref === 'string' && !rest.$ref.startsWith('#')) return { ...rest, $ref: `#/$defs/${rest.$ref}` };
    const body = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, visit(v)]));
    if (typeof $id !== 'string' || isRoot) return body;
    if (!(($id as string) in defs)) defs[$id] = body;
    return { $ref: `#/$defs/${$id}` };
  };
  const root = visit(schema, true) as Json;
  const named = Object.keys(defs).length
    ? { $defs: Object.fromEntries(Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))) }
    : {};
  return { ...(typeof rootId === 'string' ? { title: rootId } : {}), ...root, ...named };
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

export type { WebhookEvent };
