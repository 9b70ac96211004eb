/**
 * Races between two operations on one resource answer what running them one after the other would
 * (404 once it is gone, 409 where the contract says), never 500 (docs/decisions-log.md, 'Dependency faults'). Each pair is run
 * in both orders, forced deterministically, never by timing:
 *  - "A first": A is held at a chosen statement inside its transaction (test/gated-db.ts), so the locks
 *    it took stay held, then B is sent; on a server B is seen waiting for A's lock (pg_stat_activity)
 *    before A is let go. (The embedded database runs one transaction at a time: there B simply waits for
 *    the session.)
 *  - "B first": B's change is made, uncommitted, by a transaction of the test on its own connection
 *    (server only: the embedded database has one session), A is sent and seen waiting for that lock,
 *    then B commits; or B is simply done first through the API.
 */
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devAuth } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { requestHash } from '../src/shared/idempotency.js';
import { createKey, createPartner, type TestKey, type TestPartner } from './factories.js';
import { GatedDb } from './gated-db.js';
import { createTestApp, type TestApp } from './harness.js';
import { testTransaction, waitForLockWaiters } from './test-transaction.js';

const server = Boolean(process.env.DATABASE_URL);
if (!server) {
  console.info('test/races.test.ts: the orders forced by a test transaction holding a lock need DATABASE_URL (skipped here)');
}

let t: TestApp;
let gated: GatedDb;

beforeAll(async () => {
  t = await createTestApp({
    wrapDb: (db) => {
      gated = new GatedDb(db);
      return gated;
    },
  });
});
afterAll(() => t.close());

function send(options: InjectOptions, listener: 'live' | 'sandbox' = 'live') {
  return t[listener].inject(options);
}

async function setup(): Promise<{
  partner: TestPartner;
  key: TestKey;
  auth: { authorization: string };
  hookId: string;
  deliveryId: string;
}> {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id);
  const auth = await devAuth(t, partner);
  const created = await send({
    method: 'POST',
    url: '/v1/developer/webhooks',
    headers: auth,
    payload: { apiKeyId: key.id, url: 'https://example.com/hook', events: ['order.status_changed'] },
  });
  expect(created.statusCode, created.body).toBe(201);
  const hookId = created.json().id as string;
  const pinged = await send({ method: 'POST', url: `/v1/developer/webhooks/${hookId}/test`, headers: auth });
  expect(pinged.statusCode, pinged.body).toBe(200);
  return { partner, key, auth, hookId, deliveryId: pinged.json().id };
}

function expectNotFound(res: { statusCode: number; json: () => unknown }) {
  expect(res.statusCode).toBe(404);
  expect(res.json()).toMatchObject({ statusCode: 404, code: 'ERR_NOT_FOUND' });
}

