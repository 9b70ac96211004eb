/**
 * The worker's "record" step: outcomes of attempts written in batches, each with its attempt log row
 * (the SQL, fenced by lease tokens, is src/modules/webhooks/queue/record-outcomes.ts).
 */
import type { Db } from '../db/db.js';
import {
  type PendingOutcome,
  type RecordedOutcome,
  recordFailed,
  recordOutcomes,
} from '../modules/webhooks/queue/record-outcomes.js';
import { afterFailedAttempt } from '../modules/webhooks/retry-schedule.js';

/**
 * Gathers the outcomes of attempts that end at about the same time and writes them together: while one
 * write is in flight, the next outcomes queue, and go in the next write as one batch. Under load the
 * batches grow by themselves; an outcome alone is written on the next turn of the event loop (no
 * timer, no measurable latency).
 * A final failure (DEAD) moves the webhook's streak and may disable it, so it keeps its own
 * transaction (recordFailed).
 */
export class OutcomeWriter {
  private queue: { outcome: PendingOutcome; resolve: (r: RecordedOutcome | null) => void; reject: (e: unknown) => void }[] = [];
  /** A drain is scheduled or running; outcomes queued meanwhile join its next batch. */
  private draining = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch = 500,
  ) {}

  record(outcome: PendingOutcome): Promise<RecordedOutcome | null> {
    if (outcome.error !== null && afterFailedAttempt(outcome.claimed.attempts + 1, outcome.atMs).status === 'DEAD') {
      const failure = { statusCode: outcome.statusCode, error: outcome.error, attempt: outcome.attempt };
      return recordFailed(outcome.claimed, failure, outcome.atMs, this.db);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ outcome, resolve, reject });
      // Started on the next turn of the event loop, so every attempt that finished in this one (their
      // responses arrive together) goes in the same write.
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const written = await recordOutcomes(
            batch.map((b) => b.outcome),
            this.db,
          );
          for (const b of batch) {
            const row = written.get(b.outcome.claimed.id);
            b.resolve(row ? { delivery: row.delivery, webhookDisabled: false, webhook: row.webhook } : null);
          }
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
