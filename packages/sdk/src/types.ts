/**
 * The generated types alone (no runtime): `@partner-logistics/sdk/types`, for code that only needs the
 * shapes (a browser app, the developer portal).
 */
import type { components } from './generated/partner-api.js';

/** The full document's types: sign-in (/v1/auth) and the operator API (/v1/admin) as well. */
export type * as FullApi from './generated/full-api.js';
export type { components, operations, paths } from './generated/partner-api.js';

/** Every named schema of the partner and developer API: `Schemas['PartnerOrder']`. */
export type Schemas = components['schemas'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
export type PartnerOrder = Schemas['PartnerOrder'];
export type PageOfPartnerOrder = Schemas['PageOfPartnerOrder'];
export type PartnerMe = Schemas['PartnerMe'];
export type OrderStatus = Schemas['OrderStatus'];
export type PartnerEventType = Schemas['PartnerEventType'];
export type DeveloperKey = Schemas['DeveloperKey'];
export type DeveloperWebhook = Schemas['DeveloperWebhook'];
export type DeveloperDelivery = Schemas['DeveloperDelivery'];
export type ApiKeyEnvironment = Schemas['ApiKeyEnvironment'];
export type ApiKeyScope = Schemas['ApiKeyScope'];
export type DeveloperKeyCreated = Schemas['DeveloperKeyCreated'];
export type DeveloperKeyRotated = Schemas['DeveloperKeyRotated'];
export type DeveloperKeyUsage = Schemas['DeveloperKeyUsage'];
export type DeveloperKeyUsageSeries = Schemas['DeveloperKeyUsageSeries'];
export type WebhookEvent = Schemas['WebhookEvent'];
export type WebhookDeliveryStatus = Schemas['WebhookDeliveryStatus'];
export type DeveloperWebhookCreated = Schemas['DeveloperWebhookCreated'];
export type DeveloperWebhookRotated = Schemas['DeveloperWebhookRotated'];
export type WebhookHealth = Schemas['WebhookHealth'];
export type WebhookSigningSecret = Schemas['WebhookSigningSecret'];
export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type DeveloperDeliveryDetail = Schemas['DeveloperDeliveryDetail'];
export type EventTypeItem = Schemas['EventTypeItem'];
export type DeveloperRequest = Schemas['DeveloperRequest'];
export type DeveloperRequestDetail = Schemas['DeveloperRequestDetail'];
export type RequestLogDrops = Schemas['RequestLogDrops'];
export type SandboxOverview = Schemas['SandboxOverview'];
export type SandboxOrder = Schemas['SandboxOrder'];
export type SandboxBatch = Schemas['SandboxBatch'];
export type GoLiveChecklist = Schemas['GoLiveChecklist'];
export type ChecklistItem = Schemas['ChecklistItem'];
export type OrderProof = Schemas['OrderProof'];
export type PartnerBalance = Schemas['PartnerBalance'];
export type Settlement = Schemas['Settlement'];
export type SettlementLine = Schemas['SettlementLine'];
export type PaymentIntent = Schemas['PaymentIntent'];
export type OrderTracking = Schemas['OrderTracking'];
export type PaymentRefund = Schemas['PaymentRefund'];
export type DeveloperOrderView = Schemas['DeveloperOrderView'];
export type DeliveryRequestHeaders = Schemas['DeliveryRequestHeaders'];
export type PageOfPaymentIntent = Schemas['PageOfPaymentIntent'];
