import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPlainError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';

let t: TestApp;
let admin: { auth: { authorization: string } };
beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t.ctx, 'ADMIN');
});
afterAll(() => t.close());

const patch = (id: string, payload: unknown, headers = admin.auth) =>
  t.live.inject({ method: 'PATCH', url: `/v1/admin/keys/${id}`, headers, payload: payload as object });

describe('PATCH /v1/admin/keys/{id}', () => {
  it("changes any partner key's rate limit and answers the DeveloperKey", async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { name: 'Ops', scopes: ['orders:read'] });
    const res = await patch(key.id, { rateLimit: 5000 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: key.id,
      name: 'Ops',
      prefix: key.prefix,
      environment: 'LIVE',
      scopes: ['orders:read'],
      rateLimit: 5000,
      receivesAllOrders: false,
      isActive: true,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: expect.stringMatching(/Z$/),
    });
  });

  it('sets receivesAllOrders alone, leaving the rate limit as it was', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 77 });
    const on = await patch(key.id, { receivesAllOrders: true });
    expect(on.json()).toMatchObject({ rateLimit: 77, receivesAllOrders: true });
    const off = await patch(key.id, { receivesAllOrders: false, rateLimit: 1 });
    expect(off.json()).toMatchObject({ rateLimit: 1, receivesAllOrders: false });
  });

  it('takes effect on the next partner request (the key cache is invalidated)', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    const me = () => t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect((await me()).statusCode).toBe(200);
    expectPlainError(await me(), 429, 'ERR_RATE_LIMITED');
    expect((await patch(key.id, { rateLimit: 3 })).statusCode).toBe(200);
    const res = await me();
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"per-key";q=3;w=60');
    // One request left of the new three; the window's reset is a minute at most away (the test clock runs
    // in real time, and a busy machine may let a second pass between the requests).
    const [, remaining, resetSec] = /^"per-key";r=(\d+);t=(\d+)$/.exec(String(res.headers.ratelimit)) ?? [];
    expect(remaining).toBe('1');
    expect(Number(resetSec)).toBeGreaterThan(50);
    expect(Number(resetSec)).toBeLessThanOrEqual(60);
  });

  it('answers an empty body with the key unchanged (both fields are optional)', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 42 });
    const res = await patch(key.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: key.id, rateLimit: 42, receivesAllOrders: false, isActive: true });
  });

  it('answers ERR_VALIDATION naming the field for bad values and unknown fields', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const cases: Array<[unknown, string]> = [
      [{ rateLimit: 0 }, 'rateLimit'],
      [{ rateLimit: 100001 }, 'rateLimit'],
      [{ rateLimit: 1.5 }, 'rateLimit'],
      [{ rateLimit: '10' }, 'rateLimit'],
      [{ receivesAllOrders: 'yes' }, 'receivesAllOrders'],
      [{ rateLimit: 10, scopes: ['orders:read'] }, 'scopes'],
    ];
    for (const [body, field] of cases) {
      const res = await patch(key.id, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'ERR_VALIDATION', message: expect.any(String) });
      expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await patch(key.id, { rateLimit: 100000 })).statusCode).toBe(200);
  });

  it('answers 404 ERR_NOT_FOUND for an unknown or non-UUID id', async () => {
    expectPlainError(await patch(newId(), { rateLimit: 10 }), 404, 'ERR_NOT_FOUND');
    expectPlainError(await patch('nope', { rateLimit: 10 }), 404, 'ERR_NOT_FOUND');
  });
});
