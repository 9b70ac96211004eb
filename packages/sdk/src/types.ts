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
