/**
 * @partner-logistics/sdk: a typed client for the Partner Logistics API (types generated from the
 * service's OpenAPI documents), with retries, idempotent events, page iterators, token refresh and
 * webhook verification. See README.md.
 */
export type { CallMethod, ItemOf, PagedPaths, PageInit, PageOf, TypedClient } from './client.js';
export {
  type AuthTokens,
  createDeveloperClient,
  type DeveloperClient,
  type DeveloperClientOptions,
  type DeveloperPaths,
  type OtpRequested,
  type SessionTokens,
} from './developer.js';
export {
  type ErrorEnvelope,
  type FieldError,
  PartnerApiError,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from './errors.js';
export { type GeneratedOperation, OPERATIONS } from './generated/operations.js';
export {
  createPartnerClient,
  DEFAULT_BASE_URLS,
  IDEMPOTENT_OPERATIONS,
  type OrdersQuery,
  type PartnerClient,
  type PartnerClientOptions,
  type PartnerEnvironment,
  type PartnerOrderEventBody,
  type PartnerPaths,
} from './partner.js';
export type { BearerAuth, RetryOptions, TransportOptions } from './transport.js';
export type * from './types.js';
export {
  DEFAULT_TOLERANCE_SEC,
  SIGNATURE_HEADER,
  STANDARD_WEBHOOKS_HEADERS,
  signStandardWebhook,
  signWebhook,
  standardWebhooksKey,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookEvent,
  type WebhookEventEnvelope,
  type WebhookEventType,
  type WebhookHeaders,
} from './webhooks.js';
