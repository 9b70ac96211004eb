import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { type Auth, createWebhookVia } from './webhooks.test-helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SOME_ID = '7d0c1a52-3a59-4c1f-9d5e-0b1f4f0e2a11';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function partnerWithKey(scopes?: ApiKeyScope[], environment: 'LIVE' | 'SANDBOX' = 'LIVE') {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, { scopes, environment });
  return { partner, key };
}

async function webhookOf(partner: TestPartner, keyId: string, url = 'https://hooks.example.com/orders') {
  return createWebhookVia(t, partner.auth, { apiKeyId: keyId, url, events: ['order.placed'] });
}

function post(auth: Auth | Record<string, never>, payload: unknown) {
  return t.live.inject({ method: 'POST', url: '/v1/developer/webhooks', headers: auth, payload: payload as never });
}

async function removeScope(keyId: string, scope: ApiKeyScope) {
  await t.ctx.db.query('UPDATE api_keys SET scopes = array_remove(scopes, $2) WHERE id = $1', [keyId, scope]);
}

/** Inserts `n` deliveries one second apart (oldest first), with statuses cycling through `statuses`. */
async function seedDeliveries(partnerId: string, webhookId: string, n: number, statuses = ['DELIVERED']) {
  const base = t.clock.nowMs() - n * 1000;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newId();
    ids.push(id);
    const status = statuses[i % statuses.length];
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code,
                                       last_error, next_attempt_at, created_at, delivered_at, updated_at)
       VALUES ($1, $2, $3, $4, 'order.placed', '{}', $5, 1, $6, $7, NULL, $8, $9, $8)`,
      [
        id,
        webhookId,
        partnerId,
        `evt_seed_${i}_${id.slice(0, 8)}`,
        status,
        status === 'DELIVERED' ? 200 : 500,
        status === 'DELIVERED' ? null : 'HTTP 500',
        new Date(base + i * 1000),
        status === 'DELIVERED' ? new Date(base + i * 1000) : null,
      ],
    );
  }
  return ids;
}

describe('GET /v1/developer/webhooks', () => {
  bearerAuthContract(() => t, { method: 'GET', url: '/v1/developer/webhooks', role: 'PARTNER' });

  it("lists the webhooks of all the partner's keys and nobody else's, without secrets", async () => {
    const { partner, key } = await partnerWithKey();
    const second = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const a = await webhookOf(partner, key.id);
    const b = await webhookOf(partner, second.id, 'https://hooks.example.com/sandbox');
    const other = await partnerWithKey();
    await webhookOf(other.partner, other.key.id);

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
  bearerAuthContract(() => t, {
    method: 'POST',
    url: '/v1/developer/webhooks',
    role: 'PARTNER',
    body: { apiKeyId: SOME_ID, url: 'https://hooks.example.com', events: ['order.placed'] },
  });

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
    const { partner, key } = await partnerWithKey();
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
      createdAt: expect.stringMatching(ISO),
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
    const { partner, key } = await partnerWithKey();
    const a = await webhookOf(partner, key.id);
    const b = await webhookOf(partner, key.id);
    expect(a.secret).not.toBe(b.secret);
  });

  it('accepts a sandbox key and plain http for localhost outside production', async () => {
    const { partner, key } = await partnerWithKey(undefined, 'SANDBOX');
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1/hook', 'http://[::1]:9000/']) {
      const res = await post(partner.auth, { apiKeyId: key.id, url, events: ['order.placed'] });
      expect(res.statusCode, url).toBe(201);
      expect(res.json().url).toBe(url);
    }
  });

  it('answers 404 ERR_NOT_FOUND for a key of another partner and an unknown key, 400 for a malformed key id', async () => {
    const { partner } = await partnerWithKey();
    const other = await partnerWithKey();
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
    const { partner, key } = await partnerWithKey();
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
    const { partner, key } = await partnerWithKey(['orders:read', 'orders:pii']);
    const res = await post(partner.auth, { apiKeyId: key.id, url: 'https://hooks.example.com', events: ['order.placed'] });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });

  it('allows 5 webhooks per key and answers the 6th with 409 ERR_WEBHOOK_LIMIT; other keys are not affected', async () => {
    const { partner, key } = await partnerWithKey();
    for (let i = 0; i < 5; i++) await webhookOf(partner, key.id, `https://hooks.example.com/${i}`);
    const res = await post(partner.auth, { apiKeyId: key.id, url: 'https://hooks.example.com/6', events: ['order.placed'] });
    expectError(res, 409, 'ERR_WEBHOOK_LIMIT');
    const second = await createKey(t.ctx, partner.id);
    await webhookOf(partner, second.id);
  });

  it('never lets concurrent creations exceed 5 per key', async () => {
    const { partner, key } = await partnerWithKey();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(partner.auth, { apiKeyId: key.id, url: `https://hooks.example.com/${i}`, events: ['order.placed'] }),
      ),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(5);
    for (const r of results.filter((r) => r.statusCode !== 201)) expectError(r, 409, 'ERR_WEBHOOK_LIMIT');
  });

  it('answers 400 ERR_VALIDATION for missing, empty, repeated or unknown events and unknown fields', async () => {
    const { partner, key } = await partnerWithKey();
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
    const { partner, key } = await partnerWithKey();
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

describe('PATCH /v1/developer/webhooks/{id}', () => {
  bearerAuthContract(() => t, { method: 'PATCH', url: `/v1/developer/webhooks/${SOME_ID}`, role: 'PARTNER', body: {} });

  it('changes the url and the events and answers the webhook without its secret', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: partner.auth,
      payload: { url: 'https://new.example.com/h', events: ['order.cancelled', 'batch.completed'] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: hook.id,
      apiKeyId: key.id,
      url: 'https://new.example.com/h',
      events: ['order.cancelled', 'batch.completed'],
      isActive: true,
      consecutiveFailures: 0,
      createdAt: expect.stringMatching(ISO),
    });
  });

  it('leaves everything unchanged for an empty body', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: partner.auth,
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ url: 'https://hooks.example.com/orders', events: ['order.placed'], isActive: true });
  });

  it('leaves everything unchanged for a request without a body', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const res = await t.live.inject({ method: 'PATCH', url: `/v1/developer/webhooks/${hook.id}`, headers: partner.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: hook.id, events: ['order.placed'], isActive: true });
  });

  it('switches a webhook off, and on again with its failure streak cleared', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const off = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: partner.auth,
      payload: { isActive: false },
    });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ isActive: false, consecutiveFailures: 0 });
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 50 WHERE id = $1', [hook.id]);
    const on = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: partner.auth,
      payload: { isActive: true },
    });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ isActive: true, consecutiveFailures: 0 });
  });

  it('answers 400 ERR_WEBHOOK_URL_INVALID for a URL outside the policy and 400 ERR_VALIDATION for bad fields', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const patch = (payload: unknown) =>
      t.live.inject({
        method: 'PATCH',
        url: `/v1/developer/webhooks/${hook.id}`,
        headers: partner.auth,
        payload: payload as never,
      });
    expectError(await patch({ url: 'http://hooks.example.com' }), 400, 'ERR_WEBHOOK_URL_INVALID');
    expectError(await patch({ events: [] }), 400, 'ERR_VALIDATION');
    expectError(await patch({ isActive: 'yes' }), 400, 'ERR_VALIDATION');
    const unknown = await patch({ apiKeyId: key.id });
    expectError(unknown, 400, 'ERR_VALIDATION');
    expect(unknown.json().details).toEqual([{ field: 'apiKeyId', messages: ['is not allowed'] }]);
  });

  it("answers 404 for another partner's webhook, an unknown id and a non-uuid id", async () => {
    const { partner } = await partnerWithKey();
    const other = await partnerWithKey();
    const theirs = await webhookOf(other.partner, other.key.id);
    for (const id of [theirs.id, SOME_ID, 'nope']) {
      const res = await t.live.inject({
        method: 'PATCH',
        url: `/v1/developer/webhooks/${id}`,
        headers: partner.auth,
        payload: { isActive: false },
      });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const [row] = await t.ctx.db.query<{ is_active: boolean }>('SELECT is_active FROM webhooks WHERE id = $1', [theirs.id]);
    expect(row.is_active).toBe(true);
  });

  it("answers 403 ERR_API_KEY_SCOPE when the webhook's key no longer has webhooks:manage", async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await removeScope(key.id, 'webhooks:manage');
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/developer/webhooks/${hook.id}`,
      headers: partner.auth,
      payload: { isActive: false },
    });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('DELETE /v1/developer/webhooks/{id}', () => {
  bearerAuthContract(() => t, { method: 'DELETE', url: `/v1/developer/webhooks/${SOME_ID}`, role: 'PARTNER' });

  it('answers 204 with no body and removes the webhook and its delivery history', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await seedDeliveries(partner.id, hook.id, 3);
    const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${hook.id}`, headers: partner.auth });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1',
      [hook.id],
    );
    expect(n).toBe(0);
    const list = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: partner.auth });
    expect(list.json().items).toEqual([]);
    const again = await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${hook.id}`, headers: partner.auth });
    expectError(again, 404, 'ERR_NOT_FOUND');
  });

  it("answers 404 for another partner's webhook and a non-uuid id, and keeps it", async () => {
    const { partner } = await partnerWithKey();
    const other = await partnerWithKey();
    const theirs = await webhookOf(other.partner, other.key.id);
    for (const id of [theirs.id, 'x']) {
      const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${id}`, headers: partner.auth });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    expect(await t.ctx.db.query('SELECT id FROM webhooks WHERE id = $1', [theirs.id])).toHaveLength(1);
  });

  it("answers 403 ERR_API_KEY_SCOPE when the webhook's key lacks webhooks:manage", async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await removeScope(key.id, 'webhooks:manage');
    const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${hook.id}`, headers: partner.auth });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('GET /v1/developer/webhooks/{id}/deliveries', () => {
  bearerAuthContract(() => t, { method: 'GET', url: `/v1/developer/webhooks/${SOME_ID}/deliveries`, role: 'PARTNER' });

  it('pages the delivery log newest first with the total of matching rows', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const ids = await seedDeliveries(partner.id, hook.id, 25);
    const newestFirst = [...ids].reverse();
    const url = `/v1/developer/webhooks/${hook.id}/deliveries`;

    const first = await t.live.inject({ method: 'GET', url, headers: partner.auth });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ page: 1, pageSize: 20, total: 25 });
    expect(first.json().items.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(0, 20));

    const third = await t.live.inject({ method: 'GET', url: `${url}?page=3&pageSize=10`, headers: partner.auth });
    expect(third.json()).toMatchObject({ page: 3, pageSize: 10, total: 25 });
    expect(third.json().items.map((d: { id: string }) => d.id)).toEqual(newestFirst.slice(20));

    const beyond = await t.live.inject({ method: 'GET', url: `${url}?page=9&pageSize=10`, headers: partner.auth });
    expect(beyond.json()).toEqual({ page: 9, pageSize: 10, total: 25, items: [] });
  });

  it('answers every delivery in the DeveloperDelivery shape', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await seedDeliveries(partner.id, hook.id, 2, ['DELIVERED', 'DEAD']);
    const res = await t.live.inject({
      method: 'GET',
      url: `/v1/developer/webhooks/${hook.id}/deliveries`,
      headers: partner.auth,
    });
    const [dead, delivered] = res.json().items;
    expect(delivered).toEqual({
      id: expect.stringMatching(UUID),
      webhookId: hook.id,
      event: 'order.placed',
      status: 'DELIVERED',
      attempts: 1,
      statusCode: 200,
      lastError: null,
      createdAt: expect.stringMatching(ISO),
      deliveredAt: expect.stringMatching(ISO),
      nextAttemptAt: null,
    });
    expect(dead).toMatchObject({
      status: 'DEAD',
      statusCode: 500,
      lastError: 'HTTP 500',
      deliveredAt: null,
      nextAttemptAt: null,
    });
  });

  it('filters by status', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await seedDeliveries(partner.id, hook.id, 9, ['DELIVERED', 'FAILED', 'DEAD']);
    for (const status of ['DELIVERED', 'FAILED', 'DEAD', 'PENDING']) {
      const res = await t.live.inject({
        method: 'GET',
        url: `/v1/developer/webhooks/${hook.id}/deliveries?status=${status}`,
        headers: partner.auth,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.total).toBe(status === 'PENDING' ? 0 : 3);
      for (const d of body.items) expect(d.status).toBe(status);
    }
  });

  it('answers 400 ERR_VALIDATION naming an unknown status, out-of-range paging or an unknown parameter', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    for (const [query, field] of [
      ['status=LOST', 'status'],
      ['page=0', 'page'],
      ['page=10001', 'page'],
      ['pageSize=0', 'pageSize'],
      ['pageSize=51', 'pageSize'],
      ['page=abc', 'page'],
      ['page_size=10', 'page_size'],
    ]) {
      const res = await t.live.inject({
        method: 'GET',
        url: `/v1/developer/webhooks/${hook.id}/deliveries?${query}`,
        headers: partner.auth,
      });
      expectError(res, 400, 'ERR_VALIDATION');
      expect(
        res.json().details.map((d: { field: string }) => d.field),
        query,
      ).toEqual([field]);
    }
  });

  it("answers 404 for another partner's webhook and a non-uuid id, 403 without webhooks:manage", async () => {
    const { partner, key } = await partnerWithKey();
    const other = await partnerWithKey();
    const theirs = await webhookOf(other.partner, other.key.id);
    await seedDeliveries(other.partner.id, theirs.id, 2);
    for (const id of [theirs.id, '123']) {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/webhooks/${id}/deliveries`, headers: partner.auth });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const mine = await webhookOf(partner, key.id);
    await removeScope(key.id, 'webhooks:manage');
    const res = await t.live.inject({
      method: 'GET',
      url: `/v1/developer/webhooks/${mine.id}/deliveries`,
      headers: partner.auth,
    });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('POST /v1/developer/webhooks/{id}/test', () => {
  bearerAuthContract(() => t, { method: 'POST', url: `/v1/developer/webhooks/${SOME_ID}/test`, role: 'PARTNER' });

  it('queues a ping delivery and answers it as PENDING, due now', async () => {
    const { partner, key } = await partnerWithKey(undefined, 'SANDBOX');
    const hook = await webhookOf(partner, key.id);
    const before = t.clock.nowMs();
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${hook.id}/test`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    const delivery = res.json();
    expect(delivery).toEqual({
      id: expect.stringMatching(UUID),
      webhookId: hook.id,
      event: 'ping',
      status: 'PENDING',
      attempts: 0,
      statusCode: null,
      lastError: null,
      createdAt: expect.stringMatching(ISO),
      deliveredAt: null,
      nextAttemptAt: null,
    });
    expect(Date.parse(delivery.createdAt)).toBeGreaterThanOrEqual(before);
    const [row] = await t.ctx.db.query<{ body: string; event_id: string }>(
      'SELECT body, event_id FROM webhook_deliveries WHERE id = $1',
      [delivery.id],
    );
    expect(JSON.parse(row.body)).toEqual({
      id: row.event_id,
      type: 'ping',
      createdAt: delivery.createdAt,
      environment: 'sandbox',
      data: { webhookId: hook.id },
    });
    expect(row.event_id).toMatch(/^evt_/);
  });

  it('answers 409 ERR_WEBHOOK_DISABLED for a disabled webhook', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [hook.id]);
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${hook.id}/test`, headers: partner.auth });
    expectError(res, 409, 'ERR_WEBHOOK_DISABLED');
  });

  it("answers 404 for another partner's webhook and a non-uuid id, 403 without webhooks:manage", async () => {
    const { partner, key } = await partnerWithKey();
    const other = await partnerWithKey();
    const theirs = await webhookOf(other.partner, other.key.id);
    for (const id of [theirs.id, 'ping']) {
      const res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${id}/test`, headers: partner.auth });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const mine = await webhookOf(partner, key.id);
    await removeScope(key.id, 'webhooks:manage');
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${mine.id}/test`, headers: partner.auth });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('POST /v1/developer/deliveries/{id}/redeliver', () => {
  bearerAuthContract(() => t, { method: 'POST', url: `/v1/developer/deliveries/${SOME_ID}/redeliver`, role: 'PARTNER' });

  it('queues a dead delivery again: PENDING, attempts 0, due now, same event and body', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const [id] = await seedDeliveries(partner.id, hook.id, 1, ['DEAD']);
    const [before] = await t.ctx.db.query<{ body: string; event_id: string; created_at: Date }>(
      'SELECT body, event_id, created_at FROM webhook_deliveries WHERE id = $1',
      [id],
    );
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/deliveries/${id}/redeliver`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id,
      webhookId: hook.id,
      event: 'order.placed',
      status: 'PENDING',
      attempts: 0,
      statusCode: null,
      lastError: null,
      createdAt: before.created_at.toISOString(),
      deliveredAt: null,
      nextAttemptAt: null,
    });
    const [after] = await t.ctx.db.query<{ body: string; event_id: string; next_attempt_at: Date }>(
      'SELECT body, event_id, next_attempt_at FROM webhook_deliveries WHERE id = $1',
      [id],
    );
    expect(after).toEqual({ body: before.body, event_id: before.event_id, next_attempt_at: expect.any(Date) });
    // Due now (the API shows no nextAttemptAt for a PENDING delivery: it is being sent, not scheduled).
    expect(Math.abs(after.next_attempt_at.getTime() - t.clock.nowMs())).toBeLessThan(5_000);
  });

  it('also queues a delivered delivery again', async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const [id] = await seedDeliveries(partner.id, hook.id, 1, ['DELIVERED']);
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/deliveries/${id}/redeliver`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'PENDING', attempts: 0, deliveredAt: null });
  });

  it("answers 404 for another partner's delivery, an unknown id and a non-uuid id", async () => {
    const { partner } = await partnerWithKey();
    const other = await partnerWithKey();
    const theirs = await webhookOf(other.partner, other.key.id);
    const [id] = await seedDeliveries(other.partner.id, theirs.id, 1, ['DEAD']);
    for (const target of [id, SOME_ID, 'abc']) {
      const res = await t.live.inject({
        method: 'POST',
        url: `/v1/developer/deliveries/${target}/redeliver`,
        headers: partner.auth,
      });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const [row] = await t.ctx.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [id]);
    expect(row.status).toBe('DEAD');
  });

  it("answers 403 ERR_API_KEY_SCOPE when the webhook's key lacks webhooks:manage", async () => {
    const { partner, key } = await partnerWithKey();
    const hook = await webhookOf(partner, key.id);
    const [id] = await seedDeliveries(partner.id, hook.id, 1, ['DEAD']);
    await removeScope(key.id, 'webhooks:manage');
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/deliveries/${id}/redeliver`, headers: partner.auth });
    expectError(res, 403, 'ERR_API_KEY_SCOPE');
  });
});
