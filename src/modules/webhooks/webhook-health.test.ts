/**
 * GET /v1/developer/webhooks/{id}/health (docs/decisions-log.md, 'Webhook operations'): the attempts of
 * the last 24 h on the test clock, and a failing endpoint shown as failing before anything is dead.
 */
import { describe, expect, it } from 'vitest';
import { seedExhaustedDeliveries } from './webhook-history.test-helpers.js';
import {
  callAs,
  createEndpoint,
  HOUR_MS,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  startTestWorker,
  t,
  waitForDeliveries,
} from './webhooks.test-helpers.js';

setUpAppWithReceiver();

describe('GET /v1/developer/webhooks/{id}/health', () => {
  it('counts the attempts of the last 24 h: delivered, failed, dead, success rate, p50/p99; last success and failure of any time', async () => {
    const h = await createEndpoint(t, receiver);
    const now = t.clock.nowMs();
    const [old, ...recent] = await seedExhaustedDeliveries(t, h.partner.id, h.hook.id, [
      { status: 'DELIVERED', createdAt: new Date(now - 30 * HOUR_MS) },
      ...Array.from({ length: 4 }, () => ({ status: 'DELIVERED' as const, createdAt: new Date(now - HOUR_MS) })),
    ]);
    const attempt = (id: string, number: number, atMs: number, durationMs: number, outcome: string) =>
      t.ctx.db.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, number, webhook_id, at, duration_ms, outcome, status_code, error, request_headers)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '{}')`,
        [
          id,
          number,
          h.hook.id,
          new Date(atMs),
          durationMs,
          outcome,
          outcome === 'DELIVERED' ? 200 : 500,
          outcome === 'DELIVERED' ? null : 'HTTP 500',
        ],
      );
    await attempt(old, 1, now - 30 * HOUR_MS, 9000, 'FAILED'); // outside the window: counts only as the last failure
    await attempt(old, 2, now - 25 * HOUR_MS, 9000, 'DELIVERED');
    await attempt(recent[0], 1, now - 2 * HOUR_MS, 100, 'DELIVERED');
    await attempt(recent[1], 1, now - 2 * HOUR_MS, 200, 'DELIVERED');
    await attempt(recent[2], 1, now - 2 * HOUR_MS, 300, 'FAILED');
    await attempt(recent[3], 1, now - 90 * 60_000, 400, 'DEAD');
    await t.ctx.db.query('UPDATE webhooks SET consecutive_failures = 3 WHERE id = $1', [h.hook.id]);

    const res = await callAs(t, h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`);
    expect(res.statusCode, res.body).toBe(200);
    const { since, ...health } = res.json();
    expect(Date.parse(since) - (now - 24 * HOUR_MS)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(since)).toBeLessThanOrEqual(t.clock.nowMs() - 24 * HOUR_MS);
    expect(health).toEqual({
      webhookId: h.hook.id,
      delivered: 2,
      failedAttempts: 2,
      dead: 1,
      successRate: 0.5,
      p50Ms: 250,
      p99Ms: 397,
      lastSuccessAt: new Date(now - 2 * HOUR_MS).toISOString(),
      lastFailureAt: new Date(now - 90 * 60_000).toISOString(),
      consecutiveFailures: 3,
      isActive: true,
    });
    // A day later the window is empty, and says so.
    t.clock.advance((24 * HOUR_MS) / 1000);
    expect((await callAs(t, h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`)).json()).toMatchObject({
      delivered: 0,
      failedAttempts: 0,
      dead: 0,
      successRate: null,
      p50Ms: null,
      p99Ms: null,
      lastSuccessAt: new Date(now - 2 * HOUR_MS).toISOString(),
    });
  });

  it('shows a failing endpoint as failing before any delivery is dead', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    receiver.on(h.path, { status: 500 });
    for (let i = 0; i < 5; i++) await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.length === 5 && d.every((x) => x.status === 'FAILED'));
    const health = (await callAs(t, h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/health`)).json();
    expect(health).toMatchObject({
      delivered: 0,
      failedAttempts: 5,
      dead: 0,
      successRate: 0,
      lastSuccessAt: null,
      consecutiveFailures: 0,
    });
    expect(health.lastFailureAt).not.toBeNull();
  });
});
