/**
 * The portal's payment reads (docs/payments.md, "Developer portal reads"): the partner user's bearer
 * token, its own partner only, through HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Setup {
  partner: TestPartner;
  key: TestKey;
  codCode: string;
  cardCode: string;
  settlementId: string;
}

/** A partner with a sandbox COD order delivered (5 000 collected of its amount) and a closed period. */
async function settledPartner(): Promise<Setup> {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, {
    environment: 'SANDBOX',
    scopes: ['orders:read', 'logistics:write', 'payments:read'],
  });
  const post = async (url: string, body: unknown) => {
    const res = await t.sandbox.inject({ method: 'POST', url, headers: key.headers, payload: body as never });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const codCode = (await post('/v1/partner/sandbox/orders', { paymentMethod: 'COD' })).code as string;
  const cardCode = (await post('/v1/partner/sandbox/orders', { paymentMethod: 'CARD' })).code as string;
  for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) {
    await post(`/v1/partner/orders/${codCode}/events`, { type });
  }
  const settlementId = (await post('/v1/partner/sandbox/settlements', {})).id as string;
  return { partner, key, codCode, cardCode, settlementId };
}

const get = (auth: Record<string, string>, url: string) => t.live.inject({ method: 'GET', url, headers: auth });

describe('GET /v1/developer/payments/balance', () => {
  it('answers the balance of the environment asked for; environment missing or unknown is 400 naming it', async () => {
    const s = await settledPartner();
    const sandbox = await get(s.partner.auth, '/v1/developer/payments/balance?environment=SANDBOX');
    expect(sandbox.statusCode, sandbox.body).toBe(200);
    const b = sandbox.json();
    expect(b).toMatchObject({ environment: 'sandbox', codOnHandQepik: 0, collectionsOnHand: 0, oldestCollectionOnHandAt: null });
    expect(Number.isInteger(b.awaitingRemittanceQepik) && b.awaitingRemittanceQepik > 0).toBe(true);
    const live = await get(s.partner.auth, '/v1/developer/payments/balance?environment=LIVE');
    expect(live.json()).toEqual({
      environment: 'live',
      codOnHandQepik: 0,
      collectionsOnHand: 0,
      awaitingRemittanceQepik: 0,
      creditQepik: 0,
      oldestCollectionOnHandAt: null,
    });
    for (const url of ['/v1/developer/payments/balance', '/v1/developer/payments/balance?environment=sandbox']) {
      const res = await get(s.partner.auth, url);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.body).toContain('environment');
    }
  });

  it('answers 401 ERR_UNAUTHORIZED without a token', async () => {
    expectError(await get({}, '/v1/developer/payments/balance?environment=LIVE'), 401, 'ERR_UNAUTHORIZED');
  });
});

describe('GET /v1/developer/settlements', () => {
  it("lists the partner's settlements of the environment, filtered by status; bad filters 400", async () => {
    const s = await settledPartner();
    const res = await get(s.partner.auth, '/v1/developer/settlements?environment=SANDBOX');
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(page.items[0]).toMatchObject({ id: s.settlementId, status: 'AWAITING_REMITTANCE', collectionsCount: 1 });
    expect((await get(s.partner.auth, '/v1/developer/settlements?environment=LIVE')).json().total).toBe(0);
    expect((await get(s.partner.auth, '/v1/developer/settlements?environment=SANDBOX&status=SETTLED')).json().total).toBe(0);
    for (const q of ['', '?environment=SANDBOX&status=PAID', '?environment=SANDBOX&pageSize=51', '?environment=SANDBOX&x=1']) {
      expectError(await get(s.partner.auth, `/v1/developer/settlements${q}`), 400, 'ERR_VALIDATION');
    }
    // Another partner sees none of them.
    const other = await createPartner(t.ctx);
    expect((await get(other.auth, '/v1/developer/settlements?environment=SANDBOX')).json().total).toBe(0);
  });
});

