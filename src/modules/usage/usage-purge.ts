/**
 * Retention of the usage counters (docs/decisions-log.md, 'API keys': 35 days). The worker calls this periodically; it is
 * idempotent, and cheap when there is nothing to delete (api_key_usage is indexed by day).
 */
import type { Db } from '../../db/db.js';
import { daysEnding } from '../../shared/days.js';
import { deleteUsageBefore } from './usage.repo.js';
import { USAGE_RETENTION_DAYS } from './usage-recorder.js';

/**
 * Deletes the counters of days older than the 35 UTC days ending with the day of `now` (today and the
 * 34 before it are kept: exactly what the longest usage series shows). Returns how many rows went.
 */
export async function purgeExpiredUsage(now: Date, db: Db): Promise<number> {
  const [firstKeptDay] = daysEnding(now.getTime(), USAGE_RETENTION_DAYS);
  return deleteUsageBefore(firstKeptDay, db);
}