describe("a webhook's DELETE racing", () => {
  const deleteOf = (s: { auth: object; hookId: string }) =>
    send({ method: 'DELETE', url: `/v1/developer/webhooks/${s.hookId}`, headers: s.auth as never });

  it('a test ping that has read the webhook: the delete waits, the ping is queued, then both are gone (200, 204)', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/INSERT INTO webhook_deliveries/);
    const ping = send({ method: 'POST', url: `/v1/developer/webhooks/${s.hookId}/test`, headers: s.auth });
    await held.reached;
    const deleted = deleteOf(s);
    await waitForLockWaiters(t);
    held.release();
    expect((await ping).statusCode).toBe(200);
    expect((await deleted).statusCode).toBe(204);
    expect(await t.ctx.db.query('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', [s.hookId])).toEqual([]);
  });

  it.skipIf(!server)('a test ping arriving while the delete is under way: 404 once it has committed', async () => {
    const s = await setup();
    const other = await testTransaction(t);
    await other.query('DELETE FROM webhooks WHERE id = $1', [s.hookId]);
    const ping = send({ method: 'POST', url: `/v1/developer/webhooks/${s.hookId}/test`, headers: s.auth });
    await waitForLockWaiters(t);
    await other.commit();
    expectNotFound(await ping);
  });

  it('a redelivery that has read the delivery: 404 if the delete got in between, never 500', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/UPDATE webhook_deliveries d SET/);
    const redeliver = send({ method: 'POST', url: `/v1/developer/deliveries/${s.deliveryId}/redeliver`, headers: s.auth });
    await held.reached;
    const deleted = deleteOf(s);
    // On a server the delete takes no lock the redelivery holds yet: it commits first. Embedded, it waits
    // for the one session, so the redelivery goes first.
    if (server) expect((await deleted).statusCode).toBe(204);
    held.release();
    const answer = await redeliver;
    if (server) expectNotFound(answer);
    else {
      expect(answer.statusCode).toBe(200);
      expect((await deleted).statusCode).toBe(204);
    }
  });

  it.skipIf(!server)('a redelivery holding the delivery row: the delete waits for it (200, 204)', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/pg_notify/);
    const redeliver = send({ method: 'POST', url: `/v1/developer/deliveries/${s.deliveryId}/redeliver`, headers: s.auth });
    await held.reached;
    const deleted = deleteOf(s);
    await waitForLockWaiters(t);
    held.release();
    expect((await redeliver).statusCode).toBe(200);
    expect((await deleted).statusCode).toBe(204);
  });

  it.skipIf(!server)('a redelivery arriving while the delete is under way: 404 once it has committed', async () => {
    const s = await setup();
    const other = await testTransaction(t);
    await other.query('DELETE FROM webhooks WHERE id = $1', [s.hookId]);
    const redeliver = send({ method: 'POST', url: `/v1/developer/deliveries/${s.deliveryId}/redeliver`, headers: s.auth });
    await waitForLockWaiters(t);
    await other.commit();
    expectNotFound(await redeliver);
  });

  it('a patch that has locked the webhook: the delete waits (200, 204)', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/UPDATE webhooks w SET/);
    const patch = send({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${s.hookId}`,
      headers: s.auth,
      payload: { isActive: false },
    });
    await held.reached;
    const deleted = deleteOf(s);
    await waitForLockWaiters(t);
    held.release();
    expect((await patch).statusCode).toBe(200);
    expect((await deleted).statusCode).toBe(204);
  });

  it.skipIf(!server)('a patch arriving while the delete is under way: 404 once it has committed', async () => {
    const s = await setup();
    const other = await testTransaction(t);
    await other.query('DELETE FROM webhooks WHERE id = $1', [s.hookId]);
    const patch = send({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${s.hookId}`,
      headers: s.auth,
      payload: { isActive: false },
    });
    await waitForLockWaiters(t);
    await other.commit();
    expectNotFound(await patch);
  });

  it('a deliveries list that has read the webhook: answers as of before the delete (its deliveries, not an empty page)', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/SELECT coalesce\(sum\(n\), 0\)::int AS total FROM webhook_delivery_counts/);
    const list = send({ method: 'GET', url: `/v1/developer/webhooks/${s.hookId}/deliveries`, headers: s.auth });
    await held.reached;
    const deleted = deleteOf(s);
    if (server) expect((await deleted).statusCode).toBe(204);
    held.release();
    const answer = await list;
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ total: 1, items: [{ id: s.deliveryId }] });
    expect((await deleted).statusCode).toBe(204);
  });

  it('a deliveries list after the delete: 404', async () => {
    const s = await setup();
    expect((await deleteOf(s)).statusCode).toBe(204);
    expectNotFound(await send({ method: 'GET', url: `/v1/developer/webhooks/${s.hookId}/deliveries`, headers: s.auth }));
  });
});

