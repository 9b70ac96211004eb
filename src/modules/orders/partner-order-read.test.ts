/**
 * GET /v1/partner/orders/{code}: the PartnerOrder a key reads, and which orders each key sees.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import type { TestKey } from '../../../test/factories.js';
import { createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import {
  type Auth,
  assign,
  createBatch,
  createOrder,
  createZone,
  ISO,
  listAs,
  orderBody,
  orderFor,
  partnerKey,
  readAs,
} from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('GET /v1/partner/orders/{code}', () => {
  it('answers every PartnerOrder field, customer included for a key with orders:pii', async () => {
    const k = await partnerKey(t);
    const created = await createOrder(t, admin);
    const assigned = await assign(t, admin, created.code, k.id);
    const res = await readAs(t, k, `/v1/partner/orders/${created.code}`);
    expect(res.statusCode).toBe(200);
    // The operator's view without its two operator-only fields (admin-order-create.test.ts pins each value).
    const { environment: _environment, assignedKeyId: _assignedKeyId, ...expected } = assigned;
    expect(expected.timeline).toEqual([{ status: 'PLACED', at: created.timeline[0].at }]);
    expect(res.json()).toEqual(expected);
    expect(res.json().partnerAssignedAt).toMatch(ISO);
    expect(res.json().customer).toEqual(orderBody().customer);
    // The body is PostgreSQL's stored text (migration 0006): compact, every key in the schema's order.
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(JSON.stringify(expected));
  });

  it('answers customer null for a key without orders:pii', async () => {
    const k = await partnerKey(t, { scopes: ['orders:read'] });
    const code = await orderFor(t, admin, k.id, 'PLACED');
    const res = await readAs(t, k, `/v1/partner/orders/${code}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ code, customer: null, totalQepik: 12_500 });
    expect(Object.keys(res.json())).toContain('customer');
  });

  it('shows the timeline oldest first, the zone and the batch', async () => {
    const k = await partnerKey(t);
    const zone = await createZone(t, admin, { az: 'Cənub', ru: 'Юг', en: 'South' });
    const code = await orderFor(t, admin, k.id, 'PACKED', { zoneId: zone.id });
    const batch = (await createBatch(t, admin, [code])).json();
    const order = (await readAs(t, k, `/v1/partner/orders/${code}`)).json();
    expect(order.timeline.map((e: { status: string }) => e.status)).toEqual([
      'PLACED',
      'VENDOR_ACCEPTED',
      'RUNNER_PICKUP',
      'AT_HUB',
      'PACKED',
    ]);
    const times = order.timeline.map((e: { at: string }) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(order.zone).toEqual({ id: zone.id, name: { az: 'Cənub', ru: 'Юг', en: 'South' } });
    expect(order.batch).toEqual({ code: batch.code, status: 'OPEN' });
  });

  it('follows its batch, its zone and a renamed zone at once, also after later status changes', async () => {
    const k = await partnerKey(t);
    const zoneOf = (name: string) => createZone(t, admin, { az: name, ru: name, en: name });
    const north = await zoneOf('Şimal');
    const east = await zoneOf('Şərq');
    const code = await orderFor(t, admin, k.id, 'PACKED', { zoneId: north.id });
    const batch = (await createBatch(t, admin, [code])).json();
    const read = async () => {
      const res = await readAs(t, k, `/v1/partner/orders/${code}`);
      expect(res.statusCode).toBe(200);
      return res.json() as {
        status: string;
        zone: { id: string; name: { en: string } } | null;
        batch: unknown;
        timeline: Array<{ status: string }>;
      };
    };
    const dispatched = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/batches/${batch.code}/status`,
      headers: admin,
      payload: { status: 'DISPATCHED' },
    });
    expect(dispatched.statusCode).toBe(200);
    expect((await read()).batch).toEqual({ code: batch.code, status: 'DISPATCHED' });
    // The zone's pieces are kept on the order: a rename (plain SQL: there is no rename route) and a move
    // to another zone both show at once, and a later status change keeps what they rendered. Changes
    // made by hand in SQL bypass the services, so they announce themselves to the read cache.
    await t.ctx.db.query(`UPDATE zones SET name = '{"az":"Şimal-2","ru":"Север-2","en":"North-2"}' WHERE id = $1`, [north.id]);
    await t.ctx.orderCache.changed('all');
    expect((await read()).zone).toEqual({ id: north.id, name: { az: 'Şimal-2', ru: 'Север-2', en: 'North-2' } });
    await t.ctx.db.query('UPDATE orders SET zone_id = $2 WHERE code = $1', [code, east.id]);
    await t.ctx.orderCache.changed('all');
    expect((await read()).zone?.id).toBe(east.id);
    const event = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/events`,
      headers: { ...k.headers, 'content-type': 'application/json' },
      payload: { type: 'PICKED_UP' },
    });
    expect(event.statusCode, event.body).toBe(201);
    const after = await read();
    expect(after).toEqual(event.json());
    expect(after.timeline.at(-1)).toMatchObject({ status: after.status });
    expect(after).toMatchObject({
      zone: { id: east.id, name: { en: 'Şərq' } },
      batch: { code: batch.code, status: 'DISPATCHED' },
    });
  });

  // Another partner's order: test/auth-contract.test.ts, "another partner's resources"; another key of
  // the same partner: the next test.
  it('answers 404 ERR_NOT_FOUND for an order of nobody, an unknown code and an over-long one', async () => {
    const mine = await partnerKey(t);
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await readAs(t, mine, `/v1/partner/orders/${unassigned}`), 404, 'ERR_NOT_FOUND');
    expectError(await readAs(t, mine, '/v1/partner/orders/ORD-NOPE'), 404, 'ERR_NOT_FOUND');
    expectError(await readAs(t, mine, `/v1/partner/orders/${'X'.repeat(90)}`), 404, 'ERR_NOT_FOUND');
  });

  it('a second key of the same partner does not see the first key’s orders', async () => {
    const partner = await createPartner(t.ctx);
    const first = await partnerKey(t, { partnerId: partner.id });
    const second = await partnerKey(t, { partnerId: partner.id });
    const code = await orderFor(t, admin, first.id, 'PLACED');
    expectError(await readAs(t, second, `/v1/partner/orders/${code}`), 404, 'ERR_NOT_FOUND');
  });

  it('a receivesAllOrders key sees every order of its environment, not of the other', async () => {
    const all = await partnerKey(t, { receivesAllOrders: true });
    const someone = await partnerKey(t);
    const assigned = await orderFor(t, admin, someone.id, 'PLACED');
    const unassigned = (await createOrder(t, admin)).code;
    const sandboxOrder = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    expect((await readAs(t, all, `/v1/partner/orders/${assigned}`)).statusCode).toBe(200);
    expect((await readAs(t, all, `/v1/partner/orders/${unassigned}`)).statusCode).toBe(200);
    expectError(await readAs(t, all, `/v1/partner/orders/${sandboxOrder}`), 404, 'ERR_NOT_FOUND');
  });

  it('sandbox keys read sandbox orders on the sandbox API only', async () => {
    const sk = await partnerKey(t, { environment: 'SANDBOX' });
    const order = await createOrder(t, admin, { environment: 'sandbox' });
    await assign(t, admin, order.code, sk.id);
    const res = await readAs(t, sk, `/v1/partner/orders/${order.code}`, 'sandbox');
    expect(res.statusCode).toBe(200);
    expect(res.json().code).toBe(order.code);
    expectError(await readAs(t, sk, `/v1/partner/orders/${order.code}`, 'live'), 403, 'ERR_API_KEY_ENVIRONMENT');
  });

  it('answers concurrent reads of several keys, partners and codes each with its own order or 404', async () => {
    // Reads made at the same moment are looked up together (one statement per key); each answer must
    // still be exactly the caller's order, PII as its scopes allow, and nothing of anyone else's.
    const a = await partnerKey(t);
    const aPlain = await partnerKey(t, { scopes: ['orders:read'] });
    const b = await partnerKey(t);
    const codesA = [await orderFor(t, admin, a.id, 'PLACED'), await orderFor(t, admin, a.id, 'PACKED')];
    const codeAPlain = await orderFor(t, admin, aPlain.id, 'PLACED');
    const codeB = await orderFor(t, admin, b.id, 'PLACED');
    const reads: Array<[TestKey, string, number, boolean]> = [
      [a, codesA[0], 200, true],
      [a, codesA[1], 200, true],
      [a, codesA[0], 200, true],
      [a, codeB, 404, false],
      [a, 'ORD-NOPE0000', 404, false],
      [aPlain, codeAPlain, 200, false],
      [aPlain, codesA[0], 404, false],
      [b, codeB, 200, true],
      [b, codesA[1], 404, false],
    ];
    const answers = await Promise.all(reads.map(([k, code]) => readAs(t, k, `/v1/partner/orders/${code}`)));
    answers.forEach((res, i) => {
      const [, code, status, withCustomer] = reads[i];
      if (status === 404) {
        expectError(res, 404, 'ERR_NOT_FOUND');
        return;
      }
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().code).toBe(code);
      expect(res.json().customer === null).toBe(!withCustomer);
    });
  });

  it('reflects a change written by plain SQL at once (the stored partner view follows every write)', async () => {
    const k = await partnerKey(t);
    const code = await orderFor(t, admin, k.id, 'PLACED');
    // As a payments module capturing a card payment would do it.
    const now = t.clock.now();
    await t.ctx.db.query(`UPDATE orders SET payment_status = 'PAID', updated_at = $2 WHERE code = $1`, [code, now]);
    const order = (await readAs(t, k, `/v1/partner/orders/${code}`)).json();
    expect(order.paymentStatus).toBe('PAID');
    expect(order.updatedAt).toBe(now.toISOString());
  });

  it('a rotated-out key in its grace period reads the orders moved to its successor, until revokedAt', async () => {
    const partner = await createPartner(t.ctx);
    const old = await partnerKey(t, { partnerId: partner.id });
    const code = await orderFor(t, admin, old.id, 'PLACED');
    // Rotation as the keys module does it: a successor, the old key revoked 24 h ahead, orders moved.
    const successor = await partnerKey(t, { partnerId: partner.id });
    await t.ctx.db.query('UPDATE api_keys SET successor_id = $2, revoked_at = $3 WHERE id = $1', [
      old.id,
      successor.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    await t.ctx.db.query('UPDATE orders SET assigned_key_id = $2 WHERE assigned_key_id = $1', [old.id, successor.id]);
    t.ctx.keys.invalidateAll();

    for (const k of [old, successor]) {
      expect((await readAs(t, k, `/v1/partner/orders/${code}`)).statusCode).toBe(200);
      expect((await listAs(t, k)).items.map((o) => o.code)).toEqual([code]);
    }
    t.clock.advance(86_400);
    expectError(await readAs(t, old, `/v1/partner/orders/${code}`), 401, 'ERR_API_KEY_REVOKED');
    expect((await readAs(t, successor, `/v1/partner/orders/${code}`)).statusCode).toBe(200);
  });
});
