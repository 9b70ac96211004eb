/**
 * Webhook and delivery shapes (docs/decisions-log.md, 'Webhooks'), named as in the contract so the OpenAPI document
 * carries them as components.
 */
import Type, { type Static } from 'typebox';
import {
  DateTime,
  Nullable,
  PageQuery,
  StringEnum,
  Uuid,
  WEBHOOK_EVENTS,
  WebhookDeliveryStatus,
  WebhookEvent,
} from '../../shared/schemas.js';
import { EVENT_TYPES } from './event-catalog.js';

export const MAX_WEBHOOKS_PER_KEY = 5;
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const UrlField = Type.String({
  // Enforced by the URL policy with its own code (ERR_WEBHOOK_URL_INVALID), so declared, not validated.
  'x-max-length': MAX_WEBHOOK_URL_LENGTH,
  description:
    'Where deliveries are POSTed. HTTPS only; plain http is accepted for localhost, 127.0.0.1 and [::1] outside production. ' +
    `No credentials in the URL; at most ${MAX_WEBHOOK_URL_LENGTH} characters.`,
  examples: ['https://partner.example.com/hooks/orders'],
});

const EventsField = Type.Array(WebhookEvent, {
  minItems: 1,
  uniqueItems: true,
  maxItems: WEBHOOK_EVENTS.length,
  description: 'The event kinds this endpoint receives; at least one, no repeats',
});

export const DeveloperWebhook = Type.Object(
  {
    id: Uuid(),
    apiKeyId: Uuid({ description: 'The key the webhook belongs to; events are routed as that key sees orders' }),
    url: Type.String(),
    events: Type.Array(WebhookEvent),
    isActive: Type.Boolean({ description: 'Becomes false automatically after 50 consecutive dead deliveries' }),
    consecutiveFailures: Type.Integer({ description: 'Deliveries that ended DEAD in a row; a delivered one resets it' }),
    createdAt: DateTime(),
  },
  { $id: 'DeveloperWebhook', additionalProperties: false },
);
export type DeveloperWebhook = Static<typeof DeveloperWebhook>;

export const DeveloperWebhookCreated = Type.Object(
  {
    ...DeveloperWebhook.properties,
    secret: Type.String({
      description:
        'The signing secret (`whsec_…`), shown only in this response. Verify X-Partner-Signature with HMAC-SHA256 keyed with this string.',
    }),
  },
  { $id: 'DeveloperWebhookCreated', additionalProperties: false },
);
export type DeveloperWebhookCreated = Static<typeof DeveloperWebhookCreated>;

export const DeveloperWebhooks = Type.Object(
  { items: Type.Array(DeveloperWebhook) },
  { $id: 'DeveloperWebhooks', additionalProperties: false },
);

export const DeveloperDelivery = Type.Object(
  {
    id: Uuid(),
    webhookId: Uuid(),
    event: Type.String({ description: 'Event kind, one of WebhookEvent; a test delivery is `ping`' }),
    status: WebhookDeliveryStatus,
    attempts: Type.Integer({ description: 'Attempts made so far (a redeliver resets it to 0)' }),
    statusCode: Nullable(Type.Integer(), { description: 'HTTP status the endpoint answered with at the last attempt' }),
    lastError: Nullable(Type.String(), {
      description: 'Short failure text of the last attempt ("HTTP 500", "timeout after 10 s", "connection refused")',
    }),
    createdAt: DateTime(),
    deliveredAt: Nullable(DateTime()),
    nextAttemptAt: Nullable(DateTime(), {
      description: 'When the retry of a FAILED delivery is scheduled; null otherwise (PENDING is being sent now)',
    }),
  },
  { $id: 'DeveloperDelivery', additionalProperties: false },
);
export type DeveloperDelivery = Static<typeof DeveloperDelivery>;

export const PageOfDeveloperDelivery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 10000 }),
    pageSize: Type.Integer({ minimum: 1, maximum: 50 }),
    total: Type.Integer({ description: 'All matching deliveries' }),
    items: Type.Array(DeveloperDelivery, { description: 'Newest first' }),
  },
  { $id: 'PageOfDeveloperDelivery', additionalProperties: false },
);
export type PageOfDeveloperDelivery = Static<typeof PageOfDeveloperDelivery>;

