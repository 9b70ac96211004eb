/**
 * The developer client: signs a PARTNER account in with a one-time code, keeps its tokens, refreshes the
 * access token once when an answer is 401 (refresh tokens are single use: concurrent calls share one
 * refresh), and calls the `/v1/developer` operations. Every operation of the document under
 * `/v1/developer` and `/v1/auth` is callable through `GET`/`POST`/…; the common ones have a named helper.
 */
import { type ClientOptionsBase, createTypedClient, type PathsUnder, type TypedClient } from './client.js';
import { PartnerApiError } from './errors.js';
import type { components as FullComponents, paths as FullPaths } from './generated/full-api.js';
import type { components, operations, paths } from './generated/partner-api.js';
import type { BearerAuth } from './transport.js';

export { type ErrorEnvelope, type FieldError, PartnerApiError } from './errors.js';
export type { BearerAuth } from './transport.js';

export type DeveloperPaths = PathsUnder<paths, '/v1/developer/'> & PathsUnder<FullPaths, '/v1/auth/'>;
type Schemas = components['schemas'];
export type AuthTokens = FullComponents['schemas']['AuthTokens'];
export type OtpRequested = FullComponents['schemas']['OtpRequested'];

/** What the client needs to stay signed in; keep it (e.g. in a file) to skip the sign-in next time. */
export interface SessionTokens {
  accessToken: string | null;
  refreshToken: string;
}

export interface DeveloperClientOptions extends ClientOptionsBase {
  /** The live listener's base URL (developer routes answer on both; sign-in lives there too). */
  baseUrl: string;
  /** Tokens of an earlier session (from `onTokens`). */
  tokens?: SessionTokens;
  /** Called whenever the tokens change (sign-in, refresh) and with null when the session ends. */
  onTokens?: (tokens: AuthTokens | null) => void;
  /**
   * A token store of your own (a browser app keeping one session for several tabs): it signs each
   * request and renews the token on a 401 in place of the client's own. `verifyCode` answers the
   * tokens for the store to keep; `tokens`, `user`, `refresh` and `signOut` are then the caller's
   * business (call `POST('/v1/auth/refresh', …)` and `POST('/v1/auth/logout', …)` from the store).
   */
  auth?: BearerAuth;
}

