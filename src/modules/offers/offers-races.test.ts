/**
 * Offers under concurrency (docs/offers.md, "Exactly one outcome"): decisions on one offer sent at once
 * through the API. On a PostgreSQL server they run on separate connections and really race; the
 * embedded database runs them one at a time. Whatever the order, exactly one outcome is recorded (one
 * outbox event for it), every other decider gets 409 ERR_OFFER_CLOSED, and an accepted offer's order is
 * assigned exactly once.
 */
import { describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { testTransaction, waitForLockWaiters } from '../../../test/test-transaction.js';
import { type Auth, adminStatus, assignRequest, createOrder, partnerKey } from '../orders/orders.test-helpers.js';
import { sweepExpiredOffers } from './offers.service.js';
import { accept, decline, offerEventsOf, offeredOrder, offerRequest, withdraw } from './offers.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

const ROUNDS = 5;

/** The order's assignment events and its key now. */
async function assignmentsOf(code: string): Promise<{ events: number; keyId: string | null }> {
  const rows = await t.ctx.db.query<{ events: number; key_id: string | null }>(
    `SELECT (SELECT count(*)::int FROM outbox x WHERE x.order_id = o.id AND x.type = 'order.assigned_to_partner') AS events,
            o.assigned_key_id AS key_id
       FROM orders o WHERE o.code = $1`,
    [code],
  );
  return { events: rows[0].events, keyId: rows[0].key_id };
}

/** The offer's row status and its outcome events (everything after offer.created). */
async function outcomeOf(code: string, id: string): Promise<{ status: string; events: string[] }> {
  const rows = await t.ctx.db.query<{ status: string }>('SELECT status FROM offers WHERE id = $1', [id]);
  const events = (await offerEventsOf(t, code)).filter((e) => e.data.id === id && e.type !== 'offer.created');
  return { status: rows[0].status, events: events.map((e) => e.type) };
}

describe('one offer, several deciders at once', () => {
  it('accept, decline and withdraw: exactly one 200, the others 409 ERR_OFFER_CLOSED, one outcome recorded', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await partnerKey(t);
      const offer = await offeredOrder(t, admin, key.id);
      const answers = await Promise.all([
        accept(t, key, offer.id),
        decline(t, key, offer.id, { reason: 'NO_CAPACITY' }),
        withdraw(t, admin, offer.id),
        accept(t, key, offer.id),
      ]);
      const ok = answers.filter((a) => a.statusCode === 200);
      const statuses = new Set(ok.map((a) => a.json().status));
      expect(statuses.size, answers.map((a) => a.body).join('\n')).toBe(1);
      const [status] = statuses;
      // Two accepts may both answer 200 (the second finds the offer this key accepted); nothing else may.
      expect(ok.length).toBe(status === 'ACCEPTED' ? ok.length : 1);
      for (const a of answers.filter((x) => x.statusCode !== 200)) {
        expect(a.statusCode, a.body).toBe(409);
        expect(a.json()).toMatchObject({ code: 'ERR_OFFER_CLOSED', details: { status } });
        // A conflict that sending again would meet again: no Retry-After.
        expect(a.headers['retry-after']).toBeUndefined();
      }
      const outcome = await outcomeOf(offer.orderCode, offer.id);
      expect(outcome.status).toBe(status);
      expect(outcome.events).toEqual([`offer.${status === 'WITHDRAWN' ? 'withdrawn' : status.toLowerCase()}`]);
      const assigned = await assignmentsOf(offer.orderCode);
      expect(assigned).toEqual(status === 'ACCEPTED' ? { events: 1, keyId: key.id } : { events: 0, keyId: null });
    }
  });

  it('accept racing the order’s cancellation: the offer is either ACCEPTED or WITHDRAWN, never both', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await partnerKey(t);
      const offer = await offeredOrder(t, admin, key.id);
      const [accepted, cancelled] = await Promise.all([
        accept(t, key, offer.id),
        adminStatus(t, admin, offer.orderCode, 'CANCELLED'),
      ]);
      expect(cancelled.statusCode, cancelled.body).toBe(200);
      const outcome = await outcomeOf(offer.orderCode, offer.id);
      if (accepted.statusCode === 200) {
        expect(outcome).toEqual({ status: 'ACCEPTED', events: ['offer.accepted'] });
        expect((await assignmentsOf(offer.orderCode)).events).toBe(1);
      } else {
        expect(accepted.json()).toMatchObject({ code: 'ERR_OFFER_CLOSED', details: { status: 'WITHDRAWN' } });
        expect(outcome).toEqual({ status: 'WITHDRAWN', events: ['offer.withdrawn'] });
        expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 0, keyId: null });
      }
    }
  });

  it('two accepts and a bulk accept of the same offer: all answer it ACCEPTED, the order is assigned once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await partnerKey(t);
      const offer = await offeredOrder(t, admin, key.id);
      const [a, b, bulk] = await Promise.all([
        accept(t, key, offer.id),
        accept(t, key, offer.id),
        t.live.inject({ method: 'POST', url: '/v1/partner/offers/accept', headers: key.headers, payload: { ids: [offer.id] } }),
      ]);
      expect([a.statusCode, b.statusCode, bulk.statusCode]).toEqual([200, 200, 200]);
      expect(b.json()).toEqual(a.json());
      expect(bulk.json().results[0].offer).toEqual(a.json());
      expect(await outcomeOf(offer.orderCode, offer.id)).toEqual({ status: 'ACCEPTED', events: ['offer.accepted'] });
      expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 1, keyId: key.id });
    }
  });

  it('two keys’ accepts: only the offered key’s can win; the other’s is 404', async () => {
    const key = await partnerKey(t);
    const other = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const [mine, theirs] = await Promise.all([accept(t, key, offer.id), accept(t, other, offer.id)]);
    expect([mine.statusCode, theirs.statusCode]).toEqual([200, 404]);
  });

  it('expiry: decisions at the deadline lose to it, and sweeps at once record it once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await partnerKey(t);
      const offer = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
      t.clock.advance(60);
      const [accepted, declined, , , withdrawn] = await Promise.all([
        accept(t, key, offer.id),
        decline(t, key, offer.id, { reason: 'NO_CAPACITY' }),
        sweepExpiredOffers(t.ctx),
        sweepExpiredOffers(t.ctx),
        withdraw(t, admin, offer.id),
      ]);
      for (const a of [accepted, declined, withdrawn]) {
        expect(a.json()).toMatchObject({ code: 'ERR_OFFER_CLOSED', details: { status: 'EXPIRED' } });
      }
      await sweepExpiredOffers(t.ctx);
      expect(await outcomeOf(offer.orderCode, offer.id)).toEqual({ status: 'EXPIRED', events: ['offer.expired'] });
      expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 0, keyId: null });
    }
  });
});

