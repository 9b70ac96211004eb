/**
 * Webhook and delivery shapes (spec 2.7, 2.8, 2.9), named as in the spec so the OpenAPI document
 * carries them as components.
 */
import Type, { type Static } from 'typebox';
import {
  DateTime,
  Nullable,
  PageQuery,
  Uuid,
  WEBHOOK_EVENTS,
  WebhookDeliveryStatus,
  WebhookEvent,
} from '../../shared/schemas.js';

export const MAX_WEBHOOKS_PER_KEY = 5;
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const UrlField = Type.String({
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
    // Typed uuid as in spec 2.9: a malformed id is a validation error (400); a well-formed id that
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
