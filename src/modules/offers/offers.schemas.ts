/**
 * Offer shapes (docs/offers.md): the PartnerOffer and what it shows of its order, the request bodies
 * and queries of the partner, developer and operator routes, bulk acceptance and the statistics.
 * Every field of a response is always present; nullable ones are `Nullable(X)` and still required.
 */
import Type, { type Static } from 'typebox';
import { DateTime, Nullable, OrderStatus, PageQuery, PaymentMethod, StringEnum, Uuid } from '../../shared/schemas.js';
import { MAX_NOTE_LENGTH, PartnerOrderItem, PartnerZoneRef } from '../orders/orders.schemas.js';

export const OFFER_STATUSES = ['PENDING', 'ACCEPTED', 'DECLINED', 'EXPIRED', 'WITHDRAWN'] as const;
export const OfferStatus = StringEnum(OFFER_STATUSES, {
  $id: 'OfferStatus',
  description: 'PENDING until accepted, declined, withdrawn by the operator, or past its expiresAt (then EXPIRED)',
});
export type OfferStatus = Static<typeof OfferStatus>;

export const OFFER_DECLINE_REASONS = ['NO_CAPACITY', 'OUT_OF_AREA', 'TIME_WINDOW', 'OTHER'] as const;
export const OfferDeclineReason = StringEnum(OFFER_DECLINE_REASONS, {
  $id: 'OfferDeclineReason',
  description: 'Why an offer was declined; OTHER needs a note',
});
export type OfferDeclineReason = Static<typeof OfferDeclineReason>;

/** Offer lifetime bounds, seconds. */
export const MIN_OFFER_TTL_SEC = 60;
export const MAX_OFFER_TTL_SEC = 86_400;
export const DEFAULT_OFFER_TTL_SEC = 900;
/** Bulk acceptance takes at most this many ids. */
export const MAX_BULK_ACCEPT = 100;

const OFFER_ID_PATTERN = '^ofr_[0-9A-Za-z]{24}$';
const OfferId = (options: Record<string, unknown> = {}) =>
  Type.String({ pattern: OFFER_ID_PATTERN, maxLength: 28, description: 'Offer id: `ofr_` + 24 base62', ...options });

export const PartnerOfferDropoff = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90, description: 'rounded to 2 decimals' }),
    lng: Type.Number({ minimum: -180, maximum: 180, description: 'rounded to 2 decimals' }),
  },
  { $id: 'PartnerOfferDropoff', additionalProperties: false, description: 'The delivery address’s point, rounded to 2 decimals' },
);

export const PartnerOfferOrder = Type.Object(
  {
    code: Type.String({ description: 'order code' }),
    status: OrderStatus,
    paymentMethod: PaymentMethod,
    totalQepik: Type.Integer({ description: 'order total, qəpik' }),
    codAmountQepik: Type.Integer({ description: 'cash to collect at the door, qəpik; 0 for CARD' }),
    area: Nullable(Type.String()),
    zone: Nullable(PartnerZoneRef),
    timeWindowStart: Nullable(DateTime()),
    timeWindowEnd: Nullable(DateTime()),
    items: Type.Array(PartnerOrderItem),
    dropoff: Nullable(PartnerOfferDropoff, { description: 'null when the address has no coordinates' }),
  },
  {
    $id: 'PartnerOfferOrder',
    additionalProperties: false,
    description:
      'What an offer shows of its order: enough to decide, never the customer’s name, phone or street. The full order (PII rules included) is read once the offer is accepted: GET /v1/partner/orders/{code}.',
  },
);
export type PartnerOfferOrder = Static<typeof PartnerOfferOrder>;

export const PartnerOffer = Type.Object(
  {
    id: OfferId(),
    orderCode: Type.String({ description: 'the order offered' }),
    apiKeyId: Uuid({ description: 'the key the order is offered to' }),
    status: OfferStatus,
    createdAt: DateTime(),
    expiresAt: DateTime({ description: 'the deadline (service clock); past it the offer reads EXPIRED' }),
    decidedAt: Nullable(DateTime(), {
      description: 'when the offer left PENDING (accepted, declined, withdrawn; its expiresAt when EXPIRED); null while PENDING',
    }),
    declineReason: Nullable(OfferDeclineReason, { description: 'set when DECLINED' }),
    note: Nullable(Type.String({ maxLength: MAX_NOTE_LENGTH }), { description: 'the decline note, if any' }),
    order: PartnerOfferOrder,
  },
  {
    $id: 'PartnerOffer',
    additionalProperties: false,
    description: 'An order offered to one key, to accept or decline before its deadline',
  },
);
export type PartnerOffer = Static<typeof PartnerOffer>;

export const PageOfPartnerOffer = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 10000 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 50 }),
    total: Type.Integer({ description: 'all matching rows' }),
    items: Type.Array(PartnerOffer),
  },
  { $id: 'PageOfPartnerOffer', additionalProperties: false },
);
export type PageOfPartnerOffer = Static<typeof PageOfPartnerOffer>;

// --- Requests ----------------------------------------------------------------------------------------

export const OfferIdParams = Type.Object({ id: OfferId() });

export const ListPartnerOffersQuery = Type.Object(
  { status: Type.Optional(OfferStatus), ...PageQuery },
  { additionalProperties: false },
);
export type ListPartnerOffersQuery = Static<typeof ListPartnerOffersQuery>;

