/**
 * Order shapes (docs/decisions-log.md, 'Orders': partner view, request bodies, page envelope) and the operator
 * (admin) shapes (docs/decisions-log.md, 'Operator API'). Every field of a response is always present; nullable ones are
 * `Nullable(X)` and still required.
 */
import Type, { type Static } from 'typebox';
import {
  DateTime,
  DeliveryFailReason,
  LocalizedText,
  Nullable,
  OrderPaymentStatus,
  OrderStatus,
  PageQuery,
  PartnerEnvironment,
  PartnerEventType,
  PaymentMethod,
  StringEnum,
  Uuid,
} from '../../shared/schemas.js';
import { EventProofDto } from '../proof/proof.schemas.js';

// Bounds shared by the request schemas and the rules that re-check them.
export const MAX_COD_QEPIK = 100_000_000;
export const MAX_AMOUNT_QEPIK = 10_000_000_000;
export const MAX_NOTE_LENGTH = 500;

// --- Partner view (docs/decisions-log.md, 'Orders') ------------------------------------------------------------------

export const PartnerOrderItem = Type.Object(
  {
    name: LocalizedText,
    qty: Type.Integer({ minimum: 1 }),
    unitPriceQepik: Type.Integer({ minimum: 0, description: 'qəpik' }),
  },
  { $id: 'PartnerOrderItem', additionalProperties: false },
);

export const PartnerOrderEvent = Type.Object(
  { status: OrderStatus, at: DateTime() },
  { $id: 'PartnerOrderEvent', additionalProperties: false, description: 'One step of the status timeline' },
);

export const PartnerCustomerAddress = Type.Object(
  {
    street: Type.String(),
    details: Nullable(Type.String()),
    lat: Nullable(Type.Number()),
    lng: Nullable(Type.Number()),
  },
  { $id: 'PartnerCustomerAddress', additionalProperties: false },
);

export const PartnerCustomer = Type.Object(
  {
    name: Nullable(Type.String()),
    phone: Nullable(Type.String({ description: 'phone, falling back to contact phone; null when the account has neither' })),
    address: PartnerCustomerAddress,
  },
  { $id: 'PartnerCustomer', additionalProperties: false },
);
export type PartnerCustomer = Static<typeof PartnerCustomer>;

export const PartnerBatchRef = Type.Object(
  { code: Type.String(), status: Type.String({ description: 'status of the van batch' }) },
  { $id: 'PartnerBatchRef', additionalProperties: false },
);

export const PartnerZoneRef = Type.Object(
  { id: Uuid(), name: LocalizedText },
  { $id: 'PartnerZoneRef', additionalProperties: false },
);
export type PartnerZoneRef = Static<typeof PartnerZoneRef>;

const partnerOrderProperties = {
  code: Type.String({ description: 'order code, the key of the order in paths' }),
  status: OrderStatus,
  paymentMethod: PaymentMethod,
  paymentStatus: OrderPaymentStatus,
  totalQepik: Type.Integer({ description: 'order total, qəpik' }),
  codAmountQepik: Type.Integer({ description: 'cash to collect at the door, qəpik; 0 for CARD' }),
  area: Nullable(Type.String()),
  zone: Nullable(PartnerZoneRef),
  timeWindowStart: Nullable(DateTime()),
  timeWindowEnd: Nullable(DateTime()),
  items: Type.Array(PartnerOrderItem),
  timeline: Type.Array(PartnerOrderEvent, { description: 'status timeline, oldest first' }),
  customer: Nullable(PartnerCustomer, { description: 'present only for a key with scope orders:pii; null otherwise' }),
  batch: Nullable(PartnerBatchRef, { description: 'the van batch the order is on, when the platform delivers it' }),
  partnerAssignedAt: Nullable(DateTime()),
  updatedAt: DateTime(),
};

export const PartnerOrder = Type.Object(partnerOrderProperties, {
  $id: 'PartnerOrder',
  additionalProperties: false,
  description: 'An order as a partner key sees it; every field is always present',
});
export type PartnerOrder = Static<typeof PartnerOrder>;

export const PageOfPartnerOrder = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 10000 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 50 }),
    total: Type.Integer({ description: 'all matching rows' }),
    items: Type.Array(PartnerOrder),
  },
  { $id: 'PageOfPartnerOrder', additionalProperties: false },
);
export type PageOfPartnerOrder = Static<typeof PageOfPartnerOrder>;

// --- Partner requests ------------------------------------------------------------------------------

