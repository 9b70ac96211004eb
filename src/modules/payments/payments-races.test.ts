/**
 * Money under concurrency (docs/payments.md, "Concurrency"): requests sent at once through the API, the
 * outcome checked against what running them one after the other allows. On a PostgreSQL server they
 * run on separate connections and really race; the embedded database runs them one at a time.
 */
import { describe, expect, it } from 'vitest';
import type { TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, orderFor } from '../orders/orders.test-helpers.js';
import { createSettlement, deliverAs, paymentsPartner } from './payments.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

/** The operator closes the partner's live period at `periodEnd`. */
const settleUpTo = (partnerId: string, periodEnd: string) =>
  createSettlement(t, admin, partnerId, { environment: 'live', periodEnd });
async function enRoute(key: TestKey, n: number, amount = 1_000): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 0; i < n; i++)
    codes.push(await orderFor(t, admin, key.id, 'EN_ROUTE', { totalQepik: amount, codAmountQepik: amount }));
  return codes;
}
/** Every intent of the partner's collections with the number of settlement lines naming it. */
async function linesPerCollection(partnerId: string) {
  return t.ctx.db.query<{ id: string; settlement_id: string | null; lines: string }>(
    `SELECT p.id, p.settlement_id, (SELECT count(*) FROM settlement_lines l WHERE l.payment_intent_id = p.id) AS lines
       FROM payment_intents p WHERE p.partner_id = $1`,
    [partnerId],
  );
}

describe('settlement races', () => {
  it('two creations at once: exactly one 201, the other 409 ERR_SETTLEMENT_EXISTS, no collection on both', async () => {
    const { partner, key } = await paymentsPartner(t);
    for (const code of await enRoute(key, 4)) expect((await deliverAs(t, key, code)).statusCode).toBe(201);
    t.clock.advance(1);
    const end = t.clock.now().toISOString();
    const answers = await Promise.all([settleUpTo(partner.id, end), settleUpTo(partner.id, end)]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.statusCode === 409)?.json().code).toBe('ERR_SETTLEMENT_EXISTS');
    const winner = answers.find((a) => a.statusCode === 201)?.json();
    expect(winner).toMatchObject({ collectionsCount: 4, collectedQepik: 4_000 });
    const rows = await linesPerCollection(partner.id);
    expect(rows.map((r) => [r.settlement_id, Number(r.lines)])).toEqual(rows.map(() => [winner.id, 1]));
  });

  it('DELIVERED events racing a creation: each collection lands on that settlement or the next, never none or two', async () => {
    const { partner, key } = await paymentsPartner(t);
    const codes = await enRoute(key, 8);
    t.clock.advance(1);
    const racing = await Promise.all([
      ...codes.slice(0, 4).map((c) => deliverAs(t, key, c)),
      settleUpTo(partner.id, t.clock.now().toISOString()),
      ...codes.slice(4).map((c) => deliverAs(t, key, c)),
    ]);
    expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 201, 201, 201, 201, 201, 201]);
    t.clock.advance(1);
    expect((await settleUpTo(partner.id, t.clock.now().toISOString())).statusCode).toBe(201);
    const rows = await linesPerCollection(partner.id);
    expect(rows).toHaveLength(8);
    for (const r of rows) {
      expect(r.settlement_id).not.toBeNull();
      expect(Number(r.lines)).toBe(1);
    }
    const totals = await t.ctx.db.query<{ n: string; collected: string }>(
      'SELECT sum(collections_count) AS n, sum(collected_qepik) AS collected FROM settlements WHERE partner_id = $1',
      [partner.id],
    );
    expect([Number(totals[0].n), Number(totals[0].collected)]).toEqual([8, 8_000]);
  });

  it('concurrent remittances never over-remit', async () => {
    const { partner, key } = await paymentsPartner(t);
    for (const code of await enRoute(key, 2, 5_000)) expect((await deliverAs(t, key, code)).statusCode).toBe(201);
    t.clock.advance(1);
    const s = (await settleUpTo(partner.id, t.clock.now().toISOString())).json();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.live.inject({
          method: 'POST',
          url: `/v1/admin/settlements/${s.id}/remittances`,
          headers: admin,
          payload: { amountQepik: 2_000, reference: `BANK-${i}` },
        }),
      ),
    );
    const ok = answers.filter((a) => a.statusCode === 201);
    expect(ok).toHaveLength(5);
    for (const a of answers.filter((x) => x.statusCode !== 201)) {
      expect([400, 409]).toContain(a.statusCode);
      expect(['ERR_VALIDATION', 'ERR_SETTLEMENT_INVALID_STATE']).toContain(a.json().code);
    }
    const after = (await t.live.inject({ method: 'GET', url: `/v1/partner/settlements/${s.id}`, headers: key.headers })).json();
    expect(after).toMatchObject({ remittedQepik: 10_000, outstandingQepik: 0, status: 'SETTLED' });
  });
});

describe('refund races', () => {
  it('concurrent refunds never exceed what was captured, and paymentStatus matches the sum', async () => {
    const { key } = await paymentsPartner(t);
    const code = await orderFor(t, admin, key.id, 'PACKED', { paymentMethod: 'CARD', codAmountQepik: 0, totalQepik: 10_000 });
    expect(
      (await t.live.inject({ method: 'POST', url: `/v1/admin/orders/${code}/payment/capture`, headers: admin })).statusCode,
    ).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.live.inject({
          method: 'POST',
          url: `/v1/admin/orders/${code}/payment/refunds`,
          headers: admin,
          payload: { amountQepik: 3_000 },
        }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(3);
    for (const a of answers.filter((x) => x.statusCode !== 200)) expect(a.json().code).toBe('ERR_REFUND_AMOUNT_EXCEEDS');
    const intent = (
      await t.live.inject({ method: 'GET', url: `/v1/partner/payment-intents?orderCode=${code}`, headers: key.headers })
    ).json().items[0];
    expect(intent).toMatchObject({ amountReceivedQepik: 10_000, amountRefundedQepik: 9_000 });
    const order = (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: key.headers })).json();
    expect(order.paymentStatus).toBe('PARTIALLY_REFUNDED');
  });
});
