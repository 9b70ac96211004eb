/**
 * Offer SQL (docs/offers.md). Every PartnerOffer is built inside PostgreSQL by `partner_offer_json`
 * (migration 0030) as of the service clock's `now`, so a PENDING offer past its deadline reads EXPIRED
 * in every answer, list and event alike.
 *
 * Locks and races. An offer leaves PENDING only through a conditional UPDATE (`… WHERE status =
 * 'PENDING' AND expires_at > now`): of two racing changes the second waits on the row lock of the
 * first, re-reads the committed row, finds it no longer PENDING and changes nothing, so exactly one
 * outcome is recorded (the caller answers the loser 409 ERR_OFFER_CLOSED). What also touches the order
 * (creation, acceptance, the order's cancellation, a direct assignment) holds the ORDER's row lock
 * first, and only then touches the offer: offer and order locks are always taken in that order, so
 * those paths queue on the order and never deadlock. The sweep takes due rows with SKIP LOCKED: a row
 * some decision holds is left to that decision (which then fails on the deadline, or was in time).
 *
 * Every statement that leaves an offer in a new state writes its outbox row in the same statement
 * (`data` = the PartnerOffer itself, `assigned_key_id` the offered key) and marks the OutboxTx. The
 * Queryable (or OutboxTx) comes LAST, as in every repo.
 */
import type { Queryable } from '../../db/db.js';
import { preparedWhen } from '../../db/prepared.js';
import { OUTBOX_INSERT, type OutboxTx } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, ApiKeyScope, OrderStatus } from '../../shared/schemas.js';
import type { OfferDeclineReason, OfferStats, OfferStatus, PartnerOffer } from './offers.schemas.js';

/** The outbox kinds of offers: three webhook kinds, and two realtime-only ones for operators. */
export type OfferEventType = 'offer.created' | 'offer.accepted' | 'offer.declined' | 'offer.expired' | 'offer.withdrawn';

/** An offer's columns the rules read (before any lock: only where it lives and whose it is). */
export interface OfferRef {
  id: string;
  orderId: string;
  orderCode: string;
  apiKeyId: string;
  environment: ApiKeyEnvironment;
}

interface OfferRefRow {
  id: string;
  order_id: string;
  order_code: string;
  api_key_id: string;
  environment: ApiKeyEnvironment;
}

const ref = (r: OfferRefRow): OfferRef => ({
  id: r.id,
  orderId: r.order_id,
  orderCode: r.order_code,
  apiKeyId: r.api_key_id,
  environment: r.environment,
});

/** Whose offers a read may see: one key (or the keys it acts for), a partner, or every offer (operator). */
export type OfferOwner = { keyIds: readonly string[] } | { partnerId: string } | 'all';

function ownerCondition(owner: OfferOwner, params: unknown[]): string {
  if (owner === 'all') return 'true';
  if ('keyIds' in owner) {
    params.push([...owner.keyIds]);
    return `f.api_key_id = ANY($${params.length}::uuid[])`;
  }
  params.push(owner.partnerId);
  return `f.partner_id = $${params.length}::uuid`;
}

/** The SQL condition of a status as it reads at `$now` (PENDING past its deadline is EXPIRED). */
function statusCondition(status: OfferStatus, now: string): string {
  if (status === 'PENDING') return `f.status = 'PENDING' AND f.expires_at > ${now}`;
  if (status === 'EXPIRED') return `(f.status = 'EXPIRED' OR (f.status = 'PENDING' AND f.expires_at <= ${now}))`;
  return `f.status = '${status}'`;
}

/** One offer `owner` may see, as of `now`; null when there is none (404). */
export async function findOffer(
  owner: OfferOwner,
  id: string,
  now: Date,
  q: Queryable,
  options: { prepare?: boolean } = {},
): Promise<{ ref: OfferRef; offer: PartnerOffer } | null> {
  const params: unknown[] = [id, now];
  // `prepare`: planned once per database session (src/db/join-plans.ts says when).
  const rows = await preparedWhen<OfferRefRow & { offer: PartnerOffer }>(
    options.prepare,
    `SELECT f.id, f.order_id, f.order_code, f.api_key_id, f.environment, partner_offer_json(f, o, $2) AS offer
       FROM offers f JOIN orders o ON o.id = f.order_id
      WHERE f.id = $1 AND ${ownerCondition(owner, params)}`,
    params,
    q,
  );
  return rows[0] ? { ref: ref(rows[0]), offer: rows[0].offer } : null;
}

