/**
 * Settlement SQL (docs/payments.md, "Settlements"). Partner id first, the Queryable (or OutboxTx) last.
 *
 * Locks. A creation holds the partner row (FOR NO KEY UPDATE: it does not block keys being added) for
 * its transaction, so two creations for one partner run one after the other: the second sees the
 * first's period and answers ERR_SETTLEMENT_EXISTS. Collections are taken by ONE set-based UPDATE of
 * the intents on no settlement (`settlement_id IS NULL` re-checked on the locked rows), so a collection
 * is on one settlement ever. A DELIVERED committing while a creation runs is not in its snapshot: it
 * stays on hand and the next settlement takes it. Adjustments and remittances lock the settlement row:
 * concurrent remittances are checked one after the other against what is outstanding.
 */
import type { Queryable } from '../../db/db.js';
import { appendPartnerOutbox, type OutboxTx } from '../../shared/outbox.js';
import { type ApiKeyEnvironment, environmentOf } from '../../shared/schemas.js';
import type { Settlement, SettlementLine, SettlementStatus } from './payments.schemas.js';

/**
 * A collection line's id in SQL: `sln_` + the base64 of a random UUID with its non-alphanumeric
 * characters dropped (about 21 characters): a settlement writes one per collection in one statement,
 * and this costs a fraction of the plpgsql public_id() (docs/performance.md, "Settlement creation").
 */
const LINE_ID = `'sln_' || translate(encode(uuid_send(gen_random_uuid()), 'base64'), '+/=', '')`;

const LINE_JSON = `jsonb_build_object('id', l.id, 'type', l.type, 'orderCode', l.order_code, 'paymentIntentId', l.payment_intent_id,
  'expectedQepik', l.expected_qepik, 'amountQepik', l.amount_qepik, 'note', l.note, 'reference', l.reference, 'at', iso_utc(l.at))`;

/** Locks the partner for a settlement creation; false when there is no such partner. */
export async function lockPartnerForSettlement(partnerId: string, q: Queryable): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM partners WHERE id = $1 FOR NO KEY UPDATE', [partnerId]);
  return rows.length > 0;
}

/** The end of the partner's latest period in the environment (periods only grow), or null. */
export async function lastPeriodEnd(partnerId: string, environment: ApiKeyEnvironment, q: Queryable): Promise<Date | null> {
  const rows = await q.query<{ period_end: Date }>(
    `SELECT period_end FROM settlements WHERE partner_id = $1 AND environment = $2
      ORDER BY created_at DESC, id DESC LIMIT 1`,
    [partnerId, environment],
  );
  return rows[0]?.period_end ?? null;
}

/**
 * A new settlement holding every collection of the partner in the environment captured before
 * `periodEnd` and on no settlement, in ONE statement: the intents are marked, a line is written for
 * each (oldest first), and the settlement is inserted with its totals summed from them.
 * `periodStart`: the previous period's end, or null for the first collection's time (or periodEnd).
 */
export async function insertSettlement(
  partnerId: string,
  s: { id: string; environment: ApiKeyEnvironment; periodStart: Date | null; periodEnd: Date },
  now: Date,
  q: Queryable,
): Promise<Settlement> {
  const rows = await q.query<{ j: Settlement }>(
    `WITH taken AS (
       UPDATE payment_intents p SET settlement_id = $3, updated_at = $6
        WHERE p.partner_id = $1 AND p.environment = $2 AND p.status = 'COLLECTED' AND p.settlement_id IS NULL
          AND p.captured_at < $5
       RETURNING p.id, p.order_code, p.amount_qepik, p.amount_received_qepik, p.collection_note, p.captured_at
     ), lines AS (
       INSERT INTO settlement_lines (id, settlement_id, type, order_code, payment_intent_id, expected_qepik, amount_qepik, note, at)
       SELECT ${LINE_ID}, $3, 'COD_COLLECTION', t.order_code, t.id, t.amount_qepik, t.amount_received_qepik,
              t.collection_note, t.captured_at
         FROM taken t ORDER BY t.captured_at, t.id
     ), s AS (
       INSERT INTO settlements (id, partner_id, environment, period_start, period_end, status, collections_count,
                                expected_qepik, collected_qepik, created_at, updated_at)
       SELECT $3, $1, $2, coalesce($4::timestamptz, least(min(t.captured_at), $5::timestamptz), $5::timestamptz), $5,
              'AWAITING_REMITTANCE', count(*), coalesce(sum(t.amount_qepik), 0), coalesce(sum(t.amount_received_qepik), 0), $6, $6
         FROM taken t
       RETURNING *
     )
     SELECT settlement_json(s) AS j FROM s`,
    [partnerId, s.environment, s.id, s.periodStart, s.periodEnd, now],
  );
  return rows[0].j;
}

