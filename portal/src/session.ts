/**
 * The portal's session: a token store the SDK's developer client signs its requests with (its
 * `BearerAuth`, plugged in by client.ts). Rules (docs/decisions-log.md, 'Portal'):
 * - The session (access token, refresh token, user) is kept in localStorage so a reload or a second tab
 *   stays signed in; the 'storage' event keeps tabs in step (a sign-out in one tab signs out all).
 * - Refresh tokens rotate and presenting a rotated one again revokes the whole family, so two refreshes
 *   must never race: within a tab one refresh is in flight at a time, and across tabs the Web Locks API
 *   serialises them; a tab that waited for the lock adopts the pair another tab already obtained.
 * - A request answered 401 ERR_UNAUTHORIZED is retried once after one refresh; if the refresh fails
 *   with 401 the session is over and the user is signed out, and so is it when the retry is refused
 *   again. Other 401 codes (ERR_API_KEY_REVOKED on rotating a revoked key) are ordinary errors, not
 *   session ends.
 */
import { type AuthTokens, type BearerAuth, PartnerApiError } from '@partner-logistics/sdk/developer';

export type User = AuthTokens['user'];

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

function notify(): void {
  for (const l of listeners) l();
}

function setSession(next: Session | null, reason: SignOutReason = 'user'): void {
  session = next;
  if (next) {
    lastSignOutReason = null;
    localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  } else {
    lastSignOutReason = reason;
    localStorage.removeItem(STORAGE_KEY);
  }
  notify();
}

// Another tab signed in, refreshed or signed out.
window.addEventListener('storage', (event) => {
  if (event.key !== STORAGE_KEY && event.key !== null) return;
  session = readStored();
  notify();
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

/** Keeps a new token pair (sign-in, refresh). */
export function startSession(pair: AuthTokens): void {
  setSession({
    accessToken: pair.accessToken,
    refreshToken: pair.refreshToken,
    accessExpiresAt: Date.now() + pair.expiresInSec * 1000,
    user: pair.user,
  });
}

export function endSession(reason: SignOutReason): void {
  setSession(null, reason);
}

export interface SessionAuth extends BearerAuth {
  /**
   * Exchanges the refresh token for a new pair. Resolves false (and signs out) when the server refuses
   * it; throws on network or server trouble, leaving the session as it was.
   */
  refreshSession(): Promise<boolean>;
  /** An access token that is not about to expire (refreshing first when needed), or null when signed out. */
  freshAccessToken(): Promise<string | null>;
}

/** The store's BearerAuth; `refresh` sends POST /v1/auth/refresh (through the SDK client). */
export function createSessionAuth(refresh: (refreshToken: string) => Promise<AuthTokens>): SessionAuth {
  let refreshing: Promise<boolean> | null = null;

  async function doRefresh(used: string | null): Promise<boolean> {
    // While this tab waited for the lock another tab may have rotated the token already: adopt its pair
    // instead of presenting the old token again (which would revoke the family).
    const stored = readStored();
    if (stored && stored.refreshToken !== used) {
      session = stored;
      notify();
      return true;
    }
    if (!used) return false;
    try {
      startSession(await refresh(used));
      return true;
    } catch (err) {
      if (err instanceof PartnerApiError && [400, 401, 403].includes(err.status)) {
        endSession('expired');
        return false;
      }
      throw err;
    }
  }

  function refreshSession(): Promise<boolean> {
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

  async function freshAccessToken(): Promise<string | null> {
    if (session && session.accessExpiresAt - Date.now() < EXPIRY_MARGIN_MS) {
      await refreshSession().catch(() => false);
    }
    return session?.accessToken ?? null;
  }

  return {
    refreshSession,
    freshAccessToken,
    accessToken: freshAccessToken,
    skip: (url) => url.pathname.startsWith('/v1/auth/'),
    async renew(used, response) {
      const code = await response
        .clone()
        .json()
        .then((body: { code?: unknown }) => body.code)
        .catch(() => null);
      if (code !== 'ERR_UNAUTHORIZED') return null;
      // Refreshed meanwhile (by the realtime channel, another request or tab): retry with that token.
      if (session && session.accessToken !== used) return session.accessToken;
      return (await refreshSession()) ? (session?.accessToken ?? null) : null;
    },
    refused(_token, response) {
      void response
        .clone()
        .json()
        .then((body: { code?: unknown }) => {
          if (body.code === 'ERR_UNAUTHORIZED') endSession('expired');
        })
        .catch(() => undefined);
    },
  };
}
