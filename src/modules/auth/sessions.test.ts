import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createPartner, createUser, randomPhone } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';
import { signAccessToken } from './tokens.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t.ctx, 'ADMIN');
});
afterAll(() => t.close());

/** A fresh operator token (the clock moves a lot in this file, past any one token's 15 minutes). */
async function adminAuth() {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, { userId: admin.userId, role: 'ADMIN', partnerId: null });
  return { authorization: `Bearer ${token}` };
}

interface Tokens {
  accessToken: string;
  refreshToken: string;
  user: { id: string; phone: string; role: string; partnerId: string | null; partnerName: string | null };
}

async function signIn(phone: string): Promise<Tokens> {
  const requested = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
  expect(requested.statusCode).toBe(200);
  const res = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code: TEST_OTP } });
  expect(res.statusCode).toBe(200);
  // The per-phone resend limit would refuse the next sign-in of this phone within 60 s.
  t.clock.advance(61);
  return res.json();
}

const refresh = (refreshToken: unknown) => t.live.inject({ method: 'POST', url: '/v1/auth/refresh', payload: { refreshToken } });
const logout = (refreshToken: unknown) => t.live.inject({ method: 'POST', url: '/v1/auth/logout', payload: { refreshToken } });

function expectValidation(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}

describe('access tokens', () => {
  it('are HS256 JWTs for the account, valid 15 minutes', async () => {
    const partner = await createPartner(t.ctx);
    const { accessToken, user } = await signIn(partner.phone);
    expect(decodeProtectedHeader(accessToken).alg).toBe('HS256');
    const claims = decodeJwt(accessToken);
    expect(claims.sub).toBe(user.id);
    expect(claims).toMatchObject({ role: 'PARTNER', pid: partner.id });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
  });

  it('stop working on bearer routes after 15 minutes', async () => {
    const signedIn = await signIn(admin.phone);
    const auth = { authorization: `Bearer ${signedIn.accessToken}` };
    expect((await t.live.inject({ method: 'GET', url: '/v1/admin/partners', headers: auth })).statusCode).toBe(200);
    t.clock.advance(15 * 60 + 1);
    expectError(await t.live.inject({ method: 'GET', url: '/v1/admin/partners', headers: auth }), 401, 'ERR_UNAUTHORIZED');
  });
});

