import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { AppError } from '../../errors.js';
import { isStorableError, purgeExpiredIdempotencyKeys } from '../../shared/idempotency.js';
import { type Auth, adminStatus, orderFor, outboxOf } from './orders.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

async function key(): Promise<TestKey> {
  const partner = await createPartner(t.ctx);
  return createKey(t.ctx, partner.id, { environment: 'LIVE' });
}

function send(k: TestKey, code: string, body: unknown, idempotencyKey?: string) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: { ...k.headers, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
    payload: body as never,
  });
}

async function partnerEventCount(code: string): Promise<number> {
  const rows = await t.ctx.db.query(
    `SELECT 1 FROM order_events e JOIN orders o ON o.id = e.order_id WHERE o.code = $1 AND e.actor = 'PARTNER'`,
    [code],
  );
  return rows.length;
}

describe('Idempotency-Key on POST /v1/partner/orders/{code}/events', () => {
  it('replays the first answer for the same key and body, applying the event once', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    const first = await send(k, code, { type: 'PICKED_UP', note: 'from the hub' }, 'evt-1');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const outboxAfterFirst = (await outboxOf(t, code)).length;
    t.clock.advance(60);
    // Same body with its keys in another order is the same request.
    const again = await send(k, code, { note: 'from the hub', type: 'PICKED_UP' }, 'evt-1');
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await partnerEventCount(code)).toBe(1);
    expect(await outboxOf(t, code)).toHaveLength(outboxAfterFirst);
    // Without the key the same event is a new request, refused by the state machine.
    expectError(await send(k, code, { type: 'PICKED_UP', note: 'from the hub' }), 409, 'ERR_INVALID_TRANSITION');
  });

  it('answers 409 ERR_IDEMPOTENCY_CONFLICT for the same key with another body or another order', async () => {
    const k = await key();
    const a = await orderFor(t, admin, k.id, 'PACKED');
    const b = await orderFor(t, admin, k.id, 'PACKED');
    expect((await send(k, a, { type: 'PICKED_UP' }, 'evt-2')).statusCode).toBe(201);
    expectError(await send(k, a, { type: 'EN_ROUTE' }, 'evt-2'), 409, 'ERR_IDEMPOTENCY_CONFLICT');
    expectError(await send(k, a, { type: 'PICKED_UP', note: 'x' }, 'evt-2'), 409, 'ERR_IDEMPOTENCY_CONFLICT');
    expectError(await send(k, b, { type: 'PICKED_UP' }, 'evt-2'), 409, 'ERR_IDEMPOTENCY_CONFLICT');
    expect(await partnerEventCount(b)).toBe(0);
  });

  it('scopes keys per API key', async () => {
    const k1 = await key();
    const k2 = await key();
    const a = await orderFor(t, admin, k1.id, 'PACKED');
    const b = await orderFor(t, admin, k2.id, 'PACKED');
    expect((await send(k1, a, { type: 'PICKED_UP' }, 'shared')).statusCode).toBe(201);
    const other = await send(k2, b, { type: 'PICKED_UP' }, 'shared');
    expect(other.statusCode).toBe(201);
    expect(other.json().code).toBe(b);
  });

  it('replays a stored 4xx answer, even once the request would now succeed', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'AT_HUB');
    const first = await send(k, code, { type: 'PICKED_UP' }, 'evt-3');
    expectError(first, 409, 'ERR_INVALID_TRANSITION');
    expect((await adminStatus(t, admin, code, 'PACKED')).statusCode).toBe(200);
    const again = await send(k, code, { type: 'PICKED_UP' }, 'evt-3');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The refused attempt left nothing behind but its answer.
    expect(await partnerEventCount(code)).toBe(0);
    expect((await send(k, code, { type: 'PICKED_UP' }, 'evt-3b')).statusCode).toBe(201);
  });

  it('stores nothing for a request refused by the body rules, so the key can be used with a fixed body', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'EN_ROUTE');
    const bad = await send(k, code, { type: 'FAILED' }, 'evt-4');
    expectError(bad, 400, 'ERR_VALIDATION');
    const schemaBad = await send(k, code, { type: 'FAILED', failReason: 'LOST' }, 'evt-4');
    expectError(schemaBad, 400, 'ERR_VALIDATION');
    const fixed = await send(k, code, { type: 'FAILED', failReason: 'NOT_HOME' }, 'evt-4');
    expect(fixed.statusCode).toBe(201);
    expect(fixed.json().status).toBe('FAILED');
  });

  it('forgets a key after 24 h', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    const other = await orderFor(t, admin, k.id, 'PACKED');
    expect((await send(k, code, { type: 'PICKED_UP' }, 'evt-5')).statusCode).toBe(201);
    expect((await send(k, other, { type: 'PICKED_UP' }, 'evt-5b')).statusCode).toBe(201);
    t.clock.advance(23 * 3600);
    const replay = await send(k, code, { type: 'PICKED_UP' }, 'evt-5');
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    t.clock.advance(3600 + 1);
    // Past 24 h the same request runs again (and the order has moved on meanwhile) …
    const late = await send(k, code, { type: 'PICKED_UP' }, 'evt-5');
    expectError(late, 409, 'ERR_INVALID_TRANSITION');
    expect(late.headers['idempotent-replayed']).toBeUndefined();
    // … and an expired key may carry a different request.
    const reused = await send(k, other, { type: 'EN_ROUTE' }, 'evt-5b');
    expect(reused.statusCode).toBe(201);
    expect(reused.json().status).toBe('EN_ROUTE');
  });

  it('makes concurrent duplicates safe: one applies, the others replay its answer', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    const results = await Promise.all(Array.from({ length: 6 }, () => send(k, code, { type: 'PICKED_UP' }, 'evt-6')));
    for (const res of results) {
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual(results[0].json());
    }
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    expect(await partnerEventCount(code)).toBe(1);
  });

  it.each([
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a control character', 'abc\u0001def'],
    ['non-ASCII', 'ключ'],
  ])('refuses a key %s with 400 ERR_VALIDATION', async (_name, value) => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/events`,
      headers: { ...k.headers, 'idempotency-key': value },
      payload: { type: 'PICKED_UP' },
    });
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details[0].field).toBe('idempotency-key');
    expect(await partnerEventCount(code)).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    expect((await send(k, code, { type: 'PICKED_UP' }, `${'a'.repeat(250)} ~!@#`)).statusCode).toBe(201);
  });
});

