/**
 * Payment intents, settlements and their lines (docs/payments.md): the shapes partners and operators
 * see, and the requests that change them. Every amount is an integer number of qəpik.
 */
import Type, { type Static, type TSchema } from 'typebox';
import { DateTime, Nullable, PageQuery, PartnerEnvironment, PaymentMethod, StringEnum, Uuid } from '../../shared/schemas.js';

const Qepik = (description: string) => Type.Integer({ description: `${description}, in qəpik` });

/** A page of `item`s, shaped as every paged list of the API (PageOfPartnerOrder). */
function pageOf<T extends TSchema>(item: T, $id: string) {
  return Type.Object(
    {
      page: Type.Integer({ minimum: 1, maximum: 10000 }),
      pageSize: Type.Integer({ minimum: 1, maximum: 50 }),
      total: Type.Integer({ description: 'all matching rows' }),
      items: Type.Array(item),
    },
    { $id, additionalProperties: false },
  );
}

export const PAYMENT_INTENT_STATUSES = [
  'REQUIRES_CAPTURE',
  'SUCCEEDED',
  'AWAITING_COLLECTION',
  'COLLECTED',
  'SETTLED',
  'CANCELED',
] as const;
export const PaymentIntentStatus = StringEnum(PAYMENT_INTENT_STATUSES, { $id: 'PaymentIntentStatus' });
export type PaymentIntentStatus = Static<typeof PaymentIntentStatus>;

