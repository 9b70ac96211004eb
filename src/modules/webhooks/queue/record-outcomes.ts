/**
 * Queue: the outcome of an attempt recorded, with the attempt itself (docs/decisions-log.md, 'Webhook operations': number, time,
 * duration, status, error, the headers sent, the endpoint's answer) in the SAME statement, so the attempt
 * log costs no round trip. Every write is fenced by the lease token of the claim: if the row was taken
 * over (our lease expired and another worker claimed it) or reset by a redeliver, the update matches
 * nothing, and neither the stale outcome nor its attempt is recorded. The webhook's failure streak
 * changes in the same transaction as the delivery that moved it, and the statement hands back the
 * webhook when it changed (webhook.updated).
 */
import type { Db, Queryable } from '../../../db/db.js';
import { AUTO_DISABLE_AFTER_DEAD, afterFailedAttempt } from '../delivery/retry-schedule.js';
import { webhookJsonSql } from '../webhooks.repo.js';
import type { DeveloperWebhook } from '../webhooks.schemas.js';
import type { ClaimedDelivery } from './claim-due-deliveries.js';
import { DELIVERY_COLUMNS, type DeliveryRow } from './delivery-rows.js';

/** What the attempt log keeps of one attempt, besides its outcome. */
export interface AttemptLog {
  /** Service clock: when the attempt started. */
  startedAtMs: number;
  durationMs: number;
  /** Content-Type and the X-Partner-* headers sent (never anything secret beyond the signature). */
  requestHeaders: Record<string, string>;
  /** null: the endpoint never answered (network failure, timeout before the headers). */
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
}

export interface RecordedOutcome {
  delivery: DeliveryRow;
  /** The webhook was switched off by this outcome (the 50th dead delivery in a row). */
  webhookDisabled: boolean;
  /** The webhook as this outcome left it, when it changed it (streak, isActive); null otherwise. */
  webhook: DeveloperWebhook | null;
}

/** The attempt log row, inserted from `done` (the updated delivery, whose attempt_seq numbers it) and `x`. */
const INSERT_ATTEMPT = `INSERT INTO webhook_delivery_attempts
    (delivery_id, number, webhook_id, at, duration_ms, outcome, status_code, error, request_headers, response_headers, response_body)`;

