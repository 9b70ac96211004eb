import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { type Auth, adminStatus, orderFor } from '../orders/orders.test-helpers.js';
import { openRealtime } from '../realtime/realtime.test-helpers.js';
import { createWebhookVia, devAuth, waitForDeliveries } from '../webhooks/webhooks.test-helpers.js';

let t: TestApp;
let admin: Auth;
let adminToken: string;

beforeAll(async () => {
  t = await createTestApp();
});
beforeEach(async () => {
  const user = await createUser(t.ctx, 'ADMIN');
  admin = user.auth;
  adminToken = user.token;
});
afterAll(() => t.close());

async function setup(): Promise<{ partner: TestPartner; key: TestKey }> {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'] });
  return { partner, key };
}

const iso = (ms: number) => new Date(ms).toISOString();
const point = (atMs: number, i = 0, accuracyM?: number) => ({
  lat: 40.37 + i * 0.001,
  lng: 49.84 + i * 0.001,
  ...(accuracyM === undefined ? {} : { accuracyM }),
  at: iso(atMs),
});

function ping(k: TestKey, code: string, body: unknown) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/locations`,
    headers: k.headers,
    payload: body as never,
  });
}
function tracking(k: TestKey, code: string) {
  return t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}/tracking`, headers: k.headers });
}
function expectFieldError(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}
async function storedPoints(code: string): Promise<number> {
  const [{ n }] = await t.ctx.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM order_track_points p JOIN orders o ON o.id = p.order_id WHERE o.code = $1',
    [code],
  );
  return n;
}

