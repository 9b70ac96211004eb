/**
 * The operator moves an order: POST /v1/admin/orders/{code}/status (every transition of the state
 * machine, the timeline and the events written).
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { ORDER_STATUSES, type OrderStatus } from '../../shared/schemas.js';
import {
  type Auth,
  adminStatus,
  advanceTo,
  assign,
  createOrder,
  outboxOf,
  PLATFORM_PATH,
  partnerKey,
} from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

// The platform moves as docs/decisions-log.md, 'Orders' states them, restated as rules rather than as
// a table: one step along the platform path; CANCELLED from the three statuses before the van; an order
// on its way ends DELIVERED or FAILED; a failed one goes out again or is RETURNED; the rest is final.
const CANCELLABLE: OrderStatus[] = ['PLACED', 'VENDOR_ACCEPTED', 'PACKED'];
const OUTCOMES: Partial<Record<OrderStatus, OrderStatus[]>> = {
  EN_ROUTE: ['DELIVERED', 'FAILED'],
  FAILED: ['EN_ROUTE', 'RETURNED'],
};

function allowedFrom(from: OrderStatus): OrderStatus[] {
  const onPath = PLATFORM_PATH.indexOf(from);
  const next = onPath < 0 ? [] : PLATFORM_PATH.slice(onPath + 1, onPath + 2);
  const cancel: OrderStatus[] = CANCELLABLE.includes(from) ? ['CANCELLED'] : [];
  return [...next, ...cancel, ...(OUTCOMES[from] ?? [])];
}

/** The platform moves that reach `status` from PLACED. */
function pathTo(status: OrderStatus): OrderStatus[] {
  if (status === 'CANCELLED') return ['CANCELLED'];
  if (status === 'RETURNED') return [...pathTo('FAILED'), 'RETURNED'];
  if (status === 'DELIVERED' || status === 'FAILED') return [...pathTo('EN_ROUTE'), status];
  return PLATFORM_PATH.slice(1, PLATFORM_PATH.indexOf(status) + 1);
}

async function orderAt(status: OrderStatus): Promise<string> {
  const order = await createOrder(t, admin);
  for (const step of pathTo(status)) expect((await adminStatus(t, admin, order.code, step)).statusCode).toBe(200);
  return order.code;
}

describe('POST /v1/admin/orders/{code}/status', () => {
  for (const from of ORDER_STATUSES) {
    const allowed = allowedFrom(from);
    it(`from ${from} allows exactly ${allowed.join(', ') || 'nothing (final)'}`, async () => {
      const code = await orderAt(from);
      for (const to of ORDER_STATUSES) {
        if (allowed.includes(to)) continue;
        const res = await adminStatus(t, admin, code, to);
        expectError(res, 409, 'ERR_INVALID_TRANSITION');
      }
      for (const to of allowed) {
        const fresh = await orderAt(from);
        const res = await adminStatus(t, admin, fresh, to);
        expect(res.statusCode, `${from} → ${to}`).toBe(200);
        expect(res.json().status).toBe(to);
      }
    });
  }

  it('appends the timeline and answers the admin view', async () => {
    const key = await partnerKey(t);
    const order = await createOrder(t, admin);
    await assign(t, admin, order.code, key.id);
    const res = await adminStatus(t, admin, order.code, 'VENDOR_ACCEPTED', 'vendor confirmed by phone');
    expect(res.statusCode).toBe(200);
    const view = res.json();
    expect(view).toMatchObject({ code: order.code, status: 'VENDOR_ACCEPTED', environment: 'live', assignedKeyId: key.id });
    expect(view.timeline.map((e: { status: string }) => e.status)).toEqual(['PLACED', 'VENDOR_ACCEPTED']);
    const [event] = await t.ctx.db.query<{ actor: string; note: string }>(
      `SELECT e.actor, e.note FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 ORDER BY e.id DESC LIMIT 1`,
      [order.code],
    );
    expect(event).toEqual({ actor: 'ADMIN', note: 'vendor confirmed by phone' });
  });

  it('writes order.status_changed with previousStatus, plus order.delivered on DELIVERED', async () => {
    const key = await partnerKey(t);
    const order = await createOrder(t, admin);
    await assign(t, admin, order.code, key.id);
    await advanceTo(t, admin, order.code, 'EN_ROUTE');
    const res = await adminStatus(t, admin, order.code, 'DELIVERED');
    expect(res.statusCode).toBe(200);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => r.type)).toEqual([
      'order.placed',
      'order.assigned_to_partner',
      ...['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED', 'SCANNED_TO_VAN', 'EN_ROUTE'].map(() => 'order.status_changed'),
      'order.status_changed',
      'order.delivered',
    ]);
    const last = rows.slice(-2);
    for (const row of last) {
      expect(row).toMatchObject({ environment: 'LIVE', assigned_key_id: key.id });
      expect(row.data.previousStatus).toBe('EN_ROUTE');
      expect(row.data.order).toMatchObject({ code: order.code, status: 'DELIVERED' });
      expect(row.data.order?.customer).toMatchObject({ name: 'Aysel Məmmədova' });
    }
    expect(rows[2].data.previousStatus).toBe('PLACED');
    expect(rows[2].data.order?.status).toBe('VENDOR_ACCEPTED');
  });

  it('writes order.status_changed and order.cancelled on CANCELLED', async () => {
    const order = await createOrder(t, admin);
    expect((await adminStatus(t, admin, order.code, 'CANCELLED')).statusCode).toBe(200);
    const rows = await outboxOf(t, order.code);
    expect(rows.map((r) => [r.type, r.data.previousStatus ?? null])).toEqual([
      ['order.placed', null],
      ['order.status_changed', 'PLACED'],
      ['order.cancelled', 'PLACED'],
    ]);
  });

  it('writes nothing for a refused transition', async () => {
    const order = await createOrder(t, admin);
    expectError(await adminStatus(t, admin, order.code, 'DELIVERED'), 409, 'ERR_INVALID_TRANSITION');
    expect((await outboxOf(t, order.code)).map((r) => r.type)).toEqual(['order.placed']);
  });

  it('lets the operator send an order out again after three failed attempts', async () => {
    const code = await orderAt('EN_ROUTE');
    for (let i = 0; i < 3; i++) {
      expect((await adminStatus(t, admin, code, 'FAILED')).statusCode).toBe(200);
      expect((await adminStatus(t, admin, code, 'EN_ROUTE')).statusCode).toBe(200);
    }
  });

  it('refuses an unknown status value and answers an unknown order with 404', async () => {
    const order = await createOrder(t, admin);
    expectFieldError(await adminStatus(t, admin, order.code, 'SHIPPED' as OrderStatus), 'status');
    expectError(await adminStatus(t, admin, 'ORD-NOPE', 'VENDOR_ACCEPTED'), 404, 'ERR_NOT_FOUND');
  });
});
