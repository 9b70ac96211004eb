/**
 * PATCH and DELETE /v1/developer/webhooks/{id}: editing, switching off and on, removing a webhook with
 * its delivery history; another partner's webhook left as it was.
 */

import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import type { TestPartner } from '../../../test/factories.js';
import { seedDeliveryLog } from './webhook-history.test-helpers.js';
import { ISO_TIME, partnerWithKey, SOME_ID, setUpAppWithReceiver, t, webhookOf } from './webhooks.test-helpers.js';

setUpAppWithReceiver();

/** PATCH /v1/developer/webhooks/{id} as the partner. */
function patch(partner: TestPartner, id: string, payload?: unknown) {
  return t.live.inject({
    method: 'PATCH',
    url: `/v1/developer/webhooks/${id}`,
    headers: partner.auth,
    payload: payload as never,
  });
}

describe('PATCH /v1/developer/webhooks/{id}', () => {
  it('changes the url and the events and answers the webhook without its secret', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const res = await patch(partner, hook.id, {
      url: 'https://new.example.com/h',
      events: ['order.cancelled', 'batch.completed'],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: hook.id,
      apiKeyId: key.id,
      url: 'https://new.example.com/h',
      events: ['order.cancelled', 'batch.completed'],
      isActive: true,
      consecutiveFailures: 0,
      createdAt: expect.stringMatching(ISO_TIME),
    });
  });

  it('leaves everything unchanged for an empty body', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const res = await patch(partner, hook.id, {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ url: 'https://hooks.example.com/orders', events: ['order.placed'], isActive: true });
  });

  it('leaves everything unchanged for a request without a body', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const res = await patch(partner, hook.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: hook.id, events: ['order.placed'], isActive: true });
  });

  it('switches a webhook off, and on again with its failure streak cleared', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const off = await patch(partner, hook.id, { isActive: false });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ isActive: false, consecutiveFailures: 0 });
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 50 WHERE id = $1', [hook.id]);
    const on = await patch(partner, hook.id, { isActive: true });
    expect(on.statusCode).toBe(200);
    expect(on.json()).toMatchObject({ isActive: true, consecutiveFailures: 0 });
  });

  it('answers 400 ERR_WEBHOOK_URL_INVALID for a URL outside the policy and 400 ERR_VALIDATION for bad fields', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    expectError(await patch(partner, hook.id, { url: 'http://hooks.example.com' }), 400, 'ERR_WEBHOOK_URL_INVALID');
    expectError(await patch(partner, hook.id, { events: [] }), 400, 'ERR_VALIDATION');
    expectError(await patch(partner, hook.id, { isActive: 'yes' }), 400, 'ERR_VALIDATION');
    const unknown = await patch(partner, hook.id, { apiKeyId: key.id });
    expectError(unknown, 400, 'ERR_VALIDATION');
    expect(unknown.json().details).toEqual([{ field: 'apiKeyId', messages: ['is not allowed'] }]);
  });

  it("answers 404 for another partner's webhook, an unknown id and a non-uuid id", async () => {
    const { partner } = await partnerWithKey(t);
    const other = await partnerWithKey(t);
    const theirs = await webhookOf(t, other.partner, other.key.id);
    for (const id of [theirs.id, SOME_ID, 'nope']) {
      const res = await patch(partner, id, { isActive: false });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    const [row] = await t.ctx.db.query<{ is_active: boolean }>('SELECT is_active FROM webhooks WHERE id = $1', [theirs.id]);
    expect(row.is_active).toBe(true);
  });
});

describe('DELETE /v1/developer/webhooks/{id}', () => {
  it('answers 204 with no body and removes the webhook and its delivery history', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    await seedDeliveryLog(t, partner.id, hook.id, 3);
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
    const { partner } = await partnerWithKey(t);
    const other = await partnerWithKey(t);
    const theirs = await webhookOf(t, other.partner, other.key.id);
    for (const id of [theirs.id, 'x']) {
      const res = await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${id}`, headers: partner.auth });
      expectError(res, 404, 'ERR_NOT_FOUND');
    }
    expect(await t.ctx.db.query('SELECT id FROM webhooks WHERE id = $1', [theirs.id])).toHaveLength(1);
  });
});
