/**
 * Every COD collection on the statement of its period (docs/payments.md, "Collections and periods"),
 * under the race that could break it: DELIVERED events through two app instances on one PostgreSQL
 * server (two "processes", each its own pool) while the operator closes period after period. Afterwards
 * every collection is on exactly one statement, and that statement's [periodStart, periodEnd) holds its
 * capturedAt.
 *
 * Server mode only: the embedded database runs one statement at a time, so nothing races there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Auth, orderFor } from '../src/modules/orders/orders.test-helpers.js';
import { createSettlement, deliverAs, paymentsPartner } from '../src/modules/payments/payments.test-helpers.js';
import { createUser } from './factories.js';
import { createSecondApp, createTestApp, type TestApp } from './harness.js';

const serverMode = Boolean(process.env.DATABASE_URL);
if (!serverMode) console.info('test/settlement-periods.e2e.test.ts: skipped (needs DATABASE_URL: two processes on one server)');

const ORDERS = 30;

describe.skipIf(!serverMode)('collections and settlement periods under concurrency', () => {
  let a: TestApp;
  let b: TestApp;
  let admin: Auth;
  beforeAll(async () => {
    // Errors are logged (a 500 here would say why).
    a = await createTestApp({ env: { LOG_LEVEL: 'error' } });
    b = await createSecondApp(a, { LOG_LEVEL: 'error' });
    admin = (await createUser(a.ctx, 'ADMIN')).auth;
  }, 120_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('DELIVERED through two processes while periods close: each collection on one statement whose period holds its capturedAt', async () => {
    const { partner, key } = await paymentsPartner(a);
    const codes: string[] = [];
    for (let i = 0; i < ORDERS; i++) {
      codes.push(await orderFor(a, admin, key.id, 'EN_ROUTE', { totalQepik: 1_000 + i, codAmountQepik: 1_000 + i }));
    }

    let delivering = true;
    const deliveries = Promise.all(
      codes.map(async (code, i) => {
        // Spread over both processes, all at once.
        const res = await deliverAs(i % 2 === 0 ? a : b, key, code);
        expect(res.statusCode, res.body).toBe(201);
      }),
    ).finally(() => {
      delivering = false;
    });
    const closing = (async () => {
      let made = 0;
      while (delivering) {
        // Closing "now", alternately through each process: 409 ERR_SETTLEMENT_EXISTS when the clock has
        // not moved past the last period's end yet.
        const res = await createSettlement(made % 2 === 0 ? a : b, admin, partner.id, {
          environment: 'live',
          periodEnd: a.clock.now().toISOString(),
        });
        if (res.statusCode === 201) made++;
        else expect(res.json().code, res.body).toBe('ERR_SETTLEMENT_EXISTS');
      }
      return made;
    })();
    await deliveries;
    await closing;
    // The last period takes what is still on hand.
    a.clock.advance(1);
    expect(
      (await createSettlement(a, admin, partner.id, { environment: 'live', periodEnd: a.clock.now().toISOString() })).statusCode,
    ).toBe(201);

    const collections = await a.ctx.db.query<{ id: string; captured_at: Date; settlement_id: string | null; lines: number }>(
      `SELECT p.id, p.captured_at, p.settlement_id,
              (SELECT count(*)::int FROM settlement_lines l WHERE l.payment_intent_id = p.id) AS lines
         FROM payment_intents p WHERE p.partner_id = $1`,
      [partner.id],
    );
    const periods = new Map(
      (
        await a.ctx.db.query<{ id: string; period_start: Date; period_end: Date }>(
          'SELECT id, period_start, period_end FROM settlements WHERE partner_id = $1',
          [partner.id],
        )
      ).map((s) => [s.id, s]),
    );
    expect(collections).toHaveLength(ORDERS);
    const misplaced = collections.filter((c) => {
      const s = c.settlement_id ? periods.get(c.settlement_id) : undefined;
      return !s || c.lines !== 1 || c.captured_at < s.period_start || c.captured_at >= s.period_end;
    });
    expect(
      misplaced.map((c) => {
        const s = c.settlement_id ? periods.get(c.settlement_id) : undefined;
        return `${c.captured_at.toISOString()} on [${s?.period_start.toISOString()}, ${s?.period_end.toISOString()}) lines=${c.lines}`;
      }),
    ).toEqual([]);
    // The money is exact: every collection once, summed on the statements.
    const [sum] = await a.ctx.db.query<{ n: number; collected: number }>(
      'SELECT sum(collections_count)::int AS n, sum(collected_qepik)::int AS collected FROM settlements WHERE partner_id = $1',
      [partner.id],
    );
    expect(sum).toEqual({ n: ORDERS, collected: codes.reduce((total, _, i) => total + 1_000 + i, 0) });
  }, 120_000);
});
