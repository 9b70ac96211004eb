/**
 * The operator's acceptance statistics (GET /v1/admin/partners/{id}/offer-stats), the portal's developer
 * routes (GET /v1/developer/offers, sandbox accept / decline) and sandbox offers on demand (docs/offers.md).
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, ISO } from '../orders/orders.test-helpers.js';
import { accept, decline, offeredOrder, withdraw } from './offers.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

function stats(partnerId: string, query = '') {
  return t.live.inject({ method: 'GET', url: `/v1/admin/partners/${partnerId}/offer-stats${query}`, headers: admin });
}

describe('GET /v1/admin/partners/{id}/offer-stats', () => {
  it('counts the outcomes, the acceptance rate, decision time p50/p90 and decline reasons', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const decideAfter = async (seconds: number, how: 'accept' | 'NO_CAPACITY' | 'OTHER') => {
      const offer = await offeredOrder(t, admin, key.id);
      t.clock.advance(seconds);
      const res =
        how === 'accept'
          ? await accept(t, key, offer.id)
          : await decline(t, key, offer.id, how === 'OTHER' ? { reason: 'OTHER', note: 'n' } : { reason: how });
      expect(res.statusCode, res.body).toBe(200);
    };
    await decideAfter(10, 'accept');
    await decideAfter(20, 'accept');
    await decideAfter(30, 'NO_CAPACITY');
    await decideAfter(40, 'OTHER');
    const expiring = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    const withdrawn = await offeredOrder(t, admin, key.id);
    expect((await withdraw(t, admin, withdrawn.id)).statusCode).toBe(200);
    await offeredOrder(t, admin, key.id, { ttlSec: 3600 });
    t.clock.advance(61);
    expect(expiring.status).toBe('PENDING');

    const res = await stats(partner.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      partnerId: partner.id,
      days: 30,
      from: expect.stringMatching(ISO),
      to: expect.stringMatching(ISO),
      offered: 7,
      pending: 1,
      accepted: 2,
      declined: 2,
      expired: 1,
      withdrawn: 1,
      acceptanceRate: 0.4,
      decisionSeconds: { p50: expect.any(Number), p90: expect.any(Number) },
      declineReasons: { NO_CAPACITY: 1, OUT_OF_AREA: 0, TIME_WINDOW: 0, OTHER: 1 },
    });
    // Decision times of 10, 20, 30 and 40 s on the test clock (plus the requests' own milliseconds):
    // continuous percentiles 25 and 37.
    const { p50, p90 } = res.json().decisionSeconds;
    expect(p50).toBeGreaterThanOrEqual(25);
    expect(p50).toBeLessThan(26);
    expect(p90).toBeGreaterThanOrEqual(37);
    expect(p90).toBeLessThan(38);
  });

  it('answers nulls with no decided offers, counts only the window of days, and 400 for days outside 1–90', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    await offeredOrder(t, admin, key.id);
    t.clock.advance(2 * 86_400);
    admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const empty = (await stats(partner.id, '?days=1')).json();
    expect(empty).toMatchObject({ offered: 0, acceptanceRate: null, decisionSeconds: null });
    expect((await stats(partner.id, '?days=3')).json()).toMatchObject({ offered: 1, expired: 1, acceptanceRate: 0 });
    expectFieldError(await stats(partner.id, '?days=0'), 'days');
    expectFieldError(await stats(partner.id, '?days=91'), 'days');
    expectError(await stats('00000000-0000-4000-8000-000000000000'), 404, 'ERR_NOT_FOUND');
  });
});

describe('POST /v1/partner/sandbox/offers', () => {
  it('offers realistic sandbox orders to the calling key, without the customer', async () => {
    const key = await createKey(t.ctx, (await createPartner(t.ctx)).id, { environment: 'SANDBOX' });
    const res = await t.sandbox.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: key.headers,
      payload: { count: 3, ttlSec: 120 },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { items } = res.json();
    expect(items).toHaveLength(3);
    for (const offer of items) {
      expect(offer).toMatchObject({ apiKeyId: key.id, status: 'PENDING', order: { status: 'PACKED' } });
      expect(Date.parse(offer.expiresAt) - Date.parse(offer.createdAt)).toBe(120_000);
      expect(offer.order).not.toHaveProperty('customer');
    }
    const accepted = await accept(t, key, items[0].id, {}, 'sandbox');
    expect(accepted.statusCode, accepted.body).toBe(200);
  });

  it('is on the sandbox API only, and takes count 1 to 20', async () => {
    const live = await createKey(t.ctx, (await createPartner(t.ctx)).id);
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: live.headers,
      payload: { count: 1 },
    });
    expectError(res, 403, 'ERR_API_KEY_ENVIRONMENT');
    const key = await createKey(t.ctx, (await createPartner(t.ctx)).id, { environment: 'SANDBOX' });
    for (const count of [0, 21]) {
      expectFieldError(
        await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/offers', headers: key.headers, payload: { count } }),
        'count',
      );
    }
  });
});

describe('the portal: /v1/developer/offers', () => {
  it('lists the partner’s offers of every key, by key and status, and decides sandbox offers only', async () => {
    const partner = await createPartner(t.ctx);
    const live = await createKey(t.ctx, partner.id);
    const sandbox = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const liveOffer = await offeredOrder(t, admin, live.id);
    const made = await t.sandbox.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: sandbox.headers,
      payload: { count: 2 },
    });
    const [s1, s2] = made.json().items;
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/offers', headers: partner.auth });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().total).toBe(3);
    const byKey = await t.live.inject({ method: 'GET', url: `/v1/developer/offers?apiKeyId=${live.id}`, headers: partner.auth });
    expect(byKey.json().items.map((o: { id: string }) => o.id)).toEqual([liveOffer.id]);

    const acc = await t.live.inject({ method: 'POST', url: `/v1/developer/offers/${s1.id}/accept`, headers: partner.auth });
    expect(acc.statusCode, acc.body).toBe(200);
    expect(acc.json().status).toBe('ACCEPTED');
    const dec = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/offers/${s2.id}/decline`,
      headers: partner.auth,
      payload: { reason: 'OTHER' },
    });
    expectFieldError(dec, 'note');
    const dec2 = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/offers/${s2.id}/decline`,
      headers: partner.auth,
      payload: { reason: 'TIME_WINDOW' },
    });
    expect(dec2.json()).toMatchObject({ status: 'DECLINED', declineReason: 'TIME_WINDOW' });
    const pending = await t.live.inject({ method: 'GET', url: '/v1/developer/offers?status=PENDING', headers: partner.auth });
    expect(pending.json().items.map((o: { id: string }) => o.id)).toEqual([liveOffer.id]);

    expectError(
      await t.live.inject({ method: 'POST', url: `/v1/developer/offers/${liveOffer.id}/accept`, headers: partner.auth }),
      409,
      'ERR_CONFLICT',
    );
    const stranger = await createPartner(t.ctx);
    expectError(
      await t.live.inject({ method: 'POST', url: `/v1/developer/offers/${s1.id}/accept`, headers: stranger.auth }),
      404,
      'ERR_NOT_FOUND',
    );
    expect((await t.live.inject({ method: 'GET', url: '/v1/developer/offers', headers: stranger.auth })).json().total).toBe(0);
  });
});
