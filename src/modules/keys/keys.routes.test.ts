import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuthContract } from '../../../test/contracts.js';
import { expectPlainError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';
import { signAccessToken } from '../auth/tokens.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectValidation(res: { statusCode: number; json(): { details?: Array<{ field: string }> } }, field: string) {
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect(body).toMatchObject({ statusCode: 400, code: 'ERR_VALIDATION', message: expect.any(String) });
  expect(body.details?.map((d) => d.field)).toContain(field);
}

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A bearer header signed now (access tokens last 15 minutes; some tests move the clock by a day). */
async function authNow(partner: TestPartner) {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, {
    userId: partner.userId,
    role: 'PARTNER',
    partnerId: partner.id,
  });
  return { authorization: `Bearer ${token}` };
}

const createBody = { name: 'Dispatch integration', environment: 'LIVE', scopes: ['orders:read', 'logistics:write'] };

async function createViaApi(partner: TestPartner, body: Record<string, unknown> = createBody) {
  const res = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** An order row assigned to `keyId` (the orders domain is built elsewhere; only assignment matters here). */
async function insertOrder(keyId: string) {
  const now = t.clock.now();
  const id = newId();
  await t.ctx.db.query(
    `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik,
       assigned_key_id, partner_assigned_at, created_at, updated_at)
     VALUES ($1, $2, 'LIVE', 'PACKED', 'CARD', 'PAID', 1000, 0, $3, $4, $4, $4)`,
    [id, `ORD-${id.slice(0, 8)}`, keyId, now],
  );
  return id;
}

async function insertWebhook(partnerId: string, keyId: string) {
  const now = t.clock.now();
  const id = newId();
  await t.ctx.db.query(
    `INSERT INTO webhooks (id, partner_id, api_key_id, url, events, secret_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, 'https://example.com/hook', ARRAY['order.placed'], $4, $5, $5)`,
    [id, partnerId, keyId, t.ctx.secrets.encrypt('whsec_test'), now],
  );
  return id;
}

describe('GET /v1/developer/keys', () => {
  bearerAuthContract(() => t, { method: 'GET', url: '/v1/developer/keys', role: 'PARTNER' });

  it("lists the partner's keys newest first, with the prefix only, revoked keys included", async () => {
    const partner = await createPartner(t.ctx);
    const first = await createViaApi(partner, { ...createBody, name: 'first' });
    t.clock.advance(1);
    const second = await createViaApi(partner, { ...createBody, name: 'second', environment: 'SANDBOX' });
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${first.id}`, headers: partner.auth });
    const other = await createPartner(t.ctx);
    await createViaApi(other);

    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items.map((k: { id: string }) => k.id)).toEqual([second.id, first.id]);
    const { key: _secret, ...listed } = second;
    expect(items[0]).toEqual(listed);
    expect(items[1]).toMatchObject({ id: first.id, isActive: false, revokedAt: expect.stringMatching(ISO) });
    for (const k of items) expect(Object.keys(k)).not.toContain('key');
    expect(JSON.stringify(res.json())).not.toContain(second.key);
  });

  it('answers an empty list for a partner without keys', async () => {
    const partner = await createPartner(t.ctx);
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ items: [] });
  });
});

describe('POST /v1/developer/keys', () => {
  bearerAuthContract(() => t, { method: 'POST', url: '/v1/developer/keys', body: createBody, role: 'PARTNER' });

  it('creates a key, shows it once and stores only its SHA-256 and prefix', async () => {
    const partner = await createPartner(t.ctx);
    const res = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: createBody });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Dispatch integration',
      prefix: expect.stringMatching(/^svc_live_[0-9A-Za-z]{6}$/),
      environment: 'LIVE',
      scopes: ['orders:read', 'logistics:write'],
      rateLimit: 600,
      receivesAllOrders: false,
      isActive: true,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: expect.stringMatching(ISO),
      key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{32}$/),
    });
    expect(Math.abs(Date.parse(created.createdAt) - t.clock.nowMs())).toBeLessThan(5_000);
  });

  it('keeps the hash, never the key, and the key works on its own environment', async () => {
    const partner = await createPartner(t.ctx);
    const created = await createViaApi(partner, { ...createBody, environment: 'SANDBOX', scopes: ['orders:read'] });
    expect(created.key).toMatch(/^svc_sandbox_[0-9A-Za-z]{32}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    const rows = await t.ctx.db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [created.id]);
    expect(rows[0].key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(created.key);
    const me = await t.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': created.key } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ keyName: 'Dispatch integration', environment: 'sandbox', scopes: ['orders:read'] });
  });

  it('answers ERR_VALIDATION naming the field for bad names, environments and scopes', async () => {
    const partner = await createPartner(t.ctx);
    const post = (payload: unknown) =>
      t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: payload as object });
    expectValidation(await post({ ...createBody, name: 'x' }), 'name');
    expectValidation(await post({ ...createBody, name: 'x'.repeat(61) }), 'name');
    expectValidation(await post({ ...createBody, name: 42 }), 'name');
    expectValidation(await post({ environment: 'LIVE', scopes: ['orders:read'] }), 'name');
    expectValidation(await post({ ...createBody, environment: 'live' }), 'environment');
    expectValidation(await post({ ...createBody, scopes: [] }), 'scopes');
    expectValidation(await post({ ...createBody, scopes: ['orders:read', 'orders:read'] }), 'scopes');
    expectValidation(await post({ ...createBody, scopes: ['orders:write'] }), 'scopes.0');
    expectValidation(await post({ name: 'ok', environment: 'LIVE' }), 'scopes');
    expectValidation(await post({ ...createBody, rateLimit: 10 }), 'rateLimit');
    // The bounds themselves are accepted.
    expect((await post({ ...createBody, name: 'ab' })).statusCode).toBe(201);
    expect((await post({ ...createBody, name: 'y'.repeat(60) })).statusCode).toBe(201);
  });

  it('allows 10 active keys per partner (409 ERR_API_KEY_LIMIT), counting neither revoked nor rotated-out keys', async () => {
    const partner = await createPartner(t.ctx);
    const keys = [];
    for (let i = 0; i < 10; i++) keys.push(await createViaApi(partner, { ...createBody, name: `key ${i}` }));
    const over = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: createBody });
    expectPlainError(over, 409, 'ERR_API_KEY_LIMIT');

    // Rotation is always allowed, and leaves 10 active keys.
    const rotated = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/keys/${keys[0].id}/rotate`,
      headers: partner.auth,
    });
    expect(rotated.statusCode).toBe(200);
    expectPlainError(
      await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: createBody }),
      409,
      'ERR_API_KEY_LIMIT',
    );

    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${keys[1].id}`, headers: partner.auth });
    await createViaApi(partner);
    // Another partner has its own allowance.
    await createViaApi(await createPartner(t.ctx));
  });

  it('refuses concurrent creations past the limit', async () => {
    const partner = await createPartner(t.ctx);
    for (let i = 0; i < 8; i++) await createViaApi(partner);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: createBody }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 201, 409, 409]);
    const rows = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM api_keys WHERE partner_id = $1 AND revoked_at IS NULL',
      [partner.id],
    );
    expect(rows[0].n).toBe(10);
  });
});

describe('DELETE /v1/developer/keys/{id}', () => {
  bearerAuthContract(() => t, { method: 'DELETE', url: `/v1/developer/keys/${newId()}`, role: 'PARTNER' });

  it('revokes at once (revokedAt = now, isActive false); revoking again answers the key unchanged', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createViaApi(partner);
    const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const revoked = res.json();
    const { key: _secret, ...listed } = key;
    expect(revoked).toEqual({ ...listed, isActive: false, revokedAt: expect.stringMatching(ISO) });
    expect(Math.abs(Date.parse(revoked.revokedAt) - t.clock.nowMs())).toBeLessThan(5_000);

    t.clock.advance(30);
    const again = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(revoked);
  });

  it("answers the same key twice after use: lastUsedAt is current at once and a revoked key's refusals leave it", async () => {
    const partner = await createPartner(t.ctx);
    const key = await createViaApi(partner);
    // Used a second ago, not flushed yet: the revoke's answer still shows it.
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': key.key } })).statusCode).toBe(
      200,
    );
    const usedAt = t.clock.nowMs();
    t.clock.advance(1);
    const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const revoked = res.json();
    expect(revoked.lastUsedAt).toMatch(ISO);
    expect(Math.abs(Date.parse(revoked.lastUsedAt) - usedAt)).toBeLessThan(1_000);

    // Refused requests still count as usage, but are not uses of the key.
    t.clock.advance(5);
    for (const app of [t.live, t.sandbox]) {
      expectPlainError(
        await app.inject({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': key.key } }),
        401,
        'ERR_API_KEY_REVOKED',
      );
    }
    t.clock.advance(5);
    const again = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(revoked);
    const usage = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=1`, headers: partner.auth });
    expect(usage.json().items[0]).toMatchObject({ requests: 3, clientErrors: 2, serverErrors: 0 });
  });

  it('takes no body: an unknown field is 400 ERR_VALIDATION naming it, and the key stays as it was', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createViaApi(partner);
    expectValidation(
      await t.live.inject({
        method: 'DELETE',
        url: `/v1/developer/keys/${key.id}`,
        headers: partner.auth,
        payload: { reason: 'lost' },
      }),
      'reason',
    );
    const listed = await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: partner.auth });
    expect(listed.json().items.find((k: { id: string }) => k.id === key.id)).toMatchObject({ revokedAt: null, isActive: true });
  });

  it('ends the grace period of a rotated-out key now', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id);
    const rotated = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(Date.parse(rotated.json().previousKeyRevokedAt)).toBeGreaterThan(t.clock.nowMs());
    const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${old.id}`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json().isActive).toBe(false);
    expect(Date.parse(res.json().revokedAt)).toBeLessThanOrEqual(t.clock.nowMs());
    expectPlainError(
      await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: old.headers }),
      401,
      'ERR_API_KEY_REVOKED',
    );
    // The successor is untouched.
    const successor = rotated.json();
    expect(
      (await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': successor.key } })).statusCode,
    ).toBe(200);
  });
});

describe('POST /v1/developer/keys/{id}/rotate', () => {
  bearerAuthContract(() => t, { method: 'POST', url: `/v1/developer/keys/${newId()}/rotate`, role: 'PARTNER' });

  it('creates a successor with the same settings and moves orders and webhooks in one go', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, {
      name: 'Courier app',
      scopes: ['orders:read', 'webhooks:manage'],
      rateLimit: 1234,
      receivesAllOrders: true,
    });
    const orders = [await insertOrder(old.id), await insertOrder(old.id), await insertOrder(old.id)];
    const webhooks = [await insertWebhook(partner.id, old.id), await insertWebhook(partner.id, old.id)];
    const sibling = await createKey(t.ctx, partner.id);
    const untouchedOrder = await insertOrder(sibling.id);
    const untouchedWebhook = await insertWebhook(partner.id, sibling.id);

    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const now = t.clock.nowMs();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Courier app',
      prefix: expect.stringMatching(/^svc_live_[0-9A-Za-z]{6}$/),
      environment: 'LIVE',
      scopes: ['orders:read', 'webhooks:manage'],
      rateLimit: 1234,
      receivesAllOrders: true,
      isActive: true,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: expect.stringMatching(ISO),
      key: expect.stringMatching(/^svc_live_[0-9A-Za-z]{32}$/),
      previousKeyId: old.id,
      previousKeyRevokedAt: expect.stringMatching(ISO),
      movedOrders: 3,
      movedWebhooks: 2,
    });
    expect(body.id).not.toBe(old.id);
    expect(body.key).not.toBe(old.key);
    const grace = Date.parse(body.previousKeyRevokedAt) - now;
    expect(grace).toBeGreaterThan(24 * 3600_000 - 5_000);
    expect(grace).toBeLessThanOrEqual(24 * 3600_000);

    const orderKeys = await t.ctx.db.query<{ id: string; assigned_key_id: string }>(
      'SELECT id, assigned_key_id FROM orders WHERE id = ANY($1::uuid[])',
      [[...orders, untouchedOrder]],
    );
    for (const row of orderKeys) expect(row.assigned_key_id).toBe(row.id === untouchedOrder ? sibling.id : body.id);
    const hookKeys = await t.ctx.db.query<{ id: string; api_key_id: string }>(
      'SELECT id, api_key_id FROM webhooks WHERE id = ANY($1::uuid[])',
      [[...webhooks, untouchedWebhook]],
    );
    for (const row of hookKeys) expect(row.api_key_id).toBe(row.id === untouchedWebhook ? sibling.id : body.id);

    // The old key is listed as still active during its grace, with revokedAt 24 h ahead.
    const list = (await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: partner.auth })).json();
    expect(list.items.find((k: { id: string }) => k.id === old.id)).toMatchObject({
      isActive: true,
      revokedAt: body.previousKeyRevokedAt,
    });
  });

  it('answers 401 ERR_API_KEY_REVOKED for a key already rotated or revoked', async () => {
    const partner = await createPartner(t.ctx);
    const rotated = await createKey(t.ctx, partner.id);
    expect(
      (await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${rotated.id}/rotate`, headers: partner.auth })).statusCode,
    ).toBe(200);
    expectPlainError(
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${rotated.id}/rotate`, headers: partner.auth }),
      401,
      'ERR_API_KEY_REVOKED',
    );
    const revoked = await createKey(t.ctx, partner.id);
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${revoked.id}`, headers: partner.auth });
    expectPlainError(
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${revoked.id}/rotate`, headers: partner.auth }),
      401,
      'ERR_API_KEY_REVOKED',
    );
  });

  it('takes no body: {} rotates, an unknown field is 400 ERR_VALIDATION naming it', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    expectValidation(
      await t.live.inject({
        method: 'POST',
        url: `/v1/developer/keys/${key.id}/rotate`,
        headers: partner.auth,
        payload: { name: 'x' },
      }),
      'name',
    );
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/keys/${key.id}/rotate`,
      headers: partner.auth,
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ previousKeyId: key.id, key: expect.stringMatching(/^svc_live_/) });
  });

  it('lets only one of two concurrent rotations of a key win', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const results = await Promise.all(
      [1, 2].map(() => t.live.inject({ method: 'POST', url: `/v1/developer/keys/${key.id}/rotate`, headers: partner.auth })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401]);
    const successors = await t.ctx.db.query('SELECT id FROM api_keys WHERE partner_id = $1', [partner.id]);
    expect(successors).toHaveLength(2);
  });

  it('shows the old key inactive once the grace period has passed', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    // The successor must be newer than the key (the frozen test clock would give both one createdAt,
    // and the list's tie-break by id is random).
    t.clock.advance(1);
    await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${key.id}/rotate`, headers: partner.auth });
    t.clock.advance(24 * 3600);
    const list = (await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: await authNow(partner) })).json();
    expect(list.items.map((k: { id: string; isActive: boolean }) => [k.id === key.id, k.isActive])).toEqual([
      [false, true],
      [true, false],
    ]);
  });
});

describe('GET /v1/developer/keys/{id}/usage', () => {
  bearerAuthContract(() => t, { method: 'GET', url: `/v1/developer/keys/${newId()}/usage`, role: 'PARTNER' });

  it('answers 7 zero-filled UTC days ending today by default', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const res = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const now = t.clock.nowMs();
    expect(res.json()).toEqual({
      apiKeyId: key.id,
      days: 7,
      items: [6, 5, 4, 3, 2, 1, 0].map((ago) => ({
        day: utcDay(now - ago * DAY_MS),
        requests: 0,
        clientErrors: 0,
        serverErrors: 0,
      })),
      totalRequests: 0,
    });
  });

  it('merges stored days with requests not yet flushed, oldest first, up to 35 days', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const now = t.clock.nowMs();
    for (const [ago, requests] of [
      [34, 5],
      [35, 99],
      [2, 7],
    ] as const) {
      await t.ctx.db.query(
        'INSERT INTO api_key_usage (api_key_id, day, requests, client_errors, server_errors) VALUES ($1, $2, $3, 1, 1)',
        [key.id, utcDay(now - ago * DAY_MS), requests],
      );
    }
    await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    const res = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=35`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.days).toBe(35);
    expect(body.items).toHaveLength(35);
    expect(body.items[0]).toEqual({ day: utcDay(now - 34 * DAY_MS), requests: 5, clientErrors: 1, serverErrors: 1 });
    expect(body.items[32]).toEqual({ day: utcDay(now - 2 * DAY_MS), requests: 7, clientErrors: 1, serverErrors: 1 });
    expect(body.items[34]).toEqual({ day: utcDay(now), requests: 1, clientErrors: 0, serverErrors: 0 });
    expect(body.totalRequests).toBe(13);
    const days = body.items.map((d: { day: string }) => d.day);
    expect([...days].sort()).toEqual(days);

    const one = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=1`, headers: partner.auth });
    expect(one.json()).toEqual({ apiKeyId: key.id, days: 1, items: [body.items[34]], totalRequests: 1 });
  });

  it('answers ERR_VALIDATION naming days outside 1 to 35', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    for (const days of ['0', '36', '-1', '2.5', 'week']) {
      expectValidation(
        await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=${days}`, headers: partner.auth }),
        'days',
      );
    }
  });

  it('answers ERR_VALIDATION naming an unknown query parameter (a typo never passes silently)', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    expectValidation(
      await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?day=3`, headers: partner.auth }),
      'day',
    );
  });
});

describe('tenant isolation', () => {
  it("answers 404 ERR_NOT_FOUND for another partner's key, an unknown id and a non-UUID id on every key route", async () => {
    const owner = await createPartner(t.ctx);
    const intruder = await createPartner(t.ctx);
    const key = await createKey(t.ctx, owner.id);
    for (const id of [key.id, newId(), 'not-a-uuid', '1']) {
      for (const [method, url] of [
        ['DELETE', `/v1/developer/keys/${id}`],
        ['POST', `/v1/developer/keys/${id}/rotate`],
        ['GET', `/v1/developer/keys/${id}/usage`],
      ] as const) {
        expectPlainError(await t.live.inject({ method, url, headers: intruder.auth }), 404, 'ERR_NOT_FOUND');
      }
    }
    // The key is untouched and still works.
    const rows = await t.ctx.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE partner_id = $1', [
      owner.id,
    ]);
    expect(rows).toEqual([{ revoked_at: null }]);
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers })).statusCode).toBe(200);
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: intruder.auth });
    expect(list.json()).toEqual({ items: [] });
  });
});
