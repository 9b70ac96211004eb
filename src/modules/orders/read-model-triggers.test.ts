/**
 * The read model's timeline trigger (migrations 0006, 0013, 0027): an order's stored timeline is the
 * rendering of its entries whoever inserts them. A partner event renders its own entry in the statement
 * that inserts it, and the trigger leaves that order alone; an entry inserted by any other writer is
 * rendered by the trigger. Either way the stored text, `pv_last_event` and the order counters are what a
 * fresh rendering and a count of the orders give.
 */
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, partnerKey, readAs } from './orders.test-helpers.js';
import { EVENT_BODY, orderAtWithEvents, sendEvent } from './partner-events.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

/** Orders of `codes` whose stored timeline or last entry differ from their entries in order_events. */
async function staleTimelines(codes: string[]): Promise<string[]> {
  const rows = await t.ctx.db.query<{ code: string }>(
    `SELECT o.code FROM orders o
      WHERE o.code = ANY($1::text[])
        AND (o.pv_timeline <> order_timeline_json(o.id)
             OR o.pv_last_event <> (SELECT max(e.id) FROM order_events e WHERE e.order_id = o.id))`,
    [codes],
  );
  return rows.map((r) => r.code);
}

/** Counter rows of `keyId` that differ from a count of its orders, by status. */
async function countMismatches(keyId: string): Promise<unknown[]> {
  return t.ctx.db.query(
    `SELECT coalesce(c.status, o.status) AS status, c.n AS counted, o.n AS actual
       FROM (SELECT status, sum(n)::int AS n FROM order_counts WHERE key_id = $1 GROUP BY status HAVING sum(n) <> 0) c
       FULL JOIN (SELECT status, count(*)::int AS n FROM orders WHERE assigned_key_id = $1 GROUP BY status) o
         ON o.status = c.status
      WHERE c.n IS DISTINCT FROM o.n`,
    [keyId],
  );
}

describe('the timeline trigger', () => {
  it('leaves the orders of a group of partner events as their statement rendered them, counted once', async () => {
    const k = await partnerKey(t);
    const codes = await Promise.all([1, 2, 3, 4].map(() => orderAtWithEvents(t, admin, k, 'PACKED')));
    for (const body of [EVENT_BODY.PICKED_UP, EVENT_BODY.EN_ROUTE]) {
      const answers = await Promise.all(codes.map((code) => sendEvent(t, k, code, body)));
      expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201, 201]);
    }
    expect(await staleTimelines(codes)).toEqual([]);
    expect(await countMismatches(k.id)).toEqual([]);
    const order = (await readAs(t, k, `/v1/partner/orders/${codes[0]}`)).json();
    expect(order.status).toBe('EN_ROUTE');
    expect(order.timeline.at(-1).status).toBe('EN_ROUTE');
  });

  it('renders an entry another writer inserts by plain SQL into its order', async () => {
    const k = await partnerKey(t);
    const codes = await Promise.all([1, 2].map(() => orderAtWithEvents(t, admin, k, 'PACKED')));
    const entries = async () =>
      (
        await t.ctx.db.query<{ n: number }>('SELECT json_array_length(pv_timeline::json) AS n FROM orders WHERE code = $1', [
          codes[0],
        ])
      )[0].n;
    const before = await entries();
    // Two entries of one order and one of another, in one statement.
    await t.ctx.db.query(
      `INSERT INTO order_events (order_id, status, at, actor, note)
       SELECT o.id, 'PACKED', $2::timestamptz + (n || ' seconds')::interval, 'ADMIN', 'repacked'
         FROM orders o JOIN (VALUES ($1::text, 1), ($1::text, 2), ($3::text, 1)) AS w(code, n) ON w.code = o.code`,
      [codes[0], t.clock.now(), codes[1]],
    );
    expect(await staleTimelines(codes)).toEqual([]);
    expect(await countMismatches(k.id)).toEqual([]);
    // The stored text (what every read serves) holds both new entries.
    expect(await entries()).toBe(before + 2);
  });
});