export interface OfferListFilters {
  status?: OfferStatus;
  environment?: ApiKeyEnvironment;
  apiKeyId?: string;
  partnerId?: string;
  orderCode?: string;
}

/**
 * A page of offers, newest first, with the total; one statement. By key, partner or order code the
 * range is read on that index (offers_key_created_idx, offers_partner_created_idx,
 * offers_order_code_idx); the operator's unfiltered list on offers_created_idx.
 */
export async function listOffers(
  owner: OfferOwner,
  filters: OfferListFilters,
  paging: { page: number; pageSize: number },
  now: Date,
  q: Queryable,
): Promise<{ total: number; items: PartnerOffer[] }> {
  const params: unknown[] = [now];
  const where = [ownerCondition(owner, params)];
  if (filters.status !== undefined) where.push(statusCondition(filters.status, '$1'));
  if (filters.environment !== undefined) {
    params.push(filters.environment);
    where.push(`f.environment = $${params.length}`);
  }
  if (filters.apiKeyId !== undefined) {
    params.push(filters.apiKeyId);
    where.push(`f.api_key_id = $${params.length}::uuid`);
  }
  if (filters.partnerId !== undefined) {
    params.push(filters.partnerId);
    where.push(`f.partner_id = $${params.length}::uuid`);
  }
  if (filters.orderCode !== undefined) {
    params.push(filters.orderCode);
    where.push(`f.order_code = $${params.length}`);
  }
  params.push(paging.pageSize, (paging.page - 1) * paging.pageSize);
  const limit = `$${params.length - 1}`;
  const offset = `$${params.length}`;
  const condition = where.join(' AND ');
  const rows = await q.query<{ total: number; items: PartnerOffer[] }>(
    `SELECT (SELECT count(*)::int FROM offers f WHERE ${condition}) AS total,
            coalesce((SELECT jsonb_agg(p.offer ORDER BY p.created_at DESC, p.id DESC)
                        FROM (SELECT f.id, f.created_at, partner_offer_json(f, o, $1) AS offer
                                FROM offers f JOIN orders o ON o.id = f.order_id
                               WHERE ${condition}
                               ORDER BY f.created_at DESC, f.id DESC
                               LIMIT ${limit} OFFSET ${offset}) p), '[]'::jsonb) AS items`,
    params,
  );
  return rows[0];
}

// --- Creation ----------------------------------------------------------------------------------------

/** The order to offer, locked, and the key it is offered to (null: no such order / key). */
export interface OfferTarget {
  order: {
    id: string;
    code: string;
    environment: ApiKeyEnvironment;
    status: OrderStatus;
    assignedKeyId: string | null;
  } | null;
  key: {
    id: string;
    partnerId: string;
    environment: ApiKeyEnvironment;
    scopes: ApiKeyScope[];
    revokedAt: Date | null;
  } | null;
}

/**
 * Locks the order `code` (SELECT … FOR UPDATE: a concurrent offer, assignment or status change of it
 * waits until this transaction ends) and reads the key, in one statement.
 */
