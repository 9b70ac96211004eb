/**
 * Payment webhooks and the sandbox's money (docs/payments.md, "Webhooks and realtime", "Sandbox"):
 * payment kinds reach only webhooks of keys holding payments:read (intents where their order's events
 * go, settlements to the partner's webhooks), subscribing without the scope is refused, and a sandbox
 * key runs a card and a COD order to a settled statement, which its go-live checklist records.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithWorker } from '../../../test/test-app-per-file.js';
import { waitFor } from '../../../test/wait.js';
import type { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { ApiKeyScope, WebhookEvent } from '../../shared/schemas.js';
import { type Auth, orderFor } from '../orders/orders.test-helpers.js';
import { PAYMENT_CHECKLIST_ITEM_IDS } from '../sandbox/checklist.service.js';
import { eventDataFor } from '../webhooks/routing.js';
import { createWebhookVia, devAuth } from '../webhooks/webhooks.test-helpers.js';
import { deliverAs } from './payments.test-helpers.js';

let t: TestApp;
let receiver: WebhookReceiver;
let admin: Auth;
setUpTestAppWithWorker((s) => {
  ({ t, receiver, admin } = s);
});

/** The payment kinds docs/payments.md, "Webhooks and realtime" lists. */
const PAYMENT_KINDS = [
  ...['succeeded', 'refunded', 'collected', 'canceled'].map((kind) => `payment_intent.${kind}`),
  ...['created', 'updated', 'settled'].map((kind) => `settlement.${kind}`),
] as WebhookEvent[];
const WITH_PAYMENTS: ApiKeyScope[] = ['orders:read', 'logistics:write', 'webhooks:manage', 'payments:read'];
let paths = 0;

async function setup(environment: 'LIVE' | 'SANDBOX', scopes: ApiKeyScope[], events: WebhookEvent[], partner?: TestPartner) {
  const p = partner ?? (await createPartner(t.ctx));
  const key = await createKey(t.ctx, p.id, { environment, scopes });
  const path = `/money-${++paths}`;
  const hook = await createWebhookVia(t, await devAuth(t, p), { apiKeyId: key.id, url: receiver.url(path), events });
  return { partner: p, key, path, webhookId: hook.id };
}
function bodies(path: string): Array<{ id: string; type: string; environment: string; data: Record<string, unknown> }> {
  return receiver.requestsTo(path).map((r) => JSON.parse(r.body));
}

describe('subscribing to payment kinds', () => {
  it('answers 403 ERR_API_KEY_SCOPE on create and PATCH for a key without payments:read', async () => {
    const partner = await createPartner(t.ctx);
    const auth = await devAuth(t, partner);
    const key = await createKey(t.ctx, partner.id, { environment: 'LIVE', scopes: ['orders:read', 'webhooks:manage'] });
    for (const kind of PAYMENT_KINDS) {
      const res = await t.live.inject({
        method: 'POST',
        url: '/v1/developer/webhooks',
        headers: auth,
        payload: { apiKeyId: key.id, url: receiver.url('/never'), events: ['order.placed', kind] },
      });
      expectError(res, 403, 'ERR_API_KEY_SCOPE');
    }
    const hook = await createWebhookVia(t, auth, { apiKeyId: key.id, url: receiver.url('/never'), events: ['order.placed'] });
    const patched = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: auth,
      payload: { events: ['settlement.created'] },
    });
    expectError(patched, 403, 'ERR_API_KEY_SCOPE');
    const sample = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/webhooks/${hook.id}/test`,
      headers: auth,
      payload: { event: 'payment_intent.collected' },
    });
    expectError(sample, 403, 'ERR_API_KEY_SCOPE');
  });

  it('sends a sample of every payment kind to a key holding payments:read', async () => {
    const s = await setup('LIVE', WITH_PAYMENTS, PAYMENT_KINDS);
    const auth = await devAuth(t, s.partner);
    for (const kind of PAYMENT_KINDS) {
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/developer/webhooks/${s.webhookId}/test`,
        headers: auth,
        payload: { event: kind },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const got = (await waitFor(() => (bodies(s.path).length === PAYMENT_KINDS.length ? bodies(s.path) : null))) ?? [];
    expect(got.map((b) => b.type).sort()).toEqual([...PAYMENT_KINDS].sort());
    for (const b of got) expect(Object.keys(b.data)).toEqual([b.type.startsWith('settlement.') ? 'settlement' : 'paymentIntent']);
  });
});

