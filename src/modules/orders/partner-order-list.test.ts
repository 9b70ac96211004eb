/**
 * GET /v1/partner/orders: the key's orders newest first, its filters, pages and totals.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, assign, createOrder, listAs, orderFor, partnerKey, readAs } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('GET /v1/partner/orders', () => {
  it('answers an empty page for a key without orders', async () => {
    const k = await partnerKey(t);
    expect(await listAs(t, k)).toEqual({ page: 1, pageSize: 20, total: 0, items: [] });
  });

  it('lists only the key’s own orders, newest first, each a full PartnerOrder', async () => {
    const k = await partnerKey(t);
    const other = await partnerKey(t);
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await orderFor(t, admin, k.id, 'PLACED'));
      t.clock.advance(1);
    }
    await orderFor(t, admin, other.id, 'PLACED');
    await createOrder(t, admin);
    const page = await listAs(t, k);
    expect(page.total).toBe(3);
    expect(page.items.map((o) => o.code)).toEqual([...codes].reverse());
    const single = (await readAs(t, k, `/v1/partner/orders/${codes[0]}`)).json();
    expect(page.items[2]).toEqual(single);
  });

  it('nulls customer for every item without orders:pii', async () => {
    const k = await partnerKey(t, { scopes: ['orders:read'] });
    await orderFor(t, admin, k.id, 'PLACED');
    await orderFor(t, admin, k.id, 'PLACED');
    const page = await listAs(t, k);
    expect(page.items).toHaveLength(2);
    for (const o of page.items) expect(o.customer).toBeNull();
  });

  it('breaks ties on createdAt by id, descending', async () => {
    const k = await partnerKey(t);
    const codes = [
      await orderFor(t, admin, k.id, 'PLACED'),
      await orderFor(t, admin, k.id, 'PLACED'),
      await orderFor(t, admin, k.id, 'PLACED'),
    ];
    await t.ctx.db.query('UPDATE orders SET created_at = $2 WHERE code = ANY($1)', [codes, t.clock.now()]);
    const ids = await t.ctx.db.query<{ code: string }>('SELECT code FROM orders WHERE code = ANY($1) ORDER BY id DESC', [codes]);
    expect((await listAs(t, k)).items.map((o) => o.code)).toEqual(ids.map((r) => r.code));
  });

  it('a receivesAllOrders key lists every order of its environment', async () => {
    const sandboxAll = await partnerKey(t, { environment: 'SANDBOX', receivesAllOrders: true });
    const before = (await listAs(t, sandboxAll, '', 'sandbox')).total;
    const a = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    await createOrder(t, admin, { environment: 'live' });
    const page = await listAs(t, sandboxAll, '', 'sandbox');
    expect(page.total).toBe(before + 1);
    expect(page.items[0].code).toBe(a);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE environment = 'SANDBOX'`);
    expect(page.total).toBe(n);
  });

  it('filters by status', async () => {
    const k = await partnerKey(t);
    const placed = await orderFor(t, admin, k.id, 'PLACED');
    const packed = await orderFor(t, admin, k.id, 'PACKED');
    expect((await listAs(t, k, '?status=PACKED')).items.map((o) => o.code)).toEqual([packed]);
    expect((await listAs(t, k, '?status=PLACED')).items.map((o) => o.code)).toEqual([placed]);
    expect(await listAs(t, k, '?status=DELIVERED')).toMatchObject({ total: 0, items: [] });
  });

  it('filters by from (inclusive) and to (exclusive) on createdAt', async () => {
    const k = await partnerKey(t);
    const codes: string[] = [];
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await orderFor(t, admin, k.id, 'PLACED'));
      const [row] = await t.ctx.db.query<{ created_at: Date }>('SELECT created_at FROM orders WHERE code = $1', [codes[i]]);
      created.push(row.created_at.toISOString());
      t.clock.advance(60);
    }
    expect((await listAs(t, k, `?from=${created[1]}`)).items.map((o) => o.code)).toEqual([codes[2], codes[1]]);
    expect((await listAs(t, k, `?to=${created[1]}`)).items.map((o) => o.code)).toEqual([codes[0]]);
    expect((await listAs(t, k, `?from=${created[0]}&to=${created[2]}`)).items.map((o) => o.code)).toEqual([codes[1], codes[0]]);
    expect((await listAs(t, k, `?from=${created[2]}&to=${created[0]}`)).total).toBe(0);
    // An offset other than Z is the same instant.
    const plus4 = new Date(Date.parse(created[1]) + 4 * 3600_000).toISOString().replace('Z', '+04:00');
    expect((await listAs(t, k, `?from=${encodeURIComponent(plus4)}`)).total).toBe(2);
  });

  it('filters by updatedSince (updatedAt >= value) for incremental sync', async () => {
    const k = await partnerKey(t);
    const a = await orderFor(t, admin, k.id, 'PLACED');
    const b = await orderFor(t, admin, k.id, 'PLACED');
    t.clock.advance(60);
    const mark = t.clock.now().toISOString();
    const moved = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${a}/status`,
      headers: admin,
      payload: { status: 'VENDOR_ACCEPTED' },
    });
    expect(moved.statusCode).toBe(200);
    expect((await listAs(t, k, `?updatedSince=${mark}`)).items.map((o) => o.code)).toEqual([a]);
    expect((await listAs(t, k, `?updatedSince=${moved.json().updatedAt}`)).items.map((o) => o.code)).toEqual([a]);
    expect((await listAs(t, k, `?updatedSince=${new Date(Date.parse(moved.json().updatedAt) + 1).toISOString()}`)).total).toBe(0);
    expect((await listAs(t, k, '?updatedSince=2000-01-01T00:00:00Z')).items.map((o) => o.code)).toEqual([b, a]);
  });

  it('pages with page and pageSize, and total counts every match', async () => {
    const k = await partnerKey(t);
    const codes: string[] = [];
    for (let i = 0; i < 7; i++) codes.push((await orderFor(t, admin, k.id, 'PLACED')) as string);
    const newest = [...codes].reverse();
    const p1 = await listAs(t, k, '?pageSize=3');
    expect(p1).toMatchObject({ page: 1, pageSize: 3, total: 7 });
    expect(p1.items.map((o) => o.code)).toEqual(newest.slice(0, 3));
    const p3 = await listAs(t, k, '?page=3&pageSize=3');
    expect(p3).toMatchObject({ page: 3, pageSize: 3, total: 7 });
    expect(p3.items.map((o) => o.code)).toEqual(newest.slice(6));
    const p4 = await listAs(t, k, '?page=4&pageSize=3');
    expect(p4).toEqual({ page: 4, pageSize: 3, total: 7, items: [] });
    const exact = await listAs(t, k, '?page=1&pageSize=7');
    expect(exact.total).toBe(7);
    expect(exact.items).toHaveLength(7);
    const status = await listAs(t, k, '?status=PLACED&page=2&pageSize=5');
    expect(status).toMatchObject({ total: 7, page: 2, pageSize: 5 });
    expect(status.items.map((o) => o.code)).toEqual(newest.slice(5));
  });

  it('reports totals that agree with the orders table after every kind of change', async () => {
    const partner = await createPartner(t.ctx);
    const a = await partnerKey(t, { partnerId: partner.id });
    const b = await partnerKey(t, { partnerId: partner.id });
    const all = await partnerKey(t, { receivesAllOrders: true });
    const codes = [
      await orderFor(t, admin, a.id, 'PLACED'),
      await orderFor(t, admin, a.id, 'PACKED'),
      await orderFor(t, admin, a.id, 'VENDOR_ACCEPTED'),
      await orderFor(t, admin, b.id, 'PLACED'),
    ];
    await createOrder(t, admin);
    await assign(t, admin, codes[0], b.id); // re-assigned
    await t.ctx.db.query('DELETE FROM orders WHERE code = $1', [codes[2]]); // removed by plain SQL
    // A rotation moves every order of one key to another in one statement.
    await t.ctx.db.query('UPDATE orders SET assigned_key_id = $2 WHERE assigned_key_id = $1', [b.id, a.id]);
    const truth = async (keyId: string | null, status?: string) => {
      const [{ n }] = await t.ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM orders WHERE environment = 'LIVE' AND ($1::uuid IS NULL OR assigned_key_id = $1)
            AND ($2::text IS NULL OR status = $2)`,
        [keyId, status ?? null],
      );
      return n;
    };
    for (const [k, keyId] of [
      [a, a.id],
      [b, b.id],
      [all, null],
    ] as const) {
      for (const status of [undefined, 'PLACED', 'PACKED', 'VENDOR_ACCEPTED']) {
        // pageSize=1 makes every non-empty page full, so the total comes from the counters.
        const page = await listAs(t, k, `?pageSize=1${status ? `&status=${status}` : ''}`);
        expect(page.total, `${keyId} ${status}`).toBe(await truth(keyId, status));
      }
    }
    expect((await listAs(t, a, '?pageSize=1')).total).toBe(3);
    expect((await listAs(t, b, '?pageSize=1')).total).toBe(0);
  });

  it('accepts the bounds page=10000 and pageSize=50', async () => {
    const k = await partnerKey(t);
    expect(await listAs(t, k, '?page=10000&pageSize=50')).toEqual({ page: 10000, pageSize: 50, total: 0, items: [] });
    expect((await listAs(t, k, '?pageSize=1')).pageSize).toBe(1);
  });

  it.each([
    ['page=0', 'page'],
    ['page=10001', 'page'],
    ['page=1.5', 'page'],
    ['page=abc', 'page'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=51', 'pageSize'],
    ['status=SHIPPED', 'status'],
    ['status=placed', 'status'],
    ['from=yesterday', 'from'],
    ['from=2024-01-01', 'from'],
    ['to=2024-13-01T00:00:00Z', 'to'],
    ['updatedSince=0000-01-01T00:00:00Z', 'updatedSince'],
    ['updated_since=2024-01-01T00:00:00Z', 'updated_since'],
  ])('answers %s with 400 ERR_VALIDATION naming %s', async (query, field) => {
    const k = await partnerKey(t);
    const res = await readAs(t, k, `/v1/partner/orders?${query}`);
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('checks the key before the query (401 before 400)', async () => {
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/orders?page=0' });
    expectError(res, 401, 'ERR_API_KEY_INVALID');
  });
});
