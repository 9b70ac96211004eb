import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPlainError } from '../../test/expect-error.js';
import { createKey, createPartner, createUser, type TestPartner } from '../../test/factories.js';
import { createSecondApp, createTestApp, type TestApp } from '../../test/harness.js';
import { buildApp } from '../app.js';
import { signAccessToken } from '../modules/auth/tokens.js';
import { API_KEY_SCOPES, type ApiKeyScope } from '../shared/schemas.js';
import { apiKeyOf } from './api-key-auth.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let t: TestApp;
/** The live app plus probe routes: one per scope, one that fails, one with a strict body, one echoing the key. */
let probe: FastifyInstance;

const scopePath = (scope: ApiKeyScope) => `/v1/partner/__probe/scope/${scope.replace(':', '-')}`;

beforeAll(async () => {
  t = await createTestApp();
  probe = await buildApp(t.ctx, 'LIVE');
  for (const scope of API_KEY_SCOPES) {
    probe.get(scopePath(scope), { onRequest: probe.partnerAuth(scope) }, async () => ({ ok: true }));
  }
  probe.get('/v1/partner/__probe/boom', { onRequest: probe.partnerAuth() }, async () => {
    throw new Error('unexpected');
  });
  probe.post(
    '/v1/partner/__probe/strict',
    {
      onRequest: probe.partnerAuth('logistics:write'),
      schema: { body: Type.Object({ note: Type.String({ maxLength: 3 }) }, { additionalProperties: false }) },
    },
    async () => ({ ok: true }),
  );
  probe.get('/v1/partner/__probe/acts-for', { onRequest: probe.partnerAuth() }, async (request) => {
    const key = apiKeyOf(request);
    return { id: key.id, actsForKeyId: key.actsForKeyId };
  });
  await probe.ready();
});
afterAll(async () => {
  await probe.close();
  await t.close();
});

/** A bearer header signed now (access tokens last 15 minutes; these tests move the clock by hours). */
async function authNow(partner: TestPartner) {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, {
    userId: partner.userId,
    role: 'PARTNER',
    partnerId: partner.id,
  });
  return { authorization: `Bearer ${token}` };
}

const me = (app: FastifyInstance, headers: Record<string, string>) =>
  app.inject({ method: 'GET', url: '/v1/partner/me', headers });

