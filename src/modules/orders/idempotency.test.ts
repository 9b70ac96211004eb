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
