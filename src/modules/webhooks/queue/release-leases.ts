/**
 * Queue: leases given back without an attempt counted, so the rows are due again at once instead of
 * when their lease expires. Fenced by the lease token: only the giver's own leases are touched.
 */
import type { Db, Queryable } from '../../../db/db.js';
import type { ClaimedDelivery } from './claim-due-deliveries.js';

/**
 * Gives back whatever a claim leased, if anything: for a claim whose transaction failed in a way that
 * leaves its outcome unknown (the connection was lost around COMMIT: it may have committed, and then
 * its rows would wait for their lease to expire with no attempt in flight). Leases are fenced by their
 * token, so this touches only that claim's rows; the rows it leased were due, hence the index range.
 */
export async function releaseClaim(leaseToken: string, nowMs: number, db: Db): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET locked_until = NULL, lease_token = NULL
      WHERE status IN ('PENDING', 'FAILED') AND next_attempt_at <= $2 AND lease_token = $1`,
    [leaseToken, new Date(nowMs)],
  );
}

/**
 * Gives a claimed row back without counting an attempt (the worker is shutting down and cut the
 * attempt short), so another worker can take it at once instead of waiting for the lease to expire.
 */
export async function releaseLease(claimed: ClaimedDelivery, db: Queryable): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET locked_until = NULL, lease_token = NULL WHERE id = $1 AND lease_token = $2', [
    claimed.id,
    claimed.leaseToken,
  ]);
}
