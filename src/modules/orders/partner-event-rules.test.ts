/**
 * POST /v1/partner/orders/{code}/events: the body's rules, which keys may write which orders, and the
 * order in which the checks answer.
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, createOrder, orderFor, partnerKey } from './orders.test-helpers.js';
import { EVENT_BODY, orderAtWithEvents, sendEvent } from './partner-events.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('POST /v1/partner/orders/{code}/events: body rules', () => {
  it('requires failReason on FAILED (400 ERR_VALIDATION naming failReason)', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    expectFieldError(await sendEvent(t, k, code, { type: 'FAILED' }), 'failReason');
    expectFieldError(await sendEvent(t, k, code, { type: 'FAILED', failReason: 'LOST' }), 'failReason');
  });

  it('refuses failReason on any other event with 400 ERR_BAD_REQUEST', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) {
      expectError(await sendEvent(t, k, code, { type, failReason: 'NOT_HOME' }), 400, 'ERR_BAD_REQUEST');
    }
  });

  it('refuses codCollectedQepik on a non-DELIVERED event with 400 ERR_BAD_REQUEST', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    for (const body of [
      { type: 'PICKED_UP', codCollectedQepik: 0 },
      { type: 'EN_ROUTE', codCollectedQepik: 100 },
      { type: 'FAILED', failReason: 'REFUSED', codCollectedQepik: 0 },
    ]) {
      expectError(await sendEvent(t, k, code, body), 400, 'ERR_BAD_REQUEST');
    }
  });

  it('refuses codCollectedQepik on a CARD order with 400 ERR_BAD_REQUEST', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE', {
      paymentMethod: 'CARD',
      codAmountQepik: 0,
      paymentStatus: 'PAID',
    });
    expectError(await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 0 }), 400, 'ERR_BAD_REQUEST');
    expect((await sendEvent(t, k, code, { type: 'DELIVERED' })).statusCode).toBe(201);
  });

  it('refuses codCollectedQepik above the COD amount (400 ERR_VALIDATION naming codCollectedQepik)', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    expectFieldError(
      await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 12_501, note: 'tip' }),
      'codCollectedQepik',
    );
  });

  it('requires a note when the collected cash differs (400 ERR_COD_VARIANCE_NOTE_REQUIRED)', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    expectError(
      await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 12_000 }),
      400,
      'ERR_COD_VARIANCE_NOTE_REQUIRED',
    );
    expectError(
      await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 12_000, note: '   ' }),
      400,
      'ERR_COD_VARIANCE_NOTE_REQUIRED',
    );
    const res = await sendEvent(t, k, code, { type: 'DELIVERED', codCollectedQepik: 12_000, note: 'customer had no change' });
    expect(res.statusCode).toBe(201);
    const [event] = await t.ctx.db.query<{ cod_collected_qepik: number; partner_note: string }>(
      `SELECT e.cod_collected_qepik, e.partner_note FROM order_events e JOIN orders o ON o.id = e.order_id
        WHERE o.code = $1 ORDER BY e.id DESC LIMIT 1`,
      [code],
    );
    expect(event).toEqual({ cod_collected_qepik: 12_000, partner_note: 'customer had no change' });
  });

  it('accepts the exact COD amount without a note, and DELIVERED without codCollectedQepik', async () => {
    const k = await partnerKey(t);
    const exact = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    expect((await sendEvent(t, k, exact, { type: 'DELIVERED', codCollectedQepik: 12_500 })).statusCode).toBe(201);
    const plain = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    expect((await sendEvent(t, k, plain, { type: 'DELIVERED' })).statusCode).toBe(201);
  });

  it.each([
    ['an unknown type', { type: 'ARRIVED' }, 'type'],
    ['no type', {}, 'type'],
    ['codCollectedQepik below 0', { type: 'DELIVERED', codCollectedQepik: -1 }, 'codCollectedQepik'],
    ['codCollectedQepik above 100000000', { type: 'DELIVERED', codCollectedQepik: 100_000_001 }, 'codCollectedQepik'],
    ['a fractional codCollectedQepik', { type: 'DELIVERED', codCollectedQepik: 10.5 }, 'codCollectedQepik'],
    ['codCollectedQepik as a string', { type: 'DELIVERED', codCollectedQepik: '100' }, 'codCollectedQepik'],
    ['a note over 500 characters', { type: 'PICKED_UP', note: 'x'.repeat(501) }, 'note'],
    ['a malformed at', { type: 'PICKED_UP', at: 'now' }, 'at'],
    ['an at PostgreSQL cannot store', { type: 'PICKED_UP', at: '0000-01-01T00:00:00Z' }, 'at'],
    ['an unknown field', { type: 'PICKED_UP', driver: 'Elvin' }, 'driver'],
  ])('refuses %s with 400 ERR_VALIDATION', async (_name, body, field) => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'PACKED');
    expectFieldError(await sendEvent(t, k, code, body), field);
  });

  it('accepts a note of exactly 500 characters', async () => {
    const k = await partnerKey(t);
    const code = await orderAtWithEvents(t, admin, k, 'PACKED');
    expect((await sendEvent(t, k, code, { type: 'PICKED_UP', note: 'x'.repeat(500) })).statusCode).toBe(201);
  });
});

describe('POST /v1/partner/orders/{code}/events: who may write', () => {
  // Another partner's order: test/auth-contract.test.ts, "another partner's resources".
  it('answers 404 for an order the key cannot see (unassigned, unknown)', async () => {
    const k = await partnerKey(t);
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await sendEvent(t, k, unassigned, EVENT_BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
    expectError(await sendEvent(t, k, 'ORD-NOPE', EVENT_BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
  });

  it('answers 404 for an order of the other environment, even for a receivesAllOrders key', async () => {
    const all = await partnerKey(t, { receivesAllOrders: true });
    const sandboxOrder = (await createOrder(t, admin, { environment: 'sandbox' })).code;
    expectError(await sendEvent(t, all, sandboxOrder, EVENT_BODY.PICKED_UP), 404, 'ERR_NOT_FOUND');
  });

  it('answers 403 ERR_PARTNER_ORDER_NOT_ASSIGNED to a receivesAllOrders key on an order it may only read', async () => {
    const all = await partnerKey(t, { receivesAllOrders: true });
    const other = await partnerKey(t);
    const theirs = await orderAtWithEvents(t, admin, other, 'PACKED');
    const unassigned = (await createOrder(t, admin)).code;
    expectError(await sendEvent(t, all, theirs, EVENT_BODY.PICKED_UP), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
    expectError(await sendEvent(t, all, unassigned, EVENT_BODY.PICKED_UP), 403, 'ERR_PARTNER_ORDER_NOT_ASSIGNED');
    // … but it writes its own orders.
    const own = await orderAtWithEvents(t, admin, all, 'PACKED');
    expect((await sendEvent(t, all, own, EVENT_BODY.PICKED_UP)).statusCode).toBe(201);
  });

  it('lets a rotated-out key in its grace period write the orders moved to its successor', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    const code = await orderFor(t, admin, old.id, 'PACKED');
    const successor = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    await t.ctx.db.query('UPDATE api_keys SET successor_id = $2, revoked_at = $3 WHERE id = $1', [
      old.id,
      successor.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    await t.ctx.db.query('UPDATE orders SET assigned_key_id = $2 WHERE assigned_key_id = $1', [old.id, successor.id]);
    t.ctx.keys.invalidateAll();
    expect((await sendEvent(t, old, code, EVENT_BODY.PICKED_UP)).statusCode).toBe(201);
    expect((await sendEvent(t, successor, code, EVENT_BODY.EN_ROUTE)).statusCode).toBe(201);
  });

  it('answers customer only for a key with orders:pii', async () => {
    const k = await partnerKey(t, { scopes: ['orders:read', 'logistics:write'] });
    const code = await orderAtWithEvents(t, admin, k, 'PACKED');
    const res = await sendEvent(t, k, code, EVENT_BODY.PICKED_UP);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ code, status: 'SCANNED_TO_VAN', customer: null });
  });

  it('works with logistics:write alone (no orders:read)', async () => {
    const k = await partnerKey(t, { scopes: ['logistics:write'] });
    const code = await orderAtWithEvents(t, admin, k, 'PACKED');
    const res = await sendEvent(t, k, code, EVENT_BODY.PICKED_UP);
    expect(res.statusCode).toBe(201);
    expect(res.json().customer).toBeNull();
  });
});

describe('POST /v1/partner/orders/{code}/events: check order (400 body → 404 → 403 → 400 order → 409)', () => {
  it('body-only rules come before the order lookup', async () => {
    const k = await partnerKey(t);
    expectFieldError(await sendEvent(t, k, 'ORD-NOPE', { type: 'FAILED' }), 'failReason');
    expectError(await sendEvent(t, k, 'ORD-NOPE', { type: 'PICKED_UP', failReason: 'NOT_HOME' }), 400, 'ERR_BAD_REQUEST');
  });

  it('not assigned (403) comes before order-dependent input rules', async () => {
    const all = await partnerKey(t, { receivesAllOrders: true });
    const other = await partnerKey(t);
    const theirs = await orderAtWithEvents(t, admin, other, 'EN_ROUTE');
    expectError(
      await sendEvent(t, all, theirs, { type: 'DELIVERED', codCollectedQepik: 99_999 }),
      403,
      'ERR_PARTNER_ORDER_NOT_ASSIGNED',
    );
  });

  it('order-dependent input rules come before the transition', async () => {
    const k = await partnerKey(t);
    const packed = await orderAtWithEvents(t, admin, k, 'PACKED');
    expectFieldError(await sendEvent(t, k, packed, { type: 'DELIVERED', codCollectedQepik: 99_999 }), 'codCollectedQepik');
    expectError(
      await sendEvent(t, k, packed, { type: 'DELIVERED', codCollectedQepik: 1 }),
      400,
      'ERR_COD_VARIANCE_NOTE_REQUIRED',
    );
    expectError(await sendEvent(t, k, packed, { type: 'DELIVERED', codCollectedQepik: 12_500 }), 409, 'ERR_INVALID_TRANSITION');
  });
});
