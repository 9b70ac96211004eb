/**
 * Order SQL. Reads that answer partners take the partner's view (`PartnerOrderScope`: environment and
 * key, or the whole environment for a receivesAllOrders key) FIRST and filter by it, so a query cannot
 * forget tenant isolation; the Queryable (pool or transaction) comes LAST.
 *
 * Each answer takes ONE round trip and no per-row work: every order row carries its PartnerOrder JSON
 * (`partner_view`, maintained by triggers in the same transaction as each change: migration 0004), so
 * a read is an index lookup or range scan returning stored JSON. No N+1, no mapping in JavaScript.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, OrderStatus, PaymentMethod, WebhookEvent } from '../../shared/schemas.js';
import type { AdminOrder, PageOfPartnerOrder, PartnerCustomer, PartnerOrder } from './orders.schemas.js';

/** Which orders a partner request may see: its environment's orders assigned to `keyId`, or all of them. */
export interface PartnerOrderScope {
  environment: ApiKeyEnvironment;
  /** The key the orders are assigned to (the caller's actsForKeyId); null = every order (receivesAllOrders). */
  keyId: string | null;
}

/**
 * The exact JSON text of a `T` as PostgreSQL rendered it (keys in the schema's order, compact): the
 * partner routes send it as the body unchanged, so Node neither parses nor re-serialises it.
 */
export type JsonText<T> = string & { readonly __jsonOf?: T };
/** The same as UTF-8 bytes, ready for the socket (what the read cache keeps). */
export type JsonBytes<T> = Buffer & { readonly __jsonOf?: T };

type OrderView = 'partner' | 'partner-pii';

/**
 * The PartnerOrder JSON text of one order (alias `o`), from the pieces the triggers of migration 0006
 * keep on the row: without the customer for a key lacking orders:pii.
 */
function orderJson(view: OrderView): string {
  return view === 'partner-pii'
    ? `o.pv_head || coalesce(o.pv_customer, 'null') || o.pv_tail`
    : `o.pv_head || 'null' || o.pv_tail`;
}

const ADMIN_JSON = `(${orderJson('partner-pii')})::jsonb || jsonb_build_object('environment', lower(o.environment), 'assignedKeyId', o.assigned_key_id)`;

/**
 * Runs `text` as a NAMED prepared statement: each connection parses and plans it once, later calls
 * only bind and execute. Planning these JSON-building statements costs several times their execution
 * on the embedded database, so the hot partner paths use this.
 *
 * Only for statements whose plan stays right whatever the table's size was when a session planned
 * them: after five executions PostgreSQL may keep one generic plan for the session's life, made with
 * the statistics of that moment. A probe by equality on a unique column is such a statement (even on
 * a new, unanalysed table the planner prefers the index); a join of `orders` to a set of rows given
 * as parameters is not (planned while the table was new, it keeps a hash join over a sequential scan
 * of `orders` as the table grows: issue 17, write-scans.test.ts). `Db.query`
 * hands its first argument to node-postgres unchanged, and node-postgres accepts a query config
 * `{ name, text }` there (it copies it before adding the values). Names must map to one text each:
 * they are derived from the text itself.
 */
