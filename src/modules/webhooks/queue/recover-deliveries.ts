/**
 * Queue: recoveries (POST …/webhooks/{id}/recover, docs/decisions-log.md, 'Webhook operations'). Every FAILED or DEAD delivery of the
 * webhook created in [since, until) is queued again as a redeliver does, but not all at once.
 *
 * Why in batches. Requeued deliveries are due at once, and the claim scans the due index oldest first.
 * Queuing 100,000 of them in one statement would make one huge transaction, and leave 100,000 due rows
 * of one webhook in front of everything queued after them: every claim would walk through them (the
 * per-webhook cap keeps them from being sent more than 8 at a time, so they would sit there for
 * minutes), and each scan would cost that much. Instead a recovery is a row with a cursor, and the
 * worker's feeder (src/worker/recovery-feeder.ts) tops the webhook up: whenever fewer than a batch of
 * the webhook's deliveries are PENDING, it queues the next ones, oldest first, up to a batch. So the
 * due index never holds more than a batch of a recovering webhook's rows, each feed is one short
 * transaction, recoveries of several webhooks are fed side by side (round robin, each its own batch),
 * and other partners' deliveries are claimed as usual between them. The request itself queues the
 * first batch (a small recovery is done when it answers) and the count it answers is what matched then.
 *
 * The cursor `(created_at, id)` is the last delivery queued: a requeued delivery that fails again is
 * behind it and is not queued a second time by the same recovery. A webhook switched off pauses its
 * recoveries (the feeder skips it; its deliveries would not be claimed anyway); deleting it removes
 * them (ON DELETE CASCADE).
 */
import type { Queryable } from '../../../db/db.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from './delivery-rows.js';

/** Deliveries of a recovery queued at a time, per webhook: a dozen waves of the per-webhook cap (8). */
export const RECOVERY_BATCH = 100;

export interface RecoveryWindow {
  since: Date;
  until: Date;
}

/** FAILED and DEAD deliveries of the window: two ranges of the (webhook_id, status, created_at) index. */
export async function countRecoverable(
  partnerId: string,
  webhookId: string,
  window: RecoveryWindow,
  q: Queryable,
): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries d
      WHERE d.partner_id = $1 AND d.webhook_id = $2 AND d.status IN ('FAILED', 'DEAD') AND d.created_at >= $3 AND d.created_at < $4`,
    [partnerId, webhookId, window.since, window.until],
  );
  return rows[0].n;
}

export async function insertRecovery(
  recovery: { id: string; partnerId: string; webhookId: string; window: RecoveryWindow; now: Date },
  q: Queryable,
): Promise<void> {
  await q.query(
    `INSERT INTO webhook_recoveries (id, webhook_id, partner_id, since, until, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [recovery.id, recovery.webhookId, recovery.partnerId, recovery.window.since, recovery.window.until, recovery.now],
  );
}

/** Recoveries whose webhook is on, oldest first (the feeder's round). */
export async function listActiveRecoveries(limit: number, q: Queryable): Promise<string[]> {
  const rows = await q.query<{ id: string }>(
    `SELECT r.id FROM webhook_recoveries r JOIN webhooks w ON w.id = r.webhook_id
      WHERE w.is_active ORDER BY r.created_at, r.id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.id);
}

export interface FeedResult {
  /** Deliveries queued again by this step. */
  requeued: DeliveryRow[];
  /** The recovery is over (its window is exhausted) and its row is gone. */
  finished: boolean;
}

/**
 * One step of a recovery, in the caller's transaction: lock its row (a recovery another worker is
 * feeding right now is skipped: null), count the webhook's PENDING deliveries up to `batch`, queue the
 * next `batch - pending` deliveries of the window after the cursor, move the cursor, and delete the row
 * once nothing is left. Two index ranges (FAILED, DEAD) merged in order, LIMITed: a step costs about
 * a batch of rows however large the window.
 */
export async function feedRecovery(recoveryId: string, batch: number, now: Date, q: Queryable): Promise<FeedResult | null> {
  const [recovery] = await q.query<{
    webhook_id: string;
    partner_id: string;
    since: Date;
    until: Date;
    cursor_created_at: Date | null;
    cursor_id: string | null;
  }>(
    `SELECT webhook_id, partner_id, since, until, cursor_created_at, cursor_id FROM webhook_recoveries
      WHERE id = $1 FOR UPDATE SKIP LOCKED`,
    [recoveryId],
  );
  if (!recovery) return null;
  const [{ pending }] = await q.query<{ pending: number }>(
    `SELECT count(*)::int AS pending FROM (
       SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING' LIMIT $2) p`,
    [recovery.webhook_id, batch],
  );
  const room = batch - pending;
  if (room <= 0) return { requeued: [], finished: false };
  // Rows after the cursor: (created_at, id) > cursor; the first step starts at `since`.
  const after = recovery.cursor_created_at ?? new Date(recovery.since.getTime() - 1);
  const afterId = recovery.cursor_id ?? 'ffffffff-ffff-ffff-ffff-ffffffffffff';
  const next = (status: string) =>
    `(SELECT id, created_at FROM webhook_deliveries
       WHERE webhook_id = $1 AND status = '${status}' AND created_at >= $2 AND created_at < $3 AND (created_at, id) > ($4, $5::uuid)
       ORDER BY created_at, id LIMIT $6)`;
  const requeued = await q.query<DeliveryRow>(
    `WITH picked AS (
       SELECT id FROM (${next('FAILED')} UNION ALL ${next('DEAD')}) c ORDER BY created_at, id LIMIT $6
     )
     UPDATE webhook_deliveries d SET
         status = 'PENDING', attempts = 0, status_code = NULL, last_error = NULL, delivered_at = NULL,
         next_attempt_at = $7, locked_until = NULL, lease_token = NULL, updated_at = $7
       FROM picked WHERE d.id = picked.id
       RETURNING ${DELIVERY_COLUMNS}`,
    [recovery.webhook_id, recovery.since, recovery.until, after, afterId, room, now],
  );
  requeued.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
  const last = requeued.at(-1);
  if (requeued.length < room) {
    await q.query('DELETE FROM webhook_recoveries WHERE id = $1', [recoveryId]);
    return { requeued, finished: true };
  }
  if (last) {
    await q.query('UPDATE webhook_recoveries SET cursor_created_at = $2, cursor_id = $3 WHERE id = $1', [
      recoveryId,
      last.created_at,
      last.id,
    ]);
  }
  return { requeued, finished: false };
}
