/**
 * Order SQL, writes: creation, status changes, assignment (the row locks they run under are in
 * order-locks.repo.ts). Every statement that writes outbox rows takes the change's OutboxTx
 * (src/shared/outbox.ts, commitOrderChange) and marks it, so its consumers are woken after COMMIT; none NOTIFYs. The Queryable
 * (or OutboxTx) comes LAST, as in every repo.
 */
import type { Queryable } from '../../db/db.js';
import { preparedWhen } from '../../db/prepared.js';
import { type IdempotentAnswer, storeAnswersSql } from '../../shared/idempotency.js';
import { OUTBOX_INSERT, type OutboxTx } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, OrderStatus, PaymentMethod, WebhookEvent } from '../../shared/schemas.js';
import { newOrderIntentSql, statusChangeIntentSql } from '../payments/intent-hooks.js';
import type { PartnerCustomer } from './orders.schemas.js';
import { orderJsonSql, orderJsonSqlWhen, type PartnerOrderPieces } from './visibility.js';

/**
 * The `data` of an order event in SQL (src/shared/outbox.ts describes the rows): the order row `alias`
 * as its PartnerOrder WITH customer (the snapshot the change just made, taken inside PostgreSQL), and
 * `previousStatus` when given.
 */
function outboxOrderDataSql(alias: string, previousStatus?: string): string {
  const order = `'order', (${orderJsonSql(true, alias)})::jsonb`;
  return previousStatus === undefined
    ? `jsonb_build_object(${order})`
    : `jsonb_build_object(${order}, 'previousStatus', ${previousStatus})`;
}

export interface NewOrder {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  paymentMethod: PaymentMethod;
  paymentStatus: string;
  totalQepik: number;
  codAmountQepik: number;
  area: string | null;
  zoneId: string | null;
  timeWindowStart: string | null;
  timeWindowEnd: string | null;
  customer: PartnerCustomer | null;
  assignedKeyId: string | null;
  partnerAssignedAt: Date | null;
  items: Array<{ name: { az: string; ru: string; en: string }; qty: number; unitPriceQepik: number }>;
  createdAt: Date;
}

export type NewOrderOutcome =
  | { kind: 'inserted'; pieces: PartnerOrderPieces }
  /** The code is already taken: the caller draws another. */
  | { kind: 'code-taken' }
  /** `zoneId` names no zone: nothing was written. */
  | { kind: 'no-zone' };

/** The order's payment intent, inserted by the same statement (docs/payments.md). */
const NEW_ORDER_INTENT = newOrderIntentSql({
  order: 'o',
  code: '$2::text',
  environment: '$3::text',
  method: '$5::text',
  paymentStatus: '$6::text',
  totalQepik: '$7::bigint',
  codAmountQepik: '$8::bigint',
  createdAt: '$16::timestamptz',
});

/**
 * A new order in ONE statement (so ONE round trip, atomic without a transaction of its own): the
 * order, its payment intent, its items, its timeline entries (`statuses`, in order, all at `createdAt`) and its outbox
 * events (`outbox`, in order, each with `data = { order }`, the new snapshot with customer), and the
 * order's PartnerOrder pieces back.
 *
 * The order row is rendered once: it is inserted with its items' and timeline's texts already made by
 * the read model's own functions (0006) and `pv_last_event` set to its last timeline entry, so the
 * items and timeline triggers find nothing to re-render (migration 0014). Timeline ids come from the
 * table's sequence in this statement.
 */
