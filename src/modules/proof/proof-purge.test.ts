/**
 * Retention of tracking and proof on the test clock: the worker's periodic purge (purgeExpired,
 * src/worker/purge.ts) runs purgeExpiredTracking and purgeExpiredProofAndUploads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { purgeExpired } from '../../worker/purge.js';
import { orderFor } from '../orders/orders.test-helpers.js';
import { jpegBytes } from '../uploads/uploads.test-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const DAY = 86_400;

describe('retention of tracking and proof', () => {
  it('purges a trail 35 days after its order ended (never an ongoing one), and the proof with its photos after 400 days', async () => {
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
    const get = (url: string) => t.live.inject({ method: 'GET', url, headers: key.headers });
    const upload = async () => {
      const res = await t.live.inject({
        method: 'POST',
        url: '/v1/partner/uploads',
        headers: { ...key.headers, 'content-type': 'image/jpeg' },
        payload: jpegBytes(),
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const ended = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const ongoing = await orderFor(t, admin, key.id, 'EN_ROUTE');
    for (const code of [ended, ongoing]) {
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/partner/orders/${code}/locations`,
        headers: key.headers,
        payload: { points: [{ lat: 40.3725, lng: 49.8463, accuracyM: 5, at: t.clock.now().toISOString() }] },
      });
      expect(res.statusCode, res.body).toBe(202);
    }
    await t.ctx.tracking.flushAll();
    const photo = await upload();
    const unused = await upload();
    const delivered = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${ended}/events`,
      headers: key.headers,
      payload: { type: 'DELIVERED', proof: { location: { lat: 40.3725, lng: 49.8463, accuracyM: 5 }, photoIds: [photo] } },
    });
    expect(delivered.statusCode, delivered.body).toBe(201);

    t.clock.advance(34 * DAY);
    await purgeExpired(t.ctx);
    expect((await get(`/v1/partner/orders/${ended}/tracking`)).json().trail).toHaveLength(1);

    t.clock.advance(2 * DAY);
    await purgeExpired(t.ctx);
    expect((await get(`/v1/partner/orders/${ended}/tracking`)).json()).toMatchObject({ location: null, trail: [] });
    expect((await get(`/v1/partner/orders/${ongoing}/tracking`)).json().trail).toHaveLength(1);
    expect((await get(`/v1/partner/orders/${ended}/proof`)).statusCode).toBe(200);
    expect((await get(`/v1/partner/uploads/${photo}`)).statusCode).toBe(200);
    expect((await get(`/v1/partner/uploads/${unused}`)).statusCode).toBe(200);

    t.clock.advance(363 * DAY); // 399 days
    await purgeExpired(t.ctx);
    expect((await get(`/v1/partner/orders/${ended}/proof`)).statusCode).toBe(200);

    t.clock.advance(2 * DAY); // 401 days
    await purgeExpired(t.ctx);
    expect((await get(`/v1/partner/orders/${ended}/proof`)).statusCode).toBe(404);
    expect((await get(`/v1/partner/uploads/${photo}`)).statusCode).toBe(404);
    expect((await get(`/v1/partner/uploads/${unused}`)).statusCode).toBe(404);
    // Idempotent.
    await purgeExpired(t.ctx);
    expect((await get(`/v1/partner/orders/${ongoing}/tracking`)).json().trail).toHaveLength(1);
  });
});
