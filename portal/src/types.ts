/**
 * The shapes of the public API the portal uses, as partner-api.md (sections 2.6 to 2.9, 7) and
 * decisions.md (§2, §7) define them. The portal is a plain client of that contract: it imports nothing
 * from the server.
 */

export type ApiKeyEnvironment = 'LIVE' | 'SANDBOX';
export type ApiKeyScope = 'orders:read' | 'orders:pii' | 'logistics:write' | 'webhooks:manage' | 'payments:read';
export type WebhookEvent =
  | 'order.placed'
  | 'order.status_changed'
  | 'order.delivered'
  | 'order.cancelled'
  | 'batch.completed'
  | 'order.assigned_to_partner';
export type WebhookDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'DEAD';
export type Role = 'CUSTOMER' | 'PARTNER' | 'ADMIN';

/** Scopes with the one-line meaning of spec 5.1, in the order the spec lists them. */
export const SCOPES: ReadonlyArray<{ value: ApiKeyScope; meaning: string }> = [
  { value: 'orders:read', meaning: 'Read orders assigned to the key: items, totals, time window, zone, status timeline.' },
  { value: 'orders:pii', meaning: 'Also read the customer name, phone and delivery address.' },
  { value: 'logistics:write', meaning: 'Report PICKED_UP, EN_ROUTE, DELIVERED and FAILED on the key’s own orders.' },
  { value: 'webhooks:manage', meaning: 'Create and edit webhook endpoints for the key.' },
  { value: 'payments:read', meaning: 'Read payment intents and their status.' },
];

/** Webhook events with their meaning (spec 6, decisions §6). */
export const WEBHOOK_EVENTS: ReadonlyArray<{ value: WebhookEvent; meaning: string }> = [
  { value: 'order.placed', meaning: 'A new order was placed (reaches keys that receive all orders).' },
  { value: 'order.assigned_to_partner', meaning: 'An order was assigned to this key.' },
  { value: 'order.status_changed', meaning: 'An order visible to this key changed status.' },
  { value: 'order.delivered', meaning: 'An order was delivered.' },
  { value: 'order.cancelled', meaning: 'An order was cancelled.' },
  { value: 'batch.completed', meaning: 'A van batch with this key’s orders was completed.' },
];

export const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['PENDING', 'DELIVERED', 'FAILED', 'DEAD'];

export interface User {
  id: string;
  phone: string;
  role: Role;
  partnerId: string | null;
  partnerName: string | null;
}

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  tokenType: string;
  expiresInSec: number;
  user: User;
}

export interface OtpRequested {
  expiresInSec: number;
  resendAfterSec: number;
}

export interface DeveloperKey {
  id: string;
  name: string;
  prefix: string;
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  rateLimit: number;
  receivesAllOrders: boolean;
  isActive: boolean;
  lastUsedAt: string | null;
  /** When the key stops working: 24 h ahead after a rotation, now after a revoke. */
  revokedAt: string | null;
  createdAt: string;
}

export interface DeveloperKeyCreated extends DeveloperKey {
  key: string;
}

export interface DeveloperKeyRotated extends DeveloperKeyCreated {
  previousKeyId: string;
  previousKeyRevokedAt: string;
  movedOrders: number;
  movedWebhooks: number;
}

export interface DeveloperKeyUsage {
  day: string;
  requests: number;
  clientErrors: number;
  serverErrors: number;
}

export interface DeveloperKeyUsageSeries {
  apiKeyId: string;
  days: number;
  items: DeveloperKeyUsage[];
  totalRequests: number;
}

export interface DeveloperWebhook {
  id: string;
  apiKeyId: string;
  url: string;
  events: WebhookEvent[];
  isActive: boolean;
  consecutiveFailures: number;
  createdAt: string;
}

export interface DeveloperWebhookCreated extends DeveloperWebhook {
  secret: string;
}

export interface DeveloperDelivery {
  id: string;
  webhookId: string;
  event: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  statusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  nextAttemptAt: string | null;
}

/** One logged partner-API request (decisions §13), as listed. */
export interface DeveloperRequest {
  id: string;
  apiKeyId: string;
  environment: ApiKeyEnvironment;
  method: string;
  path: string;
  query: string | null;
  statusCode: number;
  errorCode: string | null;
  durationMs: number;
  ip: string;
  userAgent: string | null;
  idempotencyKey: string | null;
  createdAt: string;
}

/** The detail: bodies only for POSTs and error answers; a body that was not kept as sent is a note in brackets. */
export interface DeveloperRequestDetail extends DeveloperRequest {
  requestBody: string | null;
  responseBody: string | null;
}

/** What the request log left out in a period: in all and per minute. */
export interface RequestLogDrops {
  since: string;
  until: string;
  dropped: number;
  notStreamed: number;
  items: Array<{ minute: string; dropped: number; notStreamed: number }>;
}

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

export interface ErrorEnvelope {
  statusCode: number;
  code: string;
  message: string;
  details?: unknown;
}

export interface FieldError {
  field: string;
  messages: string[];
}
