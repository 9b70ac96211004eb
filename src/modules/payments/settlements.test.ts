/**
 * Cash-on-delivery settlements (docs/payments.md, "Settlements"): the operator closes a partner's
 * period, adjusts and records remittances; the partner reads its balance, statements, lines and CSV.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import type { TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, ISO, orderFor } from '../orders/orders.test-helpers.js';
import { adminPost, createSettlement, deliverAs, paymentsPartner } from './payments.test-helpers.js';
import { csvField } from './settlements.service.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

const adjust = (id: string, body: unknown) => adminPost(t, admin, `/v1/admin/settlements/${id}/adjustments`, body);
const remit = (id: string, body: unknown) => adminPost(t, admin, `/v1/admin/settlements/${id}/remittances`, body);

/** A COD order of `amount` delivered by the key, collecting `collected` (default all). */
async function collect(key: TestKey, amount: number, collected?: number, note?: string): Promise<string> {
  const code = await orderFor(t, admin, key.id, 'EN_ROUTE', { totalQepik: amount, codAmountQepik: amount });
  const body: Record<string, unknown> = {};
  if (collected !== undefined) body.codCollectedQepik = collected;
  if (note !== undefined) body.note = note;
  const res = await deliverAs(t, key, code, body);
  expect(res.statusCode, res.body).toBe(201);
  return code;
}

async function closePeriod(partnerId: string) {
  t.clock.advance(1);
  const res = await createSettlement(t, admin, partnerId, { environment: 'live', periodEnd: t.clock.now().toISOString() });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
function get(k: TestKey, url: string) {
  return t.live.inject({ method: 'GET', url, headers: k.headers });
}

describe('POST /v1/admin/partners/{id}/settlements', () => {
  it('takes every collection before periodEnd; lines add up exactly to the totals', async () => {
    const { partner, key } = await paymentsPartner(t);
    const first = await collect(key, 10_000);
    const second = await collect(key, 5_000, 4_850, 'customer paid short, "rounded", see photo');
    const settlement = await closePeriod(partner.id);
    expect(settlement).toEqual({
      id: expect.stringMatching(/^stl_/),
      environment: 'live',
      periodStart: expect.stringMatching(ISO),
      periodEnd: expect.stringMatching(ISO),
      status: 'AWAITING_REMITTANCE',
      collectionsCount: 2,
      expectedQepik: 15_000,
      collectedQepik: 14_850,
      varianceQepik: -150,
      adjustmentsQepik: 0,
      dueQepik: 14_850,
      remittedQepik: 0,
      outstandingQepik: 14_850,
      createdAt: expect.stringMatching(ISO),
      settledAt: null,
    });
    const lines = (await get(key, `/v1/partner/settlements/${settlement.id}/lines`)).json();
    expect(lines.total).toBe(2);
    expect(lines.items.map((l: { orderCode: string }) => l.orderCode)).toEqual([first, second]);
    expect(lines.items[1]).toMatchObject({
      type: 'COD_COLLECTION',
      expectedQepik: 5_000,
      amountQepik: 4_850,
      note: 'customer paid short, "rounded", see photo',
      reference: null,
      paymentIntentId: expect.stringMatching(/^pi_/),
    });
    const sum = lines.items.reduce((s: number, l: { amountQepik: number }) => s + l.amountQepik, 0);
    expect(sum).toBe(settlement.collectedQepik);
    // The intents name their settlement; nothing is on hand any more.
    const intent = (await get(key, `/v1/partner/payment-intents?orderCode=${first}`)).json().items[0];
    expect(intent).toMatchObject({ status: 'COLLECTED', settlementId: settlement.id });
    expect((await get(key, '/v1/partner/balance')).json()).toEqual({
      environment: 'live',
      codOnHandQepik: 0,
      collectionsOnHand: 0,
      awaitingRemittanceQepik: 14_850,
      creditQepik: 0,
      oldestCollectionOnHandAt: null,
    });
  });

  it("starts the next period at the previous period's end and never takes a collection twice", async () => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 1_000);
    const one = await closePeriod(partner.id);
    await collect(key, 2_000);
    const two = await closePeriod(partner.id);
    expect(two.periodStart).toBe(one.periodEnd);
    expect(two).toMatchObject({ collectionsCount: 1, collectedQepik: 2_000 });
  });

  it('gives a zero statement for a period without collections, SETTLED at once', async () => {
    const { partner } = await paymentsPartner(t);
    const s = await closePeriod(partner.id);
    expect(s).toMatchObject({
      status: 'SETTLED',
      collectionsCount: 0,
      dueQepik: 0,
      outstandingQepik: 0,
      settledAt: expect.stringMatching(ISO),
    });
    expect(s.periodStart).toBe(s.periodEnd);
  });

  it('answers 409 ERR_SETTLEMENT_PERIOD_OPEN for a periodEnd in the future, ERR_SETTLEMENT_EXISTS for one not after the last', async () => {
    const { partner } = await paymentsPartner(t);
    const future = new Date(t.clock.nowMs() + 60_000).toISOString();
    expectError(
      await createSettlement(t, admin, partner.id, { environment: 'live', periodEnd: future }),
      409,
      'ERR_SETTLEMENT_PERIOD_OPEN',
    );
    const s = await closePeriod(partner.id);
    expectError(
      await createSettlement(t, admin, partner.id, { environment: 'live', periodEnd: s.periodEnd }),
      409,
      'ERR_SETTLEMENT_EXISTS',
    );
    const earlier = new Date(Date.parse(s.periodEnd) - 1000).toISOString();
    expectError(
      await createSettlement(t, admin, partner.id, { environment: 'live', periodEnd: earlier }),
      409,
      'ERR_SETTLEMENT_EXISTS',
    );
    // The other environment has its own periods.
    expect((await createSettlement(t, admin, partner.id, { environment: 'sandbox', periodEnd: s.periodEnd })).statusCode).toBe(
      201,
    );
  });

  it('answers 404 for an unknown partner', async () => {
    const res = await createSettlement(t, admin, '7c1f0b5e-0000-4000-8000-000000000000', {
      environment: 'live',
      periodEnd: t.clock.now().toISOString(),
    });
    expectError(res, 404, 'ERR_NOT_FOUND');
  });

  it.each([
    [{ environment: 'live', periodEnd: 'last friday' }, 'periodEnd'],
    [{ environment: 'live' }, 'periodEnd'],
    [{ environment: 'prod', periodEnd: '2020-01-01T00:00:00Z' }, 'environment'],
    [{ environment: 'live', periodEnd: '2020-01-01T00:00:00Z', extra: 1 }, 'extra'],
  ])('answers 400 ERR_VALIDATION naming the field for %j', async (body, field) => {
    const { partner } = await paymentsPartner(t);
    const res = await createSettlement(t, admin, partner.id, body);
    expectError(res, 400, 'ERR_VALIDATION');
    expect(JSON.stringify(res.json().details)).toContain(field);
  });
});