describe('POST /v1/partner/orders/{code}/locations', () => {
  it('takes the points of an EN_ROUTE order: 202 { accepted }, and the tracking read shows them at once', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const now = t.clock.nowMs();
    const eta = iso(now + 600_000);
    const res = await ping(key, code, {
      points: [point(now - 20_000, 0, 15), point(now - 10_000, 1), point(now, 2, 8)],
      etaAt: eta,
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ accepted: 3 });
    const read = await tracking(key, code);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual({
      orderCode: code,
      status: 'EN_ROUTE',
      location: point(now, 2, 8),
      etaAt: eta,
      trail: [point(now - 20_000, 0), point(now - 10_000, 1), point(now, 2)],
    });
  });

  it('takes pings in SCANNED_TO_VAN and FAILED, refuses every other status with 409 ERR_INVALID_TRANSITION', async () => {
    const { key } = await setup();
    const scanned = await orderFor(t, admin, key.id, 'SCANNED_TO_VAN');
    expect((await ping(key, scanned, { points: [point(t.clock.nowMs())] })).statusCode).toBe(202);
    const failed = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const f = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${failed}/events`,
      headers: key.headers,
      payload: { type: 'FAILED', failReason: 'NOT_HOME' },
    });
    expect(f.statusCode, f.body).toBe(201);
    expect((await ping(key, failed, { points: [point(t.clock.nowMs())] })).statusCode).toBe(202);
    const packed = await orderFor(t, admin, key.id, 'PACKED');
    expectError(await ping(key, packed, { points: [point(t.clock.nowMs())] }), 409, 'ERR_INVALID_TRANSITION');
    const delivered = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await ping(key, delivered, { points: [point(t.clock.nowMs())] })).statusCode).toBe(202);
    expect((await adminStatus(t, admin, delivered, 'DELIVERED')).statusCode).toBe(200);
    expectError(await ping(key, delivered, { points: [point(t.clock.nowMs())] }), 409, 'ERR_INVALID_TRANSITION');
  });

  it('ignores points older than the latest one: counted, not an error', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const now = t.clock.nowMs();
    expect((await ping(key, code, { points: [point(now)] })).json()).toEqual({ accepted: 1 });
    const res = await ping(key, code, { points: [point(now - 30_000), point(now - 1_000), point(now + 1_000, 3)] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 1 });
    expect(res.headers['x-points-ignored']).toBe('2');
    expect((await tracking(key, code)).json().location.at).toBe(iso(now + 1_000));
    // Once stored, the rule holds against the database too.
    await t.ctx.tracking.flushAll();
    const again = await ping(key, code, { points: [point(now - 60_000)] });
    expect(again.json()).toEqual({ accepted: 0 });
  });

  it('stores at most one trail point per order per 5 s of the points’ times, and writes in batches', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const start = t.clock.nowMs() - 60_000;
    // 60 points one second apart: 12 are 5 s apart.
    const points = Array.from({ length: 60 }, (_, i) => point(start + i * 1_000, i));
    expect((await ping(key, code, { points })).json()).toEqual({ accepted: 60 });
    await t.ctx.tracking.flushAll();
    expect(await storedPoints(code)).toBe(12);
    const read = (await tracking(key, code)).json();
    expect(read.trail).toHaveLength(12);
    expect(read.location.at).toBe(iso(start + 59_000));
  });

  it('answers 400 ERR_VALIDATION naming the field for coordinates, accuracy, counts and times out of range', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const now = t.clock.nowMs();
    expectFieldError(await ping(key, code, { points: [{ ...point(now), lat: 90.5 }] }), 'points.0.lat');
    expectFieldError(await ping(key, code, { points: [point(now), { ...point(now), lng: -180.01 }] }), 'points.1.lng');
    expectFieldError(await ping(key, code, { points: [point(now, 0, -1)] }), 'points.0.accuracyM');
    expectFieldError(await ping(key, code, { points: [point(now, 0, 10_001)] }), 'points.0.accuracyM');
    expectFieldError(await ping(key, code, { points: [point(now + 5 * 60_000 + 2_000)] }), 'points.0.at');
    expectFieldError(await ping(key, code, { points: [] }), 'points');
    expectFieldError(await ping(key, code, { points: Array.from({ length: 101 }, () => point(now)) }), 'points');
    expectFieldError(await ping(key, code, { points: [point(now)], etaAt: 'soon' }), 'etaAt');
    expectFieldError(await ping(key, code, { points: [{ ...point(now), speed: 3 }] }), 'points.0.speed');
    // At 5 minutes ahead exactly: taken. Nothing of the refused requests was stored.
    expect((await ping(key, code, { points: [point(now + 4 * 60_000)] })).json()).toEqual({ accepted: 1 });
    await t.ctx.tracking.flushAll();
    expect(await storedPoints(code)).toBe(1);
  });

  it('another key’s order answers 404, a receivesAllOrders key 403 ERR_PARTNER_ORDER_NOT_ASSIGNED', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const other = await setup();
    expectError(await ping(other.key, code, { points: [point(t.clock.nowMs())] }), 404, 'ERR_NOT_FOUND');
    expectError(await tracking(other.key, code), 404, 'ERR_NOT_FOUND');
    const seesAll = await createKey(t.ctx, other.partner.id, { receivesAllOrders: true });
    expectError(await ping(seesAll, code, { points: [point(t.clock.nowMs())] }), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
    expect((await tracking(seesAll, code)).statusCode).toBe(200);
  });
});

describe('GET /v1/partner/orders/{code}/tracking and GET /v1/admin/orders/{code}/tracking', () => {
  it('answers nulls and an empty trail before any location; the operator reads any order; unknown code 404', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'SCANNED_TO_VAN');
    const empty = { orderCode: code, status: 'SCANNED_TO_VAN', location: null, etaAt: null, trail: [] };
    expect((await tracking(key, code)).json()).toEqual(empty);
    const res = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${code}/tracking`, headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(empty);
    expectError(
      await t.live.inject({ method: 'GET', url: '/v1/admin/orders/ORD-NOPE/tracking', headers: admin }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${code}/tracking` }), 401, 'ERR_UNAUTHORIZED');
  });
});

describe('order.tracking (realtime) and order.courier_location (webhook)', () => {
  let worker: Worker;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    worker = startWorker(t.ctx, { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
  });

  /** A realtime connection of `token`, with the order.tracking messages it receives. */
  async function open(token: string): Promise<{ got: unknown[] }> {
    const socket = await openRealtime(t, token);
    const got: unknown[] = [];
    socket.on('order.tracking', (payload) => got.push(payload));
    return { got };
  }

  it('sends order.tracking { tracking } to the partner’s users and to admins, not to another partner', async () => {
    const { partner, key } = await setup();
    const other = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const mine = await open(partner.token);
    const admins = await open(adminToken);
    const theirs = await open(other.partner.token);
    const now = t.clock.nowMs();
    expect((await ping(key, code, { points: [point(now, 0, 5)] })).statusCode).toBe(202);
    const expected = {
      tracking: {
        orderCode: code,
        status: 'EN_ROUTE',
        location: { lat: 40.37, lng: 49.84, accuracyM: 5, at: iso(now) },
        etaAt: null,
        trail: [{ lat: 40.37, lng: 49.84, at: iso(now) }],
      },
    };
    await waitFor(() => mine.got.length > 0 && admins.got.some((g) => JSON.stringify(g).includes(code)));
    expect(mine.got[0]).toEqual(expected);
    expect(admins.got).toContainEqual(expected);
    expect(theirs.got.filter((g) => JSON.stringify(g).includes(code))).toEqual([]);
  });

  it('sends order.courier_location { tracking } at most once per order a minute (test clock), only to subscribed webhooks', async () => {
    const { partner, key } = await setup();
    const auth = await devAuth(t, partner);
    const subscribed = await createWebhookVia(t, auth, {
      apiKeyId: key.id,
      url: `http://127.0.0.1:${receiver.port}/courier`,
      events: ['order.courier_location'],
    });
    const notSubscribed = await createWebhookVia(t, auth, {
      apiKeyId: key.id,
      url: `http://127.0.0.1:${receiver.port}/status`,
      events: ['order.status_changed'],
    });
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await ping(key, code, { points: [point(t.clock.nowMs())] })).statusCode).toBe(202);
    await waitForDeliveries(t, partner, subscribed.id, (d) => d.length === 1 && d[0].status === 'DELIVERED');
    const first = receiver.requests.filter((r) => r.path === '/courier');
    expect(first).toHaveLength(1);
    const body = JSON.parse(first[0].body);
    expect(body).toMatchObject({
      type: 'order.courier_location',
      environment: 'live',
      data: { tracking: { orderCode: code, status: 'EN_ROUTE' } },
    });
    expect(body.data.tracking.location).not.toBeNull();

    // 30 s later (test clock): stored, but no second event within the minute.
    t.clock.advance(30);
    expect((await ping(key, code, { points: [point(t.clock.nowMs(), 1)] })).statusCode).toBe(202);
    await t.ctx.tracking.flushAll();
    await waitFor(async () => {
      const [{ n }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE processed_at IS NULL');
      return n === 0;
    });
    expect(await storedPoints(code)).toBe(2);
    expect((await waitForDeliveries(t, partner, subscribed.id, () => true)).length).toBe(1);

    // A minute after the first: the next flush sends one again.
    t.clock.advance(31);
    expect((await ping(key, code, { points: [point(t.clock.nowMs(), 2)] })).statusCode).toBe(202);
    const deliveries = await waitForDeliveries(
      t,
      partner,
      subscribed.id,
      (d) => d.length === 2 && d.every((x) => x.status === 'DELIVERED'),
    );
    expect(deliveries.map((d) => d.event)).toEqual(['order.courier_location', 'order.courier_location']);
    const others = await waitForDeliveries(t, partner, notSubscribed.id, () => true);
    expect(others.filter((d) => d.event === 'order.courier_location')).toEqual([]);
  });
});