export const ListPartnerOrdersQuery = Type.Object(
  {
    status: Type.Optional(OrderStatus),
    from: Type.Optional(DateTime({ description: 'createdAt >= from' })),
    to: Type.Optional(DateTime({ description: 'createdAt < to' })),
    updatedSince: Type.Optional(DateTime({ description: 'updatedAt >= updatedSince (incremental sync)' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListPartnerOrdersQuery = Static<typeof ListPartnerOrdersQuery>;

export const OrderCodeParams = Type.Object({ code: Type.String({ description: 'order code' }) });

export const CreatePartnerOrderEventDto = Type.Object(
  {
    type: PartnerEventType,
    at: Type.Optional(
      DateTime({
        description: 'when it happened at the partner; informational, the stored event is stamped with the current time',
      }),
    ),
    codCollectedQepik: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_COD_QEPIK,
        description: 'cash collected at the door (DELIVERED, COD orders); never above the order COD amount',
      }),
    ),
    failReason: Type.Optional(DeliveryFailReason),
    note: Type.Optional(Type.String({ maxLength: MAX_NOTE_LENGTH })),
    proof: Type.Optional(EventProofDto),
  },
  { $id: 'CreatePartnerOrderEventDto', additionalProperties: false },
);
export type CreatePartnerOrderEventDto = Static<typeof CreatePartnerOrderEventDto>;

/**
 * One valid body per event type, for the reference (the route's `bodyExamples`): each carries only the
 * fields its type takes (codCollectedQepik and note on DELIVERED, failReason on FAILED).
 */
export const PARTNER_ORDER_EVENT_EXAMPLES: Record<string, { summary: string; value: CreatePartnerOrderEventDto }> = {
  pickedUp: { summary: 'PICKED_UP: the courier has the parcel', value: { type: 'PICKED_UP' } },
  enRoute: { summary: 'EN_ROUTE: out for delivery', value: { type: 'EN_ROUTE', at: '2026-11-24T09:41:00Z' } },
  deliveredCod: {
    summary: 'DELIVERED: cash on delivery collected in full',
    value: { type: 'DELIVERED', codCollectedQepik: 4550 },
  },
  deliveredCodVariance: {
    summary: 'DELIVERED: less cash than the COD amount, with the note it needs',
    value: { type: 'DELIVERED', codCollectedQepik: 4350, note: 'Customer paid 2 AZN less: damaged box' },
  },
  deliveredCard: { summary: 'DELIVERED: a card order (nothing to collect)', value: { type: 'DELIVERED' } },
  failed: { summary: 'FAILED: nobody at home', value: { type: 'FAILED', failReason: 'NOT_HOME', note: 'Called twice' } },
};

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7E]+$',
      description:
        'Optional. A repeat with the same key and body within 24 h returns the first answer again; the same key with another body answers 409 ERR_IDEMPOTENCY_CONFLICT',
    }),
  ),
});

// --- Operator (admin) view and requests (docs/decisions-log.md, 'Operator API') ---------------------------------------------

export const AdminOrder = Type.Object(
  {
    ...partnerOrderProperties,
    customer: Nullable(PartnerCustomer, { description: 'always filled for the operator (null when the order has none)' }),
    environment: PartnerEnvironment,
    assignedKeyId: Nullable(Uuid()),
  },
  { $id: 'AdminOrder', additionalProperties: false, description: 'The operator view: PartnerOrder plus environment and key' },
);
export type AdminOrder = Static<typeof AdminOrder>;

const Phone = Type.String({ pattern: '^\\+994[0-9]{9}$', maxLength: 13, description: 'E.164, +994XXXXXXXXX' });

export const CreateOrderDto = Type.Object(
  {
    environment: PartnerEnvironment,
    paymentMethod: PaymentMethod,
    paymentStatus: Type.Optional(OrderPaymentStatus),
    totalQepik: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_QEPIK }),
    codAmountQepik: Type.Integer({ minimum: 0, maximum: MAX_COD_QEPIK, description: 'must be 0 for CARD' }),
    items: Type.Array(
      Type.Object(
        {
          name: LocalizedText,
          qty: Type.Integer({ minimum: 1, maximum: 100_000 }),
          unitPriceQepik: Type.Integer({ minimum: 0, maximum: MAX_AMOUNT_QEPIK }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 200 },
    ),
    area: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    zoneId: Type.Optional(Nullable(Uuid())),
    timeWindowStart: Type.Optional(Nullable(DateTime())),
    timeWindowEnd: Type.Optional(Nullable(DateTime({ description: 'after timeWindowStart' }))),
    customer: Type.Optional(
      Nullable(
        Type.Object(
          {
            name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
            phone: Type.Optional(Nullable(Phone)),
            address: Type.Object(
              {
                street: Type.String({ minLength: 1, maxLength: 500 }),
                details: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
                lat: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
                lng: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { $id: 'CreateOrderDto', additionalProperties: false },
);
export type CreateOrderDto = Static<typeof CreateOrderDto>;

export const AssignOrderDto = Type.Object(
  { apiKeyId: Uuid({ description: 'the key the order is assigned to; its environment must be the order’s' }) },
  { $id: 'AssignOrderDto', additionalProperties: false },
);

export const ChangeOrderStatusDto = Type.Object(
  { status: OrderStatus, note: Type.Optional(Type.String({ maxLength: MAX_NOTE_LENGTH })) },
  { $id: 'ChangeOrderStatusDto', additionalProperties: false },
);

export const CreateZoneDto = Type.Object({ name: LocalizedText }, { $id: 'CreateZoneDto', additionalProperties: false });

export const Zone = Type.Object({ id: Uuid(), name: LocalizedText }, { $id: 'Zone', additionalProperties: false });

export const BATCH_STATUSES = ['OPEN', 'DISPATCHED', 'COMPLETED'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
const BatchStatus = StringEnum(BATCH_STATUSES, { description: 'OPEN → DISPATCHED → COMPLETED' });

export const Batch = Type.Object(
  {
    code: Type.String(),
    status: BatchStatus,
    orderCodes: Type.Array(Type.String()),
  },
  { $id: 'Batch', additionalProperties: false },
);
export type Batch = Static<typeof Batch>;

export const CreateBatchDto = Type.Object(
  { orderCodes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 500, uniqueItems: true }) },
  { $id: 'CreateBatchDto', additionalProperties: false },
);

export const ChangeBatchStatusDto = Type.Object(
  { status: BatchStatus },
  { $id: 'ChangeBatchStatusDto', additionalProperties: false },
);

export const BatchCodeParams = Type.Object({ code: Type.String({ description: 'batch code' }) });