describe('adjustments and remittances', () => {
  it('remittances move the settlement to PARTIALLY_REMITTED, then SETTLED with its intents', async () => {
    const { partner, key } = await paymentsPartner(t);
    const code = await collect(key, 10_000);
    const s = await closePeriod(partner.id);
    const part = await remit(s.id, { amountQepik: 4_000, reference: 'BANK-1' });
    expect(part.statusCode, part.body).toBe(201);
    expect(part.json()).toEqual({
      id: expect.stringMatching(/^sln_/),
      type: 'REMITTANCE',
      orderCode: null,
      paymentIntentId: null,
      expectedQepik: null,
      amountQepik: 4_000,
      note: null,
      reference: 'BANK-1',
      at: expect.stringMatching(ISO),
    });
    expect((await get(key, `/v1/partner/settlements/${s.id}`)).json()).toMatchObject({
      status: 'PARTIALLY_REMITTED',
      remittedQepik: 4_000,
      outstandingQepik: 6_000,
    });
    expectError(await remit(s.id, { amountQepik: 6_001, reference: 'BANK-2' }), 400, 'ERR_VALIDATION');
    expect((await remit(s.id, { amountQepik: 6_000, reference: 'BANK-2' })).statusCode).toBe(201);
    const settled = (await get(key, `/v1/partner/settlements/${s.id}`)).json();
    expect(settled).toMatchObject({ status: 'SETTLED', outstandingQepik: 0, settledAt: expect.stringMatching(ISO) });
    expect((await get(key, `/v1/partner/payment-intents?orderCode=${code}`)).json().items[0].status).toBe('SETTLED');
    expectError(await remit(s.id, { amountQepik: 1, reference: 'BANK-3' }), 409, 'ERR_SETTLEMENT_INVALID_STATE');
    expectError(await adjust(s.id, { amountQepik: 1, note: 'late fee' }), 409, 'ERR_SETTLEMENT_INVALID_STATE');
  });

  it('a negative adjustment lowers what is due and can settle the statement', async () => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 3_000);
    const s = await closePeriod(partner.id);
    const res = await adjust(s.id, { amountQepik: -3_000, note: 'damaged goods written off' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: 'ADJUSTMENT', amountQepik: -3_000, note: 'damaged goods written off' });
    expect((await get(key, `/v1/partner/settlements/${s.id}`)).json()).toMatchObject({
      adjustmentsQepik: -3_000,
      dueQepik: 0,
      outstandingQepik: 0,
      status: 'SETTLED',
    });
  });

  it('an over-remitted statement is a credit in the balance, carried to the next statement as an ADJUSTMENT line', async () => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 1_000);
    const first = await closePeriod(partner.id);
    expect((await remit(first.id, { amountQepik: 800, reference: 'BANK-1' })).statusCode).toBe(201);
    // The adjustment comes after the remittance: 177 due, 800 remitted.
    expect((await adjust(first.id, { amountQepik: -823, note: 'refund to the customer' })).statusCode).toBe(201);
    expect((await get(key, `/v1/partner/settlements/${first.id}`)).json()).toMatchObject({
      dueQepik: 177,
      remittedQepik: 800,
      outstandingQepik: -623,
      status: 'SETTLED',
    });
    expect((await get(key, '/v1/partner/balance')).json()).toMatchObject({ awaitingRemittanceQepik: 0, creditQepik: 623 });

    await collect(key, 2_000);
    const second = await closePeriod(partner.id);
    expect(second).toMatchObject({
      collectedQepik: 2_000,
      adjustmentsQepik: -623,
      dueQepik: 1_377,
      outstandingQepik: 1_377,
      status: 'AWAITING_REMITTANCE',
    });
    const lines = (await get(key, `/v1/partner/settlements/${second.id}/lines`)).json().items;
    expect(lines.map((l: { type: string; amountQepik: number }) => [l.type, l.amountQepik])).toEqual([
      ['COD_COLLECTION', 2_000],
      ['ADJUSTMENT', -623],
    ]);
    expect(lines[1].note).toBe(`Overpayment carried from ${first.id}`);
    // Carried once: the credit is gone from the balance, what the new statement awaits is net of it,
    // and a third statement carries nothing more.
    expect((await get(key, '/v1/partner/balance')).json()).toMatchObject({ awaitingRemittanceQepik: 1_377, creditQepik: 0 });
    expect((await remit(second.id, { amountQepik: 1_377, reference: 'BANK-2' })).statusCode).toBe(201);
    const third = await closePeriod(partner.id);
    expect(third).toMatchObject({ adjustmentsQepik: 0, dueQepik: 0, status: 'SETTLED' });
  });

  it('a credit larger than the next statement settles it at once and is carried on to the one after', async () => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 1_000);
    const first = await closePeriod(partner.id);
    expect((await remit(first.id, { amountQepik: 500, reference: 'BANK-1' })).statusCode).toBe(201);
    expect((await adjust(first.id, { amountQepik: -900, note: 'written off' })).statusCode).toBe(201);
    await collect(key, 300);
    const second = await closePeriod(partner.id);
    expect(second).toMatchObject({ adjustmentsQepik: -400, dueQepik: -100, outstandingQepik: -100, status: 'SETTLED' });
    expect((await get(key, '/v1/partner/balance')).json()).toMatchObject({ creditQepik: 100 });
    await collect(key, 1_000);
    const third = await closePeriod(partner.id);
    expect(third).toMatchObject({ adjustmentsQepik: -100, dueQepik: 900, status: 'AWAITING_REMITTANCE' });
    expect((await get(key, '/v1/partner/balance')).json()).toMatchObject({ creditQepik: 0, awaitingRemittanceQepik: 900 });
  });

  it.each([
    ['adjustments', { amountQepik: 0, note: 'x' }, 'amountQepik'],
    ['adjustments', { amountQepik: 1.5, note: 'x' }, 'amountQepik'],
    ['adjustments', { amountQepik: 10 }, 'note'],
    ['adjustments', { amountQepik: 10, note: 'x'.repeat(501) }, 'note'],
    ['adjustments', { amountQepik: 10, note: 'x', extra: 1 }, 'extra'],
    ['remittances', { amountQepik: -5, reference: 'B' }, 'amountQepik'],
    ['remittances', { amountQepik: 0, reference: 'B' }, 'amountQepik'],
    ['remittances', { amountQepik: '5', reference: 'B' }, 'amountQepik'],
    ['remittances', { amountQepik: 5 }, 'reference'],
    ['remittances', { amountQepik: 5, reference: 'B', receivedAt: 'soon' }, 'receivedAt'],
    ['remittances', { amountQepik: 5, reference: 'B', note: 'x'.repeat(501) }, 'note'],
  ])('%s answers 400 ERR_VALIDATION naming the field for %j, and nothing is applied', async (kind, body, field) => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 1_000);
    const s = await closePeriod(partner.id);
    const res = await (kind === 'adjustments' ? adjust(s.id, body) : remit(s.id, body));
    expectError(res, 400, 'ERR_VALIDATION');
    expect(JSON.stringify(res.json().details)).toContain(field);
    expect((await get(key, `/v1/partner/settlements/${s.id}`)).json()).toEqual(s);
    expect((await get(key, `/v1/partner/settlements/${s.id}/lines`)).json().total).toBe(1);
  });

  it('answers 404 for an unknown settlement', async () => {
    expectError(await remit('stl_nope', { amountQepik: 1, reference: 'B' }), 404, 'ERR_NOT_FOUND');
    expectError(await adjust('stl_nope', { amountQepik: 1, note: 'n' }), 404, 'ERR_NOT_FOUND');
  });
});

