/**
 * The operator reads an order and assigns it to a partner's key: GET /v1/admin/orders/{code} and
 * POST /v1/admin/orders/{code}/assign.
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, adminStatus, assign, assignRequest, createOrder, ISO, outboxOf, partnerKey } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('GET /v1/admin/orders/{code}', () => {
  it('answers the admin view of the order', async () => {
    const created = await createOrder(t, admin);
    const res = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${created.code}`, headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(created);
  });

  it('answers an unknown code with 404 ERR_NOT_FOUND', async () => {
    expectError(await t.live.inject({ method: 'GET', url: '/v1/admin/orders/ORD-NOPE', headers: admin }), 404, 'ERR_NOT_FOUND');
  });
});

describe('POST /v1/admin/orders/{code}/assign', () => {
  it('assigns the order, sets partnerAssignedAt and writes order.assigned_to_partner', async () => {
    const key = await partnerKey(t);
    const order = await createOrder(t, admin);
    t.clock.advance(5);
    const res = await assignRequest(t, admin, order.code, key.id);
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view).toMatchObject({
      code: order.code,
      assignedKeyId: key.id,
      status: 'PLACED',
      partnerAssignedAt: expect.stringMatching(ISO),
    });
    expect(view.updatedAt).toBe(view.partnerAssignedAt);
    expect(Date.parse(view.updatedAt)).toBeGreaterThan(Date.parse(order.updatedAt));

    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
    expect(rows[1]).toMatchObject({ environment: 'LIVE', assigned_key_id: key.id });
    const { environment: _e, assignedKeyId: _k, ...partnerView } = view;
    expect(rows[1].data).toEqual({ order: partnerView });
  });

  it('moves an order to another key, and assigning the same key again changes nothing', async () => {
    const first = await partnerKey(t);
    const second = await partnerKey(t);
    const order = await createOrder(t, admin);
    const a = await assign(t, admin, order.code, first.id);
    const again = await assign(t, admin, order.code, first.id);
    expect(again).toEqual(a);
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
    const b = await assign(t, admin, order.code, second.id);
    expect(b.assignedKeyId).toBe(second.id);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => [r.type, r.assigned_key_id])).toEqual([
      ['order.placed', null],
      ['order.assigned_to_partner', first.id],
      ['order.assigned_to_partner', second.id],
    ]);
  });

  it('answers a key of the other environment with 409 ERR_CONFLICT', async () => {
    const sandboxKey = await partnerKey(t, { environment: 'SANDBOX' });
    const order = await createOrder(t, admin);
    const res = await assignRequest(t, admin, order.code, sandboxKey.id);
    expectError(res, 409, 'ERR_CONFLICT');
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed']);
  });

  it('answers a revoked key, or one rotated out and still in its grace period, with 409 ERR_CONFLICT', async () => {
    const order = await createOrder(t, admin);
    const revoked = await partnerKey(t);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.id, t.clock.now()]);
    const rotating = await partnerKey(t);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [
      rotating.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    for (const key of [revoked, rotating]) {
      const res = await assignRequest(t, admin, order.code, key.id);
      expectError(res, 409, 'ERR_CONFLICT');
    }
  });

  it('answers an unknown key or an unknown order with 404 ERR_NOT_FOUND', async () => {
    const order = await createOrder(t, admin);
    const key = await partnerKey(t);
    expectError(await assignRequest(t, admin, order.code, '00000000-0000-4000-8000-000000000000'), 404, 'ERR_NOT_FOUND');
    expectError(await assignRequest(t, admin, 'ORD-NOPE', key.id), 404, 'ERR_NOT_FOUND');
  });

  it('answers a malformed apiKeyId with 400 ERR_VALIDATION', async () => {
    const order = await createOrder(t, admin);
    const res = await assignRequest(t, admin, order.code, 'key-1');
    expectFieldError(res, 'apiKeyId');
  });

  it('refuses to assign a finished order with 409 ERR_CONFLICT', async () => {
    const key = await partnerKey(t);
    const order = await createOrder(t, admin);
    expect((await adminStatus(t, admin, order.code, 'CANCELLED')).statusCode).toBe(200);
    const res = await assignRequest(t, admin, order.code, key.id);
    expectError(res, 409, 'ERR_CONFLICT');
  });
});
