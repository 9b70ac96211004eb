/**
 * The checklist items only the request log can prove (docs/decisions-log.md, 'Request log' and 'Sandbox simulator and go-live checklist'), read from its table
 * (migration 0016, src/modules/request-log/): a sandbox key listed orders with updatedSince, and
 * repeated an event with the same Idempotency-Key. The log holds 35 days; the checklist keeps what it
 * once saw (checklist.service.ts), so an item does not turn undone when its requests are purged.
 */
import type { Queryable } from '../../db/db.js';
import type { LineageMember } from './checklist.repo.js';

export interface RequestEvidence {
  listedUpdatedSince: Date | null;
  idempotentRepeat: Date | null;
  /** GET /v1/partner/payment-intents with updatedSince, answered 200 (keys with payments:read). */
  listedIntentsUpdatedSince: Date | null;
  /** A settlement's lines (JSON or CSV) read, answered 200 (keys with payments:read). */
  readSettlementLines: Date | null;
}

export const NO_REQUEST_EVIDENCE: RequestEvidence = {
  listedUpdatedSince: null,
  idempotentRepeat: null,
  listedIntentsUpdatedSince: null,
  readSettlementLines: null,
};

/**
 * When each request item was first met, per acts-for key of `members` (their requests on the sandbox
 * API). Payments (docs/payments.md, "Sandbox"): payment intents listed with updatedSince, and a
 * settlement's lines read, each answered 200. Listed: `GET /v1/partner/orders` answered 200 with `updatedSince` in the query. Repeated: a
 * second event POST answered 201 with the Idempotency-Key of an earlier one answered 201 by the same
 * key within the key's 24 hours (a replay: the same key with another body answers 409). One statement;
 * each key's rows are an index range of `request_log_key_time`.
 */
export async function requestEvidence(members: LineageMember[], q: Queryable): Promise<Map<string, RequestEvidence>> {
  if (members.length === 0) return new Map();
  const rows = await q.query<{
    acts_for: string;
    listed: Date | null;
    repeated: Date | null;
    intents: Date | null;
    lines: Date | null;
  }>(
    `WITH lineage AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS l(key_id, acts_for)
     ), listed AS (
       SELECT l.acts_for, min(r.created_at) AS at
         FROM lineage l JOIN request_log r ON r.api_key_id = l.key_id
        WHERE r.environment = 'SANDBOX' AND r.method = 'GET' AND r.path IN ('/v1/partner/orders', '/v1/partner/orders/')
          AND r.status_code = 200 AND r.query ~ '(^|&)updatedSince='
        GROUP BY l.acts_for
     ), events AS (
       SELECT l.acts_for, r.created_at,
              lag(r.created_at) OVER (PARTITION BY r.api_key_id, r.idempotency_key ORDER BY r.created_at, r.id) AS first_at
         FROM lineage l JOIN request_log r ON r.api_key_id = l.key_id
        WHERE r.environment = 'SANDBOX' AND r.method = 'POST' AND r.idempotency_key IS NOT NULL AND r.status_code = 201
          AND r.path LIKE '/v1/partner/orders/%/events'
     ), repeated AS (
       SELECT acts_for, min(created_at) AS at FROM events
        WHERE first_at IS NOT NULL AND created_at < first_at + interval '24 hours'
        GROUP BY acts_for
     ), intents AS (
       SELECT l.acts_for, min(r.created_at) AS at
         FROM lineage l JOIN request_log r ON r.api_key_id = l.key_id
        WHERE r.environment = 'SANDBOX' AND r.method = 'GET' AND r.path IN ('/v1/partner/payment-intents', '/v1/partner/payment-intents/')
          AND r.status_code = 200 AND r.query ~ '(^|&)updatedSince='
        GROUP BY l.acts_for
     ), lines AS (
       SELECT l.acts_for, min(r.created_at) AS at
         FROM lineage l JOIN request_log r ON r.api_key_id = l.key_id
        WHERE r.environment = 'SANDBOX' AND r.method = 'GET' AND r.status_code = 200
          AND (r.path LIKE '/v1/partner/settlements/%/lines' OR r.path LIKE '/v1/partner/settlements/%/lines.csv')
        GROUP BY l.acts_for
     ), keys AS (
       SELECT acts_for FROM listed UNION SELECT acts_for FROM repeated UNION SELECT acts_for FROM intents UNION SELECT acts_for FROM lines
     )
     SELECT k.acts_for, a.at AS listed, b.at AS repeated, c.at AS intents, d.at AS lines
       FROM keys k LEFT JOIN listed a ON a.acts_for = k.acts_for LEFT JOIN repeated b ON b.acts_for = k.acts_for
       LEFT JOIN intents c ON c.acts_for = k.acts_for LEFT JOIN lines d ON d.acts_for = k.acts_for`,
    [members.map((m) => m.keyId), members.map((m) => m.actsForKeyId)],
  );
  return new Map(
    rows.map((r) => [
      r.acts_for,
      {
        listedUpdatedSince: r.listed,
        idempotentRepeat: r.repeated,
        listedIntentsUpdatedSince: r.intents,
        readSettlementLines: r.lines,
      },
    ]),
  );
}
