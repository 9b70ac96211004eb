/**
 * The operator's batches: POST /v1/admin/batches and POST /v1/admin/batches/{code}/status.
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, assign, createBatch, createOrder, outboxOf, partnerKey } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

function batchStatus(code: string, status: string) {
  return t.live.inject({ method: 'POST', url: `/v1/admin/batches/${code}/status`, headers: admin, payload: { status } });
}

describe('POST /v1/admin/batches', () => {
  it('creates an OPEN batch with the orders in the listed order, visible on each order', async () => {
    const a = await createOrder(t, admin);
    const b = await createOrder(t, admin);
    const res = await createBatch(t, admin, [b.code, a.code]);
    expect(res.statusCode).toBe(201);
    const batch = res.json();
    expect(batch).toEqual({
      code: expect.stringMatching(/^BAT-[0-9A-HJKMNP-TV-Z]{8}$/),
      status: 'OPEN',
      orderCodes: [b.code, a.code],
    });
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${a.code}`, headers: admin })).json();
    expect(view.batch).toEqual({ code: batch.code, status: 'OPEN' });
    expect(Date.parse(view.updatedAt)).toBeGreaterThanOrEqual(Date.parse(a.updatedAt));
  });

  it('answers unknown order codes with 404 ERR_NOT_FOUND naming them', async () => {
    const a = await createOrder(t, admin);
    const res = await createBatch(t, admin, [a.code, 'ORD-NOPE']);
    expectError(res, 404, 'ERR_NOT_FOUND');
    expect(res.json().details).toEqual({ orderCodes: ['ORD-NOPE'] });
  });

  it('answers an order already on an OPEN or DISPATCHED batch with 409 ERR_CONFLICT', async () => {
    const a = await createOrder(t, admin);
    const first = (await createBatch(t, admin, [a.code])).json();
    expectError(await createBatch(t, admin, [a.code]), 409, 'ERR_CONFLICT');
    expect((await batchStatus(first.code, 'DISPATCHED')).statusCode).toBe(200);
    expectError(await createBatch(t, admin, [a.code]), 409, 'ERR_CONFLICT');
    expect((await batchStatus(first.code, 'COMPLETED')).statusCode).toBe(200);
    const again = await createBatch(t, admin, [a.code]);
    expect(again.statusCode).toBe(201);
  });

  it('answers orders of two environments with 409 ERR_CONFLICT', async () => {
    const live = await createOrder(t, admin);
    const sandbox = await createOrder(t, admin, { environment: 'sandbox' });
    expectError(await createBatch(t, admin, [live.code, sandbox.code]), 409, 'ERR_CONFLICT');
  });

  it('refuses an empty list, duplicates and unknown fields with ERR_VALIDATION', async () => {
    const a = await createOrder(t, admin);
    expectFieldError(await createBatch(t, admin, []), 'orderCodes');
    expectFieldError(await createBatch(t, admin, [a.code, a.code]), 'orderCodes');
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/batches',
      headers: admin,
      payload: { orderCodes: [a.code], driver: 'x' },
    });
    expectFieldError(res, 'driver');
  });
});

describe('POST /v1/admin/batches/{code}/status', () => {
  it('moves OPEN → DISPATCHED → COMPLETED, and completing writes batch.completed', async () => {
    const key = await partnerKey(t);
    const a = await createOrder(t, admin);
    await assign(t, admin, a.code, key.id);
    const b = await createOrder(t, admin);
    const batch = (await createBatch(t, admin, [a.code, b.code])).json();

    const dispatched = await batchStatus(batch.code, 'DISPATCHED');
    expect(dispatched.statusCode).toBe(200);
    expect(dispatched.json()).toEqual({ code: batch.code, status: 'DISPATCHED', orderCodes: [a.code, b.code] });
    expect(
      await t.ctx.db.query('SELECT 1 FROM outbox WHERE type = $1 AND data->$2->>$3 = $4', [
        'batch.completed',
        'batch',
        'code',
        batch.code,
      ]),
    ).toHaveLength(0);

    t.clock.advance(1);
    const completed = await batchStatus(batch.code, 'COMPLETED');
    expect(completed.statusCode).toBe(200);
    expect(completed.json()).toEqual({ code: batch.code, status: 'COMPLETED', orderCodes: [a.code, b.code] });

    const rows = await t.ctx.db.query<{
      type: string;
      environment: string;
      order_id: null;
      assigned_key_id: null;
      data: unknown;
    }>(
      `SELECT type, environment, order_id, assigned_key_id, data FROM outbox WHERE type = 'batch.completed' AND data->'batch'->>'code' = $1`,
      [batch.code],
    );
    expect(rows).toEqual([
      {
        type: 'batch.completed',
        environment: 'LIVE',
        order_id: null,
        assigned_key_id: null,
        data: { batch: { code: batch.code, status: 'COMPLETED', orderCodes: [a.code, b.code] } },
      },
    ]);
    // The batch status is part of each order's view, so updatedAt moves with it.
    const view = (await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${a.code}`, headers: admin })).json();
    expect(view.batch).toEqual({ code: batch.code, status: 'COMPLETED' });
    expect(Date.parse(view.updatedAt)).toBeGreaterThanOrEqual(t.clock.nowMs() - 5_000);
    // No order status event comes from a batch change.
    expect((await outboxOf(t, a.code)).map((r) => r.type)).toEqual(['order.placed', 'order.assigned_to_partner']);
  });

  it('refuses every other move with 409 ERR_BATCH_INVALID_TRANSITION', async () => {
    const a = await createOrder(t, admin);
    const batch = (await createBatch(t, admin, [a.code])).json();
    expectError(await batchStatus(batch.code, 'COMPLETED'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expectError(await batchStatus(batch.code, 'OPEN'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expect((await batchStatus(batch.code, 'DISPATCHED')).statusCode).toBe(200);
    expectError(await batchStatus(batch.code, 'OPEN'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expectError(await batchStatus(batch.code, 'DISPATCHED'), 409, 'ERR_BATCH_INVALID_TRANSITION');
    expect((await batchStatus(batch.code, 'COMPLETED')).statusCode).toBe(200);
    for (const s of ['OPEN', 'DISPATCHED', 'COMPLETED']) {
      expectError(await batchStatus(batch.code, s), 409, 'ERR_BATCH_INVALID_TRANSITION');
    }
  });

  it('answers an unknown batch with 404 and an unknown status with 400', async () => {
    expectError(await batchStatus('BAT-NOPE', 'DISPATCHED'), 404, 'ERR_NOT_FOUND');
    const a = await createOrder(t, admin);
    const batch = (await createBatch(t, admin, [a.code])).json();
    expectFieldError(await batchStatus(batch.code, 'LOST'), 'status');
  });
});
