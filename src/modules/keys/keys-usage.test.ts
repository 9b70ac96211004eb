/**
 * GET /v1/developer/keys/{id}/usage, and every key route refusing a key that is not the caller's.
 */
import { describe, expect, it } from 'vitest';
import { expectFieldError, expectPlainError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { newId } from '../../shared/ids.js';
import { DAY_MS } from './keys.test-helpers.js';

let t: TestApp;
setUpTestAppWithOperator((app) => (t = app));

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('GET /v1/developer/keys/{id}/usage', () => {
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
      expectFieldError(
        await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/usage?days=${days}`, headers: partner.auth }),
        'days',
      );
    }
  });

  it('answers ERR_VALIDATION naming an unknown query parameter (a typo never passes silently)', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    expectFieldError(
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
