import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const zeroWeek = (now: number) =>
  [6, 5, 4, 3, 2, 1, 0].map((ago) => ({ day: utcDay(now - ago * DAY_MS), requests: 0, clientErrors: 0, serverErrors: 0 }));

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /v1/partner/me', () => {
  it('describes the calling key, with 7 zero-filled days of usage ending today', async () => {
    const partner = await createPartner(t.ctx, 'Bolt Delivery');
    const key = await createKey(t.ctx, partner.id, {
      name: 'Courier app',
      scopes: ['orders:read', 'orders:pii'],
      rateLimit: 120,
    });
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      partnerName: 'Bolt Delivery',
      keyName: 'Courier app',
      environment: 'live',
      scopes: ['orders:read', 'orders:pii'],
      rateLimit: 120,
      receivesAllOrders: false,
      usage7d: zeroWeek(t.clock.nowMs()),
    });
    expect(res.headers['ratelimit-policy']).toBe('"per-key";q=120;w=60');
    expect(res.headers.ratelimit).toBe('"per-key";r=119;t=60');
  });

  it('answers environment "sandbox" for a sandbox key on the sandbox API, needing no scope', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', scopes: ['payments:read'] });
    const res = await t.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ environment: 'sandbox', scopes: ['payments:read'] });
  });

  it('shows each request in usage7d at once, exact before and after a flush', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 3 });
    const today = () => utcDay(t.clock.nowMs());
    const usageToday = async () => {
      const res = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
      return { status: res.statusCode, today: res.statusCode === 200 ? res.json().usage7d[6] : null };
    };
    // Each answer shows the requests before it (a request is counted once answered).
    expect(await usageToday()).toEqual({ status: 200, today: { day: today(), requests: 0, clientErrors: 0, serverErrors: 0 } });
    expect(await usageToday()).toEqual({ status: 200, today: { day: today(), requests: 1, clientErrors: 0, serverErrors: 0 } });
    await t.ctx.usage.flush();
    expect(await usageToday()).toEqual({ status: 200, today: { day: today(), requests: 2, clientErrors: 0, serverErrors: 0 } });
    expect((await usageToday()).status).toBe(429);
    t.clock.advance(60);
    await t.ctx.usage.flush();
    expect(await usageToday()).toEqual({ status: 200, today: { day: today(), requests: 4, clientErrors: 1, serverErrors: 0 } });
  });

  it('shows stored days of the past week and leaves out older ones', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const now = t.clock.nowMs();
    for (const [ago, requests] of [
      [6, 11],
      [7, 99],
      [1, 3],
    ] as const) {
      await t.ctx.db.query(
        'INSERT INTO api_key_usage (api_key_id, day, requests, client_errors, server_errors) VALUES ($1, $2, $3, 2, 1)',
        [key.id, utcDay(now - ago * DAY_MS), requests],
      );
    }
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    const expected = zeroWeek(now);
    expected[0] = { ...expected[0], requests: 11, clientErrors: 2, serverErrors: 1 };
    expected[5] = { ...expected[5], requests: 3, clientErrors: 2, serverErrors: 1 };
    expect(res.json().usage7d).toEqual(expected);
  });

  it('reflects an operator change of the rate limit and flag on the next request', async () => {
    const partner = await createPartner(t.ctx);
    const admin = await createUser(t.ctx, 'ADMIN');
    const key = await createKey(t.ctx, partner.id);
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers })).json()).toMatchObject({
      rateLimit: 600,
      receivesAllOrders: false,
    });
    const patched = await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/keys/${key.id}`,
      headers: admin.auth,
      payload: { rateLimit: 30, receivesAllOrders: true },
    });
    expect(patched.statusCode).toBe(200);
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect(res.json()).toMatchObject({ rateLimit: 30, receivesAllOrders: true });
    expect(res.headers['ratelimit-policy']).toBe('"per-key";q=30;w=60');
  });

  it('describes a rotated-out key in its grace period as itself', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, { name: 'Legacy' });
    const rotated = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(rotated.statusCode).toBe(200);
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: old.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ keyName: 'Legacy', environment: 'live' });
  });
});