export async function lockOrderForOffer(code: string, apiKeyId: string, q: Queryable): Promise<OfferTarget> {
  const rows = await q.query<{
    id: string;
    code: string;
    environment: ApiKeyEnvironment;
    status: OrderStatus;
    assigned_key_id: string | null;
    key_id: string | null;
    partner_id: string | null;
    key_environment: ApiKeyEnvironment | null;
    scopes: ApiKeyScope[] | null;
    revoked_at: Date | null;
  }>(
    `SELECT o.id, o.code, o.environment, o.status, o.assigned_key_id,
            k.id AS key_id, k.partner_id, k.environment AS key_environment, k.scopes, k.revoked_at
       FROM orders o LEFT JOIN api_keys k ON k.id = $2
      WHERE o.code = $1
        FOR UPDATE OF o`,
    [code, apiKeyId],
  );
  const r = rows[0];
  if (!r) return { order: null, key: null };
  return {
    order: { id: r.id, code: r.code, environment: r.environment, status: r.status, assignedKeyId: r.assigned_key_id },
    key:
      r.key_id === null
        ? null
        : {
            id: r.key_id,
            partnerId: r.partner_id as string,
            environment: r.key_environment as ApiKeyEnvironment,
            scopes: r.scopes ?? [],
            revokedAt: r.revoked_at,
          },
  };
}

/**
 * Inserts a PENDING offer of the locked order with its `offer.created` outbox row, in one statement;
 * null when the order already has an open one (the partial unique index: nothing is written).
 */
export async function insertOffer(
  offer: {
    id: string;
    orderId: string;
    orderCode: string;
    apiKeyId: string;
    partnerId: string;
    environment: ApiKeyEnvironment;
    expiresAt: Date;
  },
  eventId: string,
  now: Date,
  tx: OutboxTx,
): Promise<PartnerOffer | null> {
  const rows = await tx.query<{ offer: PartnerOffer }>(
    `WITH f AS (
       INSERT INTO offers (id, order_id, order_code, api_key_id, partner_id, environment, status, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8)
       ON CONFLICT (order_id) WHERE status = 'PENDING' DO NOTHING
       RETURNING *
     ), j AS (
       SELECT f.id, f.order_id, f.api_key_id, f.environment,
              partner_offer_json(ROW(f.*)::offers, o, $7) AS offer
         FROM f JOIN orders o ON o.id = f.order_id
     ), out AS (
       ${OUTBOX_INSERT}
       SELECT $9, 'offer.created', j.environment, j.order_id, j.api_key_id, j.offer, $7 FROM j
     )
     SELECT offer FROM j`,
    [offer.id, offer.orderId, offer.orderCode, offer.apiKeyId, offer.partnerId, offer.environment, now, offer.expiresAt, eventId],
  );
  if (!rows[0]) return null;
  tx.wroteOutbox();
  return rows[0].offer;
}

// --- Leaving PENDING ---------------------------------------------------------------------------------

/**
 * Moves the offer `id` from PENDING (before its deadline) to `to`, with its outbox row `event`, in one
 * statement; null when it was not PENDING in time (nothing is written). `keyIds`: only an offer made to
 * one of these keys (a partner's decision); null: any (the operator's withdrawal).
 */
export async function closeOffer(
  id: string,
  change: {
    to: 'ACCEPTED' | 'DECLINED' | 'WITHDRAWN';
    reason?: OfferDeclineReason | null;
    note?: string | null;
    keyIds: readonly string[] | null;
    event: { eventId: string; type: OfferEventType };
  },
  now: Date,
  tx: OutboxTx,
  options: { prepare?: boolean } = {},
): Promise<{ ref: OfferRef; offer: PartnerOffer } | null> {
  // `prepare`: planned once per database session (src/db/join-plans.ts says when).
  const rows = await preparedWhen<OfferRefRow & { offer: PartnerOffer }>(
    options.prepare,
    `WITH f AS (
       UPDATE offers f SET status = $2, decided_at = $3, decline_reason = $4, note = $5
         FROM orders o
        WHERE f.id = $1 AND f.status = 'PENDING' AND f.expires_at > $3 AND o.id = f.order_id
          AND ($6::uuid[] IS NULL OR f.api_key_id = ANY($6::uuid[]))
       RETURNING f.id, f.order_id, f.order_code, f.api_key_id, f.environment, partner_offer_json(f, o, $3) AS offer
     ), out AS (
       ${OUTBOX_INSERT}
       SELECT $7, $8, f.environment, f.order_id, f.api_key_id, f.offer, $3 FROM f
     )
     SELECT * FROM f`,
    [
      id,
      change.to,
      now,
      change.reason ?? null,
      change.note ?? null,
      change.keyIds === null ? null : [...change.keyIds],
      change.event.eventId,
      change.event.type,
    ],
    tx,
  );
  if (!rows[0]) return null;
  tx.wroteOutbox();
  return { ref: ref(rows[0]), offer: rows[0].offer };
}

