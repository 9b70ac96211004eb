/**
 * The one API client of the portal: the session (tokens), sign-in, silent token refresh and every
 * developer call. Everything goes through the public API at the same origin.
 *
 * Session rules:
 * - The session (access token, refresh token, user) is kept in localStorage so a reload or a second tab
 *   stays signed in; the 'storage' event keeps tabs in step (a sign-out in one tab signs out all).
 * - Refresh tokens rotate and presenting a rotated one again revokes the whole family, so two refreshes
 *   must never race: within a tab one refresh is in flight at a time, and across tabs the Web Locks API
 *   serialises them; a tab that waited for the lock adopts the pair another tab already obtained.
 * - A request answered 401 ERR_UNAUTHORIZED is retried once after one refresh; if the refresh fails
 *   with 401 the session is over and the user is signed out. Other 401 codes (ERR_API_KEY_REVOKED on
 *   rotating a revoked key) are ordinary errors, not session ends.
 */
import type {
  ApiKeyEnvironment,
  ApiKeyScope,
  DeveloperDelivery,
  DeveloperDeliveryDetail,
  DeveloperKey,
  DeveloperKeyCreated,
  DeveloperKeyRotated,
  DeveloperKeyUsageSeries,
  DeveloperRequest,
  DeveloperRequestDetail,
  DeveloperWebhook,
  DeveloperWebhookCreated,
  DeveloperWebhookRotated,
  ErrorEnvelope,
  EventKind,
  EventTypeItem,
  FieldError,
  OtpRequested,
  Page,
  RequestFilters,
  RequestLogDrops,
  TokenPair,
  User,
  WebhookDeliveryStatus,
  WebhookEvent,
  WebhookHealth,
} from './types';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;

  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }

  /** The `{ field, messages[] }` list of an ERR_VALIDATION answer (empty otherwise). */
  get fieldErrors(): FieldError[] {
    if (this.code !== 'ERR_VALIDATION' || !Array.isArray(this.details)) return [];
    return this.details.filter(
      (d): d is FieldError => typeof d === 'object' && d !== null && typeof d.field === 'string' && Array.isArray(d.messages),
    );
  }
}

export interface Session {
  accessToken: string;
  refreshToken: string;
  /** Client-clock instant (ms) after which the access token is treated as expired. */
  accessExpiresAt: number;
  user: User;
}

export type SignOutReason = 'user' | 'expired';

const STORAGE_KEY = 'partner-portal.session';
const REFRESH_LOCK = 'partner-portal.refresh';
/** Refresh a little before the access token runs out rather than eat a 401 first. */
const EXPIRY_MARGIN_MS = 30_000;

function readStored(): Session | null {
  try {
    const raw = localStorage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    return typeof s.accessToken === 'string' && typeof s.refreshToken === 'string' && s.user ? s : null;
  } catch {
    return null;
  }
}

let session: Session | null = readStored();
let lastSignOutReason: SignOutReason | null = null;
const listeners = new Set<() => void>();

function setSession(next: Session | null, reason: SignOutReason = 'user'): void {
  session = next;
  if (next) {
    lastSignOutReason = null;
    localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  } else {
    lastSignOutReason = reason;
    localStorage.removeItem(STORAGE_KEY);
  }
  for (const l of listeners) l();
}

// Another tab signed in, refreshed or signed out.
window.addEventListener('storage', (event) => {
  if (event.key !== STORAGE_KEY && event.key !== null) return;
  session = readStored();
  for (const l of listeners) l();
});

export function getSession(): Session | null {
  return session;
}

/** Why the last session ended ('expired' shows a note on the sign-in page). */
export function getSignOutReason(): SignOutReason | null {
  return lastSignOutReason;
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function sessionFrom(pair: TokenPair): Session {
  return {
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    accessExpiresAt: Date.now() + pair.expiresInSec * 1000,
    user: pair.user,
  };
}

// ---------------------------------------------------------------------------------------------------
// Transport

async function send(method: string, path: string, body: unknown, token: string | null): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    return await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, 'ERR_NETWORK', 'Could not reach the server. Check your connection and try again.');
  }
}

