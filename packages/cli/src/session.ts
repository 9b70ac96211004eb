/**
 * The clients the commands use, both from the SDK (the CLI has no HTTP client of its own):
 *
 *  - the developer client, signed in with the session kept in the config folder. Its tokens are
 *    written back whenever they change. Refreshes are coordinated between CLI processes: the refresh
 *    request goes through `coordinatedFetch`, which holds the folder's lock, presents the NEWEST refresh
 *    token on disk (another process may have used the one this process holds) and writes the new pair
 *    before it lets go (refresh tokens are single use: presenting a used one ends the session);
 *  - the partner client, for the partner API, with a full API key: see `resolveApiKey`.
 */
import {
  type AuthTokens,
  createDeveloperClient,
  createPartnerClient,
  type DeveloperClient,
  type PartnerClient,
} from '@partner-logistics/sdk';
import type { ConfigStore, StoredSession } from './config-store.js';
import { CliError } from './output.js';

export const USER_AGENT = 'partner-cli/0.1.0';

export interface Endpoints {
  /** The live listener: sign-in, the developer API, the realtime channel, live partner calls. */
  apiUrl: string;
  /** The sandbox listener: partner calls made with a sandbox key. */
  sandboxUrl: string;
}

function stored(tokens: AuthTokens): StoredSession {
  return {
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    user: tokens.user,
    savedAt: new Date().toISOString(),
  };
}

/** The fetch of the developer client: every call as it is, except token refreshes (see the top). */
function coordinatedFetch(store: ConfigStore, apiUrl: string): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'POST' || new URL(request.url).pathname !== '/v1/auth/refresh') return fetch(request);
    return store.withLock(async () => {
      const given = (await request.json()) as { refreshToken: string };
      const refreshToken = store.readSession(apiUrl)?.refreshToken ?? given.refreshToken;
      const response = await fetch(
        new Request(request.url, {
          method: 'POST',
          headers: request.headers,
          body: JSON.stringify({ refreshToken }),
          signal: request.signal,
        }),
      );
      if (response.ok) store.writeSession(apiUrl, stored((await response.clone().json()) as AuthTokens));
      return response;
    });
  };
}

/** A developer client on `apiUrl` with the stored session (none: a client that can only sign in). */
export function developerClient(store: ConfigStore, apiUrl: string, options: { signedIn: boolean }): DeveloperClient {
  const saved = store.readSession(apiUrl);
  if (options.signedIn && !saved) throw new CliError(`Not signed in to ${apiUrl}: run \`partner login\` first`);
  return createDeveloperClient({
    baseUrl: apiUrl,
    tokens: saved ? { accessToken: saved.accessToken, refreshToken: saved.refreshToken } : undefined,
    headers: { 'User-Agent': USER_AGENT },
    fetch: coordinatedFetch(store, apiUrl),
    onTokens: (tokens) => store.writeSession(apiUrl, tokens ? stored(tokens) : null),
  });
}

/** Seconds until a JWT expires (0 when unreadable or expired). */
export function secondsLeft(accessToken: string | null | undefined): number {
  if (!accessToken) return 0;
  try {
    const payload = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? Math.max(0, payload.exp - Date.now() / 1000) : 0;
  } catch {
    return 0;
  }
}

/** An access token good for at least another minute (refreshed, and stored, when it is not). */
export async function freshAccessToken(dev: DeveloperClient): Promise<string> {
  const current = dev.tokens?.accessToken;
  if (current && secondsLeft(current) > 60) return current;
  return (await dev.refresh()).accessToken;
}

/**
 * The full API key for a partner call, in this order:
 *  1. `--key <id>`: the key this CLI kept when it created or rotated that key (keys.json); for a key
 *     made elsewhere, PARTNER_API_KEY must hold it;
 *  2. no `--key`: PARTNER_API_KEY.
 * The secret is never taken from the command line, where other users of the machine could read it.
 */
export function resolveApiKey(store: ConfigStore, keyId: string | undefined, env: NodeJS.ProcessEnv): string {
  if (keyId) {
    const kept = store.readKey(keyId);
    if (kept) return kept.key;
    if (env.PARTNER_API_KEY) return env.PARTNER_API_KEY;
    throw new CliError(
      `This CLI does not hold the full key of ${keyId} (it keeps those it created or rotated: SECRET HERE in \`partner keys list\`): set PARTNER_API_KEY=svc_…`,
    );
  }
  if (env.PARTNER_API_KEY) return env.PARTNER_API_KEY;
  const kept = Object.keys(store.keys());
  throw new CliError(
    `Which API key? Give --key <id>${kept.length ? ` (kept here: ${kept.join(', ')})` : ''} or set PARTNER_API_KEY=svc_…`,
    2,
  );
}

export function partnerClient(
  store: ConfigStore,
  endpoints: Endpoints,
  keyId: string | undefined,
  env: NodeJS.ProcessEnv,
): PartnerClient {
  return createPartnerClient({
    apiKey: resolveApiKey(store, keyId, env),
    baseUrls: { live: endpoints.apiUrl, sandbox: endpoints.sandboxUrl },
    headers: { 'User-Agent': USER_AGENT },
  });
}