describe('Idempotency-Key in the group commit', () => {
  /** The transactions that wrote these orders' latest events and these keys' rows (rows of one transaction share xmin). */
  async function writers(codes: string[], k: TestKey, keys: string[]): Promise<number> {
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      `SELECT count(DISTINCT x)::int AS n FROM (
         SELECT e.xmin::text AS x FROM orders o JOIN order_events e ON e.id = o.pv_last_event WHERE o.code = ANY($1::text[])
         UNION ALL
         SELECT xmin::text FROM idempotency_keys WHERE api_key_id = $2 AND key = ANY($3::text[])) w`,
      [codes, k.id, keys],
    );
    return n;
  }

  async function stored(k: TestKey, idempotencyKey: string) {
    const [row] = await t.ctx.db.query<{ status_code: number; response: unknown }>(
      'SELECT status_code, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
      [k.id, idempotencyKey],
    );
    return row;
  }

  it('writes events with keys and without in one transaction, each key storing its own answer with the change', async () => {
    const k = await key();
    const stranger = await key();
    const keyed = await Promise.all([1, 2, 3].map(() => orderFor(t, admin, k.id, 'PACKED')));
    const plain = await orderFor(t, admin, k.id, 'PACKED');
    const atHub = await orderFor(t, admin, k.id, 'AT_HUB');
    const foreign = await orderFor(t, admin, stranger.id, 'PACKED');
    const answers = await Promise.all([
      ...keyed.map((code, i) => send(k, code, { type: 'PICKED_UP' }, `group-${i}`)),
      send(k, plain, { type: 'PICKED_UP' }),
      send(k, atHub, { type: 'PICKED_UP' }, 'group-refused'),
      send(k, foreign, { type: 'PICKED_UP' }, 'group-foreign'),
    ]);
    for (const [i, code] of keyed.entries()) {
      expect(answers[i].statusCode, answers[i].body).toBe(201);
      expect(answers[i].json()).toMatchObject({ code, status: 'SCANNED_TO_VAN' });
      expect(answers[i].headers['idempotent-replayed']).toBeUndefined();
      expect(await stored(k, `group-${i}`)).toEqual({ status_code: 201, response: answers[i].json() });
    }
    expect(answers[3].statusCode).toBe(201);
    expectError(answers[4], 409, 'ERR_INVALID_TRANSITION');
    expectError(answers[5], 404, 'ERR_NOT_FOUND');
    expect((await stored(k, 'group-refused')).status_code).toBe(409);
    expect((await stored(k, 'group-foreign')).status_code).toBe(404);
    // The accepted events, their keys' answers and the refusals' answers: one transaction.
    expect(await writers([...keyed, plain], k, ['group-0', 'group-1', 'group-2', 'group-refused', 'group-foreign'])).toBe(1);

    // Every key replays its answer, in a group of its own or beside a new event.
    const fresh = await orderFor(t, admin, k.id, 'PACKED');
    const again = await Promise.all([
      ...keyed.map((code, i) => send(k, code, { type: 'PICKED_UP' }, `group-${i}`)),
      send(k, atHub, { type: 'PICKED_UP' }, 'group-refused'),
      send(k, fresh, { type: 'PICKED_UP' }, 'group-fresh'),
    ]);
    for (const [i, res] of again.slice(0, 3).entries()) {
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual(answers[i].json());
      expect(res.headers['idempotent-replayed']).toBe('true');
    }
    expect(again[3].statusCode).toBe(409);
    expect(again[3].json()).toEqual(answers[4].json());
    expect(again[3].headers['idempotent-replayed']).toBe('true');
    expect(again[4].statusCode).toBe(201);
    expect(again[4].headers['idempotent-replayed']).toBeUndefined();
    for (const code of keyed) expect(await partnerEventCount(code)).toBe(1);
  });

  it("stores each key's answer as that key sees the order: with the customer under orders:pii, without it otherwise", async () => {
    const partner = await createPartner(t.ctx);
    const pii = await createKey(t.ctx, partner.id, { environment: 'LIVE' });
    const plain = await createKey(t.ctx, partner.id, {
      environment: 'LIVE',
      scopes: ['orders:read', 'logistics:write'],
    });
    const [a, b] = await Promise.all([orderFor(t, admin, pii.id, 'PACKED'), orderFor(t, admin, plain.id, 'PACKED')]);
    // One group: both events arrive in the same turn.
    const answers = await Promise.all([
      send(pii, a, { type: 'PICKED_UP' }, 'seen-by-pii'),
      send(plain, b, { type: 'PICKED_UP' }, 'seen-without-pii'),
    ]);
    for (const res of answers) expect(res.statusCode, res.body).toBe(201);
    expect(answers[0].json().customer).not.toBeNull();
    expect(answers[1].json().customer).toBeNull();
    expect(await stored(pii, 'seen-by-pii')).toEqual({ status_code: 201, response: answers[0].json() });
    expect(await stored(plain, 'seen-without-pii')).toEqual({ status_code: 201, response: answers[1].json() });
    // The same order the key reads now (nothing changed it since).
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${b}`, headers: plain.headers });
    expect(answers[1].json()).toEqual(read.json());
    const again = await send(plain, b, { type: 'PICKED_UP' }, 'seen-without-pii');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(answers[1].json());
  });

  it('of one key sent for two orders at once, the first applies and the other is refused with 409 ERR_IDEMPOTENCY_CONFLICT', async () => {
    const k = await key();
    const a = await orderFor(t, admin, k.id, 'PACKED');
    const b = await orderFor(t, admin, k.id, 'PACKED');
    const [first, second] = await Promise.all([
      send(k, a, { type: 'PICKED_UP' }, 'twice'),
      send(k, b, { type: 'PICKED_UP' }, 'twice'),
    ]);
    expect(first.statusCode, first.body).toBe(201);
    expectError(second, 409, 'ERR_IDEMPOTENCY_CONFLICT');
    expect(await partnerEventCount(a)).toBe(1);
    expect(await partnerEventCount(b)).toBe(0);
  });

  it('stores nothing for an event of a group the database failed: tried again alone, its key is free for a retry', async () => {
    const k = await key();
    const codes = await Promise.all([1, 2].map(() => orderFor(t, admin, k.id, 'PACKED')));
    // A database error for one event only (a trigger refusing one note), which the rules cannot foresee.
    await t.ctx.db.query(`CREATE FUNCTION test_refuse_keyed_note() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.partner_note = 'refused by the database' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
    await t.ctx.db.query(
      'CREATE TRIGGER test_refuse_keyed_note BEFORE INSERT ON order_events FOR EACH ROW EXECUTE FUNCTION test_refuse_keyed_note()',
    );
    const refusedBody = { type: 'PICKED_UP', note: 'refused by the database' };
    try {
      const answers = await Promise.all([
        send(k, codes[0], { type: 'PICKED_UP' }, 'failed-group-0'),
        send(k, codes[1], refusedBody, 'failed-group-1'),
      ]);
      expect(answers[0].statusCode, answers[0].body).toBe(201);
      expectError(answers[1], 500, 'ERR_INTERNAL');
      expect((await stored(k, 'failed-group-0')).status_code).toBe(201);
      expect(await stored(k, 'failed-group-1')).toBeUndefined();
    } finally {
      await t.ctx.db.query('DROP TRIGGER test_refuse_keyed_note ON order_events');
      await t.ctx.db.query('DROP FUNCTION test_refuse_keyed_note()');
    }
    // The same request with the same key now runs (a 5xx is never stored).
    const retried = await send(k, codes[1], refusedBody, 'failed-group-1');
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('purgeExpiredIdempotencyKeys', () => {
  it('deletes the rows older than 24 h and answers how many', async () => {
    const k = await key();
    const code = await orderFor(t, admin, k.id, 'PACKED');
    await send(k, code, { type: 'PICKED_UP' }, 'old-1');
    await send(k, code, { type: 'EN_ROUTE' }, 'old-2');
    t.clock.advance(24 * 3600 + 1);
    await send(k, code, { type: 'DELIVERED' }, 'new-1');
    const rows = async () =>
      (await t.ctx.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE api_key_id = $1 ORDER BY key', [k.id])).map(
        (r) => r.key,
      );
    expect(await rows()).toEqual(['new-1', 'old-1', 'old-2']);
    expect(await purgeExpiredIdempotencyKeys(t.clock.now(), t.ctx.db)).toBeGreaterThanOrEqual(2);
    expect(await rows()).toEqual(['new-1']);
    expect(await purgeExpiredIdempotencyKeys(t.clock.nowMs(), t.ctx.db)).toBe(0);
  });

  it('never stores 5xx or 429 answers', () => {
    expect(isStorableError(new AppError('ERR_INTERNAL', 'x'))).toBe(false);
    expect(isStorableError(new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'x'))).toBe(false);
    expect(isStorableError(new AppError('ERR_RATE_LIMITED', 'x'))).toBe(false);
    expect(isStorableError(new AppError('ERR_INVALID_TRANSITION', 'x'))).toBe(true);
  });
});