describe('an offer and a direct assignment of one order', () => {
  it('offering and assigning at once: exactly one succeeds', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key = await partnerKey(t);
      const other = await partnerKey(t);
      const order = await createOrder(t, admin);
      const [offered, assigned] = await Promise.all([
        offerRequest(t, admin, order.code, { apiKeyId: key.id }),
        assignRequest(t, admin, order.code, other.id),
      ]);
      const winners = [offered.statusCode === 201, assigned.statusCode === 200].filter(Boolean);
      expect(winners.length, `${offered.body}\n${assigned.body}`).toBe(1);
      const won = offered.statusCode === 201 ? 'offer' : 'assignment';
      expect(won === 'offer' ? assigned.json().code : offered.json().code).toBe('ERR_CONFLICT');
      expect(await assignmentsOf(order.code)).toEqual(
        won === 'offer' ? { events: 0, keyId: null } : { events: 1, keyId: other.id },
      );
    }
  });

  it('an open offer and a direct assignment to another key: the assignment is refused, the accept wins', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const key: TestKey = await partnerKey(t);
      const other = await partnerKey(t);
      const offer = await offeredOrder(t, admin, key.id);
      const [assigned, accepted] = await Promise.all([
        assignRequest(t, admin, offer.orderCode, other.id),
        accept(t, key, offer.id),
      ]);
      expect(accepted.statusCode, accepted.body).toBe(200);
      // Either the assignment saw the open offer (409), or it came after the acceptance: then it is the
      // operator moving an assigned order, as ever; the offer's own assignment happened exactly once.
      if (assigned.statusCode === 409) expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 1, keyId: key.id });
      else expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 2, keyId: other.id });
    }
  });
});