describe('partner key check', () => {
  it('answers a missing, malformed or unknown key with 401 ERR_API_KEY_INVALID', async () => {
    expectPlainError(await me(t.live, {}), 401, 'ERR_API_KEY_INVALID');
    expectPlainError(await me(t.live, { 'x-api-key': 'not-a-key' }), 401, 'ERR_API_KEY_INVALID');
    expectPlainError(await me(t.live, { 'x-api-key': `svc_live_${'a'.repeat(31)}` }), 401, 'ERR_API_KEY_INVALID');
    expectPlainError(await me(t.live, { 'x-api-key': `svc_live_${'a'.repeat(32)}` }), 401, 'ERR_API_KEY_INVALID');
  });

  it('answers a key revoked through the developer API with 401 ERR_API_KEY_REVOKED on the very next request', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    const revoked = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(revoked.statusCode).toBe(200);
    expectPlainError(await me(t.live, key.headers), 401, 'ERR_API_KEY_REVOKED');
    expectPlainError(await me(t.sandbox, key.headers), 401, 'ERR_API_KEY_REVOKED');
  });

  it('accepts each key only on the API of its environment (403 ERR_API_KEY_ENVIRONMENT otherwise)', async () => {
    const partner = await createPartner(t.ctx);
    const live = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    const sandbox = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    expect((await me(t.live, live.headers)).statusCode).toBe(200);
    expect((await me(t.sandbox, sandbox.headers)).statusCode).toBe(200);
    expectPlainError(await me(t.sandbox, live.headers), 403, 'ERR_API_KEY_ENVIRONMENT');
    expectPlainError(await me(t.live, sandbox.headers), 403, 'ERR_API_KEY_ENVIRONMENT');
  });

  it('checks revocation before the environment', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expectPlainError(await me(t.live, key.headers), 401, 'ERR_API_KEY_REVOKED');
  });

  for (const scope of API_KEY_SCOPES) {
    it(`admits a key with ${scope} and answers a key without it with 403 ERR_API_KEY_SCOPE`, async () => {
      const partner = await createPartner(t.ctx);
      const withScope = await createKey(t.ctx, partner.id, { scopes: [scope] });
      const without = await createKey(t.ctx, partner.id, { scopes: API_KEY_SCOPES.filter((s) => s !== scope) });
      const ok = await probe.inject({ method: 'GET', url: scopePath(scope), headers: withScope.headers });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ ok: true });
      expectPlainError(
        await probe.inject({ method: 'GET', url: scopePath(scope), headers: without.headers }),
        403,
        'ERR_API_KEY_SCOPE',
      );
    });
  }

  it('checks the key, environment, rate limit and scope before the input', async () => {
    const partner = await createPartner(t.ctx);
    const writer = await createKey(t.ctx, partner.id, { scopes: ['logistics:write'] });
    const reader = await createKey(t.ctx, partner.id, { scopes: ['orders:read'], rateLimit: 1 });
    const sandbox = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', scopes: ['logistics:write'] });
    const bad = { method: 'POST' as const, url: '/v1/partner/__probe/strict', payload: { note: 'too long', extra: 1 } };
    const malformed = { ...bad, payload: '{"note":', headers: { 'content-type': 'application/json' } };

    expectPlainError(await probe.inject({ ...bad, headers: {} }), 401, 'ERR_API_KEY_INVALID');
    expectPlainError(await probe.inject({ ...malformed }), 401, 'ERR_API_KEY_INVALID');
    expectPlainError(await probe.inject({ ...bad, headers: sandbox.headers }), 403, 'ERR_API_KEY_ENVIRONMENT');
    expectPlainError(await probe.inject({ ...bad, headers: reader.headers }), 403, 'ERR_API_KEY_SCOPE');
    // The reader's one request per minute is spent: the rate limit answers before the scope.
    expectPlainError(await probe.inject({ ...bad, headers: reader.headers }), 429, 'ERR_RATE_LIMITED');

    const invalid = await probe.inject({ ...bad, headers: writer.headers });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'ERR_VALIDATION' });
    expect(
      invalid
        .json()
        .details.map((d: { field: string }) => d.field)
        .sort(),
    ).toEqual(['extra', 'note']);
    const notJson = await probe.inject({ ...malformed, headers: { ...malformed.headers, ...writer.headers } });
    expectPlainError(notJson, 400, 'ERR_BAD_REQUEST');
  });

  it('does not count refused environments against the rate limit', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    for (let i = 0; i < 3; i++) expectPlainError(await me(t.sandbox, key.headers), 403, 'ERR_API_KEY_ENVIRONMENT');
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
  });
});

describe('rate limit', () => {
  it('sends RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers) on partner answers', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 5 });
    const first = await me(t.live, key.headers);
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"per-key";q=5;w=60');
    expect(first.headers.ratelimit).toBe('"per-key";r=4;t=60');
    t.clock.advance(15);
    const second = await me(t.live, key.headers);
    // The first request leaves the window in 45 s.
    expect(second.headers.ratelimit).toBe('"per-key";r=3;t=45');
    const scoped = await probe.inject({ method: 'GET', url: scopePath('payments:read'), headers: key.headers });
    expectPlainError(scoped, 403, 'ERR_API_KEY_SCOPE');
    expect(scoped.headers.ratelimit).toBe('"per-key";r=2;t=45');
  });

  it('answers 429 ERR_RATE_LIMITED with an honest Retry-After; waiting that long admits again', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 2 });
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    const refused = await me(t.live, key.headers);
    expectPlainError(refused, 429, 'ERR_RATE_LIMITED');
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.ratelimit).toBe(`"per-key";r=0;t=${retryAfter}`);
    expect(refused.headers['ratelimit-policy']).toBe('"per-key";q=2;w=60');

    // Ten seconds short of it, still refused (the test clock flows with real time: a margin no busy
    // machine's pause crosses); the rest of it, admitted.
    t.clock.advance(retryAfter - 10);
    expectPlainError(await me(t.live, key.headers), 429, 'ERR_RATE_LIMITED');
    t.clock.advance(10);
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
  });

  it('slides: requests spread over the minute leave the window one by one', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 3 });
    expect((await me(t.live, key.headers)).statusCode).toBe(200); // t = 0
    t.clock.advance(20);
    expect((await me(t.live, key.headers)).statusCode).toBe(200); // t = 20
    t.clock.advance(20);
    expect((await me(t.live, key.headers)).statusCode).toBe(200); // t = 40
    const full = await me(t.live, key.headers);
    expectPlainError(full, 429, 'ERR_RATE_LIMITED');
    expect(full.headers['retry-after']).toBe('20'); // the t = 0 request leaves at 60

    t.clock.advance(20); // t = 60: one slot free, not a whole new minute
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    const again = await me(t.live, key.headers);
    expectPlainError(again, 429, 'ERR_RATE_LIMITED');
    expect(again.headers['retry-after']).toBe('20'); // the t = 20 request leaves at 80
  });

  it('limits each key on its own', async () => {
    const partner = await createPartner(t.ctx);
    const a = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    const b = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    expect((await me(t.live, a.headers)).statusCode).toBe(200);
    expectPlainError(await me(t.live, a.headers), 429, 'ERR_RATE_LIMITED');
    expect((await me(t.live, b.headers)).statusCode).toBe(200);
  });
});