describe('POST /v1/auth/refresh', () => {
  it('answers a new token pair and a fresh access token that works', async () => {
    const first = await signIn(admin.phone);
    const res = await refresh(first.refreshToken);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_[\w-]{43}$/),
      tokenType: 'Bearer',
      expiresInSec: 900,
      user: { id: admin.userId, phone: admin.phone, role: 'ADMIN', partnerId: null, partnerName: null },
    });
    expect(body.refreshToken).not.toBe(first.refreshToken);
    const list = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${body.accessToken}` },
    });
    expect(list.statusCode).toBe(200);
  });

  it('stores refresh tokens only as their SHA-256, in one family per sign-in', async () => {
    const { refreshToken, user } = await signIn(randomPhone());
    const next = (await refresh(refreshToken)).json().refreshToken;
    const rows = await t.ctx.db.query<{ token_hash: string; family_id: string; used_at: Date | null }>(
      'SELECT token_hash, family_id, used_at FROM refresh_tokens WHERE user_id = $1 ORDER BY created_at',
      [user.id],
    );
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(rows.map((r) => r.token_hash)).toEqual([sha(refreshToken), sha(next)]);
    expect(rows[0].family_id).toMatch(UUID);
    expect(rows[1].family_id).toBe(rows[0].family_id);
    expect(rows[0].used_at).toBeInstanceOf(Date);
    expect(rows[1].used_at).toBeNull();
  });

  it('rotates along a chain: each new token refreshes once more', async () => {
    let { refreshToken } = await signIn(randomPhone());
    for (let i = 0; i < 3; i++) {
      const res = await refresh(refreshToken);
      expect(res.statusCode).toBe(200);
      refreshToken = res.json().refreshToken;
    }
  });

  it('revokes the whole family when a rotated token is presented again (401 ERR_UNAUTHORIZED)', async () => {
    const phone = randomPhone();
    const a = await signIn(phone);
    const other = await signIn(phone); // a second session of the same account
    const b = (await refresh(a.refreshToken)).json();
    const c = (await refresh(b.refreshToken)).json();

    expectError(await refresh(a.refreshToken), 401, 'ERR_UNAUTHORIZED');
    // The newest token of that chain is dead too: the thief and the owner cannot be told apart.
    expectError(await refresh(c.refreshToken), 401, 'ERR_UNAUTHORIZED');
    expectError(await refresh(b.refreshToken), 401, 'ERR_UNAUTHORIZED');
    // The other session of the account is untouched.
    expect((await refresh(other.refreshToken)).statusCode).toBe(200);
  });

  it('lets exactly one of two concurrent refreshes of one token succeed', async () => {
    const { refreshToken } = await signIn(randomPhone());
    const results = await Promise.all([refresh(refreshToken), refresh(refreshToken)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    expect(results.find((r) => r.statusCode === 401)?.json().code).toBe('ERR_UNAUTHORIZED');
  });

  it('refuses a token older than 30 days with 401 ERR_UNAUTHORIZED', async () => {
    const { refreshToken } = await signIn(randomPhone());
    t.clock.advance(30 * 86400 + 1);
    expectError(await refresh(refreshToken), 401, 'ERR_UNAUTHORIZED');
  });

  it('gives each rotated token its own 30 days', async () => {
    const { refreshToken } = await signIn(randomPhone());
    t.clock.advance(29 * 86400);
    const next = await refresh(refreshToken);
    expect(next.statusCode).toBe(200);
    t.clock.advance(29 * 86400);
    expect((await refresh(next.json().refreshToken)).statusCode).toBe(200);
  });

  it('refuses unknown and malformed tokens with 401 ERR_UNAUTHORIZED', async () => {
    expectError(await refresh(`rt_${'A'.repeat(43)}`), 401, 'ERR_UNAUTHORIZED');
    expectError(await refresh('not-a-token'), 401, 'ERR_UNAUTHORIZED');
    const { accessToken } = await signIn(randomPhone());
    expectError(await refresh(accessToken), 401, 'ERR_UNAUTHORIZED');
  });

  it('refuses bad input with 400 ERR_VALIDATION naming the field', async () => {
    expectValidation(await t.live.inject({ method: 'POST', url: '/v1/auth/refresh', payload: {} }), 'refreshToken');
    expectValidation(await refresh(12345), 'refreshToken');
    expectValidation(await refresh(''), 'refreshToken');
    const extra = await t.live.inject({
      method: 'POST',
      url: '/v1/auth/refresh',
      payload: { refreshToken: 'rt_x', scope: 'admin' },
    });
    expectValidation(extra, 'scope');
  });

  it('carries a role change into the refreshed tokens (a customer made a partner user)', async () => {
    const customer = await signIn(randomPhone());
    expect(customer.user.role).toBe('CUSTOMER');
    const created = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/partners',
      headers: await adminAuth(),
      payload: { name: 'Sürət Kuryer', phone: customer.user.phone },
    });
    expect(created.statusCode).toBe(201);
    const res = await refresh(customer.refreshToken);
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toEqual({
      id: customer.user.id,
      phone: customer.user.phone,
      role: 'PARTNER',
      partnerId: created.json().id,
      partnerName: 'Sürət Kuryer',
    });
    expect(decodeJwt(res.json().accessToken)).toMatchObject({ role: 'PARTNER', pid: created.json().id });
  });

  it('refuses a blocked account: blocking revokes its tokens (401), a surviving token answers 403 ERR_USER_BLOCKED', async () => {
    const user = await signIn(randomPhone());
    const survivor = await signIn(user.user.phone);
    const blocked = await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/users/${user.user.id}`,
      headers: await adminAuth(),
      payload: { blocked: true },
    });
    expect(blocked.statusCode).toBe(200);
    expectError(await refresh(user.refreshToken), 401, 'ERR_UNAUTHORIZED');

    // A token that escaped revocation (e.g. issued while the block was being written) still cannot refresh.
    await t.ctx.db.query('UPDATE refresh_tokens SET revoked_at = NULL WHERE token_hash = $1', [
      createHash('sha256').update(survivor.refreshToken).digest('hex'),
    ]);
    expectError(await refresh(survivor.refreshToken), 403, 'ERR_USER_BLOCKED');

    // Unblocking does not bring revoked sessions back.
    await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/users/${user.user.id}`,
      headers: await adminAuth(),
      payload: { blocked: false },
    });
    expectError(await refresh(user.refreshToken), 401, 'ERR_UNAUTHORIZED');
    expectError(await refresh(survivor.refreshToken), 401, 'ERR_UNAUTHORIZED');
  });
});

describe('POST /v1/auth/logout', () => {
  it('answers 204 and ends the session: the token and its rotations stop refreshing', async () => {
    const phone = randomPhone();
    const a = await signIn(phone);
    const other = await signIn(phone);
    const b = (await refresh(a.refreshToken)).json();

    const res = await logout(b.refreshToken);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expectError(await refresh(b.refreshToken), 401, 'ERR_UNAUTHORIZED');
    expectError(await refresh(a.refreshToken), 401, 'ERR_UNAUTHORIZED');
    expect((await refresh(other.refreshToken)).statusCode).toBe(200);
  });

  it('answers 204 for an unknown or already revoked token (nothing to sign out)', async () => {
    expect((await logout(`rt_${'B'.repeat(43)}`)).statusCode).toBe(204);
    const { refreshToken } = await signIn(randomPhone());
    expect((await logout(refreshToken)).statusCode).toBe(204);
    expect((await logout(refreshToken)).statusCode).toBe(204);
  });

  it('refuses bad input with 400 ERR_VALIDATION naming the field', async () => {
    expectValidation(await t.live.inject({ method: 'POST', url: '/v1/auth/logout', payload: {} }), 'refreshToken');
    expectValidation(await logout(null), 'refreshToken');
  });
});

describe('sign-in on the sandbox listener', () => {
  it('issues tokens that the live listener accepts too (accounts are not per environment)', async () => {
    const phone = admin.phone;
    await t.sandbox.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
    const res = await t.sandbox.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code: TEST_OTP } });
    expect(res.statusCode).toBe(200);
    t.clock.advance(61);
    const list = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${res.json().accessToken}` },
    });
    expect(list.statusCode).toBe(200);
  });
});