async function errorFrom(res: Response): Promise<ApiError> {
  let envelope: Partial<ErrorEnvelope> | null = null;
  try {
    envelope = (await res.json()) as Partial<ErrorEnvelope>;
  } catch {
    // Not the API's envelope (a proxy page, say): fall through to a generic message.
  }
  if (envelope && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    return new ApiError(res.status, envelope.code, envelope.message, envelope.details);
  }
  return new ApiError(res.status, 'ERR_HTTP', `The server answered with an unexpected HTTP ${res.status}.`);
}

async function parse<T>(res: Response): Promise<T> {
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

// ---------------------------------------------------------------------------------------------------
// Sign-in, refresh, sign-out

export async function requestCode(phone: string): Promise<OtpRequested> {
  return parse(await send('POST', '/v1/auth/otp/request', { phone }, null));
}

export async function verifyCode(phone: string, code: string): Promise<User> {
  const pair = await parse<TokenPair>(await send('POST', '/v1/auth/otp/verify', { phone, code }, null));
  setSession(sessionFrom(pair));
  return pair.user;
}

let refreshing: Promise<boolean> | null = null;

/**
 * Exchanges the refresh token for a new pair. Resolves false (and signs out) when the server refuses
 * it; throws on network or server trouble, leaving the session as it was.
 */
export function refreshSession(): Promise<boolean> {
  if (refreshing) return refreshing;
  const used = session?.refreshToken ?? null;
  const run = () => doRefresh(used);
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  const started = locks ? (async (): Promise<boolean> => await locks.request(REFRESH_LOCK, run))() : run();
  const tracked = started.finally(() => {
    refreshing = null;
  });
  refreshing = tracked;
  return tracked;
}

async function doRefresh(used: string | null): Promise<boolean> {
  // While this tab waited for the lock another tab may have rotated the token already: adopt its pair
  // instead of presenting the old token again (which would revoke the family).
  const stored = readStored();
  if (stored && stored.refreshToken !== used) {
    session = stored;
    for (const l of listeners) l();
    return true;
  }
  if (!used) return false;
  const res = await send('POST', '/v1/auth/refresh', { refreshToken: used }, null);
  if (res.status === 400 || res.status === 401 || res.status === 403) {
    setSession(null, 'expired');
    return false;
  }
  const pair = await parse<TokenPair>(res);
  setSession(sessionFrom(pair));
  return true;
}

/** Ends the session here at once, then tells the server (best effort: a 404 or an outage is fine). */
export async function signOut(): Promise<void> {
  const refreshToken = session?.refreshToken;
  setSession(null, 'user');
  if (refreshToken) await send('POST', '/v1/auth/logout', { refreshToken }, null).catch(() => undefined);
}

/** An access token that is not about to expire (refreshing first when needed), or null when signed out. */
export async function freshAccessToken(): Promise<string | null> {
  if (session && session.accessExpiresAt - Date.now() < EXPIRY_MARGIN_MS) {
    await refreshSession().catch(() => false);
  }
  return session?.accessToken ?? null;
}

/** A developer-API call with the session's access token (one refresh and retry on 401 ERR_UNAUTHORIZED). */
export async function authed<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = await freshAccessToken();
  if (!token) throw new ApiError(401, 'ERR_UNAUTHORIZED', 'You are signed out.');
  let res = await send(method, path, body, token);
  if (res.status === 401) {
    const err = await errorFrom(res);
    if (err.code !== 'ERR_UNAUTHORIZED') throw err;
    // The token may have expired (or the server clock moved): one refresh, one retry. If the session
    // was refreshed meanwhile (by the realtime channel, another request or tab), just retry with it.
    if (session?.accessToken === token && !(await refreshSession())) {
      throw new ApiError(401, 'ERR_UNAUTHORIZED', 'Your session has ended. Please sign in again.');
    }
    res = await send(method, path, body, session?.accessToken ?? null);
    if (res.status === 401) {
      const again = await errorFrom(res);
      if (again.code === 'ERR_UNAUTHORIZED') setSession(null, 'expired');
      throw again;
    }
  }
  return parse<T>(res);
}

