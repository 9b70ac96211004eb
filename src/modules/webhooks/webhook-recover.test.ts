/**
 * POST /v1/developer/webhooks/{id}/recover (docs/decisions-log.md, 'Webhook operations'): the window's
 * edges, batching as seen in the database, and other partners not starved by a recovering endpoint.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { waitFor } from '../../../test/wait.js';
import { feedRecoveries } from '../../worker/recovery-feeder.js';
import { RECOVERY_BATCH } from './queue/recover-deliveries.js';
import { seedExhaustedDeliveries, statusCounts } from './webhook-history.test-helpers.js';
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

describe('POST /v1/developer/webhooks/{id}/recover', () => {
  it('queues the FAILED and DEAD deliveries created in [since, until), and only those: edges just inside and just outside', async () => {
    const h = await createEndpoint(t, receiver);
    const now = t.clock.nowMs();
    const since = new Date(now - 2 * HOUR_MS);
    const until = new Date(now - HOUR_MS);
    const [atSince, justBeforeUntil, justBeforeSince, atUntil, delivered, dead] = await seedExhaustedDeliveries(
      t,
      h.partner.id,
      h.hook.id,
      [
        { status: 'FAILED', createdAt: since },
        { status: 'DEAD', createdAt: new Date(until.getTime() - 1) },
        { status: 'DEAD', createdAt: new Date(since.getTime() - 1) },
        { status: 'FAILED', createdAt: until },
        { status: 'DELIVERED', createdAt: new Date(since.getTime() + 1000) },
        { status: 'DEAD', createdAt: new Date(since.getTime() + 2000) },
      ],
    );
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: since.toISOString(),
      until: until.toISOString(),
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ queued: 3 });
    const rows = await t.ctx.db.query<{ id: string; status: string; attempts: number; last_error: string | null }>(
      'SELECT id, status, attempts, last_error FROM webhook_deliveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of [atSince, justBeforeUntil, dead]) {
      expect(byId.get(id)).toMatchObject({ status: 'PENDING', attempts: 0, last_error: null });
    }
    expect(byId.get(justBeforeSince)?.status).toBe('DEAD');
    expect(byId.get(atUntil)?.status).toBe('FAILED');
    expect(byId.get(delivered)?.status).toBe('DELIVERED');
    // A small recovery is done when it answers: nothing is left for the worker to feed.
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_recoveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });

  it('without until recovers up to now, and the requeued deliveries are delivered', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const ids = await seedExhaustedDeliveries(t, h.partner.id, h.hook.id, [
      { status: 'DEAD', createdAt: new Date(t.clock.nowMs() - 10 * HOUR_MS) },
      { status: 'FAILED', createdAt: new Date(t.clock.nowMs() - 1000) },
    ]);
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: new Date(t.clock.nowMs() - 11 * HOUR_MS).toISOString(),
    });
    expect(res.json()).toEqual({ queued: 2 });
    const items = await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.filter((x) => x.status === 'DELIVERED').length === 2);
    expect(items.map((d) => d.id).sort()).toEqual([...ids].sort());
  });

  it(`queues a large window ${RECOVERY_BATCH} at a time: the next batch only once the webhook has room`, async () => {
    const h = await createEndpoint(t, receiver);
    const total = RECOVERY_BATCH * 3 + 50;
    const base = t.clock.nowMs() - 5 * HOUR_MS;
    await seedExhaustedDeliveries(
      t,
      h.partner.id,
      h.hook.id,
      Array.from({ length: total }, (_, i) => ({
        status: i % 2 ? ('DEAD' as const) : ('FAILED' as const),
        createdAt: new Date(base + i),
      })),
    );
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, {
      since: new Date(base).toISOString(),
    });
    expect(res.json()).toEqual({ queued: total });
    // The request queued the first batch, the oldest; the rest waits.
    expect(await statusCounts(t, h.hook.id)).toEqual({
      PENDING: RECOVERY_BATCH,
      FAILED: (total - RECOVERY_BATCH) / 2,
      DEAD: (total - RECOVERY_BATCH) / 2,
    });
    const oldestPending = await t.ctx.db.query<{ created_at: Date }>(
      "SELECT max(created_at) AS created_at FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING'",
      [h.hook.id],
    );
    expect(oldestPending[0].created_at.getTime()).toBe(base + RECOVERY_BATCH - 1);
    // While the batch is still queued, feeding adds nothing.
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    // As deliveries go out, each feed tops the webhook up to a batch, oldest first.
    await t.ctx.db.query(
      `UPDATE webhook_deliveries SET status = 'DELIVERED' WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING' ORDER BY created_at LIMIT 60)`,
      [h.hook.id],
    );
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(60);
    expect((await statusCounts(t, h.hook.id)).PENDING).toBe(RECOVERY_BATCH);
    // A disabled webhook's recovery waits; switched on again, it goes on.
    await t.ctx.db.query("UPDATE webhook_deliveries SET status = 'DELIVERED' WHERE webhook_id = $1 AND status = 'PENDING'", [
      h.hook.id,
    ]);
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [h.hook.id]);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    await t.ctx.db.query('UPDATE webhooks SET is_active = true WHERE id = $1', [h.hook.id]);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(RECOVERY_BATCH);
    await t.ctx.db.query("UPDATE webhook_deliveries SET status = 'FAILED' WHERE webhook_id = $1 AND status = 'PENDING'", [
      h.hook.id,
    ]);
    // The last step takes what is left and ends the recovery; deliveries it queued and that failed again stay behind the cursor.
    const left = total - RECOVERY_BATCH - 60 - RECOVERY_BATCH;
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(left);
    expect((await feedRecoveries(t.ctx, RECOVERY_BATCH)).requeued).toBe(0);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_recoveries WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });

  it("a recovering endpoint that hangs holds a batch at most, and another partner's deliveries go out meanwhile", async () => {
    // Hung attempts must not time out while the test looks (a timed-out one would make room for more).
    startTestWorker(t, { attemptTimeoutMs: 60_000, leaseMs: 120_000 });
    const slow = await createEndpoint(t, receiver);
    receiver.on(slow.path, { hang: true });
    const total = RECOVERY_BATCH * 3;
    const base = t.clock.nowMs() - HOUR_MS;
    await seedExhaustedDeliveries(
      t,
      slow.partner.id,
      slow.hook.id,
      Array.from({ length: total }, (_, i) => ({ status: 'DEAD' as const, createdAt: new Date(base + i) })),
    );
    const res = await callAs(t, slow.partner, 'POST', `/v1/developer/webhooks/${slow.hook.id}/recover`, {
      since: new Date(base).toISOString(),
    });
    expect(res.json()).toEqual({ queued: total });
    await waitFor(() => receiver.hungCount(slow.path) === 8);
    const other = await createEndpoint(t, receiver);
    const ping = await sendTestEvent(t, other.partner, other.hook.id);
    await waitForDeliveries(t, other.partner, other.hook.id, (d) => d.some((x) => x.id === ping.id && x.status === 'DELIVERED'));
    const counts = await statusCounts(t, slow.hook.id);
    expect(counts.PENDING).toBe(RECOVERY_BATCH);
    expect(counts.DEAD).toBe(total - RECOVERY_BATCH);
    // Once the endpoint answers, the whole window goes out.
    receiver.on(slow.path, { status: 200 });
    receiver.releaseHung(200, slow.path);
    await waitFor(async () => (await statusCounts(t, slow.hook.id)).DELIVERED === total, 60_000);
  }, 90_000);

  it('refuses since older than 35 days, since not before until, and unknown fields, naming the field', async () => {
    const h = await createEndpoint(t, receiver);
    const url = `/v1/developer/webhooks/${h.hook.id}/recover`;
    const now = t.clock.nowMs();
    const cases: Array<[unknown, string]> = [
      [{ since: new Date(now - 36 * 24 * HOUR_MS).toISOString() }, 'since'],
      [{ since: new Date(now - HOUR_MS).toISOString(), until: new Date(now - 2 * HOUR_MS).toISOString() }, 'since'],
      [{ since: new Date(now - HOUR_MS).toISOString(), until: new Date(now - HOUR_MS).toISOString() }, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{}, 'since'],
      [{ since: new Date(now - HOUR_MS).toISOString(), until: 5 }, 'until'],
      [{ since: new Date(now - HOUR_MS).toISOString(), limit: 5 }, 'limit'],
    ];
    for (const [payload, field] of cases) {
      const res = await callAs(t, h.partner, 'POST', url, payload);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(
        res.json().details.map((d: { field: string }) => d.field),
        JSON.stringify(payload),
      ).toContain(field);
    }
    // 35 days back (less the moment the request takes) is allowed.
    expect(
      (await callAs(t, h.partner, 'POST', url, { since: new Date(now - 35 * 24 * HOUR_MS + 60_000).toISOString() })).statusCode,
    ).toBe(202);
  });

  it('answers 409 ERR_WEBHOOK_DISABLED on a disabled webhook, 404 for a malformed id', async () => {
    const h = await createEndpoint(t, receiver);
    const since = new Date(t.clock.nowMs() - HOUR_MS).toISOString();
    expectError(await callAs(t, h.partner, 'POST', '/v1/developer/webhooks/nope/recover', { since }), 404, 'ERR_NOT_FOUND');
    await t.ctx.db.query('UPDATE webhooks SET is_active = false WHERE id = $1', [h.hook.id]);
    expectError(
      await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/recover`, { since }),
      409,
      'ERR_WEBHOOK_DISABLED',
    );
  });
});