describe('GET /v1/admin/settlements', () => {
  it('lists settlements by partner and status, newest first', async () => {
    const { partner, key } = await paymentsPartner(t);
    await collect(key, 1_000);
    const open = await closePeriod(partner.id);
    const zero = await closePeriod(partner.id);
    const res = await t.live.inject({ method: 'GET', url: `/v1/admin/settlements?partnerId=${partner.id}`, headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ total: 2, items: [{ id: zero.id }, { id: open.id }] });
    const settled = await t.live.inject({
      method: 'GET',
      url: `/v1/admin/settlements?partnerId=${partner.id}&status=SETTLED`,
      headers: admin,
    });
    expect(settled.json()).toMatchObject({ total: 1, items: [{ id: zero.id }] });
    const bad = await t.live.inject({ method: 'GET', url: '/v1/admin/settlements?status=OPEN', headers: admin });
    expectError(bad, 400, 'ERR_VALIDATION');
  });
});

describe('partner settlement reads', () => {
  it('balance counts the cash on hand and its oldest collection', async () => {
    const { key } = await paymentsPartner(t);
    await collect(key, 2_000, 1_900, 'short');
    const at = t.clock.now().toISOString();
    await collect(key, 3_000);
    expect((await get(key, '/v1/partner/balance')).json()).toEqual({
      environment: 'live',
      codOnHandQepik: 4_900,
      collectionsOnHand: 2,
      awaitingRemittanceQepik: 0,
      creditQepik: 0,
      oldestCollectionOnHandAt: expect.stringMatching(ISO),
    });
    expect(Date.parse((await get(key, '/v1/partner/balance')).json().oldestCollectionOnHandAt)).toBeGreaterThanOrEqual(
      Date.parse(at) - 5_000,
    );
  });

  // Another partner's settlement, its lines and CSV: test/auth-contract.test.ts, "another partner's resources".
  it("another partner's settlement is not in the list", async () => {
    const { partner, key } = await paymentsPartner(t);
    const other = await paymentsPartner(t);
    await collect(key, 1_000);
    const s = await closePeriod(partner.id);
    expect((await get(other.key, '/v1/partner/settlements')).json()).toMatchObject({ total: 0, items: [] });
    expect((await get(key, '/v1/partner/settlements')).json()).toMatchObject({ total: 1, items: [s] });
  });

  it('lines are paged oldest first', async () => {
    const { partner, key } = await paymentsPartner(t);
    const codes = [await collect(key, 100), await collect(key, 200), await collect(key, 300)];
    const s = await closePeriod(partner.id);
    const page2 = (await get(key, `/v1/partner/settlements/${s.id}/lines?page=2&pageSize=2`)).json();
    expect(page2).toMatchObject({ page: 2, pageSize: 2, total: 3, items: [{ orderCode: codes[2] }] });
  });

  it('lines.csv is RFC 4180 text/csv with a header row and integer amounts', async () => {
    const { partner, key } = await paymentsPartner(t);
    const code = await collect(key, 5_000, 4_000, 'paid "4,000", rest\r\nnext week');
    const s = await closePeriod(partner.id);
    await remit(s.id, { amountQepik: 1_500, reference: 'REF,1' });
    await adjust(s.id, { amountQepik: -250, note: 'plain note' });
    const res = await get(key, `/v1/partner/settlements/${s.id}/lines.csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = (await get(key, `/v1/partner/settlements/${s.id}/lines`)).json().items;
    const rows = res.body.split('\r\n');
    expect(rows[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    expect(res.body.endsWith('\r\n')).toBe(true);
    expect(res.body).toContain(
      `${lines[0].id},COD_COLLECTION,${code},${lines[0].paymentIntentId},5000,4000,"paid ""4,000"", rest\r\nnext week",,${lines[0].at}\r\n`,
    );
    expect(res.body).toContain(`${lines[1].id},REMITTANCE,,,,1500,,"REF,1",${lines[1].at}\r\n`);
    expect(res.body).toContain(`${lines[2].id},ADJUSTMENT,,,,-250,plain note,,${lines[2].at}\r\n`);
  });

  it('csvField quotes only what needs quoting', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(-12)).toBe('-12');
    expect(csvField('a"b')).toBe('"a""b"');
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField('plain')).toBe('plain');
  });
});