export const CreateDeveloperWebhookDto = Type.Object(
  {
    // Typed uuid as the contract types it (docs/decisions-log.md, 'Webhooks'): a malformed id is a validation error (400); a well-formed id that
    // names none of the caller's usable keys is a resource that is not found (404).
    apiKeyId: Uuid({
      description:
        'The key the webhook belongs to; that key must carry `webhooks:manage`. An id that is not one of your usable keys answers 404.',
      examples: ['3f1c2b7e-8d4a-4c1e-9a57-2f0e6b1d9c33'],
    }),
    url: UrlField,
    events: EventsField,
  },
  { $id: 'CreateDeveloperWebhookDto', additionalProperties: false },
);
export type CreateDeveloperWebhookDto = Static<typeof CreateDeveloperWebhookDto>;

export const UpdateDeveloperWebhookDto = Type.Object(
  {
    url: Type.Optional(UrlField),
    events: Type.Optional(EventsField),
    isActive: Type.Optional(
      Type.Boolean({ description: 'false switches the endpoint off; true switches it on and clears its failure streak' }),
    ),
  },
  { $id: 'UpdateDeveloperWebhookDto', additionalProperties: false },
);
export type UpdateDeveloperWebhookDto = Static<typeof UpdateDeveloperWebhookDto>;

export const IdParams = Type.Object({ id: Type.String({ description: 'A webhook id (uuid)' }) });
export const DeliveryIdParams = Type.Object({ id: Type.String({ description: 'A delivery id (uuid)' }) });

export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(WebhookDeliveryStatus),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

// --- Webhook operations (docs/decisions-log.md, 'Webhook operations') ------------------------------------------------------------

export const DeliveryAttempt = Type.Object(
  {
    number: Type.Integer({
      minimum: 1,
      description:
        'The attempt number over the delivery’s whole life: it runs on after a redeliver, which keeps the earlier attempts',
    }),
    at: DateTime({ description: 'When the attempt started' }),
    durationMs: Type.Integer({ minimum: 0, description: 'From sending the request to the end of the answer (or the failure)' }),
    statusCode: Nullable(Type.Integer(), { description: 'HTTP status of the answer; null when the endpoint never answered' }),
    error: Nullable(Type.String(), { description: 'Short failure text ("HTTP 500", "timeout after 10 s"); null when delivered' }),
    requestHeaders: Type.Record(Type.String(), Type.String(), {
      description: 'The Content-Type and X-Partner-* headers sent (lower-case names)',
    }),
    responseHeaders: Nullable(Type.Record(Type.String(), Type.String()), {
      description: 'The headers of the answer (lower-case names); null when the endpoint never answered',
    }),
    responseBody: Nullable(Type.String(), {
      description:
        'The first 4 KiB of the answer’s body as text, never parsed; a binary body is a short note instead. Null when the endpoint never answered',
    }),
  },
  { $id: 'DeliveryAttempt', additionalProperties: false },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const DeveloperDeliveryDetail = Type.Object(
  {
    ...DeveloperDelivery.properties,
    payload: Type.String({ description: 'The body exactly as sent and signed (a JSON text): verify a signature against it' }),
    attempts: Type.Array(DeliveryAttempt, { description: 'Every attempt, oldest first' }),
  },
  { $id: 'DeveloperDeliveryDetail', additionalProperties: false },
);
export type DeveloperDeliveryDetail = Static<typeof DeveloperDeliveryDetail>;

export const DeliveryAttemptHeaders = Type.Object(
  {
    number: Type.Integer({ minimum: 1, description: 'The attempt number, as in DeliveryAttempt' }),
    headers: Type.Record(Type.String(), Type.String(), {
      description:
        'Every header of the request as the endpoint got it (lower-case names): Content-Type, User-Agent, the X-Partner-* and ' +
        'Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature) headers, Host, Connection and Content-Length',
    }),
  },
  { $id: 'DeliveryAttemptHeaders', additionalProperties: false },
);
export type DeliveryAttemptHeaders = Static<typeof DeliveryAttemptHeaders>;

export const DeliveryRequestHeaders = Type.Object(
  {
    deliveryId: Uuid(),
    attempts: Type.Array(DeliveryAttemptHeaders, { description: 'Every attempt, oldest first' }),
  },
  { $id: 'DeliveryRequestHeaders', additionalProperties: false },
);
export type DeliveryRequestHeaders = Static<typeof DeliveryRequestHeaders>;

/** How far back a recovery may reach: deliveries are kept 35 days. */
export const RECOVER_MAX_AGE_DAYS = 35;

export const RecoverDeliveriesDto = Type.Object(
  {
    since: DateTime({
      description: `Start of the window (inclusive), by delivery creation time; at most ${RECOVER_MAX_AGE_DAYS} days back`,
      examples: ['2026-11-20T08:00:00.000Z'],
    }),
    until: Type.Optional(
      DateTime({
        description: 'End of the window (exclusive); after `since`. Default: now',
        examples: ['2026-11-20T12:00:00.000Z'],
      }),
    ),
  },
  { $id: 'RecoverDeliveriesDto', additionalProperties: false },
);
export type RecoverDeliveriesDto = Static<typeof RecoverDeliveriesDto>;

export const RecoverQueued = Type.Object(
  {
    queued: Type.Integer({
      minimum: 0,
      description: 'FAILED and DEAD deliveries of the window, queued again oldest first, a batch at a time',
    }),
  },
  { $id: 'RecoverQueued', additionalProperties: false },
);
export type RecoverQueued = Static<typeof RecoverQueued>;

export const MAX_GRACE_HOURS = 168;

export const RotateWebhookSecretDto = Type.Object(
  {
    graceHours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_HOURS,
        default: 24,
        description: `How long the previous secret keeps signing too (0 to ${MAX_GRACE_HOURS}, default 24); 0 ends it now`,
      }),
    ),
  },
  { $id: 'RotateWebhookSecretDto', additionalProperties: false },
);
export type RotateWebhookSecretDto = Static<typeof RotateWebhookSecretDto>;

