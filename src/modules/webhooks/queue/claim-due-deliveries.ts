/**
 * Claiming due deliveries. webhook_deliveries is the queue: a row is due when it is PENDING or FAILED,
 * its next_attempt_at has come, its lease is free (never taken, released, or expired) and its webhook
 * is active (a disabled webhook's retries wait until it is switched on again).
 *
 * Why it is safe with any number of workers:
 *  - Candidates are locked with FOR UPDATE SKIP LOCKED, so two workers claiming at once take disjoint
 *    rows and never wait for each other.
 *  - A claim writes a lease (locked_until = now + lease, longer than the attempt timeout) and a fresh
 *    lease token, then commits before any HTTP happens: no transaction is held open across the network.
 *  - Leases are measured on the wall clock, due times (next_attempt_at) on the service clock. A lease
 *    bounds how long an attempt may run, which is real time: moving the test clock forward makes
 *    retries due but never takes a delivery from an attempt still in flight (which would send it twice).
 *    In production the two clocks are one.
 *  - The result of an attempt is written only while the row still carries that token
 *    (record-outcomes.ts). A worker killed mid-attempt leaves a lease that simply expires; the row is then
 *    due again and another worker retries it. A worker that was merely slow and lost its lease cannot
 *    overwrite what the new owner recorded.
 *
 * Per-endpoint fairness: at most `perWebhookLimit` rows of one webhook are leased at a time, across all
 * workers, or the cap the claiming worker adapted for it (`adjustedLimits`: grown while the endpoint
 * answers quickly, shrunk when it struggles; src/modules/webhooks/delivery/endpoint-limits.ts). Webhooks already at the cap are excluded from the scan (so a slow endpoint with a deep backlog
 * cannot fill every scan and starve the others), and the webhook rows are locked FOR NO KEY UPDATE
 * SKIP LOCKED while counting, so two workers never both top up the same webhook past the cap (the second
 * skips that webhook this round). That lock does not conflict with the foreign-key checks of the fan-out
 * inserting new deliveries.
 *
 * Cost: a claim is one transaction of two statements (candidates + locks; count + pick + lease), plus
 * an indexed probe when the worker has no reason to think anything is due. It takes as many rows as
 * the worker has free slots, so under load one claim starts a whole wave of attempts.
 *
 * Plans: both reads take the oldest due rows, so both walk the due index in its order and stop at their
 * LIMIT, whatever the statistics say. The probe asks for that order; the claim's transaction rules out
 * sequential and bitmap scans (Db.tx's `indexWalks`). Left to the planner, statistics taken while a
 * few hundred rows were due made the claim read every due row through a bitmap and sort them (20,000
 * rows fetched to claim 8; 18 ms a claim in a burst of 25,000 deliveries), and statistics taken while
 * most rows were due made the probe read the table from its first page (14–20 ms), where the walks
 * take well under a millisecond (src/worker/queue-scans.test.ts; docs/performance.md, "Webhook fan-out").
 */
import { randomUUID } from 'node:crypto';
import { type Db, lastStatements } from '../../../db/db.js';
import type { WebhookDeliveryStatus } from '../../../shared/schemas.js';
import type { NewDelivery } from './insert-deliveries.js';

/** A delivery as queued, with what an attempt needs: its state, its webhook's endpoint, its lease. */
export interface ClaimedDelivery extends NewDelivery {
  status: WebhookDeliveryStatus;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secretCiphertext: string;
  /** The previous signing secret while its rotation grace lasts (service clock at the claim); else null. */
  previousSecretCiphertext: string | null;
  leaseToken: string;
  /**
   * The signature timestamp `t` of this attempt: the wall clock in unix seconds, or one second past the
   * delivery's previous attempt if that is later, so no two attempts carry the same signature.
   */
  signedAtSec: number;
  /** When the lease ends by the wall clock (how long an attempt may keep trying to record its outcome). */
  leaseEndsAtWallMs: number;
}

export interface ClaimOptions {
  /** The service clock: which deliveries are due. */
  nowMs: number;
  /** The real wall clock: leases, and signature timestamps (see src/modules/webhooks/delivery/attempt.ts). */
  wallClockMs: number;
  leaseMs: number;
  /** How many rows this worker can start now. */
  limit: number;
  /** Attempts in flight per webhook at most, across workers: the cap of webhooks not in `adjustedLimits`. */
  perWebhookLimit: number;
  /** Webhooks whose cap this worker adapted (src/modules/webhooks/delivery/endpoint-limits.ts), with their caps. */
  adjustedLimits?: { webhookIds: string[]; limits: number[] };
  /** Look for due work with a cheap read first (default); skip it when the last claim found work. */
  probe?: boolean;
  /** The token of this claim's leases (fresh for every claim; the caller keeps it: see releaseClaim, release-leases.ts). */
  leaseToken?: string;
}