export async function insertNewOrderRow(
  order: NewOrder,
  timeline: { statuses: OrderStatus[]; actor: OrderEventRow['actor'] },
  outbox: Array<{ eventId: string; type: WebhookEvent }>,
  tx: OutboxTx,
): Promise<NewOrderOutcome> {
  const rows = await tx.query<{ zone_ok: boolean; head: string | null; customer: string | null; tail: string | null }>(
    `WITH zone AS (
       SELECT $10::uuid IS NULL OR EXISTS (SELECT 1 FROM zones z WHERE z.id = $10::uuid) AS ok
     ), timeline AS MATERIALIZED (
       SELECT nextval('order_events_id_seq') AS id, s.status
         FROM zone, unnest($21::text[]) WITH ORDINALITY AS s(status, n)
        WHERE zone.ok
        ORDER BY s.n
     ), items AS MATERIALIZED (
       SELECT * FROM unnest($17::int[], $18::jsonb[], $19::int[], $20::bigint[]) AS t(position, name, qty, price)
     ), o AS (
       INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik,
                           area, zone_id, time_window_start, time_window_end, customer, assigned_key_id, partner_assigned_at,
                           created_at, updated_at, pv_items, pv_timeline, pv_last_event)
       SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::bigint, $9::text, $10::uuid,
              $11::timestamptz, $12::timestamptz, $13::jsonb, $14::uuid, $15::timestamptz, $16::timestamptz, $16::timestamptz,
              (SELECT '[' || coalesce(string_agg('{"name":' || localized_text_json(i.name) || ',"qty":' || i.qty
                                                 || ',"unitPriceQepik":' || i.price || '}', ',' ORDER BY i.position), '') || ']'
                 FROM items i),
              (SELECT '[' || coalesce(string_agg(timeline_entry_json(e.status, $16::timestamptz), ',' ORDER BY e.id), '') || ']'
                 FROM timeline e),
              coalesce((SELECT max(e.id) FROM timeline e), 0)
         FROM zone WHERE zone.ok
       ON CONFLICT (code) DO NOTHING
       RETURNING id, pv_head, pv_customer, pv_tail
     ), ${NEW_ORDER_INTENT}, item_rows AS (
       INSERT INTO order_items (order_id, position, name, qty, unit_price_qepik)
       SELECT o.id, i.position, i.name, i.qty, i.price FROM o, items i
     ), event_rows AS (
       INSERT INTO order_events (id, order_id, status, at, actor)
       SELECT e.id, o.id, e.status, $16::timestamptz, $22::text FROM o, timeline e ORDER BY e.id
     ), outbox_rows AS (
       ${OUTBOX_INSERT}
       SELECT x.event_id, x.type, $3::text, o.id, $14::uuid, ${outboxOrderDataSql('o')}, $16::timestamptz
         FROM o, unnest($23::text[], $24::text[]) WITH ORDINALITY AS x(event_id, type, k)
        ORDER BY x.k
     )
     SELECT zone.ok AS zone_ok, o.pv_head AS head, o.pv_customer AS customer, o.pv_tail AS tail FROM zone LEFT JOIN o ON true`,
    [
      order.id,
      order.code,
      order.environment,
      order.status,
      order.paymentMethod,
      order.paymentStatus,
      order.totalQepik,
      order.codAmountQepik,
      order.area,
      order.zoneId,
      order.timeWindowStart,
      order.timeWindowEnd,
      order.customer === null ? null : JSON.stringify(order.customer),
      order.assignedKeyId,
      order.partnerAssignedAt,
      order.createdAt,
      order.items.map((_, i) => i),
      order.items.map((item) => JSON.stringify(item.name)),
      order.items.map((item) => item.qty),
      order.items.map((item) => item.unitPriceQepik),
      timeline.statuses,
      timeline.actor,
      outbox.map((o) => o.eventId),
      outbox.map((o) => o.type),
    ],
  );
  const row = rows[0];
  if (!row.zone_ok) return { kind: 'no-zone' };
  if (row.head === null || row.tail === null) return { kind: 'code-taken' };
  tx.wroteOutbox();
  return { kind: 'inserted', pieces: { head: row.head, customer: row.customer, tail: row.tail } };
}

export interface OrderEventRow {
  orderId: string;
  status: OrderStatus;
  at: Date;
  actor: 'SYSTEM' | 'ADMIN' | 'PARTNER';
  note?: string | null;
  partnerNote?: string | null;
  failReason?: string | null;
  codCollectedQepik?: number | null;
  partnerReportedAt?: string | null;
  apiKeyId?: string | null;
}

export interface StatusChange {
  orderId: string;
  environment: ApiKeyEnvironment;
  assignedKeyId: string | null;
  previousStatus: OrderStatus;
  /** The timeline entry; its status is the new status of the order, its `at` the change time. */
  event: Omit<OrderEventRow, 'orderId'>;
  /** The outbox events to write, each with `data = { order, previousStatus }`. */
  outbox: Array<{ eventId: string; type: WebhookEvent }>;
}

/**
 * What the changes do to their orders' payment intents, in the same statement (docs/payments.md).
 * Placed before `out`: PostgreSQL runs the WITH items nobody reads in reverse order, so the order's own
 * events get the lower outbox ids and are delivered first.
 */
const STATUS_CHANGE_INTENT = statusChangeIntentSql('input');

/**
 * The answers of Idempotency-Keys claimed in the transaction (src/shared/idempotency.ts) that the
 * status changes' statement stores itself: `written`, a change's 201 answer, its order as the key that
 * sent it sees it (`pii`: `seesCustomer`), made from the row the statement wrote; `made`, answers made
 * before the write (an event of the group refused), as status and JSON text.
 */
export interface StatusChangeAnswers {
  written: Array<{ orderId: string; apiKeyId: string; key: string; pii: boolean }>;
  made: IdempotentAnswer[];
}