describe('rotation grace', () => {
  it('rotated key keeps working for 24 h, acting for its successor, then answers ERR_API_KEY_REVOKED', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id);
    const rotated = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(rotated.statusCode).toBe(200);
    const successor = rotated.json();

    const during = await probe.inject({ method: 'GET', url: '/v1/partner/__probe/acts-for', headers: old.headers });
    expect(during.statusCode).toBe(200);
    expect(during.json()).toEqual({ id: old.id, actsForKeyId: successor.id });

    t.clock.advance(24 * 3600 - 60);
    expect((await me(t.live, old.headers)).statusCode).toBe(200);
    t.clock.advance(60);
    expectPlainError(await me(t.live, old.headers), 401, 'ERR_API_KEY_REVOKED');
    const fresh = await me(t.live, { 'x-api-key': successor.key });
    expect(fresh.statusCode).toBe(200);
  });

  it('a key rotated twice acts for the newest key of the chain', async () => {
    const partner = await createPartner(t.ctx);
    const first = await createKey(t.ctx, partner.id);
    const second = (
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${first.id}/rotate`, headers: partner.auth })
    ).json();
    const third = (
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${second.id}/rotate`, headers: partner.auth })
    ).json();
    for (const headers of [first.headers, { 'x-api-key': second.key }, { 'x-api-key': third.key }]) {
      const res = await probe.inject({ method: 'GET', url: '/v1/partner/__probe/acts-for', headers });
      expect(res.statusCode).toBe(200);
      expect(res.json().actsForKeyId).toBe(third.id);
    }
  });
});