describe("a key's rotation racing its revocation", () => {
  it('rotation first (it holds the key): the revoke waits, then ends the grace at once (200, 200)', async () => {
    const s = await setup();
    const held = gated.pauseBefore(/UPDATE orders o SET assigned_key_id/);
    const rotate = send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
    await held.reached;
    const revoke = send({ method: 'DELETE', url: `/v1/developer/keys/${s.key.id}`, headers: s.auth });
    await waitForLockWaiters(t);
    held.release();
    const rotated = await rotate;
    expect(rotated.statusCode, rotated.body).toBe(200);
    const revoked = await revoke;
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().isActive).toBe(false);
    expect((await send({ method: 'GET', url: '/v1/partner/me', headers: s.key.headers })).statusCode).toBe(401);
    expect((await send({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': rotated.json().key } })).statusCode).toBe(
      200,
    );
  });

  it.skipIf(!server)('revocation first: the rotation waits, then answers 401 ERR_API_KEY_REVOKED', async () => {
    const s = await setup();
    const other = await testTransaction(t);
    await other.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [s.key.id]);
    const rotate = send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
    await waitForLockWaiters(t);
    await other.commit();
    const answer = await rotate;
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toMatchObject({ code: 'ERR_API_KEY_REVOKED' });
  });

  it('revocation done first through the API: the rotation answers 401 ERR_API_KEY_REVOKED', async () => {
    const s = await setup();
    expect((await send({ method: 'DELETE', url: `/v1/developer/keys/${s.key.id}`, headers: s.auth })).statusCode).toBe(200);
    const answer = await send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
    expect(answer.statusCode).toBe(401);
    expect(answer.json()).toMatchObject({ code: 'ERR_API_KEY_REVOKED' });
  });
});

describe('a partner event racing its key', () => {
  async function orderOf(key: TestKey): Promise<string> {
    const res = await send({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key.headers }, 'sandbox');
    expect(res.statusCode, res.body).toBe(201);
    return res.json().code;
  }

  async function sandboxSetup() {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const auth = await devAuth(t, partner);
    const code = await orderOf(key);
    // The key's record is cached: the event below is admitted without reading the database.
    expect((await send({ method: 'GET', url: '/v1/partner/me', headers: key.headers }, 'sandbox')).statusCode).toBe(200);
    return { partner, key, auth, code };
  }

  const event = (key: TestKey, code: string, idempotencyKey?: string) =>
    send(
      {
        method: 'POST',
        url: `/v1/partner/orders/${code}/events`,
        headers: { ...key.headers, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
        payload: { type: 'PICKED_UP' },
      },
      'sandbox',
    );

  for (const idempotent of [false, true]) {
    const how = idempotent ? 'with an Idempotency-Key' : 'without an Idempotency-Key';

    it(`${how}: the event first (it holds the order), the rotation waits and moves the order after (201, 200)`, async () => {
      const s = await sandboxSetup();
      const held = gated.pauseBefore(/^\s*WITH input AS/);
      const posted = event(s.key, s.code, idempotent ? 'race-1' : undefined);
      await held.reached;
      const rotate = send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
      await waitForLockWaiters(t);
      held.release();
      const answer = await posted;
      expect(answer.statusCode, answer.body).toBe(201);
      expect(answer.json()).toMatchObject({ code: s.code, status: 'SCANNED_TO_VAN' });
      const rotated = await rotate;
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.json().movedOrders).toBe(1);
    });

    it(`${how}: the rotation first (it has moved the order), the event with the old key acts for its successor (200, 201)`, async () => {
      const s = await sandboxSetup();
      const held = gated.pauseBefore(/UPDATE webhooks SET api_key_id/);
      const rotate = send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
      await held.reached;
      const posted = event(s.key, s.code, idempotent ? 'race-2' : undefined);
      await waitForLockWaiters(t);
      held.release();
      expect((await rotate).statusCode).toBe(200);
      const answer = await posted;
      expect(answer.statusCode, answer.body).toBe(201);
      expect(answer.json()).toMatchObject({ code: s.code, status: 'SCANNED_TO_VAN' });
    });

    it(`${how}: the event first (it holds the order), a revoke meanwhile answers and the event still counts (201, 200); the next event is refused`, async () => {
      const s = await sandboxSetup();
      const held = gated.pauseBefore(/^\s*WITH input AS/);
      const posted = event(s.key, s.code, idempotent ? 'race-3' : undefined);
      await held.reached;
      const revoking = send({ method: 'DELETE', url: `/v1/developer/keys/${s.key.id}`, headers: s.auth });
      // On a server the revoke takes no lock the event holds: it answers first. Embedded, it waits for
      // the one session, so it comes after the event anyway.
      if (server) expect((await revoking).statusCode).toBe(200);
      held.release();
      expect((await posted).statusCode).toBe(201);
      expect((await revoking).statusCode).toBe(200);
      const after = await event(s.key, s.code, idempotent ? 'race-3b' : undefined);
      expect(after.statusCode).toBe(401);
      expect(after.json()).toMatchObject({ code: 'ERR_API_KEY_REVOKED' });
    });

    it(`${how}: the revoke first: the event answers 401 ERR_API_KEY_REVOKED and changes nothing`, async () => {
      const s = await sandboxSetup();
      expect((await send({ method: 'DELETE', url: `/v1/developer/keys/${s.key.id}`, headers: s.auth })).statusCode).toBe(200);
      const answer = await event(s.key, s.code, idempotent ? 'race-4' : undefined);
      expect(answer.statusCode).toBe(401);
      expect(answer.json()).toMatchObject({ code: 'ERR_API_KEY_REVOKED' });
      const [order] = await t.ctx.db.query<{ status: string }>('SELECT status FROM orders WHERE code = $1', [s.code]);
      expect(order.status).toBe('PACKED');
    });
  }

  // A read by the old key whose record predates a rotation that commits while the read is on its way:
  // the rotation moved what it reads to the successor, which the old key in its grace still reads.
  it('the old key reads its order while the rotation commits (held at its read): 200 with the order, as before and after', async () => {
    const s = await sandboxSetup();
    const held = gated.pauseBefore(/^SELECT \$1::text AS c/);
    const read = send({ method: 'GET', url: `/v1/partner/orders/${s.code}`, headers: s.key.headers }, 'sandbox');
    await held.reached;
    const rotated = await send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().movedOrders).toBe(1);
    held.release();
    const answer = await read;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ code: s.code, status: 'PACKED' });
    const again = await send({ method: 'GET', url: `/v1/partner/orders/${s.code}`, headers: s.key.headers }, 'sandbox');
    expect(again.statusCode, again.body).toBe(200);
  });

  it('the old key reads its offer while the rotation commits (held at its read): 200 with the offer, now the successor’s', async () => {
    const s = await sandboxSetup();
    const made = await send(
      { method: 'POST', url: '/v1/partner/sandbox/offers', headers: s.key.headers, payload: { count: 1 } },
      'sandbox',
    );
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().items[0].id as string;
    const held = gated.pauseBefore(/FROM offers f JOIN orders o ON o.id = f.order_id\s+WHERE f.id = \$1/);
    const read = send({ method: 'GET', url: `/v1/partner/offers/${id}`, headers: s.key.headers }, 'sandbox');
    await held.reached;
    const rotated = await send({ method: 'POST', url: `/v1/developer/keys/${s.key.id}/rotate`, headers: s.auth });
    expect(rotated.statusCode, rotated.body).toBe(200);
    held.release();
    const answer = await read;
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toMatchObject({ id, status: 'PENDING', apiKeyId: rotated.json().id });
  });
});