// ---------------------------------------------------------------------------------------------------
// Developer API (docs/decisions-log.md, 'API keys' and 'Webhooks')

const id = (value: string) => encodeURIComponent(value);

export const api = {
  listKeys: () => authed<{ items: DeveloperKey[] }>('GET', '/v1/developer/keys').then((r) => r.items),
  createKey: (body: { name: string; environment: ApiKeyEnvironment; scopes: ApiKeyScope[] }) =>
    authed<DeveloperKeyCreated>('POST', '/v1/developer/keys', body),
  revokeKey: (keyId: string) => authed<DeveloperKey>('DELETE', `/v1/developer/keys/${id(keyId)}`),
  rotateKey: (keyId: string) => authed<DeveloperKeyRotated>('POST', `/v1/developer/keys/${id(keyId)}/rotate`),
  keyUsage: (keyId: string, days: number) =>
    authed<DeveloperKeyUsageSeries>('GET', `/v1/developer/keys/${id(keyId)}/usage?days=${days}`),

  listWebhooks: () => authed<{ items: DeveloperWebhook[] }>('GET', '/v1/developer/webhooks').then((r) => r.items),
  createWebhook: (body: { apiKeyId: string; url: string; events: WebhookEvent[] }) =>
    authed<DeveloperWebhookCreated>('POST', '/v1/developer/webhooks', body),
  updateWebhook: (webhookId: string, body: { url?: string; events?: WebhookEvent[]; isActive?: boolean }) =>
    authed<DeveloperWebhook>('PATCH', `/v1/developer/webhooks/${id(webhookId)}`, body),
  deleteWebhook: (webhookId: string) => authed<void>('DELETE', `/v1/developer/webhooks/${id(webhookId)}`),
  testWebhook: (webhookId: string, event: EventKind = 'ping') =>
    authed<DeveloperDelivery>('POST', `/v1/developer/webhooks/${id(webhookId)}/test`, { event }),
  rotateWebhookSecret: (webhookId: string, graceHours: number) =>
    authed<DeveloperWebhookRotated>('POST', `/v1/developer/webhooks/${id(webhookId)}/rotate-secret`, { graceHours }),
  webhookHealth: (webhookId: string) => authed<WebhookHealth>('GET', `/v1/developer/webhooks/${id(webhookId)}/health`),
  recoverDeliveries: (webhookId: string, body: { since: string; until?: string }) =>
    authed<{ queued: number }>('POST', `/v1/developer/webhooks/${id(webhookId)}/recover`, body),
  getDelivery: (deliveryId: string) => authed<DeveloperDeliveryDetail>('GET', `/v1/developer/deliveries/${id(deliveryId)}`),
  eventTypes: () => authed<{ items: EventTypeItem[] }>('GET', '/v1/developer/event-types').then((r) => r.items),
  listDeliveries: (webhookId: string, query: { status?: WebhookDeliveryStatus; page: number; pageSize: number }) => {
    const params = new URLSearchParams({ page: String(query.page), pageSize: String(query.pageSize) });
    if (query.status) params.set('status', query.status);
    return authed<Page<DeveloperDelivery>>('GET', `/v1/developer/webhooks/${id(webhookId)}/deliveries?${params}`);
  },
  redeliver: (deliveryId: string) => authed<DeveloperDelivery>('POST', `/v1/developer/deliveries/${id(deliveryId)}/redeliver`),

  listRequests: (filters: RequestFilters, page: number, pageSize: number) => {
    const params = new URLSearchParams({ page: String(page), pageSize: String(pageSize) });
    for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
    return authed<Page<DeveloperRequest>>('GET', `/v1/developer/requests?${params}`);
  },
  getRequest: (requestId: string) => authed<DeveloperRequestDetail>('GET', `/v1/developer/requests/${id(requestId)}`),
  requestLogDrops: () => authed<RequestLogDrops>('GET', '/v1/developer/requests/drops'),
};