describe('an offer and a rotation of its key', () => {
  it('the old key accepts or declines while its key is rotated: the decision holds; an accepted order ends on the successor', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const partner = await createPartner(t.ctx);
      const old = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
      const [taken, refused] = [await offeredOrder(t, admin, old.id), await offeredOrder(t, admin, old.id)];
      const [accepted, declined, rotated] = await Promise.all([
        accept(t, old, taken.id),
        decline(t, old, refused.id, { reason: 'OUT_OF_AREA' }),
        t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth }),
      ]);
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(declined.statusCode, declined.body).toBe(200);
      // Whichever came first, the accepted order is the successor's, assigned once.
      expect(await assignmentsOf(taken.orderCode)).toEqual({ events: 1, keyId: rotated.json().id });
      expect(await outcomeOf(taken.orderCode, taken.id)).toEqual({ status: 'ACCEPTED', events: ['offer.accepted'] });
      expect(await outcomeOf(refused.orderCode, refused.id)).toEqual({ status: 'DECLINED', events: ['offer.declined'] });
    }
  });

  it('a direct assignment to a key being rotated: refused (rotated out) or moved with its orders, never left on the old key', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const partner = await createPartner(t.ctx);
      const old = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
      const order = await createOrder(t, admin);
      const [assigned, rotated] = await Promise.all([
        assignRequest(t, admin, order.code, old.id),
        t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth }),
      ]);
      expect(rotated.statusCode, rotated.body).toBe(200);
      if (assigned.statusCode === 200) expect((await assignmentsOf(order.code)).keyId).toBe(rotated.json().id);
      else {
        expect(assigned.json().code, assigned.body).toBe('ERR_CONFLICT');
        expect(await assignmentsOf(order.code)).toEqual({ events: 0, keyId: null });
      }
    }
  });
});

// A transaction of the test stands for another process that takes the same two locks in the other order:
// the order first, then the decision's Idempotency-Key. PostgreSQL breaks the deadlock by rolling back
// the request (it waited first, so its check runs first); the partner gets 409 ERR_CONFLICT, nothing of
// the decision is applied, and the same request sent again goes through.
describe.skipIf(!process.env.DATABASE_URL)('a decision that deadlocks with another process', () => {
  it('answers 409 ERR_CONFLICT, applies nothing, and runs when sent again', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const other = await testTransaction(t);
    await other.query('SELECT 1 FROM orders WHERE code = $1 FOR UPDATE', [offer.orderCode]);
    const accepting = accept(t, key, offer.id, { 'idempotency-key': 'deadlock-1' });
    await waitForLockWaiters(t);
    const claiming = other.query(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, 'deadlock-1', 'another request', 200, '{}'::jsonb, now())`,
      [key.id],
    );
    const answer = await accepting;
    expect(answer.statusCode, answer.body).toBe(409);
    expect(answer.json()).toMatchObject({ code: 'ERR_CONFLICT' });
    expect(answer.json().message).toMatch(/not applied; send it again/);
    // What tells it from a conflict the same request would meet again (the SDK retries on it).
    expect(answer.headers['retry-after']).toBe('1');
    await claiming;
    await other.query('ROLLBACK');
    expect(await outcomeOf(offer.orderCode, offer.id)).toEqual({ status: 'PENDING', events: [] });
    expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 0, keyId: null });

    const again = await accept(t, key, offer.id, { 'idempotency-key': 'deadlock-1' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ id: offer.id, status: 'ACCEPTED' });
    expect(await assignmentsOf(offer.orderCode)).toEqual({ events: 1, keyId: key.id });
  });
});