export async function recordFailed(
  claimed: ClaimedDelivery,
  failure: { statusCode: number | null; error: string; attempt: AttemptLog },
  nowMs: number,
  db: Db,
): Promise<RecordedOutcome | null> {
  const now = new Date(nowMs);
  // The lease fences the row, so `attempts` cannot have changed since the claim.
  const outcome = afterFailedAttempt(claimed.attempts + 1, nowMs);
  const { attempt } = failure;
  return db.tx(async (q) => {
    const rows = await q.query<DeliveryRow>(
      `WITH done AS (
         UPDATE webhook_deliveries d SET
             status = $3, attempts = attempts + 1, attempt_seq = attempt_seq + 1, status_code = $4, last_error = $5,
             next_attempt_at = $6, locked_until = NULL, lease_token = NULL, updated_at = $7
           WHERE d.id = $1 AND d.lease_token = $2
           RETURNING ${DELIVERY_COLUMNS}, d.attempt_seq
       ), logged AS (
         ${INSERT_ATTEMPT}
         SELECT done.id, done.attempt_seq, done.webhook_id, $8, $9, done.status, $4, $5, $10::jsonb, $11::jsonb, $12 FROM done
       )
       SELECT * FROM done`,
      [
        claimed.id,
        claimed.leaseToken,
        outcome.status,
        failure.statusCode,
        failure.error,
        outcome.nextAttemptAtMs === null ? null : new Date(outcome.nextAttemptAtMs),
        now,
        new Date(attempt.startedAtMs),
        attempt.durationMs,
        JSON.stringify(attempt.requestHeaders),
        attempt.responseHeaders === null ? null : JSON.stringify(attempt.responseHeaders),
        attempt.responseBody,
      ],
    );
    if (!rows[0]) return null;
    if (outcome.status !== 'DEAD') return { delivery: rows[0], webhookDisabled: false, webhook: null };
    // One more dead delivery in a row; the 50th switches the webhook off. SET expressions read the old
    // values, so both columns see the same count.
    const streak = await q.query<{ consecutive_failures: number; is_active: boolean; webhook: DeveloperWebhook }>(
      `UPDATE webhooks w SET
          consecutive_failures = consecutive_failures + 1,
          is_active = is_active AND consecutive_failures + 1 < $2,
          updated_at = $3
        WHERE id = $1
        RETURNING consecutive_failures, is_active, ${webhookJsonSql('w')} AS webhook`,
      [claimed.webhookId, AUTO_DISABLE_AFTER_DEAD, now],
    );
    // Increments are serialised by the row lock, so exactly one outcome sees the streak reach the limit.
    const webhookDisabled = Boolean(
      streak[0] && !streak[0].is_active && streak[0].consecutive_failures === AUTO_DISABLE_AFTER_DEAD,
    );
    return { delivery: rows[0], webhookDisabled, webhook: streak[0]?.webhook ?? null };
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
  attempt: AttemptLog;
}

/** A recorded row of the batch, and the webhook when the batch reset its streak. */
export interface BatchRow {
  delivery: DeliveryRow;
  webhook: DeveloperWebhook | null;
}

/**
 * Writes many outcomes that end no streak-counting state (DELIVERED, or FAILED with a retry left) in
 * ONE statement: the deliveries are updated under their lease tokens, their attempts are logged and,
 * for those delivered, the webhooks' dead streaks are reset, atomically (a single statement is its own
 * transaction). Returns the rows that were still ours, by delivery id; an outcome whose lease was lost
 * is simply absent. A webhook whose streak was reset comes back with the first of its rows.
 *
 * This is what makes the queue fast: one round trip (and, on PGlite, one turn of the single session)
 * records a whole wave of attempts instead of a BEGIN / UPDATE / INSERT / UPDATE / COMMIT per attempt.
 */
export async function recordOutcomes(outcomes: PendingOutcome[], db: Queryable): Promise<Map<string, BatchRow>> {
  if (outcomes.length === 0) return new Map();
  const rows = await db.query<DeliveryRow & { attempt_seq: number; webhook: DeveloperWebhook | null }>(
    `WITH x AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[],
                            $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[])
                  AS x(id, token, code, error, at, next_at, started, duration, req, res_headers, res_body)
     ), done AS (
       UPDATE webhook_deliveries d SET
           status = CASE WHEN x.error IS NULL THEN 'DELIVERED' ELSE 'FAILED' END,
           attempts = d.attempts + 1, attempt_seq = d.attempt_seq + 1, status_code = x.code, last_error = x.error,
           delivered_at = CASE WHEN x.error IS NULL THEN x.at END,
           next_attempt_at = x.next_at, locked_until = NULL, lease_token = NULL, updated_at = x.at
         FROM x
        WHERE d.id = x.id AND d.lease_token = x.token
        RETURNING ${DELIVERY_COLUMNS}, d.attempt_seq
     ), logged AS (
       ${INSERT_ATTEMPT}
       SELECT done.id, done.attempt_seq, done.webhook_id, x.started, x.duration, done.status, x.code, x.error,
              x.req::jsonb, x.res_headers::jsonb, x.res_body
         FROM done JOIN x ON x.id = done.id
     ), reset AS (
       -- A delivered event ends the streak of dead ones.
       UPDATE webhooks w SET consecutive_failures = 0, updated_at = (SELECT max(at) FROM x)
        WHERE w.id IN (SELECT webhook_id FROM done WHERE status = 'DELIVERED') AND w.consecutive_failures <> 0
        RETURNING w.id, ${webhookJsonSql('w')} AS webhook
     )
     SELECT done.*, reset.webhook FROM done LEFT JOIN reset ON reset.id = done.webhook_id`,
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
      outcomes.map((o) => new Date(o.attempt.startedAtMs)),
      outcomes.map((o) => o.attempt.durationMs),
      outcomes.map((o) => JSON.stringify(o.attempt.requestHeaders)),
      outcomes.map((o) => (o.attempt.responseHeaders === null ? null : JSON.stringify(o.attempt.responseHeaders))),
      outcomes.map((o) => o.attempt.responseBody),
    ],
  );
  const out = new Map<string, BatchRow>();
  const announced = new Set<string>();
  for (const { webhook, attempt_seq: _seq, ...delivery } of rows) {
    const first = webhook !== null && !announced.has(webhook.id);
    if (first) announced.add(webhook.id);
    out.set(delivery.id, { delivery, webhook: first ? webhook : null });
  }
  return out;
}
