/**
 * GET and POST /v1/developer/webhooks: a partner's webhooks over all its keys, and the rules of creating
 * one (the key's scope and state, the limit per key, events and the URL policy).
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import {
  type Auth,
  ISO_TIME,
  partnerWithKey,
  SOME_ID,
  setUpAppWithReceiver,
  t,
  UUID,
  webhookOf,
} from './webhooks.test-helpers.js';

setUpAppWithReceiver();

function post(auth: Auth | Record<string, never>, payload: unknown) {
  return t.live.inject({ method: 'POST', url: '/v1/developer/webhooks', headers: auth, payload: payload as never });
}

describe('GET /v1/developer/webhooks', () => {
  it("lists the webhooks of all the partner's keys and nobody else's, without secrets", async () => {
    const { partner, key } = await partnerWithKey(t);
    const second = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const a = await webhookOf(t, partner, key.id);
    const b = await webhookOf(t, partner, second.id, 'https://hooks.example.com/sandbox');
    const other = await partnerWithKey(t);
    await webhookOf(t, other.partner, other.key.id);

    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.items.map((w: { id: string }) => w.id).sort()).toEqual([a.id, b.id].sort());
    for (const w of body.items) {
      expect(Object.keys(w).sort()).toEqual(['apiKeyId', 'consecutiveFailures', 'createdAt', 'events', 'id', 'isActive', 'url']);
    }
    expect(res.body).not.toContain('whsec_');
  });

  it('answers an empty list for a partner without webhooks', async () => {
    const partner = await createPartner(t.ctx);
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ items: [] });
  });
});

describe('POST /v1/developer/webhooks', () => {
  it('authenticates before it looks at the body: no token and a bad body is still 401', async () => {
    expectError(await post({}, { url: 5 }), 401, 'ERR_UNAUTHORIZED');
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${SOME_ID}`,
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expectError(res, 401, 'ERR_UNAUTHORIZED');
  });

  it('creates a webhook and shows its whsec_ signing secret once; the secret is stored encrypted', async () => {
    const { partner, key } = await partnerWithKey(t);
    const res = await post(partner.auth, {
      apiKeyId: key.id,
      url: 'https://hooks.example.com/orders?tenant=7',
      events: ['order.placed', 'order.delivered'],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      apiKeyId: key.id,
      url: 'https://hooks.example.com/orders?tenant=7',
      events: ['order.placed', 'order.delivered'],
      isActive: true,
      consecutiveFailures: 0,
      createdAt: expect.stringMatching(ISO_TIME),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const [row] = await t.ctx.db.query<{ secret_ciphertext: string; partner_id: string }>(
      'SELECT secret_ciphertext, partner_id FROM webhooks WHERE id = $1',
      [body.id],
    );
    expect(row.partner_id).toBe(partner.id);
    expect(row.secret_ciphertext).not.toContain(body.secret.slice(6));
    expect(t.ctx.secrets.decrypt(row.secret_ciphertext)).toBe(body.secret);
  });

  it('gives every webhook its own secret', async () => {
    const { partner, key } = await partnerWithKey(t);
    const a = await webhookOf(t, partner, key.id);
    const b = await webhookOf(t, partner, key.id);
    expect(a.secret).not.toBe(b.secret);
  });

  it('accepts a sandbox key and plain http for localhost outside production', async () => {
    const { partner, key } = await partnerWithKey(t, undefined, 'SANDBOX');
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1/hook', 'http://[::1]:9000/']) {
      const res = await post(partner.auth, { apiKeyId: key.id, url, events: ['order.placed'] });
      expect(res.statusCode, url).toBe(201);
      expect(res.json().url).toBe(url);
    }
  });

  it('answers 404 ERR_NOT_FOUND for a key of another partner and an unknown key, 400 for a malformed key id', async () => {
    const { partner } = await partnerWithKey(t);
    const other = await partnerWithKey(t);
    for (const apiKeyId of [other.key.id, SOME_ID]) {
      const res = await post(partner.auth, { apiKeyId, url: 'https://hooks.example.com', events: ['order.placed'] });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const malformed = await post(partner.auth, {
      apiKeyId: 'not-a-uuid',
      url: 'https://hooks.example.com',
      events: ['order.placed'],
    });
    expectError(malformed, 400, 'ERR_VALIDATION');
    expect(malformed.json().details).toEqual([{ field: 'apiKeyId', messages: ['must be a valid uuid'] }]);
    const [{ n }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE partner_id = $1', [
      partner.id,
    ]);
    expect(n).toBe(0);
  });

  it('answers 404 ERR_NOT_FOUND for a revoked key and for a key in its rotation grace period', async () => {
    const { partner, key } = await partnerWithKey(t);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [key.id, t.clock.now()]);
    expectError(
      await post(partner.auth, { apiKeyId: key.id, url: 'https://h.example.com', events: ['order.placed'] }),
      404,
      'ERR_NOT_FOUND',
    );

    const rotating = await createKey(t.ctx, partner.id);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [
      rotating.id,
      new Date(t.clock.nowMs() + 86_400_000),
    ]);
    expectError(
      await post(partner.auth, { apiKeyId: rotating.id, url: 'https://h.example.com', events: ['order.placed'] }),
      404,
      'ERR_NOT_FOUND',
    );
  });

  it('answers 403 ERR_API_KEY_SCOPE when the key lacks webhooks:manage', async () => {
    const { partner, key } = await partnerWithKey(t, ['orders:read', 'orders:pii']);
    const res = await post(partner.auth, { apiKeyId: key.id, url: 'https://hooks.example.com', events: ['order.placed'] });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });

  it('allows 5 webhooks per key and answers the 6th with 409 ERR_WEBHOOK_LIMIT; other keys are not affected', async () => {
    const { partner, key } = await partnerWithKey(t);
    for (let i = 0; i < 5; i++) await webhookOf(t, partner, key.id, `https://hooks.example.com/${i}`);
    const res = await post(partner.auth, { apiKeyId: key.id, url: 'https://hooks.example.com/6', events: ['order.placed'] });
    expectError(res, 409, 'ERR_WEBHOOK_LIMIT');
    const second = await createKey(t.ctx, partner.id);
    await webhookOf(t, partner, second.id);
  });

  it('never lets concurrent creations exceed 5 per key', async () => {
    const { partner, key } = await partnerWithKey(t);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(partner.auth, { apiKeyId: key.id, url: `https://hooks.example.com/${i}`, events: ['order.placed'] }),
      ),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(5);
    for (const r of results.filter((r) => r.statusCode !== 201)) expectError(r, 409, 'ERR_WEBHOOK_LIMIT');
  });

  it('answers 400 ERR_VALIDATION for missing, empty, repeated or unknown events and unknown fields', async () => {
    const { partner, key } = await partnerWithKey(t);
    const cases: Array<[unknown, string]> = [
      [{ apiKeyId: key.id, url: 'https://h.example.com' }, 'events'],
      [{ apiKeyId: key.id, url: 'https://h.example.com', events: [] }, 'events'],
      [{ apiKeyId: key.id, url: 'https://h.example.com', events: ['order.placed', 'order.placed'] }, 'events'],
      [{ apiKeyId: key.id, url: 'https://h.example.com', events: ['order.shipped'] }, 'events.0'],
      [{ apiKeyId: key.id, url: 'https://h.example.com', events: ['order.placed'], secret: 'mine' }, 'secret'],
      [{ apiKeyId: key.id, events: ['order.placed'] }, 'url'],
      [{ url: 'https://h.example.com', events: ['order.placed'] }, 'apiKeyId'],
    ];
    for (const [payload, field] of cases) {
      const res = await post(partner.auth, payload);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
  });

  it('answers 400 ERR_WEBHOOK_URL_INVALID for URLs outside the policy', async () => {
    const { partner, key } = await partnerWithKey(t);
    const refused = [
      'http://hooks.example.com/orders',
      'http://10.0.0.5/hook',
      'ftp://hooks.example.com',
      'https://user:pass@hooks.example.com/',
      'https://@hooks.example.com/',
      'not a url',
      '/relative/path',
      '',
      ' https://hooks.example.com',
      `https://hooks.example.com/${'a'.repeat(2048)}`,
      'javascript:alert(1)',
    ];
    for (const url of refused) {
      const res = await post(partner.auth, { apiKeyId: key.id, url, events: ['order.placed'] });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ statusCode: 400, code: 'ERR_WEBHOOK_URL_INVALID' });
    }
  });
});
