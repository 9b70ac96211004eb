/**
 * Ending a key: DELETE /v1/developer/keys/{id} (revoke now) and POST /v1/developer/keys/{id}/rotate (a
 * successor that takes the key's orders and webhooks, the old key kept for its grace period).
 */
import { describe, expect, it } from 'vitest';
import { expectFieldError, expectPlainError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { ISO } from '../orders/orders.test-helpers.js';
import { devAuth } from '../webhooks/webhooks.test-helpers.js';
import { createViaApi, insertOrder, insertWebhook } from './keys.test-helpers.js';

let t: TestApp;
setUpTestAppWithOperator((app) => (t = app));

describe('DELETE /v1/developer/keys/{id}', () => {
  it('revokes at once (revokedAt = now, isActive false); revoking again answers the key unchanged', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createViaApi(t, partner);
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
    const key = await createViaApi(t, partner);
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
    const key = await createViaApi(t, partner);
    expectFieldError(
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
  it('creates a successor with the same settings and moves orders and webhooks in one go', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, {
      name: 'Courier app',
      scopes: ['orders:read', 'webhooks:manage'],
      rateLimit: 1234,
      receivesAllOrders: true,
    });
    const orders = [await insertOrder(t, old.id), await insertOrder(t, old.id), await insertOrder(t, old.id)];
    const webhooks = [await insertWebhook(t, partner.id, old.id), await insertWebhook(t, partner.id, old.id)];
    const sibling = await createKey(t.ctx, partner.id);
    const untouchedOrder = await insertOrder(t, sibling.id);
    const untouchedWebhook = await insertWebhook(t, partner.id, sibling.id);

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
    expectFieldError(
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
    const list = (await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: await devAuth(t, partner) })).json();
    expect(list.items.map((k: { id: string; isActive: boolean }) => [k.id === key.id, k.isActive])).toEqual([
      [false, true],
      [true, false],
    ]);
  });
});
