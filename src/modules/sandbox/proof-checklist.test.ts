import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

type Item = { id: string; done: boolean; doneAt: string | null };

describe('go-live checklist: tracking and proof items', () => {
  it('shows "sent locations" and "delivered with proof" to a partner whose policy asks for proof, done once the key did them', async () => {
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write'],
    });
    const checklist = async () => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/checklist`, headers: partner.auth });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items as Item[];
    };
    const proofItems = (items: Item[]) => items.filter((i) => ['locations-sent', 'event-delivered-with-proof'].includes(i.id));
    expect(proofItems(await checklist())).toEqual([]);

    const patch = await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/partners/${partner.id}`,
      headers: admin,
      payload: { proofPolicy: 'LOCATION' },
    });
    expect(patch.statusCode).toBe(200);
    expect(proofItems(await checklist()).map((i) => [i.id, i.done])).toEqual([
      ['locations-sent', false],
      ['event-delivered-with-proof', false],
    ]);

    const created = await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key.headers });
    expect(created.statusCode, created.body).toBe(201);
    const order = created.json();
    const send = (body: Record<string, unknown>) =>
      t.sandbox.inject({ method: 'POST', url: `/v1/partner/orders/${order.code}/events`, headers: key.headers, payload: body });
    expect((await send({ type: 'PICKED_UP' })).statusCode).toBe(201);
    const address = order.customer.address as { lat: number | null; lng: number | null };
    const home = { lat: address.lat ?? 40.4, lng: address.lng ?? 49.85 };
    const ping = await t.sandbox.inject({
      method: 'POST',
      url: `/v1/partner/orders/${order.code}/locations`,
      headers: key.headers,
      payload: { points: [{ ...home, accuracyM: 10, at: t.clock.now().toISOString() }] },
    });
    expect(ping.statusCode, ping.body).toBe(202);
    await t.ctx.tracking.flushAll();
    expect((await send({ type: 'EN_ROUTE' })).statusCode).toBe(201);
    const delivered = await send({
      type: 'DELIVERED',
      ...(order.paymentMethod === 'COD' ? { codCollectedQepik: order.codAmountQepik } : {}),
      proof: { location: { ...home, accuracyM: 10 } },
    });
    expect(delivered.statusCode, delivered.body).toBe(201);
    const done = proofItems(await checklist());
    expect(done.map((i) => [i.id, i.done])).toEqual([
      ['locations-sent', true],
      ['event-delivered-with-proof', true],
    ]);
    for (const item of done) expect(item.doneAt).toMatch(/Z$/);
  });
});
