/**
 * Schemas shared by several domains. Every request and response shape is a TypeBox schema: the same
 * object validates input, serialises output, types the handler and becomes the OpenAPI document.
 * Schemas with a `$id` become named components in the OpenAPI document.
 */
import Type, { type Static, type TSchema, type TUnsafe } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/** A string enum as `{ type: 'string', enum: [...] }` (what OpenAPI 3.0 and clients expect). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: Record<string, unknown> = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `T | null`; the OpenAPI generator writes it in the form of docs/openapi.md, "Nullable fields". */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  return Type.Union([schema, Type.Null()], options);
}

// maxLength: docs/openapi.md, "OWASP ruleset" (a UUID is 36 characters; an RFC 3339 time at most 40 here).
export const DateTime = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'date-time', maxLength: 40, ...options });
export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', maxLength: 36, ...options });

export const ErrorEnvelope = Type.Object(
  {
    statusCode: Type.Integer({ description: 'HTTP status, repeated in the body' }),
    code: Type.String({ description: 'Machine-readable error code (ERR_*); switch on this', examples: ['ERR_VALIDATION'] }),
    message: Type.String({ description: 'English text for developers only' }),
    details: Type.Optional(
      Type.Unsafe<unknown>({
        description:
          'Shape depends on `code`: an array of `{ field, messages[] }` for ERR_VALIDATION; an object such as `{ retryAfterSec }` for ERR_OTP_RATE_LIMITED',
      }),
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false, description: 'Every error response' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

export const LocalizedText = Type.Object(
  { az: Type.String({ maxLength: 500 }), ru: Type.String({ maxLength: 500 }), en: Type.String({ maxLength: 500 }) },
  { $id: 'LocalizedText', additionalProperties: false, description: 'Text in Azerbaijani, Russian and English' },
);
export type LocalizedText = Static<typeof LocalizedText>;

export const API_KEY_ENVIRONMENTS = ['LIVE', 'SANDBOX'] as const;
export const ApiKeyEnvironment = StringEnum(API_KEY_ENVIRONMENTS, { $id: 'ApiKeyEnvironment' });
export type ApiKeyEnvironment = Static<typeof ApiKeyEnvironment>;

/** An environment as the API's bodies and answers name it (`live`, `sandbox`). */
export type EnvironmentName = 'live' | 'sandbox';

/** The one pair converting the stored name (`LIVE`, `SANDBOX`) and the name the API shows (`live`, `sandbox`). */
export function environmentName(environment: ApiKeyEnvironment): EnvironmentName {
  return environment === 'LIVE' ? 'live' : 'sandbox';
}
export function environmentOf(name: EnvironmentName): ApiKeyEnvironment {
  return name === 'live' ? 'LIVE' : 'SANDBOX';
}

export const API_KEY_SCOPES = ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'] as const;
export const ApiKeyScope = StringEnum(API_KEY_SCOPES, { $id: 'ApiKeyScope' });
export type ApiKeyScope = Static<typeof ApiKeyScope>;

/** `page` and `pageSize` of every paged list (docs/decisions-log.md, 'Orders'). */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 1, description: '1 to 10000' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 20, description: '1 to 50' })),
};

/**
 * The error responses of a route, each the shared envelope. Pass statuses (`404`) and/or error codes
 * (`'ERR_API_KEY_LIMIT'`, whose status comes from the catalogue); the codes are listed per status in the
 * OpenAPI document (`x-error-codes`), beside the codes every route of its kind can answer.
 */
export function errorResponses(...items: Array<number | ErrorCode>): Record<number, typeof ErrorEnvelope> {
  const codes = new Map<number, string[]>();
  for (const item of items) {
    const status = typeof item === 'number' ? item : ERROR_STATUS[item];
    const list = codes.get(status) ?? [];
    if (typeof item === 'string' && !list.includes(item)) list.push(item);
    codes.set(status, list);
  }
  const out: Record<number, typeof ErrorEnvelope> = {};
  for (const [status, list] of codes) out[status] = { ...ErrorEnvelope, 'x-error-codes': list } as typeof ErrorEnvelope;
  return out;
}

// Spec 2.1 enumerations, each a named component of the OpenAPI document.
export const PARTNER_ENVIRONMENTS = ['live', 'sandbox'] as const;
export const PartnerEnvironment = StringEnum(PARTNER_ENVIRONMENTS, { $id: 'PartnerEnvironment' });
export type PartnerEnvironment = Static<typeof PartnerEnvironment>;

export const ORDER_STATUSES = [
  'PLACED',
  'VENDOR_ACCEPTED',
  'RUNNER_PICKUP',
  'AT_HUB',
  'PACKED',
  'SCANNED_TO_VAN',
  'EN_ROUTE',
  'DELIVERED',
  'FAILED',
  'RETURNED',
  'CANCELLED',
] as const;
export const OrderStatus = StringEnum(ORDER_STATUSES, { $id: 'OrderStatus' });
export type OrderStatus = Static<typeof OrderStatus>;

export const PAYMENT_METHODS = ['COD', 'CARD'] as const;
export const PaymentMethod = StringEnum(PAYMENT_METHODS, { $id: 'PaymentMethod' });
export type PaymentMethod = Static<typeof PaymentMethod>;

export const ORDER_PAYMENT_STATUSES = ['UNPAID', 'PAID', 'REFUNDED', 'PARTIALLY_REFUNDED'] as const;
export const OrderPaymentStatus = StringEnum(ORDER_PAYMENT_STATUSES, { $id: 'OrderPaymentStatus' });
export type OrderPaymentStatus = Static<typeof OrderPaymentStatus>;

export const PARTNER_EVENT_TYPES = ['PICKED_UP', 'EN_ROUTE', 'DELIVERED', 'FAILED'] as const;
export const PartnerEventType = StringEnum(PARTNER_EVENT_TYPES, { $id: 'PartnerEventType' });
export type PartnerEventType = Static<typeof PartnerEventType>;

export const DELIVERY_FAIL_REASONS = ['NOT_HOME', 'REFUSED', 'WRONG_ADDRESS', 'UNREACHABLE', 'OTHER'] as const;
export const DeliveryFailReason = StringEnum(DELIVERY_FAIL_REASONS, { $id: 'DeliveryFailReason' });
export type DeliveryFailReason = Static<typeof DeliveryFailReason>;

export const WEBHOOK_EVENTS = [
  'order.placed',
  'order.status_changed',
  'order.delivered',
  'order.cancelled',
  'batch.completed',
  'order.assigned_to_partner',
  // Courier tracking (docs/tracking-and-proof.md).
  'order.courier_location',
  // Payments (docs/payments.md): only for keys holding payments:read.
  'payment_intent.succeeded',
  'payment_intent.refunded',
  'payment_intent.collected',
  'payment_intent.canceled',
  'settlement.created',
  'settlement.updated',
  'settlement.settled',
] as const;
/** The kinds that need the scope payments:read (docs/payments.md, "Webhooks and realtime"). */
export const PAYMENT_WEBHOOK_EVENTS: ReadonlySet<string> = new Set(
  WEBHOOK_EVENTS.filter((e) => e.startsWith('payment_intent.') || e.startsWith('settlement.')),
);
export const WebhookEvent = StringEnum(WEBHOOK_EVENTS, { $id: 'WebhookEvent' });
export type WebhookEvent = Static<typeof WebhookEvent>;

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED', 'DEAD'] as const;
export const WebhookDeliveryStatus = StringEnum(WEBHOOK_DELIVERY_STATUSES, { $id: 'WebhookDeliveryStatus' });
export type WebhookDeliveryStatus = Static<typeof WebhookDeliveryStatus>;
