/**
 * The simulator on the developer API (what the portal drives): the partner's own sandbox keys only, the
 * same moves as the partner routes (same events), and the moves each order and batch allows, from the
 * state machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { ORDER_STATUSES } from '../../shared/schemas.js';
import { partnerEventsFrom, platformMovesFrom } from '../orders/state-machine.js';
import { devAuth } from '../webhooks/webhooks.test-helpers.js';
import { outboxOfKey, partnerEvent, platformMove, rotateKey, sandboxSetup, testOrder } from './sandbox.test-helpers.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function dev(partner: TestPartner, method: 'GET' | 'POST', url: string, payload?: unknown) {
  return t.live.inject({
    method,
    url,
    headers: await devAuth(t, partner),
    ...(payload === undefined ? {} : { payload: payload as never }),
  });
}

const ROUTES = [
  { method: 'GET' as const, path: '/sandbox' },
  { method: 'POST' as const, path: '/sandbox/orders', body: {} },
  { method: 'POST' as const, path: '/sandbox/orders/ORD-ANY/platform-status', body: { status: 'CANCELLED' } },
  { method: 'POST' as const, path: '/sandbox/batches', body: { orderCodes: ['ORD-ANY'] } },
  { method: 'POST' as const, path: '/sandbox/batches/B-ANY/status', body: { status: 'DISPATCHED' } },
];

describe('developer simulator routes /v1/developer/keys/{id}/sandbox…', () => {
  for (const route of ROUTES) {
    describe(`${route.method} /v1/developer/keys/{id}${route.path}`, () => {
      // Another partner's key: test/auth-contract.test.ts, "another partner's resources".
      it('answers 404 for a malformed id, 409 for a live key, 401 for a revoked key, 403 without logistics:write', async () => {
        const s = await sandboxSetup(t, null);
        const call = (k: { id: string }) => dev(s.partner, route.method, `/v1/developer/keys/${k.id}${route.path}`, route.body);
        expectError(await call({ id: 'not-a-key' }), 404, 'ERR_NOT_FOUND');
        expectError(await call(await createKey(t.ctx, s.partner.id, { environment: 'LIVE' })), 409, 'ERR_CONFLICT');
        const revoked = await createKey(t.ctx, s.partner.id, { environment: 'SANDBOX' });
        await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.id, t.clock.now()]);
        expectError(await call(revoked), 401, 'ERR_API_KEY_REVOKED');
        const readOnly = await createKey(t.ctx, s.partner.id, { environment: 'SANDBOX', scopes: ['orders:read'] });
        expectError(await call(readOnly), 403, 'ERR_API_KEY_SCOPE');
      });
    });
  }

  it('creates test orders for the key, always answering { items }, with the options of the partner route', async () => {
    const s = await sandboxSetup(t, null);
    const res = await dev(s.partner, 'POST', `/v1/developer/keys/${s.key.id}/sandbox/orders`, {
      status: 'PLACED',
      paymentMethod: 'CARD',
      count: 2,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().items).toHaveLength(2);
    for (const order of res.json().items) expect(order).toMatchObject({ status: 'PLACED', paymentMethod: 'CARD' });
    const one = await dev(s.partner, 'POST', `/v1/developer/keys/${s.key.id}/sandbox/orders`, {});
    expect(one.statusCode, one.body).toBe(201);
    expect(one.json().items).toHaveLength(1);
    const bad = await dev(s.partner, 'POST', `/v1/developer/keys/${s.key.id}/sandbox/orders`, { count: 50 });
    expectError(bad, 400, 'ERR_VALIDATION');
    expect(bad.json().details[0].field).toBe('count');
    // The key reads them on the partner API.
    const list = await t.sandbox.inject({ method: 'GET', url: '/v1/partner/orders', headers: s.key.headers });
    expect(list.json().total).toBe(3);
  });

  it('lists the key’s orders with the moves the state machine allows from each status, and its batches with theirs', async () => {
    const s = await sandboxSetup(t, null);
    const other = await sandboxSetup(t, null, { partner: s.partner });
    await testOrder(t, other.key, 'PACKED');
    const codes: string[] = [];
    for (const status of ['PLACED', 'PACKED', 'EN_ROUTE', 'FAILED', 'DELIVERED'] as const)
      codes.push((await testOrder(t, s.key, status)).code);
    // Three failed attempts: no EN_ROUTE event any more, though the marketplace may still send it out.
    const spent = await testOrder(t, s.key, 'FAILED');
    for (let i = 0; i < 2; i++) {
      expect((await partnerEvent(t, s.key, spent.code, { type: 'EN_ROUTE' })).statusCode).toBe(201);
      expect((await partnerEvent(t, s.key, spent.code, { type: 'FAILED', failReason: 'NOT_HOME' })).statusCode).toBe(201);
    }
    const batch = (
      await dev(s.partner, 'POST', `/v1/developer/keys/${s.key.id}/sandbox/batches`, { orderCodes: [codes[1]] })
    ).json();

    const res = await dev(s.partner, 'GET', `/v1/developer/keys/${s.key.id}/sandbox`);
    expect(res.statusCode, res.body).toBe(200);
    const view = res.json();
    expect(view.apiKeyId).toBe(s.key.id);
    expect(view.orders.map((o: { order: { code: string } }) => o.order.code)).toEqual([spent.code, ...codes.reverse()]);
    for (const entry of view.orders) {
      const failures = entry.order.timeline.filter((e: { status: string }) => e.status === 'FAILED').length;
      expect(entry.platformMoves).toEqual(platformMovesFrom(entry.order.status));
      expect(entry.partnerEvents).toEqual(partnerEventsFrom(entry.order.status, failures));
    }
    expect(view.orders[0]).toMatchObject({ platformMoves: ['EN_ROUTE', 'RETURNED'], partnerEvents: [] });
    expect(view.batches).toEqual([{ code: batch.code, status: 'OPEN', orderCodes: [codes.at(-2)], moves: ['DISPATCHED'] }]);
    // Every status offers what the state machine says (nothing restated here).
    expect(ORDER_STATUSES.filter((st) => platformMovesFrom(st).length === 0)).toEqual(['DELIVERED', 'RETURNED', 'CANCELLED']);
  });

  it('moves orders and batches with the events the partner routes write, only on the key’s own orders', async () => {
    const s = await sandboxSetup(t, null);
    const twin = await sandboxSetup(t, null);
    const mine = await testOrder(t, s.key, 'PACKED');
    const theirs = await testOrder(t, twin.key, 'PACKED');
    const base = `/v1/developer/keys/${s.key.id}/sandbox`;

    const before = (await outboxOfKey(t, s.key.id)).length;
    const moved = await dev(s.partner, 'POST', `${base}/orders/${mine.code}/platform-status`, { status: 'CANCELLED' });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ code: mine.code, status: 'CANCELLED' });
    const twinBefore = (await outboxOfKey(t, twin.key.id)).length;
    expect((await platformMove(t, twin.key, theirs.code, 'CANCELLED')).statusCode).toBe(200);
    expect((await outboxOfKey(t, s.key.id)).slice(before).map((e) => e.type)).toEqual(
      (await outboxOfKey(t, twin.key.id)).slice(twinBefore).map((e) => e.type),
    );

    const other = await testOrder(t, twin.key, 'PACKED');
    expectError(
      await dev(s.partner, 'POST', `${base}/orders/${other.code}/platform-status`, { status: 'CANCELLED' }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(
      await dev(s.partner, 'POST', `${base}/orders/${mine.code}/platform-status`, { status: 'PLACED' }),
      409,
      'ERR_INVALID_TRANSITION',
    );

    const a = await testOrder(t, s.key, 'PACKED');
    const batch = await dev(s.partner, 'POST', `${base}/batches`, { orderCodes: [a.code] });
    expect(batch.statusCode, batch.body).toBe(201);
    const code = batch.json().code;
    expectError(
      await dev(s.partner, 'POST', `${base}/batches/${code}/status`, { status: 'COMPLETED' }),
      409,
      'ERR_BATCH_INVALID_TRANSITION',
    );
    expect((await dev(s.partner, 'POST', `${base}/batches/${code}/status`, { status: 'DISPATCHED' })).json().status).toBe(
      'DISPATCHED',
    );
    expect((await dev(s.partner, 'POST', `${base}/batches/${code}/status`, { status: 'COMPLETED' })).json().status).toBe(
      'COMPLETED',
    );
    const [row] = await t.ctx.db.query<{ environment: string }>(
      `SELECT environment FROM outbox WHERE type = 'batch.completed' AND data->'batch'->>'code' = $1`,
      [code],
    );
    expect(row.environment).toBe('SANDBOX');
    const foreign = await dev(s.partner, 'POST', `${base}/batches`, { orderCodes: [other.code] });
    expectError(foreign, 404, 'ERR_NOT_FOUND');
  });

  it('acts for the successor with a rotated-out key in its grace period', async () => {
    const s = await sandboxSetup(t, null);
    const successor = await rotateKey(t, s);
    const created = await dev(s.partner, 'POST', `/v1/developer/keys/${s.key.id}/sandbox/orders`, {});
    expect(created.statusCode, created.body).toBe(201);
    const read = await t.sandbox.inject({
      method: 'GET',
      url: `/v1/partner/orders/${created.json().items[0].code}`,
      headers: successor.headers,
    });
    expect(read.statusCode).toBe(200);
  });
});