type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type JsonBody<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export interface DeveloperClient extends TypedClient<DeveloperPaths> {
  /** POST /v1/auth/otp/request: sends a 6-digit code by SMS to `phone` (+994…). */
  requestCode(phone: string): Promise<OtpRequested>;
  /** POST /v1/auth/otp/verify: signs in; the client keeps the tokens. */
  verifyCode(phone: string, code: string): Promise<AuthTokens>;
  /** POST /v1/auth/refresh: a new token pair now (the client also does this by itself on a 401). */
  refresh(): Promise<AuthTokens>;
  /** POST /v1/auth/logout: ends the session everywhere and forgets the tokens. */
  signOut(): Promise<void>;
  /** The current tokens, null when signed out. */
  readonly tokens: SessionTokens | null;
  /** The signed-in account (after verifyCode or refresh in this process). */
  readonly user: AuthTokens['user'] | null;

  keys: {
    list(): Promise<Schemas['DeveloperKeys']>;
    create(body: JsonBody<operations['createDeveloperKey']>): Promise<Schemas['DeveloperKeyCreated']>;
    revoke(id: string): Promise<Schemas['DeveloperKey']>;
    rotate(id: string): Promise<Schemas['DeveloperKeyRotated']>;
    usage(id: string, query?: Query<operations['getDeveloperKeyUsage']>): Promise<Schemas['DeveloperKeyUsageSeries']>;
    /** The go-live checklist of a SANDBOX key: what it has really done in the sandbox. */
    checklist(id: string): Promise<Schemas['GoLiveChecklist']>;
  };
  /** GET /v1/developer/limits: how many active keys a partner and webhooks a key may have. */
  limits(): Promise<Schemas['DeveloperLimits']>;
  /** The request log of the partner's keys (newest first; a request shows within 5 s). */
  requests: {
    list(query?: Query<operations['listDeveloperRequests']>): Promise<Schemas['PageOfDeveloperRequest']>;
    /** Every logged request matching `query`, page after page. */
    all(query?: Omit<Query<operations['listDeveloperRequests']>, 'page'>): AsyncIterableIterator<Schemas['DeveloperRequest']>;
    /** One request with its bodies. */
    get(id: string): Promise<Schemas['DeveloperRequestDetail']>;
  };
  webhooks: {
    list(): Promise<Schemas['DeveloperWebhooks']>;
    create(body: JsonBody<operations['createWebhook']>): Promise<Schemas['DeveloperWebhookCreated']>;
    update(id: string, body: JsonBody<operations['updateWebhook']>): Promise<Schemas['DeveloperWebhook']>;
    delete(id: string): Promise<void>;
    /** Queues a really signed `ping` (or a sample of `event`); poll `deliveries` for the outcome. */
    test(id: string, body?: Schemas['TestWebhookDto']): Promise<Schemas['DeveloperDelivery']>;
    /** A new signing secret (shown once); the old one keeps signing too for `graceHours` (default 24). */
    rotateSecret(id: string, body?: Schemas['RotateWebhookSecretDto']): Promise<Schemas['DeveloperWebhookRotated']>;
    /** Queues again every FAILED or DEAD delivery created in [since, until). */
    recover(id: string, body: Schemas['RecoverDeliveriesDto']): Promise<Schemas['RecoverQueued']>;
    /** Delivery health over the last 24 h. */
    health(id: string): Promise<Schemas['WebhookHealth']>;
    /** The form of the current signing secret (never the secret): rotate when `rotationSuggested`. */
    signingSecret(id: string): Promise<Schemas['WebhookSigningSecret']>;
    /** One page of the webhook's deliveries, newest first. */
    listDeliveries(id: string, query?: Query<operations['listWebhookDeliveries']>): Promise<Schemas['PageOfDeveloperDelivery']>;
    /** Every delivery of the webhook (matching `query`), page after page. */
    deliveries(
      id: string,
      query?: Omit<Query<operations['listWebhookDeliveries']>, 'page'>,
    ): AsyncIterableIterator<Schemas['DeveloperDelivery']>;
  };
  deliveries: {
    /** One delivery with the payload as sent and every attempt. */
    get(id: string): Promise<Schemas['DeveloperDeliveryDetail']>;
    /** Queues a delivery again: same event id, fresh signature. */
    redeliver(id: string): Promise<Schemas['DeveloperDelivery']>;
  };
  /** GET /v1/developer/event-types (public): each event kind with its JSON Schema and an example. */
  eventTypes(): Promise<Schemas['EventTypes']>;
  /** GET /v1/developer/openapi.json (public). */
  openApiDocument(): Promise<Record<string, unknown>>;
}