/** The status changes' statement, with the WITH item storing answers (`answers`) or without. */
function statusChangesSql(answers: boolean): string {
  const answersItem = answers
    ? `, answers AS (
       ${storeAnswersSql(`SELECT a.api_key_id, a.key, 201, ${orderJsonSqlWhen('a.pii', 'u')}
           FROM unnest($17::uuid[], $18::uuid[], $19::text[], $20::boolean[]) AS a(order_id, api_key_id, key, pii)
           JOIN upd u ON u.id = a.order_id
         UNION ALL
         SELECT * FROM unnest($21::uuid[], $22::text[], $23::int[], $24::text[])`)}
     )`
    : '';
  return `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[],
                            $8::bigint[], $9::timestamptz[], $10::uuid[], $11::text[], $12::uuid[], $13::text[])
              WITH ORDINALITY AS t(order_id, status, at, actor, note, partner_note, fail_reason, cod_collected_qepik,
                                   partner_reported_at, api_key_id, environment, assigned_key_id, previous_status, n)
     ), ev AS (
       INSERT INTO order_events (order_id, status, at, actor, note, partner_note, fail_reason, cod_collected_qepik,
                                 partner_reported_at, api_key_id)
       SELECT order_id, status, at, actor, note, partner_note, fail_reason, cod_collected_qepik, partner_reported_at, api_key_id
         FROM input ORDER BY n
       RETURNING id, order_id, status, at
     ), upd AS (
       UPDATE orders o
          SET status = ev.status, updated_at = ev.at,
              failed_attempts = o.failed_attempts + CASE WHEN ev.status = 'FAILED' THEN 1 ELSE 0 END,
              pv_timeline = CASE WHEN o.pv_timeline = '[]' THEN '[' ELSE left(o.pv_timeline, -1) || ',' END
                            || timeline_entry_json(ev.status, ev.at) || ']',
              pv_last_event = ev.id
         FROM ev
        WHERE o.id = ev.order_id
       RETURNING o.id, o.pv_head, o.pv_customer, o.pv_tail
     ), ${STATUS_CHANGE_INTENT}, out AS (
       ${OUTBOX_INSERT}
       SELECT x.event_id, x.type, i.environment, i.order_id, i.assigned_key_id,
              ${outboxOrderDataSql('u', 'i.previous_status')}, i.at
         FROM unnest($14::uuid[], $15::text[], $16::text[]) WITH ORDINALITY AS x(order_id, event_id, type, k)
         JOIN input i ON i.order_id = x.order_id
         JOIN upd u ON u.id = x.order_id
        ORDER BY x.k
     )${answersItem}
     SELECT id, pv_head AS head, pv_customer AS customer, pv_tail AS tail FROM upd`;
}

const STATUS_CHANGES = statusChangesSql(false);
const STATUS_CHANGES_WITH_ANSWERS = statusChangesSql(true);

/**
 * Status changes of distinct orders in ONE statement (the caller holds their row locks): per change the
 * timeline entry, the order (status, updated_at, a failed attempt for FAILED, and the entry appended to
 * its stored timeline, so the trigger renders the PartnerOrder once, see migration 0006), and the
 * outbox events carrying the new snapshot, taken from the updated row inside PostgreSQL, in the order
 * of `changes`; with `answers`, the answers of the claimed Idempotency-Keys too (so a group of events
 * under keys takes no statement, and no round trip, more than one without). Returns each order's new
 * pieces by order id.
 *
 * `prepare`: run as a named prepared statement (planned once per session). Only once `orders` and
 * `payment_intents` (and, with answers, `idempotency_keys`) have grown (src/db/join-plans.ts): the
 * orders are joined to the changes given as parameters, and a generic plan of that join made while the
 * table was small is a hash join over a sequential scan of `orders`, kept for the session's life
 * (docs/performance.md, 'Operator writes'). Otherwise it is planned on every call, which costs about as
 * much as running it.
 */
