/**
 * Cached partner reads (read-cache.ts), through HTTP: a read is served again from memory, and every
 * way an order changes shows at once in the next single read and list, of this process and (server
 * mode with Redis) of another process.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createSecondApp, type TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { TestClock } from '../../clock.js';
import type { Queryable } from '../../db/db.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { type Auth, adminStatus, assign, createOrder, orderFor } from './orders.test-helpers.js';
import { MAX_AGE_MS, PartnerOrderCache, postgresChannelOf } from './read-cache.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

interface Order {
  code: string;
  status: string;
  area: string | null;
  customer: unknown;
  batch: { code: string; status: string } | null;
}
interface Page {
  total: number;
  items: Order[];
}

async function key(options: { scopes?: ApiKeyScope[]; receivesAllOrders?: boolean; partnerId?: string } = {}) {
  return createKey(t.ctx, options.partnerId ?? (await createPartner(t.ctx)).id, {
    scopes: options.scopes ?? ['orders:read', 'orders:pii', 'logistics:write'],
    receivesAllOrders: options.receivesAllOrders ?? false,
  });
}

async function read(k: TestKey, code: string, app: TestApp = t): Promise<Order> {
  const res = await app.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function expectNotVisible(k: TestKey, code: string): Promise<void> {
  const res = await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers });
  expect(res.statusCode).toBe(404);
  expect(res.json()).toMatchObject({ statusCode: 404, code: 'ERR_NOT_FOUND' });
}

async function list(k: TestKey, app: TestApp = t, listener: 'live' | 'sandbox' = 'live'): Promise<Page> {
  const res = await app[listener].inject({ method: 'GET', url: '/v1/partner/orders?pageSize=50', headers: k.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function postEvent(k: TestKey, code: string, type: string, app: TestApp = t) {
  return app.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: { ...k.headers, 'content-type': 'application/json' },
    payload: { type },
  });
}

/** Changes an order behind the services' back (plain SQL), which no cache is told about. */
async function changeAreaBySql(code: string, area: string): Promise<void> {
  await t.ctx.db.query('UPDATE orders SET area = $2, updated_at = updated_at WHERE code = $1', [code, area]);
}

const caching = () => t.ctx.orderCache.mode !== 'off';