// Events with an Idempotency-Key are written in groups that lock their orders, then claim their keys
// (src/modules/orders/partner-event-writer.ts). "The other process" is a transaction of the test doing
// what another process's group does with the same key: lock the order, claim the key, store an answer.
describe('an event with an Idempotency-Key racing the same key in another process', () => {
  async function setupKeyed() {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const made = await send({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key.headers }, 'sandbox');
    expect(made.statusCode, made.body).toBe(201);
    return { key, code: made.json().code as string };
  }

  const body = { type: 'PICKED_UP' };
  const post = (key: TestKey, code: string, idempotencyKey: string) =>
    send(
      {
        method: 'POST',
        url: `/v1/partner/orders/${code}/events`,
        headers: { ...key.headers, 'idempotency-key': idempotencyKey },
        payload: body,
      },
      'sandbox',
    );

  async function partnerEvents(code: string): Promise<number> {
    const rows = await t.ctx.db.query(
      `SELECT 1 FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 AND e.actor = 'PARTNER'`,
      [code],
    );
    return rows.length;
  }

  it.skipIf(!server)(
    'the same request, whose order the other holds: waits, then replays the answer the other stored (201)',
    async () => {
      const s = await setupKeyed();
      // The answer the other process stores: the order as the key reads it.
      const read = await send({ method: 'GET', url: `/v1/partner/orders/${s.code}`, headers: s.key.headers }, 'sandbox');
      const other = await testTransaction(t);
      await other.query('SELECT 1 FROM orders WHERE code = $1 FOR UPDATE', [s.code]);
      await other.query(
        `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, 'dup-same', $2, 201, $3::jsonb, now())`,
        [s.key.id, requestHash(`POST /v1/partner/orders/${s.code}/events`, body), read.body],
      );
      const posted = post(s.key, s.code, 'dup-same');
      await waitForLockWaiters(t);
      await other.commit();
      const answer = await posted;
      expect(answer.statusCode, answer.body).toBe(201);
      expect(answer.headers['idempotent-replayed']).toBe('true');
      expect(answer.json()).toEqual(read.json());
      expect(await partnerEvents(s.code)).toBe(0);
    },
  );

  for (const ending of ['commit', 'roll back'] as const) {
    it.skipIf(!server)(
      `another request under the key, claimed by the other (${ending}): waits on the key, then ${ending === 'commit' ? '409 ERR_IDEMPOTENCY_CONFLICT, nothing written' : 'runs itself (201)'}`,
      async () => {
        const s = await setupKeyed();
        const other = await testTransaction(t);
        await other.query(
          `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
         VALUES ($1, 'dup-other', 'another request', 201, '{}'::jsonb, now())`,
          [s.key.id],
        );
        const posted = post(s.key, s.code, 'dup-other');
        await waitForLockWaiters(t);
        if (ending === 'commit') await other.commit();
        else await other.query('ROLLBACK');
        const answer = await posted;
        if (ending === 'commit') {
          expect(answer.statusCode, answer.body).toBe(409);
          expect(answer.json()).toMatchObject({ code: 'ERR_IDEMPOTENCY_CONFLICT' });
          expect(await partnerEvents(s.code)).toBe(0);
        } else {
          expect(answer.statusCode, answer.body).toBe(201);
          expect(answer.headers['idempotent-replayed']).toBeUndefined();
          expect(await partnerEvents(s.code)).toBe(1);
        }
      },
    );
  }
});