export async function claimDueDeliveries(options: ClaimOptions, db: Db): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  const now = new Date(options.nowMs);
  // Leases are measured on the wall clock, due times on the service clock (see the file's comment).
  const wallNow = new Date(options.wallClockMs);
  if (options.probe !== false) {
    // Most polls find nothing due: one indexed probe instead of a transaction. In the due index's order,
    // so that no statistics make it a sequential scan that stops at the first due row (see the top).
    const due = await db.query(
      `SELECT 1 FROM webhook_deliveries d
        WHERE d.status IN ('PENDING', 'FAILED') AND d.next_attempt_at <= $1 AND (d.locked_until IS NULL OR d.locked_until <= $2)
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.is_active)
        ORDER BY d.next_attempt_at, d.id
        LIMIT 1`,
      [now, wallNow],
    );
    if (due.length === 0) return [];
  }
  const leaseToken = options.leaseToken ?? randomUUID();
  const adjusted = options.adjustedLimits ?? { webhookIds: [], limits: [] };
  return db.tx(
    async (q) => {
      // 1. Candidates, oldest due first, and their webhooks, both locked without waiting. The NOT IN
      //    prefilter (webhooks already at the cap) reads this statement's snapshot and only saves work;
      //    the cap itself is enforced by step 2, under the webhook locks.
      const candidates = await q.query<{ id: string; webhook_id: string }>(
        `SELECT d.id, d.webhook_id
         FROM webhook_deliveries d
         JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.status IN ('PENDING', 'FAILED')
          AND d.next_attempt_at <= $1
          AND (d.locked_until IS NULL OR d.locked_until <= $6)
          AND w.is_active
          AND d.webhook_id NOT IN (
                SELECT l.webhook_id FROM webhook_deliveries l
                  LEFT JOIN unnest($4::uuid[], $5::int[]) AS cap(wid, n) ON cap.wid = l.webhook_id
                 WHERE l.locked_until > $6
                 GROUP BY l.webhook_id, cap.n HAVING count(*) >= coalesce(cap.n, $3))
        ORDER BY d.next_attempt_at, d.id
        LIMIT $2
        FOR UPDATE OF d SKIP LOCKED
        FOR NO KEY UPDATE OF w SKIP LOCKED`,
        [now, Math.max(options.limit * 2, 50), options.perWebhookLimit, adjusted.webhookIds, adjusted.limits, wallNow],
      );
      if (candidates.length === 0) return [];

      // 2. Count what is in flight per webhook, pick up to the cap, lease: one statement. Its snapshot is
      //    taken after step 1 holds the webhook locks, so it sees every lease another worker committed
      //    for these webhooks; a worker still claiming one of them holds its lock and was skipped in 1.
      //    Sent with the COMMIT (on a server: the claim is two round trips, its BEGIN went with step 1).
      const [rows] = await lastStatements(q, () =>
        q.query<{
          ord: number;
          id: string;
          webhook_id: string;
          partner_id: string;
          event_id: string;
          event_type: string;
          body: string;
          status: WebhookDeliveryStatus;
          attempts: number;
          url: string;
          secret_ciphertext: string;
          previous_secret_ciphertext: string | null;
          signed_at_sec: string;
        }>(
          `WITH cand AS (
         SELECT c.id, c.wid, c.ord,
                row_number() OVER (PARTITION BY c.wid ORDER BY c.ord) AS k
           FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS c(id, wid, ord)
       ), busy AS (
         SELECT l.webhook_id, count(*)::int AS n FROM webhook_deliveries l
          WHERE l.webhook_id IN (SELECT wid FROM cand) AND l.locked_until > $11
          GROUP BY l.webhook_id
       ), picked AS (
         SELECT cand.id, cand.ord FROM cand LEFT JOIN busy ON busy.webhook_id = cand.wid
           LEFT JOIN unnest($9::uuid[], $10::int[]) AS cap(wid, n) ON cap.wid = cand.wid
          WHERE cand.k + coalesce(busy.n, 0) <= coalesce(cap.n, $4)
          ORDER BY cand.ord
          LIMIT $5
       )
       UPDATE webhook_deliveries d SET locked_until = $6, lease_token = $7,
              signed_at_sec = greatest($8::bigint, coalesce(d.signed_at_sec, 0) + 1)
         FROM picked, webhooks w
        WHERE d.id = picked.id AND w.id = d.webhook_id
        RETURNING picked.ord::int AS ord, d.id, d.webhook_id, d.partner_id, d.event_id, d.event_type, d.body, d.status,
                  d.attempts, w.url, w.secret_ciphertext, d.signed_at_sec,
                  CASE WHEN w.previous_secret_expires_at > $3 THEN w.previous_secret_ciphertext END AS previous_secret_ciphertext`,
          [
            candidates.map((c) => c.id),
            candidates.map((c) => c.webhook_id),
            now,
            options.perWebhookLimit,
            options.limit,
            new Date(options.wallClockMs + options.leaseMs),
            leaseToken,
            Math.floor(options.wallClockMs / 1000),
            adjusted.webhookIds,
            adjusted.limits,
            wallNow,
          ],
        ),
      );
      // Oldest due first, as claimed.
      rows.sort((a, b) => a.ord - b.ord);
      return rows.map((r) => ({
        id: r.id,
        webhookId: r.webhook_id,
        partnerId: r.partner_id,
        eventId: r.event_id,
        eventType: r.event_type,
        body: r.body,
        status: r.status,
        attempts: r.attempts,
        url: r.url,
        secretCiphertext: r.secret_ciphertext,
        previousSecretCiphertext: r.previous_secret_ciphertext,
        leaseToken,
        signedAtSec: Number(r.signed_at_sec),
        leaseEndsAtWallMs: options.wallClockMs + options.leaseMs,
      }));
    },
    { indexWalks: true },
  );
}