/**
 * Carries the partner's overpayments in the environment (SETTLED statements with outstanding below 0,
 * not carried yet) to the new settlement `id`, in ONE statement: each becomes an ADJUSTMENT line of
 * the (negative) amount naming the statement it came from, the source is marked as carried, and the new
 * settlement's adjustments grow by their sum. Runs in the creation's transaction, under its partner
 * lock: an overpayment is carried once. Answers the sum carried (0 or below).
 */
export async function carryOverpayments(
  partnerId: string,
  environment: ApiKeyEnvironment,
  id: string,
  now: Date,
  q: Queryable,
): Promise<number> {
  const rows = await q.query<{ carried: number }>(
    `WITH src AS (
       UPDATE settlements s SET overpayment_carried_to = $3
        WHERE s.partner_id = $1 AND s.environment = $2 AND s.status = 'SETTLED' AND s.overpayment_carried_to IS NULL
          AND s.collected_qepik + s.adjustments_qepik - s.remitted_qepik < 0 AND s.id <> $3
       RETURNING s.id, s.period_end, s.collected_qepik + s.adjustments_qepik - s.remitted_qepik AS over
     ), lines AS (
       INSERT INTO settlement_lines (id, settlement_id, type, amount_qepik, note, at)
       SELECT ${LINE_ID}, $3, 'ADJUSTMENT', src.over, 'Overpayment carried from ' || src.id, $4
         FROM src ORDER BY src.period_end, src.id
     ), target AS (
       UPDATE settlements SET adjustments_qepik = adjustments_qepik + (SELECT sum(over) FROM src), updated_at = $4
        WHERE id = $3 AND EXISTS (SELECT 1 FROM src)
     )
     SELECT coalesce(sum(over), 0)::bigint AS carried FROM src`,
    [partnerId, environment, id, now],
  );
  return Number(rows[0]?.carried ?? 0);
}

/** A settlement locked for an adjustment or remittance (null: none of that id, or not this partner's). */
export async function lockSettlement(
  id: string,
  owner: { partnerId: string; environment: ApiKeyEnvironment | null } | null,
  q: Queryable,
): Promise<{ partnerId: string; environment: ApiKeyEnvironment; status: SettlementStatus; outstanding: number } | null> {
  const rows = await q.query<{
    partner_id: string;
    environment: ApiKeyEnvironment;
    status: SettlementStatus;
    outstanding: string;
  }>(
    `SELECT partner_id, environment, status, outstanding_qepik AS outstanding
       FROM settlements WHERE id = $1 AND ($2::uuid IS NULL OR (partner_id = $2 AND ($3::text IS NULL OR environment = $3::text)))
        FOR UPDATE`,
    [id, owner?.partnerId ?? null, owner?.environment ?? null],
  );
  const r = rows[0];
  return r ? { partnerId: r.partner_id, environment: r.environment, status: r.status, outstanding: Number(r.outstanding) } : null;
}

/**
 * A line on a locked settlement, and the settlement's totals and status moved by it (an adjustment
 * changes what is due, a remittance what was remitted; any remittance makes it PARTIALLY_REMITTED).
 */
export async function addSettlementLine(
  settlementId: string,
  line: {
    id: string;
    type: 'ADJUSTMENT' | 'REMITTANCE';
    amountQepik: number;
    note: string | null;
    reference: string | null;
    at: Date;
  },
  now: Date,
  q: Queryable,
): Promise<SettlementLine> {
  const rows = await q.query<{ j: SettlementLine }>(
    `WITH l AS (
       INSERT INTO settlement_lines (id, settlement_id, type, amount_qepik, note, reference, at)
       VALUES ($2, $1, $3, $4, $5, $6, $7) RETURNING *
     ), s AS (
       UPDATE settlements
          SET adjustments_qepik = adjustments_qepik + CASE WHEN $3 = 'ADJUSTMENT' THEN $4::bigint ELSE 0 END,
              remitted_qepik = remitted_qepik + CASE WHEN $3 = 'REMITTANCE' THEN $4::bigint ELSE 0 END,
              status = CASE WHEN $3 = 'REMITTANCE' OR remitted_qepik > 0 THEN 'PARTIALLY_REMITTED' ELSE 'AWAITING_REMITTANCE' END,
              updated_at = $8
        WHERE id = $1
     )
     SELECT ${LINE_JSON} AS j FROM l`,
    [settlementId, line.id, line.type, line.amountQepik, line.note, line.reference, line.at, now],
  );
  return rows[0].j;
}

/**
 * Settles the settlement if nothing is outstanding any more (outstanding ≤ 0): the settlement and its
 * collections SETTLED, in one statement. Returns the settlement as it now is, and whether it settled now.
 */
