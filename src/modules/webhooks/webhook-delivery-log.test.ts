/**
 * A webhook's delivery log (GET /v1/developer/webhooks/{id}/deliveries), the test ping
 * (POST /v1/developer/webhooks/{id}/test) and POST /v1/developer/deliveries/{id}/redeliver.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { seedDeliveryLog } from './webhook-history.test-helpers.js';
import { ISO_TIME, partnerWithKey, SOME_ID, setUpAppWithReceiver, t, UUID, webhookOf } from './webhooks.test-helpers.js';

setUpAppWithReceiver();

describe('GET /v1/developer/webhooks/{id}/deliveries', () => {
  it('pages the delivery log newest first with the total of matching rows', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const ids = await seedDeliveryLog(t, partner.id, hook.id, 25);
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
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    await seedDeliveryLog(t, partner.id, hook.id, 2, ['DELIVERED', 'DEAD']);
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
      createdAt: expect.stringMatching(ISO_TIME),
      deliveredAt: expect.stringMatching(ISO_TIME),
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
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    await seedDeliveryLog(t, partner.id, hook.id, 9, ['DELIVERED', 'FAILED', 'DEAD']);
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
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
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

  it('answers 404 for a non-uuid id', async () => {
    const { partner } = await partnerWithKey(t);
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks/123/deliveries', headers: partner.auth });
    expectError(res, 404, 'ERR_NOT_FOUND');
  });
});

describe('POST /v1/developer/webhooks/{id}/test', () => {
  it('queues a ping delivery and answers it as PENDING, due now', async () => {
    const { partner, key } = await partnerWithKey(t, undefined, 'SANDBOX');
    const hook = await webhookOf(t, partner, key.id);
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
      createdAt: expect.stringMatching(ISO_TIME),
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
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [hook.id]);
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${hook.id}/test`, headers: partner.auth });
    expectError(res, 409, 'ERR_WEBHOOK_DISABLED');
  });

  it('answers 404 for a non-uuid id', async () => {
    const { partner } = await partnerWithKey(t);
    const res = await t.live.inject({ method: 'POST', url: '/v1/developer/webhooks/ping/test', headers: partner.auth });
    expectError(res, 404, 'ERR_NOT_FOUND');
  });
});

describe('POST /v1/developer/deliveries/{id}/redeliver', () => {
  it('queues a dead delivery again: PENDING, attempts 0, due now, same event and body', async () => {
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const [id] = await seedDeliveryLog(t, partner.id, hook.id, 1, ['DEAD']);
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
    const { partner, key } = await partnerWithKey(t);
    const hook = await webhookOf(t, partner, key.id);
    const [id] = await seedDeliveryLog(t, partner.id, hook.id, 1, ['DELIVERED']);
    const res = await t.live.inject({ method: 'POST', url: `/v1/developer/deliveries/${id}/redeliver`, headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'PENDING', attempts: 0, deliveredAt: null });
  });

  it("answers 404 for another partner's delivery, an unknown id and a non-uuid id", async () => {
    const { partner } = await partnerWithKey(t);
    const other = await partnerWithKey(t);
    const theirs = await webhookOf(t, other.partner, other.key.id);
    const [id] = await seedDeliveryLog(t, other.partner.id, theirs.id, 1, ['DEAD']);
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
});