describe('GET /v1/developer/settlements/{id}, /lines, /lines.csv', () => {
  // Another partner's statement, and no token: test/auth-contract.test.ts.
  it('answers the statement, its lines (paged) and its CSV; an unknown id 404', async () => {
    const s = await settledPartner();
    const one = await get(s.partner.auth, `/v1/developer/settlements/${s.settlementId}`);
    expect(one.statusCode, one.body).toBe(200);
    const settlement = one.json();
    expect(settlement.dueQepik - settlement.remittedQepik).toBe(settlement.outstandingQepik);

    const lines = await get(s.partner.auth, `/v1/developer/settlements/${s.settlementId}/lines?pageSize=1`);
    expect(lines.statusCode, lines.body).toBe(200);
    expect(lines.json()).toMatchObject({ page: 1, pageSize: 1, total: 1 });
    expect(lines.json().items[0]).toMatchObject({
      type: 'COD_COLLECTION',
      orderCode: s.codCode,
      amountQepik: settlement.collectedQepik,
    });
    expectError(await get(s.partner.auth, `/v1/developer/settlements/${s.settlementId}/lines?page=0`), 400, 'ERR_VALIDATION');

    const csv = await get(s.partner.auth, `/v1/developer/settlements/${s.settlementId}/lines.csv`);
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="${s.settlementId}-lines.csv"`);
    const rows = csv.body.split('\r\n');
    expect(rows[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    expect(rows[1]).toContain(`,COD_COLLECTION,${s.codCode},`);

    for (const suffix of ['', '/lines', '/lines.csv']) {
      expectError(await get(s.partner.auth, `/v1/developer/settlements/stl_unknown${suffix}`), 404, 'ERR_NOT_FOUND');
    }
  });
});

describe('GET /v1/developer/orders/{code}/payment-intent', () => {
  // Another partner's order, and no token: test/auth-contract.test.ts.
  it("answers the order's intent (COD collected and on the settlement, CARD awaiting capture); an unknown order 404", async () => {
    const s = await settledPartner();
    const cod = await get(s.partner.auth, `/v1/developer/orders/${s.codCode}/payment-intent`);
    expect(cod.statusCode, cod.body).toBe(200);
    expect(cod.json()).toMatchObject({
      orderCode: s.codCode,
      environment: 'sandbox',
      method: 'COD',
      status: 'COLLECTED',
      settlementId: s.settlementId,
    });
    const card = await get(s.partner.auth, `/v1/developer/orders/${s.cardCode}/payment-intent`);
    expect(card.json()).toMatchObject({ method: 'CARD', status: 'REQUIRES_CAPTURE', amountReceivedQepik: 0, settlementId: null });

    expectError(await get(s.partner.auth, '/v1/developer/orders/NOPE-1/payment-intent'), 404, 'ERR_NOT_FOUND');
  });
});

describe('GET /v1/developer/payment-intents', () => {
  it("lists the intents of every key of the partner in the environment, newest first, with the partner API's filters", async () => {
    const s = await settledPartner();
    const res = await get(s.partner.auth, '/v1/developer/payment-intents?environment=SANDBOX');
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    expect(page).toMatchObject({ page: 1, pageSize: 20, total: 2 });
    expect(page.items.map((i: { orderCode: string }) => i.orderCode)).toEqual([s.cardCode, s.codCode]);
    const card = await get(s.partner.auth, '/v1/developer/payment-intents?environment=SANDBOX&method=CARD');
    expect(card.json().items.map((i: { orderCode: string }) => i.orderCode)).toEqual([s.cardCode]);
    const collected = await get(s.partner.auth, '/v1/developer/payment-intents?environment=SANDBOX&status=COLLECTED');
    expect(collected.json().items.map((i: { orderCode: string }) => i.orderCode)).toEqual([s.codCode]);
    const byCode = await get(s.partner.auth, `/v1/developer/payment-intents?environment=SANDBOX&orderCode=${s.codCode}`);
    expect(byCode.json().total).toBe(1);
    const future = new Date(t.clock.nowMs() + 60_000).toISOString();
    expect(
      (await get(s.partner.auth, `/v1/developer/payment-intents?environment=SANDBOX&updatedSince=${future}`)).json().total,
    ).toBe(0);
    expect((await get(s.partner.auth, '/v1/developer/payment-intents?environment=LIVE')).json().total).toBe(0);
    for (const q of ['', '?environment=SANDBOX&status=PAID', '?environment=SANDBOX&pageSize=51', '?environment=SANDBOX&x=1']) {
      expectError(await get(s.partner.auth, `/v1/developer/payment-intents${q}`), 400, 'ERR_VALIDATION');
    }
    const other = await createPartner(t.ctx);
    expect((await get(other.auth, '/v1/developer/payment-intents?environment=SANDBOX')).json().total).toBe(0);
  });
});

describe('POST /v1/developer/sandbox/settlements and …/remittances', () => {
  it("closes the partner's sandbox period now and records a remittance with its note", async () => {
    const partner = await createPartner(t.ctx);
    const created = await t.live.inject({ method: 'POST', url: '/v1/developer/sandbox/settlements', headers: partner.auth });
    expect(created.statusCode, created.body).toBe(201);
    // A period with no collection is a zero statement, settled at once.
    expect(created.json()).toMatchObject({ environment: 'sandbox', collectionsCount: 0, status: 'SETTLED' });

    const s = await settledPartner();
    const line = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/sandbox/settlements/${s.settlementId}/remittances`,
      headers: s.partner.auth,
      payload: { amountQepik: 100, reference: 'BANK-1', note: 'first part' },
    });
    expect(line.statusCode, line.body).toBe(201);
    expect(line.json()).toMatchObject({ type: 'REMITTANCE', amountQepik: 100, reference: 'BANK-1', note: 'first part' });
    const other = await createPartner(t.ctx);
    expectError(
      await t.live.inject({
        method: 'POST',
        url: `/v1/developer/sandbox/settlements/${s.settlementId}/remittances`,
        headers: other.auth,
        payload: { amountQepik: 1, reference: 'X' },
      }),
      404,
      'ERR_NOT_FOUND',
    );
  });

  it('the sandbox remittance of the partner API takes a note too', async () => {
    const s = await settledPartner();
    const res = await t.sandbox.inject({
      method: 'POST',
      url: `/v1/partner/sandbox/settlements/${s.settlementId}/remittances`,
      headers: s.key.headers,
      payload: { amountQepik: 1, reference: 'BANK-2', note: 'test remittance' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().note).toBe('test remittance');
  });
});