export function createDeveloperClient(options: DeveloperClientOptions): DeveloperClient {
  if (!options.baseUrl) throw new TypeError('createDeveloperClient: baseUrl is required');
  let tokens: SessionTokens | null = options.tokens ? { ...options.tokens } : null;
  let user: AuthTokens['user'] | null = null;
  let renewing: Promise<string | null> | null = null;

  const keep = (next: AuthTokens | null) => {
    tokens = next ? { accessToken: next.accessToken, refreshToken: next.refreshToken } : null;
    user = next ? next.user : null;
    options.onTokens?.(next);
    return next;
  };

  const auth: BearerAuth = {
    accessToken: () => tokens?.accessToken ?? null,
    skip: (url) => url.pathname.startsWith('/v1/auth/'),
    async renew(used) {
      // Another call already renewed it: use the new token.
      if (tokens?.accessToken && tokens.accessToken !== used) return tokens.accessToken;
      renewing ??= refresh()
        .then((t) => t.accessToken)
        .catch(() => null)
        .finally(() => {
          renewing = null;
        });
      return renewing;
    },
  };

  const api = createTypedClient<DeveloperPaths>(options.baseUrl, options, { auth: options.auth ?? auth });

  async function refresh(): Promise<AuthTokens> {
    const refreshToken = tokens?.refreshToken;
    if (!refreshToken) {
      throw new PartnerApiError({
        status: 401,
        code: 'ERR_UNAUTHORIZED',
        message: 'Not signed in: call verifyCode first',
        method: 'POST',
        url: `${options.baseUrl}/v1/auth/refresh`,
      });
    }
    try {
      return keep(await api.POST('/v1/auth/refresh', { body: { refreshToken } })) as AuthTokens;
    } catch (err) {
      // The session is over (expired, revoked, or this refresh token was already used): forget it.
      // Anything else (a network error, 503) may pass; the tokens are kept for the next try.
      if (err instanceof PartnerApiError && (err.status === 401 || err.status === 403)) keep(null);
      throw err;
    }
  }

  return {
    ...api,
    get tokens() {
      return tokens ? { ...tokens } : null;
    },
    get user() {
      return user;
    },
    requestCode: (phone) => api.POST('/v1/auth/otp/request', { body: { phone } }),
    verifyCode: async (phone, code) => keep(await api.POST('/v1/auth/otp/verify', { body: { phone, code } })) as AuthTokens,
    refresh,
    async signOut() {
      const refreshToken = tokens?.refreshToken;
      if (refreshToken) await api.POST('/v1/auth/logout', { body: { refreshToken } });
      keep(null);
    },
    keys: {
      list: () => api.GET('/v1/developer/keys'),
      create: (body) => api.POST('/v1/developer/keys', { body }),
      revoke: (id) => api.DELETE('/v1/developer/keys/{id}', { params: { path: { id } } }),
      rotate: (id) => api.POST('/v1/developer/keys/{id}/rotate', { params: { path: { id } } }),
      usage: (id, query) => api.GET('/v1/developer/keys/{id}/usage', { params: { path: { id }, query } }),
      checklist: (id) => api.GET('/v1/developer/keys/{id}/checklist', { params: { path: { id } } }),
    },
    limits: () => api.GET('/v1/developer/limits'),
    requests: {
      list: (query) => api.GET('/v1/developer/requests', { params: { query } }),
      all: (query) => api.paginate('/v1/developer/requests', { query }),
      get: (id) => api.GET('/v1/developer/requests/{id}', { params: { path: { id } } }),
    },
    webhooks: {
      list: () => api.GET('/v1/developer/webhooks'),
      create: (body) => api.POST('/v1/developer/webhooks', { body }),
      update: (id, body) => api.PATCH('/v1/developer/webhooks/{id}', { params: { path: { id } }, body }),
      delete: async (id) => {
        await api.DELETE('/v1/developer/webhooks/{id}', { params: { path: { id } } });
      },
      test: (id, body) => api.POST('/v1/developer/webhooks/{id}/test', { params: { path: { id } }, body }),
      rotateSecret: (id, body) => api.POST('/v1/developer/webhooks/{id}/rotate-secret', { params: { path: { id } }, body }),
      recover: (id, body) => api.POST('/v1/developer/webhooks/{id}/recover', { params: { path: { id } }, body }),
      health: (id) => api.GET('/v1/developer/webhooks/{id}/health', { params: { path: { id } } }),
      signingSecret: (id) => api.GET('/v1/developer/webhooks/{id}/signing-secret', { params: { path: { id } } }),
      listDeliveries: (id, query) => api.GET('/v1/developer/webhooks/{id}/deliveries', { params: { path: { id }, query } }),
      deliveries: (id, query) => api.paginate('/v1/developer/webhooks/{id}/deliveries', { path: { id }, query }),
    },
    deliveries: {
      get: (id) => api.GET('/v1/developer/deliveries/{id}', { params: { path: { id } } }),
      redeliver: (id) => api.POST('/v1/developer/deliveries/{id}/redeliver', { params: { path: { id } } }),
    },
    eventTypes: () => api.GET('/v1/developer/event-types'),
    openApiDocument: () => api.GET('/v1/developer/openapi.json'),
  };
}