export async function settleIfPaid(id: string, now: Date, q: Queryable): Promise<{ settlement: Settlement; settled: boolean }> {
  const rows = await q.query<{ j: Settlement; settled: boolean }>(
    `WITH s AS (
       UPDATE settlements SET status = 'SETTLED', settled_at = $2, updated_at = $2
        WHERE id = $1 AND status <> 'SETTLED' AND outstanding_qepik <= 0
       RETURNING *
     ), p AS (
       UPDATE payment_intents p SET status = 'SETTLED', updated_at = $2
         FROM s WHERE p.settlement_id = s.id AND p.status = 'COLLECTED'
     )
     SELECT settlement_json(s) AS j, true AS settled FROM s
     UNION ALL
     SELECT settlement_json(x), false FROM settlements x WHERE x.id = $1 AND NOT EXISTS (SELECT 1 FROM s)`,
    [id, now],
  );
  return { settlement: rows[0].j, settled: rows[0].settled };
}

/**
 * The outbox events of a settlement (`types`, in order, each with data.settlement), addressed to the
 * partner: routed to its webhooks holding payments:read in the settlement's environment.
 */
export async function appendSettlementEvents(
  partnerId: string,
  settlement: Settlement,
  events: Array<{ eventId: string; type: 'settlement.created' | 'settlement.updated' | 'settlement.settled' }>,
  now: Date,
  tx: OutboxTx,
): Promise<void> {
  if (events.length === 0) return;
  const environment = environmentOf(settlement.environment);
  await appendPartnerOutbox(partnerId, environment, events, { settlement }, now, tx);
}

/** One settlement of the partner in the environment (either, when null); null for another partner's, or none. */
export async function findSettlement(
  owner: { partnerId: string; environment: ApiKeyEnvironment | null } | null,
  id: string,
  q: Queryable,
): Promise<Settlement | null> {
  const rows = await q.query<{ j: Settlement }>(
    `SELECT settlement_json(s) AS j FROM settlements s
      WHERE s.id = $1 AND ($2::uuid IS NULL OR (s.partner_id = $2 AND ($3::text IS NULL OR s.environment = $3::text)))`,
    [id, owner?.partnerId ?? null, owner?.environment ?? null],
  );
  return rows[0]?.j ?? null;
}

/** The partner's settlements in the environment, newest first. */
export async function listPartnerSettlements(
  partnerId: string,
  environment: ApiKeyEnvironment,
  status: SettlementStatus | null,
  page: { page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: Settlement[] }> {
  const rows = await q.query<{ total: string; items: Settlement[] | null }>(
    `WITH m AS (
       SELECT s FROM settlements s WHERE s.partner_id = $1 AND s.environment = $2 AND ($3::text IS NULL OR s.status = $3)
        ORDER BY s.created_at DESC, s.id DESC
     ), pg AS (SELECT settlement_json(m.s) AS j FROM m LIMIT $4 OFFSET $5)
     SELECT (SELECT count(*) FROM m) AS total, (SELECT jsonb_agg(j) FROM pg) AS items`,
    [partnerId, environment, status, page.pageSize, (page.page - 1) * page.pageSize],
  );
  return { total: Number(rows[0].total), items: rows[0].items ?? [] };
}

/** The operator's list: any partner (or one), any status (or one), newest first. */
export async function listAllSettlements(
  filters: { partnerId: string | null; status: SettlementStatus | null },
  page: { page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: Settlement[] }> {
  const rows = await q.query<{ total: string; items: Settlement[] | null }>(
    `WITH m AS (
       SELECT s FROM settlements s WHERE ($1::uuid IS NULL OR s.partner_id = $1) AND ($2::text IS NULL OR s.status = $2)
        ORDER BY s.created_at DESC, s.id DESC
     ), pg AS (SELECT settlement_json(m.s) AS j FROM m LIMIT $3 OFFSET $4)
     SELECT (SELECT count(*) FROM m) AS total, (SELECT jsonb_agg(j) FROM pg) AS items`,
    [filters.partnerId, filters.status, page.pageSize, (page.page - 1) * page.pageSize],
  );
  return { total: Number(rows[0].total), items: rows[0].items ?? [] };
}

/** A settlement's lines, oldest first (page null: all of them, for the CSV). */
export async function listSettlementLines(
  settlementId: string,
  page: { page: number; pageSize: number } | null,
  q: Queryable,
): Promise<{ total: number; items: SettlementLine[] }> {
  const rows = await q.query<{ total: string; items: SettlementLine[] | null }>(
    `SELECT (SELECT count(*) FROM settlement_lines WHERE settlement_id = $1) AS total,
            (SELECT jsonb_agg(x.j ORDER BY x.at, x.n) FROM (
               SELECT ${LINE_JSON} AS j, l.at, l.n FROM settlement_lines l WHERE l.settlement_id = $1
                ORDER BY l.at, l.n LIMIT $2 OFFSET $3) x) AS items`,
    [settlementId, page?.pageSize ?? null, page ? (page.page - 1) * page.pageSize : 0],
  );
  return { total: Number(rows[0].total), items: rows[0].items ?? [] };
}
