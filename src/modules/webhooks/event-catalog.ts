/**
 * The webhook event catalog (docs/decisions-log.md, 'Webhook operations'): one TypeBox schema per event kind for the whole envelope
 * `{ id, type, createdAt, environment, data }`, what each kind means and when it fires, and a valid
 * example. The same schemas put every body in field order when it is serialised (envelope.ts), describe
 * the events in `GET /v1/developer/event-types`, sit under the OpenAPI document's components and on the
 * reference page, and shape the sample events of `POST …/webhooks/{id}/test`: docs and payloads cannot
 * drift, and a test checks real deliveries of every kind against them.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { DateTime, OrderStatus, PartnerEnvironment, Uuid, WEBHOOK_EVENTS, type WebhookEvent } from '../../shared/schemas.js';
import { Batch, PartnerOrder } from '../orders/orders.schemas.js';
import { PaymentIntent, Settlement } from '../payments/payments.schemas.js';
import { OrderTracking } from '../tracking/tracking.schemas.js';

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
};

const AT = '2026-11-20T09:41:07.000Z';
const WEBHOOK_ID = '5b0e7f3c-2d41-4a8e-9c17-6f2b8e1d4a90';

/** A realistic order, as a key with orders:pii sees it, in status `status` with a timeline up to it. */
export function sampleOrder(status: Static<typeof OrderStatus>, at = AT): Static<typeof PartnerOrder> {
  const path = ['PLACED', 'VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE'];
  const steps = status === 'CANCELLED' ? ['PLACED', 'CANCELLED'] : [...path.slice(0, Math.max(1, path.indexOf(status) + 1))];
  if (!steps.includes(status)) steps.push(status);
  const t0 = Date.parse(at) - steps.length * 600_000;
  return {
    code: 'ORD-7K2Q9M',
    status,
    paymentMethod: 'COD',
    paymentStatus: status === 'DELIVERED' ? 'PAID' : 'UNPAID',
    totalQepik: 4850,
    codAmountQepik: 4850,
    area: 'Nəsimi',
    zone: { id: '0f6a3c1e-7b2d-4e59-8a14-3d9c2b7e5f01', name: { az: 'Mərkəz', ru: 'Центр', en: 'Centre' } },
    timeWindowStart: new Date(Date.parse(at) + 1_200_000).toISOString(),
    timeWindowEnd: new Date(Date.parse(at) + 8_400_000).toISOString(),
    items: [
      { name: { az: 'Çay dəsti', ru: 'Чайный набор', en: 'Tea set' }, qty: 1, unitPriceQepik: 3250 },
      { name: { az: 'Paxlava', ru: 'Пахлава', en: 'Baklava' }, qty: 2, unitPriceQepik: 800 },
    ],
    timeline: steps.map((s, i) => ({
      status: s as Static<typeof OrderStatus>,
      at: new Date(t0 + (i + 1) * 600_000).toISOString(),
    })),
    customer: {
      name: 'Aysel Məmmədova',
      phone: '+994501234567',
      address: { street: 'Nizami küçəsi 10', details: 'Mənzil 14, 3-cü mərtəbə', lat: 40.3777, lng: 49.8531 },
    },
    batch:
      status === 'SCANNED_TO_VAN' || status === 'EN_ROUTE' || status === 'DELIVERED'
        ? { code: 'BAT-3F8W', status: 'DISPATCHED' }
        : null,
    partnerAssignedAt: status === 'PLACED' ? null : new Date(t0 + 600_000).toISOString(),
    updatedAt: at,
  };
}