export async function recordStatusChanges(
  changes: StatusChange[],
  tx: OutboxTx,
  options: { prepare?: boolean; answers?: StatusChangeAnswers } = {},
): Promise<Map<string, PartnerOrderPieces>> {
  const outbox = changes.flatMap((c) => c.outbox.map((o) => ({ orderId: c.orderId, ...o })));
  const answers = options.answers;
  const params: unknown[] = [
    changes.map((c) => c.orderId),
    changes.map((c) => c.event.status),
    changes.map((c) => c.event.at),
    changes.map((c) => c.event.actor),
    changes.map((c) => c.event.note ?? null),
    changes.map((c) => c.event.partnerNote ?? null),
    changes.map((c) => c.event.failReason ?? null),
    changes.map((c) => c.event.codCollectedQepik ?? null),
    changes.map((c) => c.event.partnerReportedAt ?? null),
    changes.map((c) => c.event.apiKeyId ?? null),
    changes.map((c) => c.environment),
    changes.map((c) => c.assignedKeyId),
    changes.map((c) => c.previousStatus),
    outbox.map((o) => o.orderId),
    outbox.map((o) => o.eventId),
    outbox.map((o) => o.type),
  ];
  if (answers) {
    params.push(
      answers.written.map((a) => a.orderId),
      answers.written.map((a) => a.apiKeyId),
      answers.written.map((a) => a.key),
      answers.written.map((a) => a.pii),
      answers.made.map((a) => a.scope.apiKeyId),
      answers.made.map((a) => a.scope.key),
      answers.made.map((a) => a.statusCode),
      answers.made.map((a) => a.json),
    );
  }
  const rows = await preparedWhen<PartnerOrderPieces & { id: string }>(
    options.prepare,
    answers ? STATUS_CHANGES_WITH_ANSWERS : STATUS_CHANGES,
    params,
    tx,
  );
  if (outbox.length > 0) tx.wroteOutbox();
  const pieces = new Map(rows.map((r) => [r.id, { head: r.head, customer: r.customer, tail: r.tail }]));
  for (const c of changes) if (!pieces.has(c.orderId)) throw new Error(`order ${c.orderId} vanished inside its own transaction`);
  return pieces;
}

/** One status change (see recordStatusChanges). */
export async function recordStatusChange(
  change: StatusChange,
  tx: OutboxTx,
  options: { prepare?: boolean } = {},
): Promise<PartnerOrderPieces> {
  const pieces = (await recordStatusChanges([change], tx, options)).get(change.orderId);
  if (!pieces) throw new Error(`order ${change.orderId} vanished inside its own transaction`);
  return pieces;
}

/**
 * Assigns the order (locked by the caller) to the key and writes its `order.assigned_to_partner`
 * outbox event carrying the new snapshot, in one statement; returns the order's new pieces, or null
 * when the order has an open offer (docs/offers.md: nothing is written). The offer check is in this
 * statement, not in the lock's: a statement that waited for the order's lock keeps the snapshot it
 * started with, so it would miss an offer committed by the lock's previous holder; this one starts
 * after the lock is held, and no offer can be made while it is.
 */
export async function assignOrderToKey(
  change: { orderId: string; apiKeyId: string; environment: ApiKeyEnvironment; eventId: string },
  now: Date,
  tx: OutboxTx,
  options: { prepare?: boolean } = {},
): Promise<PartnerOrderPieces | null> {
  // `prepare`: planned once per database session (src/db/join-plans.ts says when).
  const rows = await preparedWhen<PartnerOrderPieces>(
    options.prepare,
    `WITH o AS (
       UPDATE orders SET assigned_key_id = $2, partner_assigned_at = $3, updated_at = $3
        WHERE id = $1
          AND NOT EXISTS (SELECT 1 FROM offers f WHERE f.order_id = $1 AND f.status = 'PENDING' AND f.expires_at > $3)
       RETURNING id, pv_head, pv_customer, pv_tail
     ), outbox_row AS (
       ${OUTBOX_INSERT}
       SELECT $4, 'order.assigned_to_partner', $5, o.id, $2, ${outboxOrderDataSql('o')}, $3
         FROM o
     )
     SELECT pv_head AS head, pv_customer AS customer, pv_tail AS tail FROM o`,
    [change.orderId, change.apiKeyId, now, change.eventId, change.environment],
    tx,
  );
  if (!rows[0]) return null;
  tx.wroteOutbox();
  return rows[0];
}

/**
 * Moves the orders assigned to `fromKeyId` to `toKeyId` (both the partner's); returns how many. Called by
 * a key rotation inside its transaction (src/modules/keys/keys.service.ts).
 */
export async function moveOrders(partnerId: string, fromKeyId: string, toKeyId: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `WITH moved AS (
       UPDATE orders o SET assigned_key_id = $3
        WHERE o.assigned_key_id = $2
          AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $2 AND k.partner_id = $1)
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [partnerId, fromKeyId, toKeyId],
  );
  return rows[0].n;
}

/**
 * The order's part of a payment's statement (payments.repo.ts: capture, refund): a WITH item `alias`
 * setting the order's paymentStatus, given SQL expressions (`from`: WITH items the status reads),
 * RETURNING the order's id. The intent and its order so change together, in one statement
 * (docs/payments.md).
 */
export function orderPaymentStatusSql(alias: string, e: { orderId: string; status: string; at: string; from?: string }): string {
  return `${alias} AS (
       UPDATE orders SET payment_status = ${e.status}, updated_at = ${e.at}${e.from ? ` FROM ${e.from}` : ''}
        WHERE orders.id = ${e.orderId} RETURNING orders.id
     )`;
}