export const DeveloperWebhookRotated = Type.Object(
  {
    ...DeveloperWebhookCreated.properties,
    previousSecretExpiresAt: DateTime({
      description:
        'Until then every delivery carries two signatures, `v1=<new>,v1=<old>`, so receivers may switch at their pace; rotating again ends it',
    }),
  },
  { $id: 'DeveloperWebhookRotated', additionalProperties: false },
);
export type DeveloperWebhookRotated = Static<typeof DeveloperWebhookRotated>;

export const WebhookSigningSecret = Type.Object(
  {
    webhookId: Uuid(),
    form: StringEnum(['base64', 'base64url'] as const, {
      description:
        'How the current secret encodes its 32 bytes after `whsec_`: `base64` (standard, padded; the Standard Webhooks ' +
        'libraries take the string as it is) or `base64url` (the form of secrets made earlier; those libraries cannot ' +
        'decode it, the SDK and X-Partner-Signature verifiers can)',
    }),
    rotationSuggested: Type.Boolean({
      description: 'True for a `base64url` secret: rotate it to get one every verifier accepts as it is',
    }),
  },
  { $id: 'WebhookSigningSecret', additionalProperties: false },
);
export type WebhookSigningSecret = Static<typeof WebhookSigningSecret>;

export const WebhookHealth = Type.Object(
  {
    webhookId: Uuid(),
    since: DateTime({ description: '24 hours ago: the start of the window the counts cover' }),
    delivered: Type.Integer({ minimum: 0, description: 'Attempts the endpoint accepted (2xx) in the window' }),
    failedAttempts: Type.Integer({ minimum: 0, description: 'Attempts that failed in the window (retried ones and final ones)' }),
    dead: Type.Integer({ minimum: 0, description: 'Deliveries that became DEAD in the window' }),
    successRate: Nullable(Type.Number({ minimum: 0, maximum: 1 }), {
      description: 'delivered / all attempts of the window, 0 to 1; null without attempts',
    }),
    p50Ms: Nullable(Type.Integer(), { description: 'Median attempt duration in the window; null without attempts' }),
    p99Ms: Nullable(Type.Integer(), { description: '99th percentile attempt duration in the window; null without attempts' }),
    lastSuccessAt: Nullable(DateTime(), { description: 'The latest accepted attempt (any time in the kept history)' }),
    lastFailureAt: Nullable(DateTime(), { description: 'The latest failed attempt (any time in the kept history)' }),
    consecutiveFailures: Type.Integer({ description: 'Deliveries that ended DEAD in a row (50 switches the webhook off)' }),
    isActive: Type.Boolean(),
  },
  { $id: 'WebhookHealth', additionalProperties: false },
);
export type WebhookHealth = Static<typeof WebhookHealth>;

export const TestWebhookDto = Type.Object(
  {
    event: Type.Optional(
      StringEnum(EVENT_TYPES, {
        default: 'ping',
        description: 'The kind of sample event: `ping` (default) or any WebhookEvent; its envelope id starts with `evt_test_`',
      }),
    ),
  },
  { $id: 'TestWebhookDto', additionalProperties: false },
);
export type TestWebhookDto = Static<typeof TestWebhookDto>;
