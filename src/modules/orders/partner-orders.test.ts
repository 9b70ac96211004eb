import { describe, expect, it } from 'vitest';
import { partnerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import { type Auth, assign, createOrder, ISO, orderFor } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
const getApp = () => t;

setUpTestAppWithOperator((app, operator) => {
  t = app;
  admin = operator;
});

async function key(
  options: { environment?: ApiKeyEnvironment; scopes?: ApiKeyScope[]; receivesAllOrders?: boolean; partnerId?: string } = {},
): Promise<TestKey> {
  const partnerId = options.partnerId ?? (await createPartner(t.ctx)).id;
  return createKey(t.ctx, partnerId, {
    environment: options.environment ?? 'LIVE',
    scopes: options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write'],
    receivesAllOrders: options.receivesAllOrders ?? false,
  });
}

function get(k: TestKey, url: string, listener: 'live' | 'sandbox' = 'live') {
  return t[listener].inject({ method: 'GET', url, headers: k.headers });
}

async function list(k: TestKey, query = '', listener: 'live' | 'sandbox' = 'live') {
  const res = await get(k, `/v1/partner/orders${query}`, listener);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { page: number; pageSize: number; total: number; items: Array<{ code: string; customer: unknown }> };
}

describe('GET /v1/partner/orders/{code}', () => {
  partnerAuthContract(getApp, { method: 'GET', url: '/v1/partner/orders/ORD-00000000', scope: 'orders:read' });
  partnerAuthContract(getApp, {
    method: 'GET',
    url: '/v1/partner/orders/ORD-00000000',
    scope: 'orders:read',
    listener: 'sandbox',
  });

  it('answers every PartnerOrder field, customer included for a key with orders:pii', async () => {
    const k = await key();
    const created = await createOrder(t, admin);
    const assigned = await assign(t, admin, created.code, k.id);
    const res = await get(k, `/v1/partner/orders/${created.code}`);
    expect(res.statusCode).toBe(200);
    const expected = {
      code: created.code,
      status: 'PLACED',
      paymentMethod: 'COD',
      paymentStatus: 'UNPAID',
      totalQepik: 12_500,
      codAmountQepik: 12_500,
      area: 'Nəsimi',
      zone: null,
      timeWindowStart: '2030-05-01T10:00:00.000Z',
      timeWindowEnd: '2030-05-01T12:00:00.000Z',
      items: [
        { name: { az: 'Çay dəsti', ru: 'Чайный сервиз', en: 'Tea set' }, qty: 2, unitPriceQepik: 5_000 },
        { name: { az: 'Stəkan', ru: 'Стакан', en: 'Glass' }, qty: 5, unitPriceQepik: 500 },
      ],
      timeline: [{ status: 'PLACED', at: created.timeline[0].at }],
      customer: {
        name: 'Aysel Məmmədova',
        phone: '+994501234567',
        address: { street: 'Nizami küç. 67', details: 'Mənzil 12', lat: 40.3725, lng: 49.8463 },
      },
      batch: null,
      partnerAssignedAt: assigned.partnerAssignedAt,
      updatedAt: assigned.updatedAt,
    };
    expect(res.json()).toEqual(expected);
    expect(res.json().partnerAssignedAt).toMatch(ISO);
    // The body is PostgreSQL's stored text (migration 0006): compact, every key in the schema's order.
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(JSON.stringify(expected));
  });

  it('answers customer null for a key without orders:pii', async () => {
    const k = await key({ scopes: ['orders:read'] });
    const code = await orderFor(t, admin, k.id, 'PLACED');
    const res = await get(k, `/v1/partner/orders/${code}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ code, customer: null, totalQepik: 12_500 });
    expect(Object.keys(res.json())).toContain('customer');
  });

  it('shows the timeline oldest first, the zone and the batch', async () => {
    const k = await key();
    const zone = (
      await t.live.inject({
        method: 'POST',
        url: '/v1/admin/zones',
        headers: admin,
        payload: { name: { az: 'Cənub', ru: 'Юг', en: 'South' } },
      })
    ).json();
    const code = await orderFor(t, admin, k.id, 'PACKED', { zoneId: zone.id });
    const batch = (
      await t.live.inject({ method: 'POST', url: '/v1/admin/batches', headers: admin, payload: { orderCodes: [code] } })
    ).json();
    const order = (await get(k, `/v1/partner/orders/${code}`)).json();
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
    const k = await key();
    const zoneOf = async (name: string) =>
      (
        await t.live.inject({
          method: 'POST',
          url: '/v1/admin/zones',
          headers: admin,
          payload: { name: { az: name, ru: name, en: name } },
        })
      ).json() as { id: string };
    const north = await zoneOf('Şimal');
    const east = await zoneOf('Şərq');
    const code = await orderFor(t, admin, k.id, 'PACKED', { zoneId: north.id });
    const batch = (
      await t.live.inject({ method: 'POST', url: '/v1/admin/batches', headers: admin, payload: { orderCodes: [code] } })
    ).json();
    const read = async () => {
      const res = await get(k, `/v1/partner/orders/${code}`);
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

  it('answers 404 ERR_NOT_FOUND for an order of another key, another partner, or nobody', async () => {
    const mine = await key();
    const sibling = await key({ partnerId: (await createPartner(t.ctx)).id });
    const other = await key();
    const code = await orderFor(t, admin, mine.id, 'PLACED');
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await get(other, `/v1/partner/orders/${code}`), 404, 'ERR_NOT_FOUND');
    expectError(await get(sibling, `/v1/partner/orders/${code}`), 404, 'ERR_NOT_FOUND');
    expectError(await get(mine, `/v1/partner/orders/${unassigned}`), 404, 'ERR_NOT_FOUND');
    expectError(await get(mine, '/v1/partner/orders/ORD-NOPE'), 404, 'ERR_NOT_FOUND');
    expectError(await get(mine, `/v1/partner/orders/${'X'.repeat(90)}`), 404, 'ERR_NOT_FOUND');
  });

  it('a second key of the same partner does not see the first key’s orders', async () => {
    const partner = await createPartner(t.ctx);
    const first = await key({ partnerId: partner.id });
    const second = await key({ partnerId: partner.id });
    const code = await orderFor(t, admin, first.id, 'PLACED');
    expectError(await get(second, `/v1/partner/orders/${code}`), 404, 'ERR_NOT_FOUND');
  });

  it('a receivesAllOrders key sees every order of its environment, not of the other', async () => {
    const all = await key({ receivesAllOrders: true });
    const someone = await key();
    const assigned = await orderFor(t, admin, someone.id, 'PLACED');
    const unassigned = (await createOrder(t, admin)).code;
    const sandboxOrder = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    expect((await get(all, `/v1/partner/orders/${assigned}`)).statusCode).toBe(200);
    expect((await get(all, `/v1/partner/orders/${unassigned}`)).statusCode).toBe(200);
    expectError(await get(all, `/v1/partner/orders/${sandboxOrder}`), 404, 'ERR_NOT_FOUND');
  });

  it('sandbox keys read sandbox orders on the sandbox API only', async () => {
    const sk = await key({ environment: 'SANDBOX' });
    const order = await createOrder(t, admin, { environment: 'sandbox' });
    await assign(t, admin, order.code, sk.id);
    const res = await get(sk, `/v1/partner/orders/${order.code}`, 'sandbox');
    expect(res.statusCode).toBe(200);
    expect(res.json().code).toBe(order.code);
    expectError(await get(sk, `/v1/partner/orders/${order.code}`, 'live'), 403, 'ERR_API_KEY_ENVIRONMENT');
  });

  it('answers concurrent reads of several keys, partners and codes each with its own order or 404', async () => {
    // Reads made at the same moment are looked up together (one statement per key); each answer must
    // still be exactly the caller's order, PII as its scopes allow, and nothing of anyone else's.
    const a = await key();
    const aPlain = await key({ scopes: ['orders:read'] });
    const b = await key();
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
    const answers = await Promise.all(reads.map(([k, code]) => get(k, `/v1/partner/orders/${code}`)));
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
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PLACED');
    // As a payments module capturing a card payment would do it.
    const now = t.clock.now();
    await t.ctx.db.query(`UPDATE orders SET payment_status = 'PAID', updated_at = $2 WHERE code = $1`, [code, now]);
    const order = (await get(k, `/v1/partner/orders/${code}`)).json();
    expect(order.paymentStatus).toBe('PAID');
    expect(order.updatedAt).toBe(now.toISOString());
  });

  it('a rotated-out key in its grace period reads the orders moved to its successor, until revokedAt', async () => {
    const partner = await createPartner(t.ctx);
    const old = await key({ partnerId: partner.id });
    const code = await orderFor(t, admin, old.id, 'PLACED');
    // Rotation as the keys module does it: a successor, the old key revoked 24 h ahead, orders moved.
    const successor = await key({ partnerId: partner.id });
    await t.ctx.db.query('UPDATE api_keys SET successor_id = $2, revoked_at = $3 WHERE id = $1', [
      old.id,
      successor.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    await t.ctx.db.query('UPDATE orders SET assigned_key_id = $2 WHERE assigned_key_id = $1', [old.id, successor.id]);
    t.ctx.keys.invalidateAll();

    for (const k of [old, successor]) {
      expect((await get(k, `/v1/partner/orders/${code}`)).statusCode).toBe(200);
      expect((await list(k)).items.map((o) => o.code)).toEqual([code]);
    }
    t.clock.advance(86_400);
    expectError(await get(old, `/v1/partner/orders/${code}`), 401, 'ERR_API_KEY_REVOKED');
    expect((await get(successor, `/v1/partner/orders/${code}`)).statusCode).toBe(200);
  });
});

describe('GET /v1/partner/orders', () => {
  partnerAuthContract(getApp, { method: 'GET', url: '/v1/partner/orders', scope: 'orders:read' });

  it('answers an empty page for a key without orders', async () => {
    const k = await key();
    expect(await list(k)).toEqual({ page: 1, pageSize: 20, total: 0, items: [] });
  });

  it('lists only the key’s own orders, newest first, each a full PartnerOrder', async () => {
    const k = await key();
    const other = await key();
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await orderFor(t, admin, k.id, 'PLACED'));
      t.clock.advance(1);
    }
    await orderFor(t, admin, other.id, 'PLACED');
    await createOrder(t, admin);
    const page = await list(k);
    expect(page.total).toBe(3);
    expect(page.items.map((o) => o.code)).toEqual([...codes].reverse());
    const single = (await get(k, `/v1/partner/orders/${codes[0]}`)).json();
    expect(page.items[2]).toEqual(single);
  });

  it('nulls customer for every item without orders:pii', async () => {
    const k = await key({ scopes: ['orders:read'] });
    await orderFor(t, admin, k.id, 'PLACED');
    await orderFor(t, admin, k.id, 'PLACED');
    const page = await list(k);
    expect(page.items).toHaveLength(2);
    for (const o of page.items) expect(o.customer).toBeNull();
  });

  it('breaks ties on createdAt by id, descending', async () => {
    const k = await key();
    const codes = [
      await orderFor(t, admin, k.id, 'PLACED'),
      await orderFor(t, admin, k.id, 'PLACED'),
      await orderFor(t, admin, k.id, 'PLACED'),
    ];
    await t.ctx.db.query('UPDATE orders SET created_at = $2 WHERE code = ANY($1)', [codes, t.clock.now()]);
    const ids = await t.ctx.db.query<{ code: string }>('SELECT code FROM orders WHERE code = ANY($1) ORDER BY id DESC', [codes]);
    expect((await list(k)).items.map((o) => o.code)).toEqual(ids.map((r) => r.code));
  });

  it('a receivesAllOrders key lists every order of its environment', async () => {
    const sandboxAll = await key({ environment: 'SANDBOX', receivesAllOrders: true });
    const before = (await list(sandboxAll, '', 'sandbox')).total;
    const a = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    await createOrder(t, admin, { environment: 'live' });
    const page = await list(sandboxAll, '', 'sandbox');
    expect(page.total).toBe(before + 1);
    expect(page.items[0].code).toBe(a);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE environment = 'SANDBOX'`);
    expect(page.total).toBe(n);
  });

  it('filters by status', async () => {
    const k = await key();
    const placed = await orderFor(t, admin, k.id, 'PLACED');
    const packed = await orderFor(t, admin, k.id, 'PACKED');
    expect((await list(k, '?status=PACKED')).items.map((o) => o.code)).toEqual([packed]);
    expect((await list(k, '?status=PLACED')).items.map((o) => o.code)).toEqual([placed]);
    expect(await list(k, '?status=DELIVERED')).toMatchObject({ total: 0, items: [] });
  });

  it('filters by from (inclusive) and to (exclusive) on createdAt', async () => {
    const k = await key();
    const codes: string[] = [];
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      codes.push(await orderFor(t, admin, k.id, 'PLACED'));
      const [row] = await t.ctx.db.query<{ created_at: Date }>('SELECT created_at FROM orders WHERE code = $1', [codes[i]]);
      created.push(row.created_at.toISOString());
      t.clock.advance(60);
    }
    expect((await list(k, `?from=${created[1]}`)).items.map((o) => o.code)).toEqual([codes[2], codes[1]]);
    expect((await list(k, `?to=${created[1]}`)).items.map((o) => o.code)).toEqual([codes[0]]);
    expect((await list(k, `?from=${created[0]}&to=${created[2]}`)).items.map((o) => o.code)).toEqual([codes[1], codes[0]]);
    expect((await list(k, `?from=${created[2]}&to=${created[0]}`)).total).toBe(0);
    // An offset other than Z is the same instant.
    const plus4 = new Date(Date.parse(created[1]) + 4 * 3600_000).toISOString().replace('Z', '+04:00');
    expect((await list(k, `?from=${encodeURIComponent(plus4)}`)).total).toBe(2);
  });

  it('filters by updatedSince (updatedAt >= value) for incremental sync', async () => {
    const k = await key();
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
    expect((await list(k, `?updatedSince=${mark}`)).items.map((o) => o.code)).toEqual([a]);
    expect((await list(k, `?updatedSince=${moved.json().updatedAt}`)).items.map((o) => o.code)).toEqual([a]);
    expect((await list(k, `?updatedSince=${new Date(Date.parse(moved.json().updatedAt) + 1).toISOString()}`)).total).toBe(0);
    expect((await list(k, '?updatedSince=2000-01-01T00:00:00Z')).items.map((o) => o.code)).toEqual([b, a]);
  });

  it('pages with page and pageSize, and total counts every match', async () => {
    const k = await key();
    const codes: string[] = [];
    for (let i = 0; i < 7; i++) codes.push((await orderFor(t, admin, k.id, 'PLACED')) as string);
    const newest = [...codes].reverse();
    const p1 = await list(k, '?pageSize=3');
    expect(p1).toMatchObject({ page: 1, pageSize: 3, total: 7 });
    expect(p1.items.map((o) => o.code)).toEqual(newest.slice(0, 3));
    const p3 = await list(k, '?page=3&pageSize=3');
    expect(p3).toMatchObject({ page: 3, pageSize: 3, total: 7 });
    expect(p3.items.map((o) => o.code)).toEqual(newest.slice(6));
    const p4 = await list(k, '?page=4&pageSize=3');
    expect(p4).toEqual({ page: 4, pageSize: 3, total: 7, items: [] });
    const exact = await list(k, '?page=1&pageSize=7');
    expect(exact.total).toBe(7);
    expect(exact.items).toHaveLength(7);
    const status = await list(k, '?status=PLACED&page=2&pageSize=5');
    expect(status).toMatchObject({ total: 7, page: 2, pageSize: 5 });
    expect(status.items.map((o) => o.code)).toEqual(newest.slice(5));
  });

  it('reports totals that agree with the orders table after every kind of change', async () => {
    const partner = await createPartner(t.ctx);
    const a = await key({ partnerId: partner.id });
    const b = await key({ partnerId: partner.id });
    const all = await key({ receivesAllOrders: true });
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
        const page = await list(k, `?pageSize=1${status ? `&status=${status}` : ''}`);
        expect(page.total, `${keyId} ${status}`).toBe(await truth(keyId, status));
      }
    }
    expect((await list(a, '?pageSize=1')).total).toBe(3);
    expect((await list(b, '?pageSize=1')).total).toBe(0);
  });

  it('accepts the bounds page=10000 and pageSize=50', async () => {
    const k = await key();
    expect(await list(k, '?page=10000&pageSize=50')).toEqual({ page: 10000, pageSize: 50, total: 0, items: [] });
    expect((await list(k, '?pageSize=1')).pageSize).toBe(1);
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
    const k = await key();
    const res = await get(k, `/v1/partner/orders?${query}`);
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('checks the key before the query (401 before 400)', async () => {
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/orders?page=0' });
    expectError(res, 401, 'ERR_API_KEY_INVALID');
  });
});