const statementNames = new Map<string, string>();
function prepared<R>(q: Queryable, text: string, params: unknown[]): Promise<R[]> {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `orders_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return q.query<R>({ name, text } as unknown as string, params);
}

const viewOf = (pii: boolean): OrderView => (pii ? 'partner-pii' : 'partner');

// Statement texts are built once: the same text every time lets the server reuse its plan cache.
const BY_ID = {
  partner: `SELECT (${orderJson('partner')})::json AS j FROM orders o WHERE o.id = $1`,
  'partner-pii': `SELECT (${orderJson('partner-pii')})::json AS j FROM orders o WHERE o.id = $1`,
  admin: `SELECT ${ADMIN_JSON} AS j FROM orders o WHERE o.id = $1`,
};
const ADMIN_BY_CODE = `SELECT ${ADMIN_JSON} AS j FROM orders o WHERE o.code = $1`;
/** The PartnerOrder snapshot of an order (by id, no visibility check: for outbox events and answers). */
export async function loadPartnerOrder(q: Queryable, orderId: string, options: { pii: boolean }): Promise<PartnerOrder | null> {
  const rows = await q.query<{ j: PartnerOrder }>(BY_ID[viewOf(options.pii)], [orderId]);
  return rows[0]?.j ?? null;
}

export async function loadAdminOrderById(q: Queryable, orderId: string): Promise<AdminOrder | null> {
  const rows = await q.query<{ j: AdminOrder }>(BY_ID.admin, [orderId]);
  return rows[0]?.j ?? null;
}

export async function findAdminOrderByCode(q: Queryable, code: string): Promise<AdminOrder | null> {
  const rows = await q.query<{ j: AdminOrder }>(ADMIN_BY_CODE, [code]);
  return rows[0]?.j ?? null;
}

/**
 * Several codes of one scope in one statement. Each code is looked up by a scalar subquery on the
 * unique index: with `code = ANY($1)` a generic plan can prefer the key or environment index (its row
 * estimate for an array parameter is a guess) and read every order of the key; an equality on a
 * unique column always plans as one index probe. A code not found (or not visible) yields j = NULL.
 */
const byCodes = (view: OrderView, scoped: 'key' | 'all') =>
  `SELECT w.code AS c, (SELECT ${orderJson(view)} FROM orders o WHERE o.code = w.code AND o.environment = $2` +
  `${scoped === 'key' ? ' AND o.assigned_key_id = $3' : ''}) AS j FROM unnest($1::text[]) AS w(code)`;
const VISIBLE_BY_CODES = {
  partner: { key: byCodes('partner', 'key'), all: byCodes('partner', 'all') },
  'partner-pii': { key: byCodes('partner-pii', 'key'), all: byCodes('partner-pii', 'all') },
};
/** Codes looked up by one statement at most. */
const MAX_CODES_PER_LOOKUP = 100;

interface PendingLookup {
  scope: PartnerOrderScope;
  pii: boolean;
  codes: Map<string, Array<{ resolve: (j: JsonText<PartnerOrder> | null) => void; reject: (err: unknown) => void }>>;
}

/**
 * One order as the partner sees it (its JSON text), or null when it does not exist or is not visible
 * to the scope; the partner single-order route's read. Coalesced: the lookups of one scope (key,
 * environment, pii) made in the same turn of the event loop go to the database as ONE statement on the
 * unique index (`code = ANY(…)` plus the scope filter), each caller getting its own order. Under
 * concurrent polling this divides the statements, round trips and pool checkouts by the concurrency;
 * a lone request waits one setImmediate. Only for a pool (a transaction has one session and its own
 * ordering).
 */
export class VisibleOrderLoader {
  private pending = new Map<string, PendingLookup>();
  private scheduled = false;

  constructor(private readonly q: Queryable) {}

  find(scope: PartnerOrderScope, code: string, pii: boolean): Promise<JsonText<PartnerOrder> | null> {
    return new Promise((resolve, reject) => {
      const id = `${scope.environment}|${scope.keyId ?? '*'}|${pii ? 1 : 0}`;
      let group = this.pending.get(id);
      if (!group) {
        group = { scope, pii, codes: new Map() };
        this.pending.set(id, group);
      }
      const waiters = group.codes.get(code);
      if (waiters) waiters.push({ resolve, reject });
      else group.codes.set(code, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.run());
      }
    });
  }

  private run(): void {
    this.scheduled = false;
    const groups = [...this.pending.values()];
    this.pending = new Map();
    for (const group of groups) {
      const codes = [...group.codes.keys()];
      for (let from = 0; from < codes.length; from += MAX_CODES_PER_LOOKUP) {
        void this.load(group, codes.slice(from, from + MAX_CODES_PER_LOOKUP));
      }
    }
  }

  private async load(group: PendingLookup, codes: string[]): Promise<void> {
    const { scope, pii } = group;
    const sql = VISIBLE_BY_CODES[viewOf(pii)];
    try {
      const rows =
        scope.keyId === null
          ? await prepared<{ c: string; j: string | null }>(this.q, sql.all, [codes, scope.environment])
          : await prepared<{ c: string; j: string | null }>(this.q, sql.key, [codes, scope.environment, scope.keyId]);
      const found = new Map(rows.map((r) => [r.c, r.j]));
      for (const code of codes) for (const w of group.codes.get(code) ?? []) w.resolve(found.get(code) ?? null);
    } catch (err) {
      for (const code of codes) for (const w of group.codes.get(code) ?? []) w.reject(err);
    }
  }
}

export interface OrderListFilters {
  status?: OrderStatus;
  /** ISO instants, already validated. */
  from?: string;
  to?: string;
  updatedSince?: string;
}

/**
 * One page of the scope's orders, newest first (created_at DESC, id DESC), as the JSON text of the
 * whole PageOfPartnerOrder envelope.
 *
 * One statement: the page is read through the matching index (key or environment, optionally status)
 * as a range scan with LIMIT/OFFSET, and its stored order texts are joined into the envelope. The
 * total is needed only when the page does not tell it (a page shorter than pageSize, and not past the
 * end, means total = offset + its length); the total is an uncorrelated subquery in a CASE branch,
 * which PostgreSQL evaluates lazily (an InitPlan runs on first use), so that case costs nothing.
 * Without time filters the total is a sum over a few rows of order_counts (exact counters kept by
 * triggers, migrations 0004 and 0006); with them, a count of the range.
 *
 * A key's page filters orders by the key alone and checks the key's environment once (a gating
 * EXISTS, not a per-row filter): an order only ever belongs to a key of its environment (migration
 * 0008 enforces it). Filtering every row by environment too let a generic plan pick the environment's
 * index for a small key; query-plans.test.ts pins the plans.
 */
export async function listVisibleOrders(
  scope: PartnerOrderScope,
  filters: OrderListFilters,
  page: { page: number; pageSize: number },
  pii: boolean,
  q: Queryable,
): Promise<JsonText<PageOfPartnerOrder>> {
  const params: unknown[] = [scope.environment];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  const counters: string[] = ['c.environment = $1'];
  if (scope.keyId !== null) {
    const key = param(scope.keyId);
    where.push(`o.assigned_key_id = ${key}`, `EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ${key} AND k.environment = $1)`);
    counters.push(`c.key_id = ${key}`);
  } else where.push('o.environment = $1');
  if (filters.status !== undefined) {
    const status = param(filters.status);
    where.push(`o.status = ${status}`);
    counters.push(`c.status = ${status}`);
  }
  const timeFiltered = filters.from !== undefined || filters.to !== undefined || filters.updatedSince !== undefined;
  if (filters.from !== undefined) where.push(`o.created_at >= ${param(filters.from)}::timestamptz`);
  if (filters.to !== undefined) where.push(`o.created_at < ${param(filters.to)}::timestamptz`);
  if (filters.updatedSince !== undefined) where.push(`o.updated_at >= ${param(filters.updatedSince)}::timestamptz`);
  const pageNo = `${param(page.page)}::int`;
  const limit = `${param(page.pageSize)}::int`;
  const offset = `${param((page.page - 1) * page.pageSize)}::int`;
  const condition = where.join(' AND ');
  const count = timeFiltered
    ? `(SELECT count(*) FROM orders o WHERE ${condition})`
    : `(SELECT coalesce(sum(c.n), 0) FROM order_counts c WHERE ${counters.join(' AND ')})`;
  const rows = await prepared<{ j: string }>(
    q,
    `WITH page AS MATERIALIZED (
       SELECT o.id, o.created_at, ${orderJson(viewOf(pii))} AS j
         FROM orders o
        WHERE ${condition}
        ORDER BY o.created_at DESC, o.id DESC
        LIMIT ${limit} OFFSET ${offset}
     ), s AS (
       SELECT count(*)::int AS n, string_agg(p.j, ',' ORDER BY p.created_at DESC, p.id DESC) AS items FROM page p
     )
     SELECT '{"page":' || ${pageNo} || ',"pageSize":' || ${limit}
            || ',"total":' || CASE WHEN s.n < ${limit} AND (s.n > 0 OR ${offset} = 0) THEN ${offset} + s.n ELSE ${count} END
            || ',"items":[' || coalesce(s.items, '') || ']}' AS j
       FROM s`,
    params,
  );
  return rows[0].j;
}

// --- Writes ----------------------------------------------------------------------------------------

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

/**
 * A new order in ONE statement (so ONE round trip, atomic without a transaction of its own): the
 * order, its items, its timeline entries (`statuses`, in order, all at `createdAt`) and its outbox
 * events (`outbox`, in order, each with `data = { order }`, the new snapshot with customer), and the
 * order's PartnerOrder pieces back.
 *
 * The order row is rendered once: it is inserted with its items' and timeline's texts already made by
 * the read model's own functions (0006) and `pv_last_event` set to its last timeline entry, so the
 * items and timeline triggers find nothing to re-render (migration 0014; before, a creation rendered
 * the order three times and took five statements). Timeline ids come from the table's sequence in
 * this statement. No NOTIFY: the caller wakes consumers after COMMIT (`outboxCommitted`).
 */
export async function insertNewOrderRow(
  q: Queryable,
  order: NewOrder,
  timeline: { statuses: OrderStatus[]; actor: OrderEventRow['actor'] },
  outbox: Array<{ eventId: string; type: WebhookEvent }>,
): Promise<NewOrderOutcome> {
  const rows = await q.query<{ zone_ok: boolean; head: string | null; customer: string | null; tail: string | null }>(
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
     ), item_rows AS (
       INSERT INTO order_items (order_id, position, name, qty, unit_price_qepik)
       SELECT o.id, i.position, i.name, i.qty, i.price FROM o, items i
     ), event_rows AS (
       INSERT INTO order_events (id, order_id, status, at, actor)
       SELECT e.id, o.id, e.status, $16::timestamptz, $22::text FROM o, timeline e ORDER BY e.id
     ), outbox_rows AS (
       INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at)
       SELECT x.event_id, x.type, $3::text, o.id, $14::uuid,
              jsonb_build_object('order', (o.pv_head || coalesce(o.pv_customer, 'null') || o.pv_tail)::jsonb), $16::timestamptz
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

/** The columns the rules need, read with a row lock (SELECT … FOR UPDATE) for the rest of the transaction. */
export interface LockedOrder {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  paymentMethod: PaymentMethod;
  codAmountQepik: number;
  failedAttempts: number;
  assignedKeyId: string | null;
  batchCode: string | null;
}

interface LockedRow {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  payment_method: PaymentMethod;
  cod_amount_qepik: number;
  failed_attempts: number;
  assigned_key_id: string | null;
  batch_code: string | null;
}

const LOCKED_COLUMNS =
  'id, code, environment, status, payment_method, cod_amount_qepik, failed_attempts, assigned_key_id, batch_code';

function lockedOrder(r: LockedRow): LockedOrder {
  return {
    id: r.id,
    code: r.code,
    environment: r.environment,
    status: r.status,
    paymentMethod: r.payment_method,
    codAmountQepik: Number(r.cod_amount_qepik),
    failedAttempts: r.failed_attempts,
    assignedKeyId: r.assigned_key_id,
    batchCode: r.batch_code,
  };
}

/**
 * Locks the order row: a concurrent change of the same order waits here until this transaction ends,
 * then reads the committed row, so of two racing changes the second sees the first's outcome.
 */
export async function lockOrderByCode(q: Queryable, code: string): Promise<LockedOrder | null> {
  const rows = await prepared<LockedRow>(q, `SELECT ${LOCKED_COLUMNS} FROM orders WHERE code = $1 FOR UPDATE`, [code]);
  return rows[0] ? lockedOrder(rows[0]) : null;
}

/**
 * Locks several order rows, in code order (the order every multi-row locker uses, batches.repo.ts
 * included, so two of them never wait for each other in a cycle). Unknown codes are left out.
 */
export async function lockOrdersByCodes(q: Queryable, codes: string[]): Promise<LockedOrder[]> {
  // Planned on every call (not `prepared`): a generic plan for a set of codes, made while the table
  // was small, can be a sequential scan.
  const rows = await q.query<LockedRow>(
    `SELECT ${LOCKED_COLUMNS} FROM orders WHERE code = ANY($1::text[]) ORDER BY code FOR UPDATE`,
    [codes],
  );
  return rows.map(lockedOrder);
}

/** The three stored pieces of an order's PartnerOrder JSON text (migration 0006). */
export interface PartnerOrderPieces {
  head: string;
  /** The PartnerCustomer JSON text; null when the order has none. */
  customer: string | null;
  tail: string;
}

/** The PartnerOrder JSON text from its pieces, with or without the customer. */
export function partnerOrderJson(pieces: PartnerOrderPieces, pii: boolean): JsonText<PartnerOrder> {
  return pieces.head + (pii && pieces.customer !== null ? pieces.customer : 'null') + pieces.tail;
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
 * Status changes of distinct orders in ONE statement (the caller holds their row locks): per change the
 * timeline entry, the order (status, updated_at, a failed attempt for FAILED, and the entry appended to
 * its stored timeline, so the trigger renders the PartnerOrder once, see migration 0006), and the
 * outbox events carrying the new snapshot, taken from the updated row inside PostgreSQL, in the order
 * of `changes`. Returns each order's new pieces by order id.
 * No NOTIFY here: the caller wakes consumers after COMMIT (`outboxCommitted`).
 *
 * Planned on every call (not `prepared`): the orders are joined to the changes given as parameters,
 * and a generic plan of that join made while the table was small is a hash join over a sequential
 * scan of `orders`, kept for the session's life (issue 17).
 */
export async function recordStatusChanges(q: Queryable, changes: StatusChange[]): Promise<Map<string, PartnerOrderPieces>> {
  const outbox = changes.flatMap((c) => c.outbox.map((o) => ({ orderId: c.orderId, ...o })));
  const rows = await q.query<PartnerOrderPieces & { id: string }>(
    `WITH input AS (
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
     ), out AS (
       INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at)
       SELECT x.event_id, x.type, i.environment, i.order_id, i.assigned_key_id,
              jsonb_build_object('order', (u.pv_head || coalesce(u.pv_customer, 'null') || u.pv_tail)::jsonb,
                                 'previousStatus', i.previous_status),
              i.at
         FROM unnest($14::uuid[], $15::text[], $16::text[]) WITH ORDINALITY AS x(order_id, event_id, type, k)
         JOIN input i ON i.order_id = x.order_id
         JOIN upd u ON u.id = x.order_id
        ORDER BY x.k
     )
     SELECT id, pv_head AS head, pv_customer AS customer, pv_tail AS tail FROM upd`,
    [
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
    ],
  );
  const pieces = new Map(rows.map((r) => [r.id, { head: r.head, customer: r.customer, tail: r.tail }]));
  for (const c of changes) if (!pieces.has(c.orderId)) throw new Error(`order ${c.orderId} vanished inside its own transaction`);
  return pieces;
}

/** One status change (see recordStatusChanges). */
export async function recordStatusChange(q: Queryable, change: StatusChange): Promise<PartnerOrderPieces> {
  const pieces = (await recordStatusChanges(q, [change])).get(change.orderId);
  if (!pieces) throw new Error(`order ${change.orderId} vanished inside its own transaction`);
  return pieces;
}

export interface AssignableKey {
  id: string;
  environment: ApiKeyEnvironment;
  revokedAt: Date | null;
}

/**
 * The order to assign, locked (as lockOrderByCode), and the key it is to be assigned to, in one
 * statement; `order` null: no such order; `key` null: no such key.
 */
export async function lockOrderForAssignment(
  q: Queryable,
  code: string,
  apiKeyId: string,
): Promise<{ order: LockedOrder | null; key: AssignableKey | null }> {
  const rows = await q.query<
    LockedRow & { key_id: string | null; key_environment: ApiKeyEnvironment | null; key_revoked_at: Date | null }
  >(
    `SELECT ${LOCKED_COLUMNS.split(', ')
      .map((c) => `o.${c}`)
      .join(', ')}, k.id AS key_id, k.environment AS key_environment, k.revoked_at AS key_revoked_at
       FROM orders o LEFT JOIN api_keys k ON k.id = $2
      WHERE o.code = $1
        FOR UPDATE OF o`,
    [code, apiKeyId],
  );
  const r = rows[0];
  if (!r) return { order: null, key: null };
  return {
    order: lockedOrder(r),
    key:
      r.key_id === null
        ? null
        : { id: r.key_id, environment: r.key_environment as ApiKeyEnvironment, revokedAt: r.key_revoked_at },
  };
}

/**
 * Assigns the order (locked by the caller) to the key and writes its `order.assigned_to_partner`
 * outbox event carrying the new snapshot, in one statement; returns the order's new pieces. No NOTIFY:
 * the caller wakes consumers after COMMIT (`outboxCommitted`).
 */
export async function assignOrderToKey(
  q: Queryable,
  change: { orderId: string; apiKeyId: string; environment: ApiKeyEnvironment; eventId: string },
  now: Date,
): Promise<PartnerOrderPieces> {
  const rows = await q.query<PartnerOrderPieces>(
    `WITH o AS (
       UPDATE orders SET assigned_key_id = $2, partner_assigned_at = $3, updated_at = $3 WHERE id = $1
       RETURNING id, pv_head, pv_customer, pv_tail
     ), outbox_row AS (
       INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at)
       SELECT $4, 'order.assigned_to_partner', $5, o.id, $2,
              jsonb_build_object('order', (o.pv_head || coalesce(o.pv_customer, 'null') || o.pv_tail)::jsonb), $3
         FROM o
     )
     SELECT pv_head AS head, pv_customer AS customer, pv_tail AS tail FROM o`,
    [change.orderId, change.apiKeyId, now, change.eventId, change.environment],
  );
  if (!rows[0]) throw new Error(`order ${change.orderId} vanished inside its own transaction`);
  return rows[0];
}
