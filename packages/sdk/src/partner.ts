/**
 * The partner client: an API key, the live or the sandbox API. Every `/v1/partner` operation of the
 * document is callable through `GET`/`POST`/…; the common ones have a named helper.
 */
import type { Middleware } from 'openapi-fetch';
import { type ClientOptionsBase, createTypedClient, type PathsUnder, type TypedClient } from './client.js';
import { OPERATIONS } from './generated/operations.js';
import type { components, operations, paths } from './generated/partner-api.js';

export type PartnerPaths = PathsUnder<paths, '/v1/partner/'>;
export type PartnerEnvironment = components['schemas']['PartnerEnvironment'];
type Schemas = components['schemas'];

/** Where each listener is when no `baseUrl` is given: the local development listeners (`npm start`). */
export const DEFAULT_BASE_URLS: Record<PartnerEnvironment, string> = {
  live: 'http://localhost:3000',
  sandbox: 'http://localhost:3001',
};

export interface PartnerClientOptions extends ClientOptionsBase {
  /** `svc_live_…` or `svc_sandbox_…`. */
  apiKey: string;
  /** Which API to talk to; by default the one the key's prefix names. */
  environment?: PartnerEnvironment;
  /** The listener's base URL, e.g. `https://partners.example.com`; by default `baseUrls[environment]`. */
  baseUrl?: string;
  /** Base URLs per environment (default DEFAULT_BASE_URLS, the local listeners). */
  baseUrls?: Partial<Record<PartnerEnvironment, string>>;
}

/**
 * The POST operations that take an `Idempotency-Key`, as the document marks them (partner events, offer
 * decisions, sandbox payment moves); the client adds a random one when the caller gives none, and its
 * retries send the same one.
 */
export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set(
  OPERATIONS.filter((op) => op.method === 'POST' && op.idempotencyKey).map((op) => op.path),
);

type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
export type OrdersQuery = Query<operations['listPartnerOrders']>;
export type PartnerOrderEventBody = JsonBody<operations['createPartnerOrderEvent']>;
/** The sandbox order's options (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): payment method, starting status, customer, count. */
export type SandboxOrderBody = JsonBody<operations['createSandboxOrder']>;
export type OffersQuery = Query<operations['listOffers']>;
/** A decline's reason (and note, required for OTHER): docs/offers.md. */
export type DeclineOfferBody = JsonBody<operations['declineOffer']>;

export interface PartnerClient extends TypedClient<PartnerPaths> {
  readonly environment: PartnerEnvironment;
  readonly baseUrl: string;
  /** GET /v1/partner/me: the key, its partner, scopes, limit and last 7 days of usage. */
  me(): Promise<Schemas['PartnerMe']>;
  /** GET /v1/partner/orders: one page (newest first). */
  listOrders(query?: OrdersQuery): Promise<Schemas['PageOfPartnerOrder']>;
  /** Every order matching `query`, page after page (see `paginate`). */
  orders(query?: Omit<OrdersQuery, 'page'>): AsyncIterableIterator<Schemas['PartnerOrder']>;
  /** GET /v1/partner/orders/{code}. */
  getOrder(code: string): Promise<Schemas['PartnerOrder']>;
  /**
   * POST /v1/partner/orders/{code}/events: the updated order. Give the same `idempotencyKey` when you
   * repeat an event after a lost answer (it answers the first outcome); without one, a random key is
   * sent and reused by the client's own retries.
   */
  reportEvent(
    code: string,
    event: PartnerOrderEventBody,
    options?: { idempotencyKey?: string },
  ): Promise<Schemas['PartnerOrder']>;
  /** POST /v1/partner/sandbox/orders (sandbox API only): a realistic test order assigned to this key. */
  createSandboxOrder(body?: Omit<SandboxOrderBody, 'count'>): Promise<Schemas['PartnerOrder']>;
  /** POST /v1/partner/sandbox/orders with `count` (1 to 20): that many test orders. */
  createSandboxOrders(count: number, body?: Omit<SandboxOrderBody, 'count'>): Promise<Array<Schemas['PartnerOrder']>>;
  /** Order offers made to this key (docs/offers.md): accept or decline each before its expiresAt. */
  offers: {
    /** GET /v1/partner/offers: one page, newest first (`status: 'PENDING'` for the open ones). */
    list(query?: OffersQuery): Promise<Schemas['PageOfPartnerOffer']>;
    /** Every offer matching `query`, page after page. */
    all(query?: Omit<OffersQuery, 'page'>): AsyncIterableIterator<Schemas['PartnerOffer']>;
    /** GET /v1/partner/offers/{id}. */
    get(id: string): Promise<Schemas['PartnerOffer']>;
    /**
     * POST /v1/partner/offers/{id}/accept: the offer ACCEPTED, its order now assigned to this key (read
     * it with getOrder). A closed offer throws PartnerApiError `ERR_OFFER_CLOSED` (details.status).
     */
    accept(id: string, options?: { idempotencyKey?: string }): Promise<Schemas['PartnerOffer']>;
    /** POST /v1/partner/offers/accept: 1 to 100 distinct ids, one result per id (an offer or an error). */
    acceptMany(ids: string[]): Promise<Schemas['BulkAcceptOffersResult']>;
    /** POST /v1/partner/offers/{id}/decline with a reason (a note is required for OTHER). */
    decline(id: string, body: DeclineOfferBody, options?: { idempotencyKey?: string }): Promise<Schemas['PartnerOffer']>;
    /** POST /v1/partner/sandbox/offers (sandbox API only): `count` (1 to 20) realistic orders offered to this key. */
    createSandbox(count: number, options?: { ttlSec?: number }): Promise<Array<Schemas['PartnerOffer']>>;
  };
}