describe('usage counting', () => {
  it('counts 2xx, 4xx (429 and refusals included) and 5xx per key per UTC day', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 4, scopes: ['orders:read'] });
    const now = t.clock.nowMs();
    // Move to 23:59:30 UTC.
    t.clock.advance((Math.ceil(now / DAY_MS) * DAY_MS - now) / 1000 - 30);
    const dayOne = utcDay(t.clock.nowMs());

    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    expect((await probe.inject({ method: 'GET', url: scopePath('orders:read'), headers: key.headers })).statusCode).toBe(200);
    expect((await probe.inject({ method: 'GET', url: '/v1/partner/__probe/boom', headers: key.headers })).statusCode).toBe(500);
    expectPlainError(
      await probe.inject({ method: 'GET', url: scopePath('orders:pii'), headers: key.headers }),
      403,
      'ERR_API_KEY_SCOPE',
    );
    expectPlainError(await me(t.live, key.headers), 429, 'ERR_RATE_LIMITED');
    expectPlainError(await me(t.sandbox, key.headers), 403, 'ERR_API_KEY_ENVIRONMENT');
    // Not counted: no identifiable key.
    await me(t.live, { 'x-api-key': `svc_live_${'b'.repeat(32)}` });

    t.clock.advance(60); // 00:00:30, the next UTC day; the rate window has slid past the first requests
    const dayTwo = utcDay(t.clock.nowMs());
    expect(dayTwo).not.toBe(dayOne);
    expect((await me(t.live, key.headers)).statusCode).toBe(200);
    expect((await probe.inject({ method: 'GET', url: '/v1/partner/__probe/boom', headers: key.headers })).statusCode).toBe(500);

    const auth = await authNow(partner);
    const usage = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=2`, headers: auth });
    expect(usage.statusCode).toBe(200);
    expect(usage.json()).toEqual({
      apiKeyId: key.id,
      days: 2,
      items: [
        { day: dayOne, requests: 6, clientErrors: 3, serverErrors: 1 },
        { day: dayTwo, requests: 2, clientErrors: 0, serverErrors: 1 },
      ],
      totalRequests: 8,
    });

    // The same counts once flushed, and last-used recorded by the flush.
    await t.ctx.usage.flush();
    const rows = await t.ctx.db.query<{ day: string; requests: number; client_errors: number; server_errors: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, requests, client_errors, server_errors FROM api_key_usage
        WHERE api_key_id = $1 ORDER BY day`,
      [key.id],
    );
    expect(rows).toEqual([
      { day: dayOne, requests: 6, client_errors: 3, server_errors: 1 },
      { day: dayTwo, requests: 2, client_errors: 0, server_errors: 1 },
    ]);
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: auth });
    const listed = list.json().items.find((k: { id: string }) => k.id === key.id);
    expect(Date.parse(listed.lastUsedAt)).toBeGreaterThanOrEqual(t.clock.nowMs() - 5_000);
  });

  it('counts a revoked key’s refused requests as client errors', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expectPlainError(await me(t.live, key.headers), 401, 'ERR_API_KEY_REVOKED');
    const usage = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=1`, headers: partner.auth });
    expect(usage.json().items).toEqual([{ day: utcDay(t.clock.nowMs()), requests: 1, clientErrors: 1, serverErrors: 0 }]);
  });
});

// Two "processes" (two contexts, each with its own key cache, rate limiter and Redis connections) on
// one PostgreSQL database and one Redis.
describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('across processes (PostgreSQL + Redis)', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createSecondApp(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a revocation in one process takes effect on the very next request in the other', async () => {
    const partner = await createPartner(a.ctx);
    const key = await createKey(a.ctx, partner.id);
    // Both processes have the key cached.
    expect((await me(a.live, key.headers)).statusCode).toBe(200);
    expect((await me(b.live, key.headers)).statusCode).toBe(200);
    const revoked = await a.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(revoked.statusCode).toBe(200);
    expectPlainError(await me(b.live, key.headers), 401, 'ERR_API_KEY_REVOKED');
  });

  it('an operator change in one process shows on the next request in the other', async () => {
    const partner = await createPartner(a.ctx);
    const admin = await createUser(a.ctx, 'ADMIN');
    const key = await createKey(a.ctx, partner.id, { rateLimit: 10 });
    expect((await me(b.live, key.headers)).json().rateLimit).toBe(10);
    const patched = await a.live.inject({
      method: 'PATCH',
      url: `/v1/admin/keys/${key.id}`,
      headers: admin.auth,
      payload: { rateLimit: 20, receivesAllOrders: true },
    });
    expect(patched.statusCode).toBe(200);
    const after = await me(b.live, key.headers);
    expect(after.json()).toMatchObject({ rateLimit: 20, receivesAllOrders: true });
    expect(after.headers['ratelimit-policy']).toBe('"per-key";q=20;w=60');
  });

  it('shares one sliding window between the processes', async () => {
    const partner = await createPartner(a.ctx);
    const key = await createKey(a.ctx, partner.id, { rateLimit: 3 });
    const advance = (sec: number) => {
      a.clock.advance(sec);
      b.clock.advance(sec);
    };
    expect((await me(a.live, key.headers)).statusCode).toBe(200); // t = 0
    advance(20);
    expect((await me(b.live, key.headers)).statusCode).toBe(200); // t = 20
    advance(20);
    expect((await me(a.live, key.headers)).statusCode).toBe(200); // t = 40
    const refused = await me(b.live, key.headers);
    expectPlainError(refused, 429, 'ERR_RATE_LIMITED');
    expect(refused.headers['retry-after']).toBe('20');
    expectPlainError(await me(a.live, key.headers), 429, 'ERR_RATE_LIMITED');
    advance(20); // t = 60: the t = 0 request (made in a) leaves the shared window
    expect((await me(b.live, key.headers)).statusCode).toBe(200);
    const again = await me(a.live, key.headers);
    expectPlainError(again, 429, 'ERR_RATE_LIMITED');
    expect(again.headers['retry-after']).toBe('20');
  });
});

describe('where routes declare the key check', () => {
  it('refuses, when the app is built, a route that declares it as a preHandler (it would run after validation)', async () => {
    const app = await buildApp(t.ctx, 'LIVE');
    try {
      expect(() => app.get('/v1/partner/__probe/late', { preHandler: app.partnerAuth() }, async () => ({ ok: true }))).toThrow(
        /declare app.partnerAuth\(\) in onRequest/,
      );
    } finally {
      await app.close();
    }
  });
});
