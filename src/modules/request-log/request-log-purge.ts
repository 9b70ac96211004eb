/**
 * Retention of the request log (docs/decisions-log.md, 'Request log': 35 days, purged by whole days). The worker's periodic
 * purge calls this (src/worker/purge.ts); it is idempotent, and a day goes as one DROP TABLE of its
 * partition, whatever its size.
 */
import type { Queryable } from '../../db/db.js';
import { daysEnding } from '../../shared/days.js';
import { deleteDaysBefore } from './request-log.repo.js';

export const REQUEST_LOG_RETENTION_DAYS = 35;

/**
 * Drops the days older than the 35 UTC days ending with the day of `now` (today and the 34 before it
 * are kept), and their per-minute counts. Returns how many days went.
 */
export async function purgeExpiredRequestLog(now: Date, db: Queryable): Promise<number> {
  const [firstKeptDay] = daysEnding(now.getTime(), REQUEST_LOG_RETENTION_DAYS);
  return deleteDaysBefore(firstKeptDay, db);
}