function environmentOfKey(apiKey: string): PartnerEnvironment | null {
  if (apiKey.startsWith('svc_live_')) return 'live';
  if (apiKey.startsWith('svc_sandbox_')) return 'sandbox';
  return null;
}

const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (request.method === 'POST' && IDEMPOTENT_OPERATIONS.has(schemaPath) && !request.headers.has('idempotency-key')) {
      request.headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
    }
    return request;
  },
};

export function createPartnerClient(options: PartnerClientOptions): PartnerClient {
  if (!options.apiKey) throw new TypeError('createPartnerClient: apiKey is required');
  const keyEnvironment = environmentOfKey(options.apiKey);
  if (options.environment && keyEnvironment && options.environment !== keyEnvironment) {
    throw new TypeError(
      `createPartnerClient: a ${keyEnvironment} key (svc_${keyEnvironment}_…) works only on the ${keyEnvironment} API, not ${options.environment}`,
    );
  }
  const environment = options.environment ?? keyEnvironment ?? 'live';
  const baseUrl = options.baseUrl ?? { ...DEFAULT_BASE_URLS, ...options.baseUrls }[environment];
  const api = createTypedClient<PartnerPaths>(baseUrl, options, {
    headers: { 'X-Api-Key': options.apiKey },
    middleware: [idempotencyKeys],
  });

  return {
    ...api,
    environment,
    baseUrl,
    me: () => api.GET('/v1/partner/me'),
    listOrders: (query) => api.GET('/v1/partner/orders', { params: { query } }),
    orders: (query) => api.paginate('/v1/partner/orders', { query }),
    getOrder: (code) => api.GET('/v1/partner/orders/{code}', { params: { path: { code } } }),
    reportEvent: (code, event, opts = {}) =>
      api.POST('/v1/partner/orders/{code}/events', {
        params: {
          path: { code },
          header: opts.idempotencyKey === undefined ? undefined : { 'Idempotency-Key': opts.idempotencyKey },
        },
        body: event,
      }),
    createSandboxOrder: async (body?: Omit<SandboxOrderBody, 'count'>) => {
      const created = await api.POST('/v1/partner/sandbox/orders', body === undefined ? {} : { body });
      // One order, or `{ items }` (a PartnerOrder has `items` too: tell them apart by `code`).
      return 'code' in created ? created : created.items[0];
    },
    createSandboxOrders: async (count: number, body?: Omit<SandboxOrderBody, 'count'>) => {
      const created = await api.POST('/v1/partner/sandbox/orders', { body: { ...body, count } });
      return 'code' in created ? [created] : created.items;
    },
    offers: {
      list: (query) => api.GET('/v1/partner/offers', { params: { query } }),
      all: (query) => api.paginate('/v1/partner/offers', { query }),
      get: (id) => api.GET('/v1/partner/offers/{id}', { params: { path: { id } } }),
      accept: (id, opts = {}) =>
        api.POST('/v1/partner/offers/{id}/accept', {
          params: {
            path: { id },
            header: opts.idempotencyKey === undefined ? undefined : { 'Idempotency-Key': opts.idempotencyKey },
          },
        }),
      acceptMany: (ids) => api.POST('/v1/partner/offers/accept', { body: { ids } }),
      decline: (id, body, opts = {}) =>
        api.POST('/v1/partner/offers/{id}/decline', {
          params: {
            path: { id },
            header: opts.idempotencyKey === undefined ? undefined : { 'Idempotency-Key': opts.idempotencyKey },
          },
          body,
        }),
      createSandbox: async (count, opts = {}) =>
        (await api.POST('/v1/partner/sandbox/offers', { body: { count, ...opts } })).items,
    },
  };
}
