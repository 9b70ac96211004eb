/**
 * What only the portal has: the words it shows for scopes, the request-log filters as
 * its URL keeps them, and a page of any list. Every shape of the API itself is the SDK's, generated from
 * the OpenAPI documents (`@partner-logistics/sdk/types`; `npm run sdk:generate`).
 */
import type { ApiKeyScope, Schemas, WebhookDeliveryStatus } from '@partner-logistics/sdk/types';

/** Scopes with their one-line meaning, in the order docs/decisions-log.md, 'API keys' lists them. */
const SCOPE_MEANING: Record<ApiKeyScope, string> = {
  'orders:read': 'Read orders assigned to the key: items, totals, time window, zone, status timeline.',
  'orders:pii': 'Also read the customer name, phone and delivery address.',
  'logistics:write': 'Report PICKED_UP, EN_ROUTE, DELIVERED and FAILED on the key’s own orders.',
  'webhooks:manage': 'Create and edit webhook endpoints for the key.',
  'payments:read': 'Read payment intents and their status.',
};

const listed = <T extends string>(meanings: Partial<Record<T, string>>) =>
  (Object.entries(meanings) as Array<[T, string]>).map(([value, meaning]) => ({ value, meaning }));

export const SCOPES: ReadonlyArray<{ value: ApiKeyScope; meaning: string }> = listed(SCOPE_MEANING);

export const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['PENDING', 'DELIVERED', 'FAILED', 'DEAD'];

/** A kind of test event: `ping` or a WebhookEvent. */
export type EventKind = NonNullable<Schemas['TestWebhookDto']['event']>;

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

/** One page of a list (`{ items, page, pageSize, total }`), whatever it lists. */
export interface Page<T> {
  page: number;
  pageSize: number;
  total: number;
  items: T[];
}
