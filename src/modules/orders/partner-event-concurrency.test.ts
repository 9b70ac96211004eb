/**
 * POST /v1/partner/orders/{code}/events under concurrency: racing events on one order, and the group
 * commit that writes concurrent events in one transaction.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, outboxOf, partnerKey } from './orders.test-helpers.js';
import { EVENT_BODY, orderAtWithEvents, sendEvent } from './partner-events.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('POST /v1/partner/orders/{code}/events: racing events', () => {
  it('of DELIVERED and FAILED racing on one order exactly one wins and the other gets 409', async () => {
    const k = await partnerKey(t);
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) codes.push(await orderAtWithEvents(t, admin, k, 'EN_ROUTE'));
    const results = await Promise.all(
      codes.map((code) => Promise.all([sendEvent(t, k, code, EVENT_BODY.DELIVERED), sendEvent(t, k, code, EVENT_BODY.FAILED)])),
    );
    for (const [i, pair] of results.entries()) {
      const statuses = pair.map((r) => r.statusCode).sort();
      expect(statuses, codes[i]).toEqual([201, 409]);
      const loser = pair.find((r) => r.statusCode === 409)!;
      expect(loser.json().code).toBe('ERR_INVALID_TRANSITION');
      const partnerEvents = await t.ctx.db.query(
        `SELECT 1 FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 AND e.actor = 'PARTNER'`,
        [codes[i]],
      );
      expect(partnerEvents).toHaveLength(1);
      expect(
        (await outboxOf(t, codes[i])).filter((r) => r.data.previousStatus === 'EN_ROUTE' && r.type === 'order.status_changed'),
      ).toHaveLength(1);
    }
  });

  it('of two identical concurrent events exactly one wins', async () => {
    const k = await partnerKey(t);
    const codes: string[] = [];
    for (let i = 0; i < 10; i++) codes.push(await orderAtWithEvents(t, admin, k, 'PACKED'));
    const pairs = await Promise.all(
      codes.map((code) =>
        Promise.all([sendEvent(t, k, code, EVENT_BODY.PICKED_UP), sendEvent(t, k, code, EVENT_BODY.PICKED_UP)]),
      ),
    );
    for (const pair of pairs) {
      expect(pair.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    }
  });
});

describe('POST /v1/partner/orders/{code}/events: group commit', () => {
  /** The transactions that wrote these orders' latest timeline entries (rows of one transaction share xmin). */
  async function writers(codes: string[]): Promise<number> {
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      `SELECT count(DISTINCT e.xmin::text)::int AS n
         FROM orders o JOIN order_events e ON e.id = o.pv_last_event WHERE o.code = ANY($1::text[])`,
      [codes],
    );
    return n;
  }

  it('writes concurrent events in one transaction, each answered with its own order or its own refusal', async () => {
    const k = await partnerKey(t);
    const other = await partnerKey(t);
    const packed = await Promise.all([1, 2, 3].map(() => orderAtWithEvents(t, admin, k, 'PACKED')));
    const enRoute = await orderAtWithEvents(t, admin, k, 'EN_ROUTE');
    const delivered = await orderAtWithEvents(t, admin, k, 'DELIVERED');
    const foreign = await orderAtWithEvents(t, admin, other, 'PACKED');
    const answers = await Promise.all([
      ...packed.map((code) => sendEvent(t, k, code, EVENT_BODY.PICKED_UP)),
      sendEvent(t, k, enRoute, EVENT_BODY.DELIVERED),
      sendEvent(t, k, delivered, EVENT_BODY.EN_ROUTE),
      sendEvent(t, k, foreign, EVENT_BODY.PICKED_UP),
      sendEvent(t, k, 'ORD-NOSUCH1', EVENT_BODY.PICKED_UP),
    ]);
    for (const [i, code] of packed.entries()) {
      expect(answers[i].statusCode, answers[i].body).toBe(201);
      expect(answers[i].json()).toMatchObject({ code, status: 'SCANNED_TO_VAN' });
    }
    expect(answers[3].statusCode, answers[3].body).toBe(201);
    expect(answers[3].json()).toMatchObject({ code: enRoute, status: 'DELIVERED' });
    expectError(answers[4], 409, 'ERR_INVALID_TRANSITION');
    expectError(answers[5], 404, 'ERR_NOT_FOUND');
    expectError(answers[6], 404, 'ERR_NOT_FOUND');
    // The four accepted events went to the database together, with their outbox events.
    expect(await writers([...packed, enRoute])).toBe(1);
    for (const code of packed) expect((await outboxOf(t, code)).at(-1)).toMatchObject({ type: 'order.status_changed' });
    expect((await outboxOf(t, enRoute)).slice(-2).map((o) => o.type)).toEqual(['order.status_changed', 'order.delivered']);
    expect((await outboxOf(t, foreign)).at(-1)?.data.order?.status).toBe('PACKED');
  });

  it('tries each event of a failed transaction again alone: one cannot fail the others', async () => {
    const k = await partnerKey(t);
    const codes = await Promise.all([1, 2, 3].map(() => orderAtWithEvents(t, admin, k, 'PACKED')));
    // A database error for one event only (a trigger refusing one note), which the rules cannot foresee.
    await t.ctx.db.query(`CREATE FUNCTION test_refuse_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.partner_note = 'refused by the database' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
    await t.ctx.db.query(
      'CREATE TRIGGER test_refuse_note BEFORE INSERT ON order_events FOR EACH ROW EXECUTE FUNCTION test_refuse_note()',
    );
    try {
      const answers = await Promise.all([
        sendEvent(t, k, codes[0], EVENT_BODY.PICKED_UP),
        sendEvent(t, k, codes[1], { ...EVENT_BODY.PICKED_UP, note: 'refused by the database' }),
        sendEvent(t, k, codes[2], EVENT_BODY.PICKED_UP),
      ]);
      expect(answers.map((a) => a.statusCode)).toEqual([201, 500, 201]);
      expectError(answers[1], 500, 'ERR_INTERNAL');
      const read = (code: string) => t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers });
      expect((await read(codes[0])).json().status).toBe('SCANNED_TO_VAN');
      expect((await read(codes[1])).json().status).toBe('PACKED');
      expect((await read(codes[2])).json().status).toBe('SCANNED_TO_VAN');
    } finally {
      await t.ctx.db.query('DROP TRIGGER test_refuse_note ON order_events');
      await t.ctx.db.query('DROP FUNCTION test_refuse_note()');
    }
  });
});