/** The `data` of a sample event of each kind (the example, and the sample events sent by the test route). */
export function sampleEventData(type: EventType, webhookId = WEBHOOK_ID, at = AT): Record<string, unknown> {
  switch (type) {
    case 'ping':
      return { webhookId };
    case 'order.placed':
      return { order: sampleOrder('PLACED', at) };
    case 'order.assigned_to_partner':
      return { order: sampleOrder('PACKED', at) };
    case 'order.status_changed':
      return { order: sampleOrder('EN_ROUTE', at), previousStatus: 'SCANNED_TO_VAN' };
    case 'order.delivered':
      return { order: sampleOrder('DELIVERED', at), previousStatus: 'EN_ROUTE' };
    case 'order.cancelled':
      return { order: sampleOrder('CANCELLED', at), previousStatus: 'PLACED' };
    case 'batch.completed':
      return { batch: { code: 'BAT-3F8W', status: 'COMPLETED', orderCodes: ['ORD-7K2Q9M', 'ORD-2M5X8P'] } };
    case 'payment_intent.succeeded':
      return { paymentIntent: samplePaymentIntent('CARD', 'SUCCEEDED', at) };
    case 'payment_intent.refunded':
      return { paymentIntent: { ...samplePaymentIntent('CARD', 'SUCCEEDED', at), amountRefundedQepik: 1600 } };
    case 'payment_intent.collected':
      return { paymentIntent: samplePaymentIntent('COD', 'COLLECTED', at) };
    case 'payment_intent.canceled':
      return { paymentIntent: samplePaymentIntent('COD', 'CANCELED', at) };
    case 'settlement.created':
      return { settlement: sampleSettlement(0, at) };
    case 'settlement.updated':
      return { settlement: sampleSettlement(20_000, at) };
    case 'settlement.settled':
      return { settlement: sampleSettlement(48_350, at) };
    case 'order.courier_location': {
      const t = Date.parse(at);
      const point = (i: number) => ({
        lat: 40.3701 + i * 0.0006,
        lng: 49.8402 + i * 0.0015,
        at: new Date(t - (4 - i) * 20_000).toISOString(),
      });
      return {
        tracking: {
          orderCode: 'ORD-7K2Q9M',
          status: 'EN_ROUTE',
          location: { ...point(4), accuracyM: 12 },
          etaAt: new Date(t + 420_000).toISOString(),
          trail: [0, 1, 2, 3, 4].map(point),
        },
      };
    }
  }
}

/** A payment intent of the sample order. */
export function samplePaymentIntent(
  method: 'CARD' | 'COD',
  status: Static<typeof PaymentIntent>['status'],
  at = AT,
): Static<typeof PaymentIntent> {
  const received = status === 'SUCCEEDED' || status === 'COLLECTED' || status === 'SETTLED';
  return {
    id: 'pi_3Xb7Qm9Tz2Lw5Kp8Rv1Nc4Hd',
    orderCode: 'ORD-7K2Q9M',
    environment: 'live',
    method,
    status,
    currency: 'AZN',
    amountQepik: 4850,
    amountReceivedQepik: received ? 4850 : 0,
    amountRefundedQepik: 0,
    settlementId: status === 'SETTLED' ? 'stl_7Hq2Wc9Zk4Tn1Bx6Pv3Ly8Md' : null,
    createdAt: new Date(Date.parse(at) - 3_600_000).toISOString(),
    updatedAt: at,
    capturedAt: received ? at : null,
    canceledAt: status === 'CANCELED' ? at : null,
  };
}

/** A settlement of 10 collections after `remitted` qəpik were remitted. */
function sampleSettlement(remitted: number, at: string): Static<typeof Settlement> {
  const due = 48_350;
  return {
    id: 'stl_7Hq2Wc9Zk4Tn1Bx6Pv3Ly8Md',
    environment: 'live',
    periodStart: '2026-11-13T00:00:00.000Z',
    periodEnd: '2026-11-20T00:00:00.000Z',
    status: remitted >= due ? 'SETTLED' : remitted > 0 ? 'PARTIALLY_REMITTED' : 'AWAITING_REMITTANCE',
    collectionsCount: 10,
    expectedQepik: 48_500,
    collectedQepik: 48_350,
    varianceQepik: -150,
    adjustmentsQepik: 0,
    dueQepik: due,
    remittedQepik: remitted,
    outstandingQepik: due - remitted,
    createdAt: at,
    settledAt: remitted >= due ? at : null,
  };
}

/** A valid envelope of each kind. */
export function exampleEnvelope(type: EventType): Record<string, unknown> {
  return {
    id: type === 'ping' ? 'evt_test_4f1c9a7e2b3d4c5e6f708192a3b4c5d6' : 'evt_8Kq3ZpX1mT7wR2vN9cY4bL6d',
    type,
    createdAt: AT,
    environment: 'live',
    data: sampleEventData(type),
  };
}

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