export const ListDeveloperOffersQuery = Type.Object(
  {
    apiKeyId: Type.Optional(Uuid({ description: 'only the offers made to this key of yours' })),
    status: Type.Optional(OfferStatus),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListDeveloperOffersQuery = Static<typeof ListDeveloperOffersQuery>;

export const ListAdminOffersQuery = Type.Object(
  {
    status: Type.Optional(OfferStatus),
    partnerId: Type.Optional(Uuid()),
    orderCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type ListAdminOffersQuery = Static<typeof ListAdminOffersQuery>;

export const CreateOfferDto = Type.Object(
  {
    apiKeyId: Uuid({ description: 'the key to offer the order to: active, of the order’s environment, with logistics:write' }),
    ttlSec: Type.Optional(
      Type.Integer({
        minimum: MIN_OFFER_TTL_SEC,
        maximum: MAX_OFFER_TTL_SEC,
        default: DEFAULT_OFFER_TTL_SEC,
        description: 'seconds until the offer expires: 60 to 86400, default 900',
      }),
    ),
  },
  { $id: 'CreateOfferDto', additionalProperties: false },
);
export type CreateOfferDto = Static<typeof CreateOfferDto>;

export const DeclineOfferDto = Type.Object(
  {
    reason: OfferDeclineReason,
    note: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_NOTE_LENGTH, description: 'required for OTHER; at most 500 characters' }),
    ),
  },
  {
    $id: 'DeclineOfferDto',
    additionalProperties: false,
    examples: [{ reason: 'NO_CAPACITY' }, { reason: 'OTHER', note: 'Van in repair until Monday' }],
  },
);
export type DeclineOfferDto = Static<typeof DeclineOfferDto>;

export const BulkAcceptOffersDto = Type.Object(
  {
    ids: Type.Array(OfferId(), {
      minItems: 1,
      maxItems: MAX_BULK_ACCEPT,
      uniqueItems: true,
      description: '1 to 100 distinct offer ids, each decided on its own',
    }),
  },
  { $id: 'BulkAcceptOffersDto', additionalProperties: false },
);
export type BulkAcceptOffersDto = Static<typeof BulkAcceptOffersDto>;

export const OfferResultError = Type.Object(
  {
    code: Type.String({ description: 'ERR_NOT_FOUND, ERR_OFFER_CLOSED or ERR_CONFLICT', examples: ['ERR_OFFER_CLOSED'] }),
    message: Type.String(),
  },
  { $id: 'OfferResultError', additionalProperties: false },
);

export const BulkAcceptOfferResult = Type.Object(
  {
    id: OfferId(),
    offer: Nullable(PartnerOffer, { description: 'the accepted offer; null when this id failed' }),
    error: Nullable(OfferResultError, { description: 'why this id was not accepted; null when it was' }),
  },
  { $id: 'BulkAcceptOfferResult', additionalProperties: false },
);

export const BulkAcceptOffersResult = Type.Object(
  { results: Type.Array(BulkAcceptOfferResult, { description: 'one per id, in the order given' }) },
  { $id: 'BulkAcceptOffersResult', additionalProperties: false },
);
export type BulkAcceptOffersResult = Static<typeof BulkAcceptOffersResult>;

export const SandboxOffersDto = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: 20, description: 'how many sandbox orders to offer to the calling key: 1 to 20' }),
    ttlSec: Type.Optional(
      Type.Integer({
        minimum: MIN_OFFER_TTL_SEC,
        maximum: MAX_OFFER_TTL_SEC,
        default: DEFAULT_OFFER_TTL_SEC,
        description: '60 to 86400, default 900',
      }),
    ),
  },
  { $id: 'SandboxOffersDto', additionalProperties: false },
);
export type SandboxOffersDto = Static<typeof SandboxOffersDto>;

export const SandboxOffers = Type.Object(
  { items: Type.Array(PartnerOffer) },
  { $id: 'SandboxOffers', additionalProperties: false },
);
export type SandboxOffers = Static<typeof SandboxOffers>;

// --- Statistics --------------------------------------------------------------------------------------

export const OfferStatsQuery = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 90,
        default: 30,
        description: 'the window: offers made in the last 1 to 90 days, default 30',
      }),
    ),
  },
  { additionalProperties: false },
);
export type OfferStatsQuery = Static<typeof OfferStatsQuery>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const OfferStats = Type.Object(
  {
    partnerId: Uuid(),
    days: Type.Integer({ minimum: 1, maximum: 90 }),
    from: DateTime({ description: 'start of the window (offers created at or after)' }),
    to: DateTime({ description: 'end of the window (now)' }),
    offered: Count('offers made in the window'),
    pending: Count('still open'),
    accepted: Count('accepted'),
    declined: Count('declined'),
    expired: Count('expired undecided'),
    withdrawn: Count('withdrawn by the operator or with the order'),
    acceptanceRate: Nullable(Type.Number({ minimum: 0, maximum: 1 }), {
      description: 'accepted ÷ (accepted + declined + expired), 4 decimals; null when that is 0',
    }),
    decisionSeconds: Nullable(
      Type.Object(
        {
          p50: Type.Number({ minimum: 0, description: 'median seconds from offer to accept or decline' }),
          p90: Type.Number({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
      { description: 'time to decide, over accepted and declined offers; null when there are none' },
    ),
    declineReasons: Type.Object(
      {
        NO_CAPACITY: Count('declined for NO_CAPACITY'),
        OUT_OF_AREA: Count('declined for OUT_OF_AREA'),
        TIME_WINDOW: Count('declined for TIME_WINDOW'),
        OTHER: Count('declined for OTHER'),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'OfferStats', additionalProperties: false, description: 'How a partner answers offers over a window of days' },
);
export type OfferStats = Static<typeof OfferStats>;