/**
 * The order's open offer (before its deadline) WITHDRAWN with its `offer.withdrawn` row, in one
 * statement; the caller holds the order's row lock (its cancellation). Returns how many (0 or 1).
 */
export async function withdrawOpenOfferOfOrder(orderId: string, now: Date, tx: OutboxTx): Promise<number> {
  const rows = await tx.query<{ n: number }>(
    `WITH f AS (
       UPDATE offers f SET status = 'WITHDRAWN', decided_at = $2
         FROM orders o
        WHERE f.order_id = $1 AND f.status = 'PENDING' AND f.expires_at > $2 AND o.id = f.order_id
       RETURNING f.order_id, f.api_key_id, f.environment, partner_offer_json(f, o, $2) AS offer
     ), out AS (
       ${OUTBOX_INSERT}
       SELECT public_id('evt_'), 'offer.withdrawn', f.environment, f.order_id, f.api_key_id,
              f.offer, $2
         FROM f
     )
     SELECT count(*)::int AS n FROM f`,
    [orderId, now],
  );
  if (rows[0].n > 0) tx.wroteOutbox();
  return rows[0].n;
}

/**
 * The expiry sweep's statement: offers still PENDING at their deadline become EXPIRED (`decided_at` =
 * the deadline), each with its `offer.expired` outbox row, at most `limit` per call, oldest deadline
 * first. Reads only due rows: a range of the partial index offers_due_idx (`expires_at <= now` among
 * PENDING rows), whatever the number of open offers. Rows a decision holds are skipped (SKIP LOCKED).
 * `orderId`: only that order's (an offer about to be made while the last one's expiry is unrecorded).
 */
export async function expireDueOffers(
  options: { limit: number; orderId?: string },
  now: Date,
  tx: OutboxTx,
): Promise<Array<{ offer: PartnerOffer; decisionMs: number }>> {
  const rows = await tx.query<{ offer: PartnerOffer; decision_ms: number }>(
    `WITH due AS (
       SELECT id FROM offers
        WHERE status = 'PENDING' AND expires_at <= $1 AND ($3::uuid IS NULL OR order_id = $3::uuid)
        ORDER BY expires_at
        LIMIT $2
          FOR UPDATE SKIP LOCKED
     ), f AS (
       UPDATE offers f SET status = 'EXPIRED', decided_at = f.expires_at
         FROM due, orders o
        WHERE f.id = due.id AND f.status = 'PENDING' AND o.id = f.order_id
       RETURNING f.order_id, f.api_key_id, f.environment, f.expires_at, f.created_at,
                 partner_offer_json(f, o, $1) AS offer
     ), out AS (
       ${OUTBOX_INSERT}
       SELECT public_id('evt_'), 'offer.expired', f.environment, f.order_id, f.api_key_id,
              f.offer, f.expires_at
         FROM f ORDER BY f.expires_at
     )
     SELECT offer, (extract(epoch FROM f.expires_at - f.created_at) * 1000)::float8 AS decision_ms FROM f`,
    [now, options.limit, options.orderId ?? null],
  );
  if (rows.length > 0) tx.wroteOutbox();
  return rows.map((r) => ({ offer: r.offer, decisionMs: r.decision_ms }));
}

/** The SQL of the expiry sweep's due rows (docs/performance.md: its plan is checked by a test). */
export const DUE_OFFERS_PROBE =
  "SELECT id FROM offers WHERE status = 'PENDING' AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED";

// --- Statistics --------------------------------------------------------------------------------------

/**
 * A partner's offers made in [from, now] of one environment, counted in one statement: an index-only
 * range of offers_partner_created_idx (the counted columns are in the index).
 */