export const PaymentIntent = Type.Object(
  {
    id: Type.String({ pattern: '^pi_[0-9A-Za-z]{24}$', description: '`pi_` + 24 base62 characters' }),
    orderCode: Type.String(),
    environment: PartnerEnvironment,
    method: PaymentMethod,
    status: PaymentIntentStatus,
    currency: StringEnum(['AZN'] as const),
    amountQepik: Qepik('CARD: the order total; COD: the cash to collect at the door'),
    amountReceivedQepik: Qepik('CARD: captured; COD: cash collected at the door'),
    amountRefundedQepik: Qepik('Refunded so far (CARD)'),
    settlementId: Nullable(Type.String(), { description: 'The settlement holding this COD collection' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
    capturedAt: Nullable(DateTime(), { description: 'CARD capture or COD collection' }),
    canceledAt: Nullable(DateTime()),
  },
  { $id: 'PaymentIntent', additionalProperties: false, description: 'The payment of one order; every field is always present' },
);
export type PaymentIntent = Static<typeof PaymentIntent>;

export const PageOfPaymentIntent = pageOf(PaymentIntent, 'PageOfPaymentIntent');
export type PageOfPaymentIntent = Static<typeof PageOfPaymentIntent>;

export const SETTLEMENT_STATUSES = ['AWAITING_REMITTANCE', 'PARTIALLY_REMITTED', 'SETTLED'] as const;
export const SettlementStatus = StringEnum(SETTLEMENT_STATUSES, { $id: 'SettlementStatus' });
export type SettlementStatus = Static<typeof SettlementStatus>;

export const Settlement = Type.Object(
  {
    id: Type.String({ pattern: '^stl_', description: '`stl_` + 24 base62 characters' }),
    environment: PartnerEnvironment,
    periodStart: DateTime(),
    periodEnd: DateTime({ description: 'Collections with capturedAt before periodEnd, on no earlier settlement' }),
    status: SettlementStatus,
    collectionsCount: Type.Integer(),
    expectedQepik: Qepik('Σ codAmountQepik of the collections'),
    collectedQepik: Qepik('Σ cash collected'),
    varianceQepik: Qepik('collected − expected (≤ 0)'),
    adjustmentsQepik: Qepik('Σ signed adjustments'),
    dueQepik: Qepik('collected + adjustments'),
    remittedQepik: Qepik('Σ remittances'),
    outstandingQepik: Qepik('due − remitted'),
    createdAt: DateTime(),
    settledAt: Nullable(DateTime()),
  },
  { $id: 'Settlement', additionalProperties: false, description: "A partner's cash-on-delivery statement for one period" },
);
export type Settlement = Static<typeof Settlement>;

export const PageOfSettlement = pageOf(Settlement, 'PageOfSettlement');
export type PageOfSettlement = Static<typeof PageOfSettlement>;

export const SETTLEMENT_LINE_TYPES = ['COD_COLLECTION', 'ADJUSTMENT', 'REMITTANCE'] as const;
export const SettlementLineType = StringEnum(SETTLEMENT_LINE_TYPES, { $id: 'SettlementLineType' });

export const SettlementLine = Type.Object(
  {
    id: Type.String({ pattern: '^sln_' }),
    type: SettlementLineType,
    orderCode: Nullable(Type.String(), { description: 'Set on collections' }),
    paymentIntentId: Nullable(Type.String(), { description: 'Set on collections' }),
    expectedQepik: Nullable(Type.Integer(), { description: "Collections: the order's COD amount, in qəpik" }),
    amountQepik: Qepik('Collected, adjusted (signed) or remitted'),
    note: Nullable(Type.String(), { description: "The delivery's variance note, or the adjustment's or remittance's text" }),
    reference: Nullable(Type.String(), { description: 'The bank reference of a remittance' }),
    at: DateTime(),
  },
  { $id: 'SettlementLine', additionalProperties: false },
);
export type SettlementLine = Static<typeof SettlementLine>;

export const PageOfSettlementLine = pageOf(SettlementLine, 'PageOfSettlementLine');
export type PageOfSettlementLine = Static<typeof PageOfSettlementLine>;

export const PartnerBalance = Type.Object(
  {
    environment: PartnerEnvironment,
    codOnHandQepik: Qepik('Cash collected and on no settlement yet'),
    collectionsOnHand: Type.Integer(),
    awaitingRemittanceQepik: Qepik('Σ outstanding of the settlements'),
    creditQepik: Qepik(
      'What the partner over-remitted on settled statements and is not on a later statement yet; the next statement carries it as an ADJUSTMENT line',
    ),
    oldestCollectionOnHandAt: Nullable(DateTime()),
  },
  { $id: 'PartnerBalance', additionalProperties: false },
);
export type PartnerBalance = Static<typeof PartnerBalance>;

// --- Requests ----------------------------------------------------------------------------------------

export const ListPaymentIntentsQuery = Type.Object(
  {
    status: Type.Optional(PaymentIntentStatus),
    method: Type.Optional(PaymentMethod),
    orderCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    updatedSince: Type.Optional(DateTime({ description: 'updatedAt >= updatedSince (incremental sync)' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListPaymentIntentsQuery = Static<typeof ListPaymentIntentsQuery>;

export const ListSettlementsQuery = Type.Object(
  { status: Type.Optional(SettlementStatus), ...PageQuery },
  { additionalProperties: false },
);
export type ListSettlementsQuery = Static<typeof ListSettlementsQuery>;

export const ListAdminSettlementsQuery = Type.Object(
  { partnerId: Type.Optional(Uuid()), status: Type.Optional(SettlementStatus), ...PageQuery },
  { additionalProperties: false },
);
export type ListAdminSettlementsQuery = Static<typeof ListAdminSettlementsQuery>;

export const LinesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const PaymentIntentIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const SettlementIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const PartnerIdParams = Type.Object({ id: Uuid() });

const MAX_AMOUNT = 100_000_000_000;

export const RefundDto = Type.Object(
  {
    amountQepik: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'At least 1; at most captured − refunded' }),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type RefundDto = Static<typeof RefundDto>;

export const CreateSettlementDto = Type.Object(
  {
    environment: PartnerEnvironment,
    periodEnd: DateTime({ description: 'Collections before this instant; not in the future' }),
  },
  { additionalProperties: false },
);
export type CreateSettlementDto = Static<typeof CreateSettlementDto>;

export const AdjustmentDto = Type.Object(
  {
    amountQepik: Type.Integer({
      minimum: -MAX_AMOUNT,
      maximum: MAX_AMOUNT,
      description: 'Signed, never 0: negative lowers what the partner owes',
    }),
    note: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { additionalProperties: false },
);
export type AdjustmentDto = Static<typeof AdjustmentDto>;

export const RemittanceDto = Type.Object(
  {
    amountQepik: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'At least 1; at most outstandingQepik' }),
    reference: Type.String({ minLength: 1, maxLength: 200, description: 'The bank reference' }),
    receivedAt: Type.Optional(DateTime({ description: 'When the money arrived; default now' })),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type RemittanceDto = Static<typeof RemittanceDto>;

export const SandboxRemittanceDto = Type.Object(
  {
    amountQepik: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT }),
    reference: Type.String({ minLength: 1, maxLength: 200 }),
    note: Type.Optional(Type.String({ maxLength: 500, description: "Shown on the statement's remittance line" })),
  },
  { additionalProperties: false },
);
