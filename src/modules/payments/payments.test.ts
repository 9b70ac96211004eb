/**
 * Payment intents (docs/payments.md): created with every order, moved by the order's transitions and the
 * operator's capture and refunds, read by partners with payments:read.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, adminStatus, ISO, orderFor } from '../orders/orders.test-helpers.js';
import { deliverAs, PAYMENT_SCOPES, paymentsPartner } from './payments.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

function get(k: TestKey, url: string) {
  return t.live.inject({ method: 'GET', url, headers: k.headers });
}
function capture(code: string, headers: Record<string, string> = {}) {
  return t.live.inject({ method: 'POST', url: `/v1/admin/orders/${code}/payment/capture`, headers: { ...admin, ...headers } });
}
function refund(code: string, body: unknown, headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/admin/orders/${code}/payment/refunds`,
    headers: { ...admin, ...headers },
    payload: body as never,
  });
}
async function intentOf(k: TestKey, code: string) {
  const res = await get(k, `/v1/partner/payment-intents?orderCode=${code}`);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().items).toHaveLength(1);
  return res.json().items[0];
}
async function cardOrder(keyId: string, status: 'PACKED' | 'EN_ROUTE' = 'PACKED') {
  return orderFor(t, admin, keyId, status, { paymentMethod: 'CARD', codAmountQepik: 0, totalQepik: 10_000 });
}
async function orderPaymentStatus(k: TestKey, code: string) {
  const res = await get(k, `/v1/partner/orders/${code}`);
  return res.json().paymentStatus as string;
}

describe('payment intent of an order', () => {
  it('is created with every order: COD awaits collection of codAmountQepik, CARD awaits capture of the total', async () => {
    const { key } = await paymentsPartner(t);
    const cod = await orderFor(t, admin, key.id);
    const card = await cardOrder(key.id);
    const codIntent = await intentOf(key, cod);
    expect(codIntent).toEqual({
      id: expect.stringMatching(/^pi_[0-9A-Za-z]{24}$/),
      orderCode: cod,
      environment: 'live',
      method: 'COD',
      status: 'AWAITING_COLLECTION',
      currency: 'AZN',
      amountQepik: 12_500,
      amountReceivedQepik: 0,
      amountRefundedQepik: 0,
      settlementId: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      capturedAt: null,
      canceledAt: null,
    });
    const cardIntent = await intentOf(key, card);
    expect(cardIntent).toMatchObject({ method: 'CARD', status: 'REQUIRES_CAPTURE', amountQepik: 10_000, amountReceivedQepik: 0 });
    expect(await orderPaymentStatus(key, card)).toBe('UNPAID');
  });

  it('of a card order created PAID has succeeded with the whole total', async () => {
    const { key } = await paymentsPartner(t);
    const code = await orderFor(t, admin, key.id, 'PACKED', {
      paymentMethod: 'CARD',
      codAmountQepik: 0,
      totalQepik: 7_000,
      paymentStatus: 'PAID',
    });
    expect(await intentOf(key, code)).toMatchObject({
      status: 'SUCCEEDED',
      amountReceivedQepik: 7_000,
      capturedAt: expect.stringMatching(ISO),
    });
  });

  it("is COLLECTED by the partner's DELIVERED with the full COD amount, and the order stays UNPAID", async () => {
    const { key } = await paymentsPartner(t);
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await deliverAs(t, key, code)).statusCode).toBe(201);
    const intent = await intentOf(key, code);
    expect(intent).toMatchObject({ status: 'COLLECTED', amountReceivedQepik: 12_500, capturedAt: expect.stringMatching(ISO) });
    expect(await orderPaymentStatus(key, code)).toBe('UNPAID');
    const rows = await t.ctx.db.query<{ type: string; data: { paymentIntent: unknown } }>(
      `SELECT x.type, x.data FROM outbox x JOIN orders o ON o.id = x.order_id WHERE o.code = $1 AND x.type LIKE 'payment%'`,
      [code],
    );
    expect(rows).toEqual([{ type: 'payment_intent.collected', data: { paymentIntent: intent } }]);
  });

  it('is COLLECTED with codCollectedQepik when the event gives less', async () => {
    const { key } = await paymentsPartner(t);
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await deliverAs(t, key, code, { codCollectedQepik: 12_000, note: 'short by 5 AZN' })).statusCode).toBe(201);
    expect(await intentOf(key, code)).toMatchObject({ status: 'COLLECTED', amountReceivedQepik: 12_000 });
  });

  it('is CANCELED when the order is cancelled (CARD awaiting capture, COD awaiting collection)', async () => {
    const { key } = await paymentsPartner(t);
    const cod = await orderFor(t, admin, key.id, 'VENDOR_ACCEPTED');
    const card = await cardOrder(key.id);
    for (const code of [cod, card]) {
      expect((await adminStatus(t, admin, code, 'CANCELLED')).statusCode).toBe(200);
      expect(await intentOf(key, code)).toMatchObject({ status: 'CANCELED', canceledAt: expect.stringMatching(ISO) });
    }
  });

  it('of a COD order is CANCELED when the order is RETURNED', async () => {
    const { key } = await paymentsPartner(t);
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await adminStatus(t, admin, code, 'FAILED')).statusCode).toBe(200);
    expect((await adminStatus(t, admin, code, 'RETURNED')).statusCode).toBe(200);
    expect(await intentOf(key, code)).toMatchObject({ status: 'CANCELED' });
  });
});

describe('POST /v1/admin/orders/{code}/payment/capture', () => {
  it('captures a card payment: SUCCEEDED, the order PAID, payment_intent.succeeded written', async () => {
    const { key } = await paymentsPartner(t);
    const code = await cardOrder(key.id);
    const res = await capture(code);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      orderCode: code,
      status: 'SUCCEEDED',
      amountReceivedQepik: 10_000,
      capturedAt: expect.stringMatching(ISO),
    });
    expect(await orderPaymentStatus(key, code)).toBe('PAID');
    const rows = await t.ctx.db.query<{ type: string }>(
      `SELECT x.type FROM outbox x JOIN orders o ON o.id = x.order_id WHERE o.code = $1 AND x.type LIKE 'payment%'`,
      [code],
    );
    expect(rows.map((r) => r.type)).toEqual(['payment_intent.succeeded']);
  });

  it('answers 409 ERR_PAYMENT_ALREADY_PAID the second time', async () => {
    const { key } = await paymentsPartner(t);
    const code = await cardOrder(key.id);
    expect((await capture(code)).statusCode).toBe(200);
    expectError(await capture(code), 409, 'ERR_PAYMENT_ALREADY_PAID');
  });

  it('answers 409 ERR_PAYMENT_INTENT_INVALID_STATE for COD and for a canceled intent', async () => {
    const { key } = await paymentsPartner(t);
    expectError(await capture(await orderFor(t, admin, key.id)), 409, 'ERR_PAYMENT_INTENT_INVALID_STATE');
    const card = await cardOrder(key.id);
    await adminStatus(t, admin, card, 'CANCELLED');
    expectError(await capture(card), 409, 'ERR_PAYMENT_INTENT_INVALID_STATE');
  });

  it('answers 404 for an unknown order, 401 without a token, 403 for a partner account', async () => {
    expectError(await capture('ORD-NOPE00'), 404, 'ERR_NOT_FOUND');
    expectError(await t.live.inject({ method: 'POST', url: '/v1/admin/orders/X/payment/capture' }), 401, 'ERR_UNAUTHORIZED');
    const partner = await createPartner(t.ctx);
    expectError(
      await t.live.inject({ method: 'POST', url: '/v1/admin/orders/X/payment/capture', headers: partner.auth }),
      403,
      'ERR_FORBIDDEN',
    );
  });

  it('replays the first answer for a repeated Idempotency-Key', async () => {
    const { key } = await paymentsPartner(t);
    const code = await cardOrder(key.id);
    const first = await capture(code, { 'idempotency-key': 'cap-1' });
    const again = await capture(code, { 'idempotency-key': 'cap-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });
});

describe('POST /v1/admin/orders/{code}/payment/refunds', () => {
  it('refunds in parts: PARTIALLY_REFUNDED, then REFUNDED when all is refunded', async () => {
    const { key } = await paymentsPartner(t);
    const code = await cardOrder(key.id);
    await capture(code);
    const part = await refund(code, { amountQepik: 4_000, reason: 'one item missing' });
    expect(part.statusCode, part.body).toBe(200);
    expect(part.json()).toMatchObject({ status: 'SUCCEEDED', amountRefundedQepik: 4_000 });
    expect(await orderPaymentStatus(key, code)).toBe('PARTIALLY_REFUNDED');
    expectError(await refund(code, { amountQepik: 6_001 }), 400, 'ERR_REFUND_AMOUNT_EXCEEDS');
    const rest = await refund(code, { amountQepik: 6_000 });
    expect(rest.json()).toMatchObject({ amountRefundedQepik: 10_000 });
    expect(await orderPaymentStatus(key, code)).toBe('REFUNDED');
    expectError(await refund(code, { amountQepik: 1 }), 400, 'ERR_REFUND_AMOUNT_EXCEEDS');
  });

  it('answers 409 ERR_REFUND_ORDER_NOT_ELIGIBLE for COD and ERR_REFUND_INVALID_STATE before capture', async () => {
    const { key } = await paymentsPartner(t);
    expectError(await refund(await orderFor(t, admin, key.id), { amountQepik: 1 }), 409, 'ERR_REFUND_ORDER_NOT_ELIGIBLE');
    expectError(await refund(await cardOrder(key.id), { amountQepik: 1 }), 409, 'ERR_REFUND_INVALID_STATE');
  });

  it.each([
    [{ amountQepik: 0 }, 'amountQepik'],
    [{ amountQepik: 1.5 }, 'amountQepik'],
    [{ amountQepik: '100' }, 'amountQepik'],
    [{}, 'amountQepik'],
    [{ amountQepik: 1, reason: 'x'.repeat(501) }, 'reason'],
    [{ amountQepik: 1, extra: true }, 'extra'],
  ])('answers 400 ERR_VALIDATION naming the field for %j', async (body, field) => {
    const { key } = await paymentsPartner(t);
    const code = await cardOrder(key.id);
    await capture(code);
    const res = await refund(code, body);
    expectError(res, 400, 'ERR_VALIDATION');
    expect(JSON.stringify(res.json().details)).toContain(field);
    expect((await intentOf(key, code)).amountRefundedQepik).toBe(0);
  });
});

describe('GET /v1/partner/payment-intents', () => {
  it("lists the intents of the key's orders, newest first, filtered by status, method and updatedSince", async () => {
    const { key } = await paymentsPartner(t);
    const first = await orderFor(t, admin, key.id);
    t.clock.advance(60);
    const second = await cardOrder(key.id);
    const other = await paymentsPartner(t);
    await orderFor(t, admin, other.key.id);
    const all = (await get(key, '/v1/partner/payment-intents')).json();
    expect(all).toMatchObject({ page: 1, pageSize: 20, total: 2 });
    expect(all.items.map((i: { orderCode: string }) => i.orderCode)).toEqual([second, first]);
    expect(
      (await get(key, '/v1/partner/payment-intents?method=COD')).json().items.map((i: { orderCode: string }) => i.orderCode),
    ).toEqual([first]);
    expect((await get(key, '/v1/partner/payment-intents?status=REQUIRES_CAPTURE')).json().total).toBe(1);
    t.clock.advance(60);
    const since = t.clock.now().toISOString();
    await capture(second);
    const changed = (await get(key, `/v1/partner/payment-intents?updatedSince=${since}`)).json();
    expect(changed.items.map((i: { orderCode: string }) => i.orderCode)).toEqual([second]);
    expect((await get(key, '/v1/partner/payment-intents?pageSize=1&page=2')).json()).toMatchObject({
      total: 2,
      items: [{ orderCode: first }],
    });
  });

  it('answers 400 ERR_VALIDATION for a bad filter', async () => {
    const { key } = await paymentsPartner(t);
    for (const [query, field] of [
      ['status=PAID', 'status'],
      ['updatedSince=yesterday', 'updatedSince'],
      ['pageSize=51', 'pageSize'],
      ['foo=1', 'foo'],
    ]) {
      const res = await get(key, `/v1/partner/payment-intents?${query}`);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(JSON.stringify(res.json().details)).toContain(field);
    }
  });
});

describe('GET /v1/partner/payment-intents/{id}', () => {
  // Another partner's intent: test/auth-contract.test.ts, "another partner's resources".
  it("answers the intent of the key's order", async () => {
    const { key } = await paymentsPartner(t);
    const intent = await intentOf(key, await orderFor(t, admin, key.id));
    const res = await get(key, `/v1/partner/payment-intents/${intent.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(intent);
  });

  it('answers a key receiving all orders the intents of its environment', async () => {
    const { key } = await paymentsPartner(t);
    const all = await paymentsPartner(t, PAYMENT_SCOPES, { receivesAllOrders: true });
    const intent = await intentOf(key, await orderFor(t, admin, key.id));
    expect((await get(all.key, `/v1/partner/payment-intents/${intent.id}`)).statusCode).toBe(200);
  });
});