export async function offerStats(
  partnerId: string,
  environment: ApiKeyEnvironment,
  from: Date,
  now: Date,
  q: Queryable,
): Promise<Omit<OfferStats, 'partnerId' | 'days' | 'from' | 'to' | 'acceptanceRate'>> {
  const rows = await q.query<{
    offered: number;
    pending: number;
    accepted: number;
    declined: number;
    expired: number;
    withdrawn: number;
    p50: number | null;
    p90: number | null;
    no_capacity: number;
    out_of_area: number;
    time_window: number;
    other: number;
  }>(
    `SELECT count(*)::int AS offered,
            count(*) FILTER (WHERE status = 'PENDING' AND expires_at > $4)::int AS pending,
            count(*) FILTER (WHERE status = 'ACCEPTED')::int AS accepted,
            count(*) FILTER (WHERE status = 'DECLINED')::int AS declined,
            count(*) FILTER (WHERE status = 'EXPIRED' OR (status = 'PENDING' AND expires_at <= $4))::int AS expired,
            count(*) FILTER (WHERE status = 'WITHDRAWN')::int AS withdrawn,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at))
              FILTER (WHERE status IN ('ACCEPTED', 'DECLINED'))::float8 AS p50,
            percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM decided_at - created_at))
              FILTER (WHERE status IN ('ACCEPTED', 'DECLINED'))::float8 AS p90,
            count(*) FILTER (WHERE decline_reason = 'NO_CAPACITY')::int AS no_capacity,
            count(*) FILTER (WHERE decline_reason = 'OUT_OF_AREA')::int AS out_of_area,
            count(*) FILTER (WHERE decline_reason = 'TIME_WINDOW')::int AS time_window,
            count(*) FILTER (WHERE decline_reason = 'OTHER')::int AS other
       FROM offers
      WHERE partner_id = $1 AND environment = $2 AND created_at >= $3 AND created_at <= $4`,
    [partnerId, environment, from, now],
  );
  const r = rows[0];
  return {
    offered: r.offered,
    pending: r.pending,
    accepted: r.accepted,
    declined: r.declined,
    expired: r.expired,
    withdrawn: r.withdrawn,
    decisionSeconds: r.p50 === null || r.p90 === null ? null : { p50: round3(r.p50), p90: round3(r.p90) },
    declineReasons: { NO_CAPACITY: r.no_capacity, OUT_OF_AREA: r.out_of_area, TIME_WINDOW: r.time_window, OTHER: r.other },
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * For the go-live checklist (src/modules/sandbox/offer-evidence.ts): per key, when one of its sandbox
 * offers was first accepted and first declined. A range of offers_key_created_idx per key.
 */
export async function firstOfferDecisions(
  keyIds: string[],
  q: Queryable,
): Promise<Array<{ keyId: string; accepted: Date | null; declined: Date | null }>> {
  const rows = await q.query<{ api_key_id: string; accepted: Date | null; declined: Date | null }>(
    `SELECT api_key_id,
            min(decided_at) FILTER (WHERE status = 'ACCEPTED') AS accepted,
            min(decided_at) FILTER (WHERE status = 'DECLINED') AS declined
       FROM offers
      WHERE api_key_id = ANY($1::uuid[]) AND environment = 'SANDBOX' AND status IN ('ACCEPTED', 'DECLINED')
      GROUP BY api_key_id`,
    [keyIds],
  );
  return rows.map((r) => ({ keyId: r.api_key_id, accepted: r.accepted, declined: r.declined }));
}

/**
 * A key rotation's part (src/modules/keys/keys.service.ts, in its transaction): the old key's PENDING
 * offers move to its successor, as its orders and webhooks do, so the successor decides them and their
 * later events reach the webhooks that moved. Runs before the orders move: an acceptance holding one of
 * these rows commits first, and the order it assigned to the old key is then moved with the others.
 * Returns how many moved.
 */
export async function moveOpenOffers(partnerId: string, fromKeyId: string, toKeyId: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `WITH moved AS (
       UPDATE offers f SET api_key_id = $3
        WHERE f.api_key_id = $2 AND f.status = 'PENDING'
          AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $2 AND k.partner_id = $1)
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [partnerId, fromKeyId, toKeyId],
  );
  return rows[0].n;
}
