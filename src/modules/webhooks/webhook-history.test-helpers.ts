/**
 * Delivery histories the webhook tests need as a given, inserted directly into webhook_deliveries as
 * the worker would have left them (no worker runs for them).
 */
import type { TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';

export type SeededStatus = 'FAILED' | 'DEAD' | 'DELIVERED' | 'PENDING';

/**
 * `n` deliveries one second apart (oldest first), one attempt each, statuses cycling through `statuses`:
 * a DELIVERED one answered 200, any other 500.
 */
export async function seedDeliveryLog(
  t: TestApp,
  partnerId: string,
  webhookId: string,
  n: number,
  statuses: SeededStatus[] = ['DELIVERED'],
): Promise<string[]> {
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

/**
 * Deliveries of `webhookId` with the given statuses and creation times, each at the end of its schedule
 * (6 attempts, last answered 500; a FAILED one due again in an hour), as a history to recover holds them.
 */
export async function seedExhaustedDeliveries(
  t: TestApp,
  partnerId: string,
  webhookId: string,
  rows: Array<{ status: SeededStatus; createdAt: Date }>,
): Promise<string[]> {
  const ids = rows.map(() => newId());
  await t.ctx.db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, partner_id, event_id, event_type, body, status, attempts, status_code,
                                     last_error, next_attempt_at, created_at, updated_at)
     SELECT i, $1, $2, 'evt_seed_' || i::text, 'order.placed', '{"seeded":true}', s, 6, 500, 'HTTP 500',
            CASE WHEN s = 'FAILED' THEN $5::timestamptz + interval '1 hour' END, c, c
       FROM unnest($3::uuid[], $4::text[], $6::timestamptz[]) AS x(i, s, c)`,
    [webhookId, partnerId, ids, rows.map((r) => r.status), t.clock.now(), rows.map((r) => r.createdAt)],
  );
  return ids;
}

/** How many deliveries of the webhook are in each status. */
export async function statusCounts(t: TestApp, webhookId: string): Promise<Record<string, number>> {
  const rows = await t.ctx.db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY status',
    [webhookId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
