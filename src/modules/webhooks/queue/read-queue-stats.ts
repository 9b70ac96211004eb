/**
 * Queue: the figures the metrics report about it (docs/operating.md, "Metrics"), read when Prometheus
 * scrapes, never per request. One statement: the depth counts the due index's partial range (PENDING and
 * FAILED rows); the oldest due row is the first of that index's order; the outbox's oldest unprocessed
 * row is the first of its pending index (ids grow with time, so the lowest id is the oldest).
 */
import type { Queryable } from '../../../db/db.js';
import type { QueueStats } from '../../../metrics/metrics.js';

export async function readQueueStats(nowMs: number, db: Queryable): Promise<QueueStats> {
  const now = new Date(nowMs);
  const [row] = await db.query<{ depth: number; oldestDue: Date | null; oldestOutbox: Date | null }>(
    `SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE status IN ('PENDING', 'FAILED')) AS depth,
            (SELECT next_attempt_at FROM webhook_deliveries
              WHERE status IN ('PENDING', 'FAILED') AND next_attempt_at <= $1
              ORDER BY next_attempt_at, id LIMIT 1) AS "oldestDue",
            (SELECT created_at FROM outbox WHERE processed_at IS NULL ORDER BY id LIMIT 1) AS "oldestOutbox"`,
    [now],
  );
  const ageSec = (at: Date | null) => (at === null ? 0 : Math.max(0, (nowMs - new Date(at).getTime()) / 1000));
  return { depth: row.depth, oldestDueAgeSec: ageSec(row.oldestDue), outboxLagSec: ageSec(row.oldestOutbox) };
}
