/**
 * Shared authentication contracts, run against every protected route (as Unkey does for all of its
 * routes): each protected route gets the same refusals with the same codes.
 */
import { SignJWT } from 'jose';
import { it } from 'vitest';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { expectError } from './expect-error.js';
import { createKey, createPartner, createUser } from './factories.js';
import type { TestApp } from './harness.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteUnderTest {
  method: Method;
  /** The path; may depend on data created for the test. */
  url: string | ((t: TestApp) => string | Promise<string>);
  body?: unknown;
  /** Which listener serves it; default live. */
  listener?: 'live' | 'sandbox';
}

function urlOf(t: TestApp, route: RouteUnderTest) {
  return typeof route.url === 'function' ? route.url(t) : route.url;
}

/**
 * The partner API-key contract of docs/decisions-log.md, 'API keys': missing / unknown key 401 ERR_API_KEY_INVALID, revoked
 * key 401 ERR_API_KEY_REVOKED, wrong environment 403 ERR_API_KEY_ENVIRONMENT, missing scope 403
 * ERR_API_KEY_SCOPE (when the route needs one). Call inside a describe; `getApp` returns its TestApp.
 */
export function partnerAuthContract(getApp: () => TestApp, route: RouteUnderTest & { scope?: string }) {
  const listener = route.listener ?? 'live';
  const environment = listener === 'live' ? 'LIVE' : 'SANDBOX';
  const send = async (t: TestApp, headers: Record<string, string>) =>
    t[listener].inject({ method: route.method, url: await urlOf(t, route), headers, payload: route.body as never });

  it('answers a missing X-Api-Key with 401 ERR_API_KEY_INVALID', async () => {
    expectError(await send(getApp(), {}), 401, 'ERR_API_KEY_INVALID');
  });
  it('answers an unknown key with 401 ERR_API_KEY_INVALID', async () => {
    const prefix = listener === 'live' ? 'svc_live_' : 'svc_sandbox_';
    expectError(await send(getApp(), { 'x-api-key': `${prefix}${'Z'.repeat(32)}` }), 401, 'ERR_API_KEY_INVALID');
  });
  it('answers a revoked key with 401 ERR_API_KEY_REVOKED', async () => {
    const t = getApp();
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment });
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [key.id, t.clock.now()]);
    t.ctx.keys.invalidateAll();
    expectError(await send(t, key.headers), 401, 'ERR_API_KEY_REVOKED');
  });
  it('answers a key of the other environment with 403 ERR_API_KEY_ENVIRONMENT', async () => {
    const t = getApp();
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: environment === 'LIVE' ? 'SANDBOX' : 'LIVE' });
    expectError(await send(t, key.headers), 403, 'ERR_API_KEY_ENVIRONMENT');
  });
  if (route.scope) {
    it(`answers a key without ${route.scope} with 403 ERR_API_KEY_SCOPE`, async () => {
      const t = getApp();
      const partner = await createPartner(t.ctx);
      const all = ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'] as const;
      const key = await createKey(t.ctx, partner.id, { environment, scopes: all.filter((s) => s !== route.scope) });
      expectError(await send(t, key.headers), 403, 'ERR_API_KEY_SCOPE');
    });
  }
}

/**
 * The bearer contract: no token, a malformed, forged, expired or `alg: none` token 401
 * ERR_UNAUTHORIZED; an account of the wrong role 403 ERR_FORBIDDEN.
 */
export function bearerAuthContract(getApp: () => TestApp, route: RouteUnderTest & { role: 'PARTNER' | 'ADMIN' }) {
  const send = async (t: TestApp, headers: Record<string, string>) =>
    t[route.listener ?? 'live'].inject({
      method: route.method,
      url: await urlOf(t, route),
      headers,
      payload: route.body as never,
    });

  it('answers a missing bearer token with 401 ERR_UNAUTHORIZED', async () => {
    expectError(await send(getApp(), {}), 401, 'ERR_UNAUTHORIZED');
  });
  it('answers a malformed bearer token with 401 ERR_UNAUTHORIZED', async () => {
    expectError(await send(getApp(), { authorization: 'Bearer not-a-jwt' }), 401, 'ERR_UNAUTHORIZED');
  });
  it('answers a token signed with another key with 401 ERR_UNAUTHORIZED', async () => {
    const t = getApp();
    const forged = await signAccessToken(new TextEncoder().encode('x'.repeat(48)), t.clock, {
      userId: '00000000-0000-4000-8000-000000000000',
      role: route.role,
      partnerId: null,
    });
    expectError(await send(t, { authorization: `Bearer ${forged}` }), 401, 'ERR_UNAUTHORIZED');
  });
  it('answers an expired token with 401 ERR_UNAUTHORIZED', async () => {
    const t = getApp();
    const partner = await createPartner(t.ctx);
    const past = { nowMs: () => t.clock.nowMs() - 16 * 60_000, now: () => new Date(t.clock.nowMs() - 16 * 60_000) };
    const expired = await signAccessToken(t.ctx.secrets.jwtKey, past, {
      userId: partner.userId,
      role: route.role,
      partnerId: partner.id,
    });
    expectError(await send(t, { authorization: `Bearer ${expired}` }), 401, 'ERR_UNAUTHORIZED');
  });
  it('answers an alg:none token with 401 ERR_UNAUTHORIZED', async () => {
    const t = getApp();
    const partner = await createPartner(t.ctx);
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const now = Math.floor(t.clock.nowMs() / 1000);
    const payload = Buffer.from(
      JSON.stringify({
        sub: partner.userId,
        role: route.role,
        pid: partner.id,
        iss: 'partner-api',
        aud: 'partner-api',
        iat: now,
        exp: now + 600,
      }),
    ).toString('base64url');
    expectError(await send(t, { authorization: `Bearer ${header}.${payload}.` }), 401, 'ERR_UNAUTHORIZED');
  });
  it('answers an HS512 token with the right secret with 401 ERR_UNAUTHORIZED', async () => {
    const t = getApp();
    const token = await new SignJWT({ role: route.role })
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject('00000000-0000-4000-8000-000000000000')
      .setIssuer('partner-api')
      .setAudience('partner-api')
      .setExpirationTime('5m')
      .sign(new Uint8Array(64).fill(1));
    expectError(await send(t, { authorization: `Bearer ${token}` }), 401, 'ERR_UNAUTHORIZED');
  });
  const wrongRoles = route.role === 'PARTNER' ? (['CUSTOMER', 'ADMIN'] as const) : (['CUSTOMER'] as const);
  for (const role of wrongRoles) {
    it(`answers a ${role} account with 403 ERR_FORBIDDEN`, async () => {
      const t = getApp();
      const user = await createUser(t.ctx, role);
      expectError(await send(t, user.auth), 403, 'ERR_FORBIDDEN');
    });
  }
  if (route.role === 'ADMIN') {
    it('answers a PARTNER account with 403 ERR_FORBIDDEN', async () => {
      const t = getApp();
      const partner = await createPartner(t.ctx);
      expectError(await send(t, partner.auth), 403, 'ERR_FORBIDDEN');
    });
  }
}
