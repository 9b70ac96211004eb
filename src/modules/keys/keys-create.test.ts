/**
 * A partner's developer keys: GET /v1/developer/keys and POST /v1/developer/keys (shown once, stored as a
 * hash, the input rules and the limit of active keys).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectFieldError, expectPlainError } from '../../../test/expect-error.js';
import { createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { ISO } from '../orders/orders.test-helpers.js';
import { createViaApi, KEY_BODY } from './keys.test-helpers.js';

let t: TestApp;
setUpTestAppWithOperator((app) => (t = app));

describe('GET /v1/developer/keys', () => {
  it("lists the partner's keys newest first, with the prefix only, revoked keys included", async () => {
    const partner = await createPartner(t.ctx);
    const first = await createViaApi(t, partner, { ...KEY_BODY, name: 'first' });
    t.clock.advance(1);
    const second = await createViaApi(t, partner, { ...KEY_BODY, name: 'second', environment: 'SANDBOX' });
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${first.id}`, headers: partner.auth });
    const other = await createPartner(t.ctx);
    await createViaApi(t, other);

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
  it('creates a key, shows it once and stores only its SHA-256 and prefix', async () => {
    const partner = await createPartner(t.ctx);
    const res = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: KEY_BODY });
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
    const created = await createViaApi(t, partner, { ...KEY_BODY, environment: 'SANDBOX', scopes: ['orders:read'] });
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
    expectFieldError(await post({ ...KEY_BODY, name: 'x' }), 'name');
    expectFieldError(await post({ ...KEY_BODY, name: 'x'.repeat(61) }), 'name');
    expectFieldError(await post({ ...KEY_BODY, name: 42 }), 'name');
    expectFieldError(await post({ environment: 'LIVE', scopes: ['orders:read'] }), 'name');
    expectFieldError(await post({ ...KEY_BODY, environment: 'live' }), 'environment');
    expectFieldError(await post({ ...KEY_BODY, scopes: [] }), 'scopes');
    expectFieldError(await post({ ...KEY_BODY, scopes: ['orders:read', 'orders:read'] }), 'scopes');
    expectFieldError(await post({ ...KEY_BODY, scopes: ['orders:write'] }), 'scopes.0');
    expectFieldError(await post({ name: 'ok', environment: 'LIVE' }), 'scopes');
    expectFieldError(await post({ ...KEY_BODY, rateLimit: 10 }), 'rateLimit');
    // The bounds themselves are accepted.
    expect((await post({ ...KEY_BODY, name: 'ab' })).statusCode).toBe(201);
    expect((await post({ ...KEY_BODY, name: 'y'.repeat(60) })).statusCode).toBe(201);
  });

  it('allows 10 active keys per partner (409 ERR_API_KEY_LIMIT), counting neither revoked nor rotated-out keys', async () => {
    const partner = await createPartner(t.ctx);
    const keys = [];
    for (let i = 0; i < 10; i++) keys.push(await createViaApi(t, partner, { ...KEY_BODY, name: `key ${i}` }));
    const over = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: KEY_BODY });
    expectPlainError(over, 409, 'ERR_API_KEY_LIMIT');

    // Rotation is always allowed, and leaves 10 active keys.
    const rotated = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/keys/${keys[0].id}/rotate`,
      headers: partner.auth,
    });
    expect(rotated.statusCode).toBe(200);
    expectPlainError(
      await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: KEY_BODY }),
      409,
      'ERR_API_KEY_LIMIT',
    );

    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${keys[1].id}`, headers: partner.auth });
    await createViaApi(t, partner);
    // Another partner has its own allowance.
    await createViaApi(t, await createPartner(t.ctx));
  });

  it('refuses concurrent creations past the limit', async () => {
    const partner = await createPartner(t.ctx);
    for (let i = 0; i < 8; i++) await createViaApi(t, partner);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: KEY_BODY }),
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
