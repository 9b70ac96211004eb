/**
 * GET /v1/developer/orders/{code} (docs/portal.md, "The order page"): an order of the partner's keys with
 * its tracking, payment, refunds and proof in one read; "not yours" is 404, "nothing yet" an empty part.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function sandboxCall(key: TestKey, url: string, body: unknown) {
  const res = await t.sandbox.inject({ method: 'POST', url, headers: key.headers, payload: body as never });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}
const view = (auth: Record<string, string>, code: string) =>
  t.live.inject({ method: 'GET', url: `/v1/developer/orders/${code}`, headers: auth });

describe('GET /v1/developer/orders/{code}', () => {
  it('answers an EN_ROUTE order with its position, trail and ETA, and a card payment with its refunds', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write', 'payments:read'],
    });
    const code = (await sandboxCall(key, '/v1/partner/sandbox/orders', { paymentMethod: 'CARD' })).code as string;
    await sandboxCall(key, `/v1/partner/orders/${code}/events`, { type: 'PICKED_UP' });
    await sandboxCall(key, `/v1/partner/orders/${code}/events`, { type: 'EN_ROUTE' });
    const now = t.clock.nowMs();
    const etaAt = new Date(now + 15 * 60_000).toISOString();
    await sandboxCall(key, `/v1/partner/orders/${code}/locations`, {
      points: [
        { lat: 40.4, lng: 49.86, at: new Date(now - 20_000).toISOString() },
        { lat: 40.401, lng: 49.861, accuracyM: 8, at: new Date(now).toISOString() },
      ],
      etaAt,
    });
    await sandboxCall(key, `/v1/partner/sandbox/orders/${code}/payment/capture`, {});
    await sandboxCall(key, `/v1/partner/sandbox/orders/${code}/payment/refunds`, {
      amountQepik: 150,
      reason: 'one item missing',
    });

    const res = await view(partner.auth, code);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ environment: 'sandbox', apiKeyId: key.id, order: { code, status: 'EN_ROUTE', customer: null } });
    expect(body.tracking).toMatchObject({
      orderCode: code,
      status: 'EN_ROUTE',
      location: { lat: 40.401, lng: 49.861, accuracyM: 8 },
      etaAt,
    });
    expect(body.tracking.trail.length).toBeGreaterThanOrEqual(1);
    expect(body.paymentIntent).toMatchObject({ method: 'CARD', status: 'SUCCEEDED', amountRefundedQepik: 150 });
    expect(body.refunds).toEqual([
      { id: expect.any(String), amountQepik: 150, reason: 'one item missing', createdAt: expect.any(String) },
    ]);
    expect(body.proof).toBeNull();
  });

  it('says nothing yet as empty parts; another partner’s order and an unknown code are 404', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write'],
    });
    const code = (await sandboxCall(key, '/v1/partner/sandbox/orders', {})).code as string;
    const res = await view(partner.auth, code);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // The key holds orders:pii: the order as it sees it, with its customer.
    expect(body.order.customer).not.toBeNull();
    expect(body.tracking).toMatchObject({ location: null, etaAt: null, trail: [] });
    expect(body.refunds).toEqual([]);
    expect(body.proof).toBeNull();

    const other = await createPartner(t.ctx);
    expectError(await view(other.auth, code), 404, 'ERR_NOT_FOUND');
    expectError(await view(partner.auth, 'NOPE-1'), 404, 'ERR_NOT_FOUND');
    expectError(await view({}, code), 401, 'ERR_UNAUTHORIZED');
  });
});
