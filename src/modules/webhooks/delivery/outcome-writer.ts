/**
 * The worker's "record" step: outcomes of attempts written in batches, each with its attempt log row
 * (the SQL, fenced by lease tokens, is src/modules/webhooks/queue/record-outcomes.ts).
 */
import type { Db } from '../../../db/db.js';
import { type BatchEntry, Batcher } from '../../../shared/batcher.js';
import { type PendingOutcome, type RecordedOutcome, recordFailed, recordOutcomes } from '../queue/record-outcomes.js';
import { afterFailedAttempt } from './retry-schedule.js';

/**
 * Gathers the outcomes of attempts that end at about the same time and writes them together
 * (src/shared/batcher.ts): while one write is in flight, the next outcomes queue, and go in the next
 * write as one batch of at most 500. Under load the batches grow by themselves; an outcome alone is
 * written on the next turn of the event loop (no timer, no measurable latency).
 * A final failure (DEAD) moves the webhook's streak and may disable it, so it keeps its own
 * transaction (recordFailed).
 */
export class OutcomeWriter {
  private readonly batcher: Batcher<PendingOutcome, RecordedOutcome | null>;

  constructor(
    private readonly db: Db,
    maxBatch = 500,
  ) {
    // A batch that fails gives its error to each of its outcomes (the batcher settles them).
    this.batcher = new Batcher({ maxBatch, run: (batch) => this.write(batch) });
  }

  record(outcome: PendingOutcome): Promise<RecordedOutcome | null> {
    if (outcome.error !== null && afterFailedAttempt(outcome.claimed.attempts + 1, outcome.atMs).status === 'DEAD') {
      const failure = { statusCode: outcome.statusCode, error: outcome.error, attempt: outcome.attempt };
      return recordFailed(outcome.claimed, failure, outcome.atMs, this.db);
    }
    return this.batcher.add(outcome);
  }

  private async write(batch: BatchEntry<PendingOutcome, RecordedOutcome | null>[]): Promise<void> {
    const written = await recordOutcomes(
      batch.map((b) => b.item),
      this.db,
    );
    for (const b of batch) {
      const row = written.get(b.item.claimed.id);
      b.resolve(row ? { delivery: row.delivery, webhookDisabled: false, webhook: row.webhook } : null);
    }
  }
}
