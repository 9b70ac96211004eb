/**
 * An acceptance's four statements (the offer's read, the order locked with its key, the offer's
 * conditional update, the assignment; a decline and a withdrawal run the first and the third) run
 * prepared once orders and offers have grown
 * (src/db/join-plans.ts): their generic plans, made on grown tables that were never analysed, probe
 * orders and offers by index and never read either whole. While the tables are small the gate is shut,
 * as for the partner events' statements (a generic plan made on a table the planner knows to be small
 * may read it whole, and would keep doing so as it grows). Rows are written directly (triggers
 * and foreign keys off, in the set-up transaction only): the plans are under test, not the offers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { genericPlan, planReads } from '../../../test/plan-bounds.js';
import { lockOrderForAssignment } from '../orders/order-locks.repo.js';
import { assignOrderToKey } from '../orders/order-writes.repo.js';
import { closeOffer, findOffer } from './offers.repo.js';
import { accept, decline, offeredOrder, withdraw } from './offers.test-helpers.js';

const ROWS = 10_000;

let t: TestApp;
let shutWhenEmpty: boolean;

beforeAll(async () => {
  t = await createTestApp();
  shutWhenEmpty = !(await t.ctx.offerPlans.check());
  const now = t.clock.now();
  await t.ctx.db.withTimeout(120_000).tx(async (q) => {
    await q.query('SET LOCAL session_replication_role = replica');
    await q.query(
      `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area,
                           time_window_start, time_window_end, customer, created_at, updated_at)
       SELECT gen_random_uuid(), 'AP' || lpad(g::text, 8, '0'), 'LIVE', 'PACKED', 'COD', 'UNPAID', 100, 100, 'Yasamal', $1, $1,
              '{"name":"C","phone":"+994500000000","address":{"street":"S","details":null,"lat":null,"lng":null}}', $1, $1
         FROM generate_series(1, $2::int) g`,
      [now, ROWS],
    );
    await q.query(
      `INSERT INTO offers (id, order_id, order_code, api_key_id, partner_id, environment, status, created_at, expires_at)
       SELECT 'ofr_' || lpad(n::text, 24, '0'), o.id, o.code, gen_random_uuid(), gen_random_uuid(), 'LIVE', 'PENDING',
              $1::timestamptz, $1::timestamptz + interval '1 hour'
         FROM (SELECT id, code, row_number() OVER (ORDER BY code) AS n FROM orders WHERE code LIKE 'AP%') o`,
      [now],
    );
  });
}, 120_000);
afterAll(() => t?.close());

/** The gate is open (the statements run prepared); an operator and a fresh key to offer orders to. */
async function preparedAndParties() {
  expect(await t.ctx.offerPlans.check()).toBe(true);
  const admin = (await createUser(t.ctx, 'ADMIN')).auth;
  const key = await createKey(t.ctx, (await createPartner(t.ctx)).id, { scopes: ['orders:read', 'logistics:write'] });
  return { admin, key };
}

describe("an acceptance's statements", () => {
  it('are planned per call on empty tables, and prepared once orders and offers have grown', async () => {
    expect(shutWhenEmpty).toBe(true);
    expect(await t.ctx.offerPlans.check()).toBe(true);
  });

  it('accept through HTTP as before once prepared: the offer ACCEPTED, the order assigned to the key', async () => {
    const { admin, key } = await preparedAndParties();
    // Several acceptances on the prepared statements (a session keeps a generic plan after five runs).
    for (let i = 0; i < 7; i++) {
      const offer = await offeredOrder(t, admin, key.id);
      const res = await accept(t, key, offer.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: offer.id, status: 'ACCEPTED' });
      const order = await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${offer.order.code}`, headers: key.headers });
      expect(order.statusCode, order.body).toBe(200);
      expect(order.json()).toMatchObject({ code: offer.order.code });
    }
  });

  it('decline and withdraw through HTTP as before once prepared (the same statements)', async () => {
    const { admin, key } = await preparedAndParties();
    for (let i = 0; i < 7; i++) {
      const declined = await offeredOrder(t, admin, key.id);
      const res = await decline(t, key, declined.id, { reason: 'NO_CAPACITY' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: declined.id, status: 'DECLINED', declineReason: 'NO_CAPACITY' });
      const again = await decline(t, key, declined.id, { reason: 'NO_CAPACITY' });
      expect(again.statusCode, again.body).toBe(409);
      const withdrawn = await offeredOrder(t, admin, key.id);
      const gone = await withdraw(t, admin, withdrawn.id);
      expect(gone.statusCode, gone.body).toBe(200);
      expect(gone.json()).toMatchObject({ id: withdrawn.id, status: 'WITHDRAWN' });
    }
  });

  it('probe orders and offers by index in their generic plans, on grown tables never analysed', async () => {
    const captured: Array<{ text: string; params: unknown[] }> = [];
    const recorder = {
      async query<R>(text: string | { text: string }, params?: readonly unknown[]) {
        captured.push({ text: typeof text === 'string' ? text : text.text, params: [...(params ?? [])] });
        return [] as R[];
      },
      wroteOutbox() {},
    };
    const prepare = { prepare: true };
    const now = t.clock.now();
    const keyId = randomUUID();
    await findOffer({ keyIds: [keyId] }, 'ofr_000000000000000000000007', now, recorder, prepare);
    await findOffer({ partnerId: randomUUID() }, 'ofr_000000000000000000000007', now, recorder, prepare);
    await lockOrderForAssignment('AP00000007', keyId, recorder, prepare);
    await closeOffer(
      'ofr_000000000000000000000007',
      { to: 'ACCEPTED', keyIds: null, event: { eventId: 'evt_accept_plan', type: 'offer.accepted' } },
      now,
      recorder,
      prepare,
    );
    await assignOrderToKey(
      { orderId: randomUUID(), apiKeyId: keyId, environment: 'LIVE', eventId: 'evt_assign_plan' },
      now,
      recorder,
      prepare,
    );
    expect(captured).toHaveLength(5);
    for (const statement of captured) {
      const plan = await genericPlan(t.ctx.db, statement.text, statement.params.length);
      const reads = planReads(plan, ['orders', 'offers']);
      expect(reads.length, statement.text).toBeGreaterThan(0);
      expect(
        reads.map((n) => n['Node Type']),
        `${statement.text}\n${JSON.stringify(plan)}`,
      ).not.toContain('Seq Scan');
    }
  });
});
