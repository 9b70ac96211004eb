/**
 * Queue: the outcome of an attempt recorded. Every write is fenced by the lease token of the claim: if the
 * row was taken over (our lease expired and another worker claimed it) or reset by a redeliver, the
 * update matches nothing and the stale outcome is dropped. The webhook's failure streak changes in
 * the same transaction as the delivery that moved it.
 */
import type { Db, Queryable } from '../../../db/db.js';
import { AUTO_DISABLE_AFTER_DEAD, afterFailedAttempt } from '../retry-schedule.js';
import type { ClaimedDelivery } from './claim-due-deliveries.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from './delivery-rows.js';

export interface RecordedOutcome {
  delivery: DeliveryRow;
  /** The webhook was switched off by this outcome (the 50th dead delivery in a row). */
  webhookDisabled: boolean;
}

export async function recordDelivered(
  claimed: ClaimedDelivery,
  statusCode: number,
  nowMs: number,
  db: Db,
): Promise<RecordedOutcome | null> {
  const now = new Date(nowMs);
  return db.tx(async (q) => {
    const rows = await q.query<DeliveryRow>(
      `UPDATE webhook_deliveries d SET
          status = 'DELIVERED', attempts = attempts + 1, status_code = $3, last_error = NULL,
          delivered_at = $4, next_attempt_at = NULL, locked_until = NULL, lease_token = NULL, updated_at = $4
        WHERE d.id = $1 AND d.lease_token = $2
        RETURNING ${DELIVERY_COLUMNS}`,
      [claimed.id, claimed.leaseToken, statusCode, now],
    );
    if (!rows[0]) return null;
    // A delivered event ends the streak of dead ones.
    await q.query('UPDATE webhooks SET consecutive_failures = 0, updated_at = $2 WHERE id = $1 AND consecutive_failures <> 0', [
      claimed.webhookId,
      now,
    ]);
    return { delivery: rows[0], webhookDisabled: false };
  });
}

export async function recordFailed(
  claimed: ClaimedDelivery,
  failure: { statusCode: number | null; error: string },
  nowMs: number,
  db: Db,
): Promise<RecordedOutcome | null> {
  const now = new Date(nowMs);
  // The lease fences the row, so `attempts` cannot have changed since the claim.
  const outcome = afterFailedAttempt(claimed.attempts + 1, nowMs);
  return db.tx(async (q) => {
    const rows = await q.query<DeliveryRow>(
      `UPDATE webhook_deliveries d SET
          status = $3, attempts = attempts + 1, status_code = $4, last_error = $5,
          next_attempt_at = $6, locked_until = NULL, lease_token = NULL, updated_at = $7
        WHERE d.id = $1 AND d.lease_token = $2
        RETURNING ${DELIVERY_COLUMNS}`,
      [
        claimed.id,
        claimed.leaseToken,
        outcome.status,
        failure.statusCode,
        failure.error,
        outcome.nextAttemptAtMs === null ? null : new Date(outcome.nextAttemptAtMs),
        now,
      ],
    );
    if (!rows[0]) return null;
    if (outcome.status !== 'DEAD') return { delivery: rows[0], webhookDisabled: false };
    // One more dead delivery in a row; the 50th switches the webhook off. SET expressions read the old
    // values, so both columns see the same count.
    const streak = await q.query<{ consecutive_failures: number; is_active: boolean }>(
      `UPDATE webhooks SET
          consecutive_failures = consecutive_failures + 1,
          is_active = is_active AND consecutive_failures + 1 < $2,
          updated_at = $3
        WHERE id = $1
        RETURNING consecutive_failures, is_active`,
      [claimed.webhookId, AUTO_DISABLE_AFTER_DEAD, now],
    );
    // Increments are serialised by the row lock, so exactly one outcome sees the streak reach the limit.
    const webhookDisabled = Boolean(
      streak[0] && !streak[0].is_active && streak[0].consecutive_failures === AUTO_DISABLE_AFTER_DEAD,
    );
    return { delivery: rows[0], webhookDisabled };
  });
}

/** A non-final outcome of one attempt, waiting to be written with others. */
export interface PendingOutcome {
  claimed: ClaimedDelivery;
  statusCode: number | null;
  /** null: delivered. */
  error: string | null;
  /** Service-clock time of the outcome (delivered_at / updated_at, the base of the next retry). */
  atMs: number;
}

/**
 * Writes many outcomes that end no streak-counting state (DELIVERED, or FAILED with a retry left) in
 * ONE statement: the deliveries are updated under their lease tokens and, for those delivered, the
 * webhooks' dead streaks are reset, atomically (a single statement is its own transaction). Returns
 * the rows that were still ours, by delivery id; an outcome whose lease was lost is simply absent.
 *
 * This is what makes the queue fast: one round trip (and, on PGlite, one turn of the single session)
 * records a whole wave of attempts instead of a BEGIN / UPDATE / UPDATE / COMMIT per attempt.
 */
export async function recordOutcomes(outcomes: PendingOutcome[], db: Queryable): Promise<Map<string, DeliveryRow>> {
  if (outcomes.length === 0) return new Map();
  const rows = await db.query<DeliveryRow>(
    `WITH x AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[])
                  AS x(id, token, code, error, at, next_at)
     ), done AS (
       UPDATE webhook_deliveries d SET
           status = CASE WHEN x.error IS NULL THEN 'DELIVERED' ELSE 'FAILED' END,
           attempts = d.attempts + 1, status_code = x.code, last_error = x.error,
           delivered_at = CASE WHEN x.error IS NULL THEN x.at END,
           next_attempt_at = x.next_at, locked_until = NULL, lease_token = NULL, updated_at = x.at
         FROM x
        WHERE d.id = x.id AND d.lease_token = x.token
        RETURNING ${DELIVERY_COLUMNS}
     ), reset AS (
       -- A delivered event ends the streak of dead ones.
       UPDATE webhooks w SET consecutive_failures = 0, updated_at = (SELECT max(at) FROM x)
        WHERE w.id IN (SELECT webhook_id FROM done WHERE status = 'DELIVERED') AND w.consecutive_failures <> 0
     )
     SELECT * FROM done`,
    [
      outcomes.map((o) => o.claimed.id),
      outcomes.map((o) => o.claimed.leaseToken),
      outcomes.map((o) => o.statusCode),
      outcomes.map((o) => o.error),
      outcomes.map((o) => new Date(o.atMs)),
      outcomes.map((o) => {
        if (o.error === null) return null;
        const next = afterFailedAttempt(o.claimed.attempts + 1, o.atMs);
        if (next.status === 'DEAD') throw new RangeError('a final failure is recorded by recordFailed');
        return new Date(next.nextAttemptAtMs);
      }),
    ],
  );
  return new Map(rows.map((r) => [r.id, r]));
}