describe('cached partner reads', () => {
  it('serve a read again from memory until a change of its scope is announced', async () => {
    if (!caching()) return; // PostgreSQL server without Redis: nothing is cached (read-cache.ts)
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await read(k, code)).area).toBe('Nəsimi');
    expect((await list(k)).items[0].area).toBe('Nəsimi');
    await changeAreaBySql(code, 'Yasamal');
    // Not announced: both reads are the cached answers (this proves they are cached at all).
    expect((await read(k, code)).area).toBe('Nəsimi');
    expect((await list(k)).items[0].area).toBe('Nəsimi');
    // Another key's change does not drop them either.
    await t.ctx.orderCache.changed({ environment: 'LIVE', keyIds: [(await key()).id] });
    expect((await read(k, code)).area).toBe('Nəsimi');
    await t.ctx.orderCache.changed({ environment: 'LIVE', keyIds: [k.id] });
    expect((await read(k, code)).area).toBe('Yasamal');
    expect((await list(k)).items[0].area).toBe('Yasamal');
  });

  it(`never serve an entry older than ${MAX_AGE_MS / 1000} s, announced or not`, async () => {
    if (!caching()) return;
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    const readAt = t.clock.nowMs();
    expect((await read(k, code)).area).toBe('Nəsimi');
    await changeAreaBySql(code, 'Xətai');
    // Measured from the read, with margins no busy machine's pause crosses (the test clock flows with
    // real time): 10 s short of the bound still served, 10 s past it read again.
    t.clock.advance((readAt + MAX_AGE_MS - 10_000 - t.clock.nowMs()) / 1000);
    expect((await read(k, code)).area).toBe('Nəsimi');
    t.clock.advance(20);
    expect((await read(k, code)).area).toBe('Xətai');
  });

  it('show a partner event at once, in the single read and the list', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await read(k, code)).status).toBe('PACKED');
    expect((await list(k)).items[0].status).toBe('PACKED');
    const event = await postEvent(k, code, 'PICKED_UP');
    expect(event.statusCode, event.body).toBe(201);
    expect(event.json().status).not.toBe('PACKED');
    expect(await read(k, code)).toEqual(event.json());
    expect((await list(k)).items[0]).toEqual(event.json());
  });

  it('show an operator status change at once', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await read(k, code)).status).toBe('PACKED');
    expect((await list(k)).items[0].status).toBe('PACKED');
    expect((await adminStatus(t, admin, code, 'SCANNED_TO_VAN')).statusCode).toBe(200);
    expect((await read(k, code)).status).toBe('SCANNED_TO_VAN');
    expect((await list(k)).items[0].status).toBe('SCANNED_TO_VAN');
  });

  it('follow an assignment: the new key sees the order at once, the old one stops seeing it', async () => {
    const first = await key();
    const second = await key();
    const code = await orderFor(t, admin, first.id, 'PACKED');
    expect((await read(first, code)).code).toBe(code);
    await expectNotVisible(second, code); // a 404 is cached too
    expect((await list(second)).total).toBe(0);
    await assign(t, admin, code, second.id);
    expect((await read(second, code)).code).toBe(code);
    expect((await list(second)).items.map((o) => o.code)).toEqual([code]);
    await expectNotVisible(first, code);
    expect((await list(first)).total).toBe(0);
  });

  it('show a new order in the list of a receivesAllOrders key at once', async () => {
    const all = await key({ receivesAllOrders: true });
    const before = (await list(all)).total;
    const created = await createOrder(t, admin);
    const after = await list(all);
    expect(after.total).toBe(before + 1);
    expect(after.items[0].code).toBe(created.code);
  });

  it('show a sandbox test order in the list at once', async () => {
    const partner = await createPartner(t.ctx);
    const k = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', scopes: ['orders:read', 'logistics:write'] });
    expect((await list(k, t, 'sandbox')).total).toBe(0);
    const res = await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: k.headers });
    expect(res.statusCode, res.body).toBe(201);
    const page = await list(k, t, 'sandbox');
    expect(page.total).toBe(1);
    expect(page.items[0].code).toBe(res.json().code);
  });

  it('show a batch and its status changes at once', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await read(k, code)).batch).toBeNull();
    const batch = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/batches',
      headers: admin,
      payload: { orderCodes: [code] },
    });
    expect(batch.statusCode, batch.body).toBe(201);
    const batchCode = batch.json().code as string;
    expect((await read(k, code)).batch).toEqual({ code: batchCode, status: 'OPEN' });
    expect((await list(k)).items[0].batch).toEqual({ code: batchCode, status: 'OPEN' });
    const dispatched = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/batches/${batchCode}/status`,
      headers: admin,
      payload: { status: 'DISPATCHED' },
    });
    expect(dispatched.statusCode, dispatched.body).toBe(200);
    expect((await read(k, code)).batch).toEqual({ code: batchCode, status: 'DISPATCHED' });
    expect((await list(k)).items[0].batch).toEqual({ code: batchCode, status: 'DISPATCHED' });
  });

  it("follow a rotation: the rotated-out key reads its successor's orders, fresh after the successor writes", async () => {
    const partner = await createPartner(t.ctx);
    const old = await key({ partnerId: partner.id });
    const code = await orderFor(t, admin, old.id, 'PACKED');
    expect((await read(old, code)).status).toBe('PACKED');
    const rotated = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const successor: TestKey = {
      id: rotated.json().id,
      key: rotated.json().key,
      prefix: rotated.json().prefix,
      headers: { 'x-api-key': rotated.json().key },
    };
    expect((await list(successor)).items.map((o) => o.code)).toEqual([code]);
    const event = await postEvent(successor, code, 'PICKED_UP');
    expect(event.statusCode, event.body).toBe(201);
    expect(await read(old, code)).toEqual(event.json());
    expect((await list(old)).items[0]).toEqual(event.json());
  });

  it('keep the answers with and without customer apart for keys that share a scope', async () => {
    const pii = await key({ receivesAllOrders: true });
    const plain = await key({ receivesAllOrders: true, scopes: ['orders:read'] });
    const code = (await createOrder(t, admin)).code as string;
    expect((await read(pii, code)).customer).toMatchObject({ name: 'Aysel Məmmədova' });
    expect((await read(plain, code)).customer).toBeNull();
    expect((await read(pii, code)).customer).toMatchObject({ name: 'Aysel Məmmədova' });
    const item = (page: Page) => page.items.find((o) => o.code === code);
    expect(item(await list(plain))?.customer).toBeNull();
    expect(item(await list(pii))?.customer).toMatchObject({ name: 'Aysel Məmmədova' });
  });
});

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('cached partner reads across processes', () => {
  let other: TestApp;
  beforeAll(async () => {
    other = await createSecondApp(t);
  });
  afterAll(() => other?.close());

  it("show another process's writes at once", async () => {
    expect(other.ctx.orderCache.mode).toBe('redis');
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await read(k, code)).status).toBe('PACKED');
    expect((await list(k)).items[0].status).toBe('PACKED');
    // The event is written by the other process; this one answers it at once (the writer answered once
    // every process had applied the change's announcement).
    const picked = await postEvent(k, code, 'PICKED_UP', other);
    expect(picked.statusCode, picked.body).toBe(201);
    expect(await read(k, code)).toEqual(picked.json());
    expect((await list(k)).items[0]).toEqual(picked.json());
    // And the other way round.
    expect(await read(k, code, other)).toEqual(picked.json());
    const enRoute = await postEvent(k, code, 'EN_ROUTE');
    expect(enRoute.statusCode, enRoute.body).toBe(201);
    expect(await read(k, code, other)).toEqual(enRoute.json());
    expect((await list(k, other)).items[0]).toEqual(enRoute.json());
  });
});

describe('PartnerOrderCache', () => {
  const scope = { environment: 'LIVE' as const, keyId: '00000000-0000-4000-8000-000000000001' };

  /** A cache with room for three answers of 1,000 bytes, holding a, b and c (stored in that order). */
  function threeAnswers() {
    const cache = new PartnerOrderCache({ mode: 'local' }, new TestClock(), 3 * (1000 + 64 + 1));
    const version = cache.versionOf(scope) as string;
    const body = 'x'.repeat(1000);
    for (const k of ['a', 'b', 'c']) cache.set(k, version, body);
    return { cache, version, body };
  }

  it('drops the answers not read since they were stored first, past its byte budget', () => {
    const { cache, version, body } = threeAnswers();
    expect(cache.get('a', version)?.toString()).toBe(body); // a is read: b is the oldest unread
    cache.set('d', version, body);
    expect(cache.get('b', version)).toBeUndefined();
    for (const k of ['a', 'c', 'd']) expect(cache.get(k, version)?.length).toBe(1000);
  });

  it('gives an entry read since it was stored a second chance, then drops it once passed over unread', () => {
    const { cache, version, body } = threeAnswers();
    cache.get('a', version);
    cache.set('d', version, body); // a, read, is passed over and kept; b goes
    cache.set('e', version, body); // c goes
    cache.set('f', version, body); // d goes: a was passed over once, and counts from there
    expect(cache.get('d', version)).toBeUndefined();
    for (const k of ['a', 'e', 'f']) expect(cache.get(k, version)?.length).toBe(1000);
    // Read again, a, e and f are passed over once more when g comes; then a, reached unread, goes. g, never
    // read, goes for h; e, unread since it was passed over, for i.
    for (const k of ['g', 'h', 'i']) cache.set(k, version, body);
    expect(['a', 'e', 'g'].map((k) => cache.get(k, version))).toEqual([undefined, undefined, undefined]);
    for (const k of ['f', 'h', 'i']) expect(cache.get(k, version)?.length).toBe(1000);
  });

  it('versions a scope by its own counter, its environment’s for receivesAllOrders, and the global one', async () => {
    const cache = new PartnerOrderCache({ mode: 'local' }, new TestClock());
    const all = { environment: 'LIVE' as const, keyId: null };
    const before = [cache.versionOf(scope), cache.versionOf(all)];
    await cache.changed({ environment: 'SANDBOX', keyIds: ['00000000-0000-4000-8000-000000000002'] });
    expect([cache.versionOf(scope), cache.versionOf(all)]).toEqual(before);
    await cache.changed({ environment: 'LIVE', keyIds: [scope.keyId] });
    const after = [cache.versionOf(scope), cache.versionOf(all)];
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    await cache.changed('all');
    expect(cache.versionOf(scope)).not.toBe(after[0]);
    expect(cache.versionOf(all)).not.toBe(after[1]);
  });

  /** A redis-mode cache on a Redis nobody answers at, both subscriptions confirmed; `db` receives its NOTIFYs. */
  function unreachable(db: Queryable) {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    onTestFinished(() => down.disconnect());
    const cache = new PartnerOrderCache(
      { mode: 'redis', redis: down, prefix: 'test', db, log: pino({ level: 'silent' }) },
      new TestClock(),
    );
    cache.subscribed('redis');
    cache.subscribed('postgres');
    return cache;
  }

  it('drops its own entries, tells the others through PostgreSQL, and never throws, when a change cannot be announced through Redis', async () => {
    const notified: unknown[][] = [];
    const cache = unreachable({
      query: async (_text, params) => {
        notified.push([...(params ?? [])]);
        return [];
      },
    });
    const version = cache.versionOf(scope) as string;
    cache.set('k', version, '{}');
    expect(cache.get('k', version)?.toString()).toBe('{}');
    await expect(cache.changed({ environment: 'LIVE', keyIds: [scope.keyId] })).resolves.toBeUndefined();
    expect(cache.get('k', version)).toBeUndefined();
    expect(notified).toHaveLength(1);
    const [channel, instance] = notified[0] as [string, string];
    expect(channel).toBe(postgresChannelOf('test'));
    expect(channel).toMatch(/^[a-z_][a-z0-9_]{0,62}$/);
    // Another process takes it as a change of everything; the sender ignores its own.
    const other = unreachable({ query: async () => [] });
    const before = other.versionOf(scope);
    other.receiveFailedAnnouncement(instance);
    expect(other.versionOf(scope)).not.toBe(before);
    const own = cache.versionOf(scope);
    cache.receiveFailedAnnouncement(instance);
    expect(cache.versionOf(scope)).toBe(own);
    // PostgreSQL failing too: still no throw.
    const isolated = unreachable({
      query: async () => {
        throw new Error('connection refused');
      },
    });
    await expect(isolated.changed('all')).resolves.toBeUndefined();
  });

  it('serves only while both subscriptions are confirmed, and starts afresh after each', () => {
    const cache = unreachable({ query: async () => [] });
    const first = cache.versionOf(scope) as string;
    cache.set('k', first, '{}');
    for (const via of ['redis', 'postgres'] as const) {
      cache.unsubscribed(via);
      expect(cache.versionOf(scope)).toBeNull();
      expect(cache.get('k', first)).toBeUndefined();
      cache.subscribed(via);
      const again = cache.versionOf(scope) as string;
      expect(again).not.toBe(first); // a new epoch: nothing tagged before the gap matches
      cache.set('k', again, '{}');
    }
  });

  it('gives each Redis key prefix its own PostgreSQL channel', () => {
    expect(postgresChannelOf('partner-api')).not.toBe(postgresChannelOf('partner-api:staging'));
    expect(postgresChannelOf('x'.repeat(64))).toMatch(/^[a-z_][a-z0-9_]{0,62}$/);
  });
});