describe('routing', () => {
  it('a key without payments:read never gets payment kinds, even if its webhook lists them', () => {
    const viewer = {
      environment: 'LIVE' as const,
      receivesAllOrders: true,
      keyIds: [],
      events: PAYMENT_KINDS,
      scopes: ['orders:read' as const],
      partnerId: 'p',
    };
    const intent = {
      type: 'payment_intent.collected',
      environment: 'LIVE' as const,
      assignedKeyId: 'k',
      data: { paymentIntent: {} },
    };
    const settlement = {
      type: 'settlement.created',
      environment: 'LIVE' as const,
      assignedKeyId: null,
      partnerId: 'p',
      data: { settlement: {} },
    };
    expect(eventDataFor(intent, viewer, new Map())).toBeNull();
    expect(eventDataFor(settlement, viewer, new Map())).toBeNull();
    const allowed = { ...viewer, scopes: ['payments:read' as const] };
    expect(eventDataFor(intent, allowed, new Map())).toEqual({ paymentIntent: {} });
    expect(eventDataFor(settlement, allowed, new Map())).toEqual({ settlement: {} });
    expect(eventDataFor(settlement, { ...allowed, partnerId: 'other' }, new Map())).toBeNull();
  });

  it("collection and settlement events reach the partner's webhook, not another partner's", async () => {
    const s = await setup('LIVE', WITH_PAYMENTS, ['payment_intent.collected', 'settlement.created', 'settlement.settled']);
    const other = await setup('LIVE', WITH_PAYMENTS, PAYMENT_KINDS);
    const code = await orderFor(t, admin, s.key.id, 'EN_ROUTE');
    expect((await deliverAs(t, s.key, code)).statusCode).toBe(201);
    t.clock.advance(1);
    const created = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/partners/${s.partner.id}/settlements`,
      headers: admin,
      payload: { environment: 'live', periodEnd: t.clock.now().toISOString() },
    });
    expect(created.statusCode, created.body).toBe(201);
    // Deliveries of different events may be sent in any order.
    const got = ((await waitFor(() => (bodies(s.path).length >= 2 ? bodies(s.path) : null))) ?? []).sort((a, b) =>
      a.type.localeCompare(b.type),
    );
    expect(got.map((b) => b.type)).toEqual(['payment_intent.collected', 'settlement.created']);
    expect(got[0].data.paymentIntent).toMatchObject({ orderCode: code, status: 'COLLECTED', amountReceivedQepik: 12_500 });
    expect(got[1].data.settlement).toEqual(created.json());
    expect(bodies(other.path)).toEqual([]);
  });
});

describe('sandbox money', () => {
  it('a card and a COD test order, capture, refund, a closed period and a remittance to SETTLED, recorded by the checklist', async () => {
    const scopes: ApiKeyScope[] = [...WITH_PAYMENTS];
    const s = await setup('SANDBOX', scopes, ['settlement.created']);
    receiver.on(s.path, { status: 200 });
    const post = (url: string, payload?: unknown) =>
      t.sandbox.inject({ method: 'POST', url, headers: s.key.headers, payload: payload as never });
    const get = (url: string) => t.sandbox.inject({ method: 'GET', url, headers: s.key.headers });

    const card = (await post('/v1/partner/sandbox/orders', { paymentMethod: 'CARD' })).json();
    expect(card.paymentStatus).toBe('UNPAID');
    const intent = (await get(`/v1/partner/payment-intents?orderCode=${card.code}&updatedSince=2000-01-01T00:00:00Z`)).json()
      .items[0];
    expect(intent).toMatchObject({ environment: 'sandbox', method: 'CARD', status: 'REQUIRES_CAPTURE' });
    const captured = await post(`/v1/partner/sandbox/orders/${card.code}/payment/capture`);
    expect(captured.statusCode, captured.body).toBe(200);
    expect(captured.json()).toMatchObject({ status: 'SUCCEEDED', amountReceivedQepik: card.totalQepik });
    const refunded = await post(`/v1/partner/sandbox/orders/${card.code}/payment/refunds`, { amountQepik: 100 });
    expect(refunded.json()).toMatchObject({ amountRefundedQepik: 100 });
    expectError(await post(`/v1/partner/sandbox/orders/${card.code}/payment/capture`), 409, 'ERR_PAYMENT_ALREADY_PAID');

    const cod = (await post('/v1/partner/sandbox/orders', { paymentMethod: 'COD' })).json();
    for (const type of ['PICKED_UP', 'EN_ROUTE']) {
      const moved = await post(`/v1/partner/orders/${cod.code}/events`, { type });
      expect(moved.statusCode, moved.body).toBe(201);
    }
    expect((await deliverAs(t, s.key, cod.code, {}, 'sandbox')).statusCode).toBe(201);
    t.clock.advance(1);
    const closed = await post('/v1/partner/sandbox/settlements');
    expect(closed.statusCode, closed.body).toBe(201);
    expect(closed.json()).toMatchObject({ environment: 'sandbox', collectionsCount: 1, collectedQepik: cod.codAmountQepik });
    expect((await get(`/v1/partner/settlements/${closed.json().id}/lines`)).statusCode).toBe(200);
    const remitted = await post(`/v1/partner/sandbox/settlements/${closed.json().id}/remittances`, {
      amountQepik: cod.codAmountQepik,
      reference: 'SANDBOX-1',
    });
    expect(remitted.statusCode, remitted.body).toBe(201);
    expect((await get(`/v1/partner/settlements/${closed.json().id}`)).json().status).toBe('SETTLED');

    // The live API refuses the simulator's money routes.
    expectError(
      await t.live.inject({ method: 'POST', url: '/v1/partner/sandbox/settlements', headers: s.key.headers }),
      403,
      'ERR_API_KEY_ENVIRONMENT',
    );

    await t.ctx.requestLog.flush();
    const checklist = (await waitFor(async () => {
      const res = await t.live.inject({
        method: 'GET',
        url: `/v1/developer/keys/${s.key.id}/checklist`,
        headers: await devAuth(t, s.partner),
      });
      const items = res.json().items as Array<{ id: string; done: boolean }>;
      return PAYMENT_CHECKLIST_ITEM_IDS.every((id) => items.find((i) => i.id === id)?.done) ? items : null;
    })) as Array<{ id: string }>;
    expect(checklist.slice(-3).map((i) => i.id)).toEqual(PAYMENT_CHECKLIST_ITEM_IDS);
  });

  it("a key without payments:read has no payment checklist items and can't use the money routes", async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', scopes: ['orders:read', 'logistics:write'] });
    expectError(
      await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/settlements', headers: key.headers }),
      403,
      'ERR_API_KEY_SCOPE',
    );
    const res = await t.live.inject({
      method: 'GET',
      url: `/v1/developer/keys/${key.id}/checklist`,
      headers: await devAuth(t, partner),
    });
    const ids = (res.json().items as Array<{ id: string }>).map((i) => i.id);
    for (const id of PAYMENT_CHECKLIST_ITEM_IDS) expect(ids).not.toContain(id);
  });
});
