/**
 * The shapes of the public API the portal uses: aliases onto the SDK's types, which are generated from
 * the OpenAPI documents (`npm run sdk:generate`), so the portal follows the API by itself. The portal
 * is a plain client of that contract: it imports nothing from the server, and only types from the SDK.
 * Below the aliases: what only the portal has (labels, the generic page, validation details).
 */
import type { components, FullApi } from '@partner-logistics/sdk/types';

type Schemas = components['schemas'];
type FullSchemas = FullApi.components['schemas'];

export type ApiKeyEnvironment = Schemas['ApiKeyEnvironment'];
export type ApiKeyScope = Schemas['ApiKeyScope'];
export type WebhookEvent = Schemas['WebhookEvent'];
export type WebhookDeliveryStatus = Schemas['WebhookDeliveryStatus'];
export type Role = FullSchemas['Role'];

/** Scopes with their one-line meaning, in the order docs/decisions-log.md, 'API keys' lists them. */
export const SCOPES: ReadonlyArray<{ value: ApiKeyScope; meaning: string }> = [
  { value: 'orders:read', meaning: 'Read orders assigned to the key: items, totals, time window, zone, status timeline.' },
  { value: 'orders:pii', meaning: 'Also read the customer name, phone and delivery address.' },
  { value: 'logistics:write', meaning: 'Report PICKED_UP, EN_ROUTE, DELIVERED and FAILED on the key’s own orders.' },
  { value: 'webhooks:manage', meaning: 'Create and edit webhook endpoints for the key.' },
  { value: 'payments:read', meaning: 'Read payment intents and their status.' },
];

/** Webhook events with their meaning (docs/decisions-log.md, 'Webhooks'). */
export const WEBHOOK_EVENTS: ReadonlyArray<{ value: WebhookEvent; meaning: string }> = [
  { value: 'order.placed', meaning: 'A new order was placed (reaches keys that receive all orders).' },
  { value: 'order.assigned_to_partner', meaning: 'An order was assigned to this key.' },
  { value: 'order.status_changed', meaning: 'An order visible to this key changed status.' },
  { value: 'order.delivered', meaning: 'An order was delivered.' },
  { value: 'order.cancelled', meaning: 'An order was cancelled.' },
  { value: 'batch.completed', meaning: 'A van batch with this key’s orders was completed.' },
];

export const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['PENDING', 'DELIVERED', 'FAILED', 'DEAD'];

export type User = FullSchemas['AuthUser'];
export type TokenPair = FullSchemas['AuthTokens'];
export type OtpRequested = FullSchemas['OtpRequested'];
export type DeveloperKey = Schemas['DeveloperKey'];
export type DeveloperKeyCreated = Schemas['DeveloperKeyCreated'];
export type DeveloperKeyRotated = Schemas['DeveloperKeyRotated'];
export type DeveloperKeyUsage = Schemas['DeveloperKeyUsage'];
export type DeveloperKeyUsageSeries = Schemas['DeveloperKeyUsageSeries'];
export type DeveloperWebhook = Schemas['DeveloperWebhook'];
export type DeveloperWebhookCreated = Schemas['DeveloperWebhookCreated'];
export type DeveloperDelivery = Schemas['DeveloperDelivery'];
// Webhook operations (docs/decisions-log.md, 'Webhook operations').
export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type DeveloperDeliveryDetail = Schemas['DeveloperDeliveryDetail'];
export type DeveloperWebhookRotated = Schemas['DeveloperWebhookRotated'];
export type WebhookHealth = Schemas['WebhookHealth'];
/** A kind of test event: `ping` or a WebhookEvent. */
export type EventKind = NonNullable<Schemas['TestWebhookDto']['event']>;
export type EventTypeItem = Schemas['EventTypeItem'];

/** One logged partner-API request (docs/decisions-log.md, 'Request log'), as listed. */
export type DeveloperRequest = Schemas['DeveloperRequest'];

/** The detail: bodies only for POSTs and error answers; a body that was not kept as sent is a note in brackets. */
export type DeveloperRequestDetail = Schemas['DeveloperRequestDetail'];

/** What the request log left out in a period: in all and per minute. */
export type RequestLogDrops = Schemas['RequestLogDrops'];

/** The filters of GET /v1/developer/requests, as the Requests page keeps them in its URL. */
export interface RequestFilters {
  apiKeyId?: string;
  status?: string;
  code?: string;
  method?: string;
  path?: string;
  since?: string;
  until?: string;
}

export interface Page<T> {
  page: number;
  pageSize: number;
  total: number;
  items: T[];
}

export type ErrorEnvelope = Schemas['ErrorEnvelope'];

export interface FieldError {
  field: string;
  messages: string[];
}
