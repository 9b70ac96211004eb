/**
 * Retention (docs/decisions-log.md, 'Webhooks'): purgeExpired drops deliveries and processed
 * outbox rows older than 35 days, runs the other domains' retention, and the worker runs it by itself.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../test/wait.js';
import {
  createEndpoint,
  receiver,
  setUpAppWithReceiver,
  t,
  type WebhookEndpoint,
} from '../modules/webhooks/webhooks.test-helpers.js';
import { newId } from '../shared/ids.js';
import { purgeExpired } from './purge.js';
import { startWorker } from './worker.js';

const DAY_MS = 86_400_000;

setUpAppWithReceiver();

const setup = () => createEndpoint(t, receiver, { events: ['order.placed'] });

describe('retention', () => {
  async function insertDelivery(h: WebhookEndpoint, status: string, createdAt: Date, updatedAt = createdAt) {
    const id = newId();
    await t.ctx.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'order.placed', '{}', $5, 1, $6, $7, $8)`,
      [
        id,
        h.hook.id,
        h.partner.id,
        `evt_${id}`,
        status,
        status === 'FAILED' ? new Date(t.clock.nowMs() + 3_600_000) : null,
        createdAt,
        updatedAt,
      ],
    );
    return id;
  }
  async function insertOutbox(createdAt: Date, processed: boolean) {
    const eventId = `evt_${newId()}`;
    await t.ctx.db.query(
      `INSERT INTO outbox (event_id, type, environment, data, created_at, processed_at) VALUES ($1, 'order.placed', 'LIVE', '{}', $2, $3)`,
      [eventId, createdAt, processed ? createdAt : null],
    );
    return eventId;
  }
  async function exists(table: 'webhook_deliveries' | 'outbox', column: string, value: string) {
    return (await t.ctx.db.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [value])).length === 1;
  }

  it('purges deliveries and processed outbox rows older than 35 days, and nothing else', async () => {
    const h = await setup();
    const now = t.clock.nowMs();
    const oldDelivered = await insertDelivery(h, 'DELIVERED', new Date(now - 36 * DAY_MS));
    const oldDead = await insertDelivery(h, 'DEAD', new Date(now - 40 * DAY_MS));
    const oldButRedelivered = await insertDelivery(h, 'FAILED', new Date(now - 36 * DAY_MS), new Date(now - DAY_MS));
    const young = await insertDelivery(h, 'DELIVERED', new Date(now - 34 * DAY_MS));
    const oldProcessed = await insertOutbox(new Date(now - 36 * DAY_MS), true);
    const youngProcessed = await insertOutbox(new Date(now - 34 * DAY_MS), true);

    const result = await purgeExpired(t.ctx);
    expect(result.deliveries).toBeGreaterThanOrEqual(2);
    expect(result.outbox).toBeGreaterThanOrEqual(1);
    expect(await exists('webhook_deliveries', 'id', oldDelivered)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', oldDead)).toBe(false);
    expect(await exists('webhook_deliveries', 'id', oldButRedelivered)).toBe(true);
    expect(await exists('webhook_deliveries', 'id', young)).toBe(true);
    expect(await exists('outbox', 'event_id', oldProcessed)).toBe(false);
    expect(await exists('outbox', 'event_id', youngProcessed)).toBe(true);
    expect(await purgeExpired(t.ctx)).toEqual({ deliveries: 0, outbox: 0 });
  });

  it("also runs the other domains' retention: usage counters past 35 days, idempotency keys past 24 h", async () => {
    const h = await setup();
    const now = t.clock.nowMs();
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    await t.ctx.db.query('INSERT INTO api_key_usage (api_key_id, day, requests) VALUES ($1, $2, 5), ($1, $3, 7)', [
      h.key.id,
      day(now - 40 * DAY_MS),
      day(now - DAY_MS),
    ]);
    await t.ctx.db.query(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, 'old', 'h', 201, '{}', $2), ($1, 'fresh', 'h', 201, '{}', $3)`,
      [h.key.id, new Date(now - 2 * DAY_MS), new Date(now - 60_000)],
    );
    await purgeExpired(t.ctx);
    const usage = await t.ctx.db.query<{ requests: number }>('SELECT requests FROM api_key_usage WHERE api_key_id = $1', [
      h.key.id,
    ]);
    expect(usage.map((u) => u.requests)).toEqual([7]);
    const keys = await t.ctx.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE api_key_id = $1', [h.key.id]);
    expect(keys.map((k) => k.key)).toEqual(['fresh']);
  });

  it('the worker purges by itself once the clock has moved 35 days on', async () => {
    const h = await setup();
    const id = await insertDelivery(h, 'DELIVERED', t.clock.now());
    const worker = startWorker(t.ctx, { pollIntervalMs: 50 });
    try {
      t.clock.advance(35 * 86_400 + 60);
      await waitFor(async () => !(await exists('webhook_deliveries', 'id', id)));
    } finally {
      await worker.stop();
    }
  });
});
