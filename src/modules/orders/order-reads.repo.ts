/**
 * Order SQL, reads. Reads that answer partners take the partner's view (`PartnerOrderScope`, visibility.ts)
 * FIRST and select through it, so a query cannot forget tenant isolation; the Queryable (pool or
 * transaction) comes LAST, as in every repo.
 *
 * Each answer takes ONE round trip and no per-row work: every order row carries its PartnerOrder JSON
 * text in pieces (maintained by triggers in the same transaction as each change: migration 0006), so
 * a read is an index lookup or range scan returning stored text. No N+1, no mapping in JavaScript.
 */
import type { Queryable } from '../../db/db.js';
import { prepared } from '../../db/prepared.js';
import type { ApiKeyEnvironment, OrderStatus } from '../../shared/schemas.js';
import type { AdminOrder, PageOfPartnerOrder, PartnerOrder } from './orders.schemas.js';
import {
  type JsonText,
  type OrderPlacement,
  orderJsonSql,
  type PartnerOrderScope,
  scopeConditions,
  scopeKind,
} from './visibility.js';

const ADMIN_JSON = `(${orderJsonSql(true)})::jsonb || jsonb_build_object('environment', lower(o.environment), 'assignedKeyId', o.assigned_key_id)`;

// Statement texts are built once: the same text every time lets the server reuse its plan cache.
const PARTNER_BY_ID = `SELECT (${orderJsonSql(false)})::json AS j FROM orders o WHERE o.id = $1`;
const PARTNER_PII_BY_ID = `SELECT (${orderJsonSql(true)})::json AS j FROM orders o WHERE o.id = $1`;
const ADMIN_BY_ID = `SELECT ${ADMIN_JSON} AS j FROM orders o WHERE o.id = $1`;
const ADMIN_BY_CODE = `SELECT ${ADMIN_JSON} AS j FROM orders o WHERE o.code = $1`;

/** The PartnerOrder snapshot of an order (by id, no visibility check: for operator answers). */
export async function loadPartnerOrder(orderId: string, options: { pii: boolean }, q: Queryable): Promise<PartnerOrder | null> {
  const rows = await q.query<{ j: PartnerOrder }>(options.pii ? PARTNER_PII_BY_ID : PARTNER_BY_ID, [orderId]);
  return rows[0]?.j ?? null;
}

export async function loadAdminOrderById(orderId: string, q: Queryable): Promise<AdminOrder | null> {
  const rows = await q.query<{ j: AdminOrder }>(ADMIN_BY_ID, [orderId]);
  return rows[0]?.j ?? null;
}

export async function findAdminOrderByCode(code: string, q: Queryable): Promise<AdminOrder | null> {
  const rows = await q.query<{ j: AdminOrder }>(ADMIN_BY_CODE, [code]);
  return rows[0]?.j ?? null;
}

/**
 * Several codes of one scope in one statement. Each code is looked up by a scalar subquery on the
 * unique index: with `code = ANY($1)` a generic plan can prefer the key or environment index (its row
 * estimate for an array parameter is a guess) and read every order of the key; an equality on a
 * unique column always plans as one index probe. A code not found (or not visible) yields j = NULL.
 *
 * One code (most lookups: they are grouped per key) has a statement of its own. The array's is
 * planned again on every call: PostgreSQL costs its generic plan for a hundred codes against custom
 * plans for the one or few at hand and keeps the custom plan, whose planning cost more than twice
 * the read itself (91 against 34 µs, pg_stat_statements, docs/performance.md 'Partner reads'). The
 * single code's generic plan costs what a custom one does, so it is kept after five calls.
 */
const byCodes = (pii: boolean, kind: 'key' | 'all', one: boolean) =>
  `SELECT ${one ? '$1::text' : 'w.code'} AS c, (SELECT ${orderJsonSql(pii)} FROM orders o WHERE ${[
    `o.code = ${one ? '$1' : 'w.code'}`,
    ...scopeConditions(kind, { environment: '$2', keyId: '$3' }, 'probe'),
  ].join(' AND ')}) AS j${one ? '' : ' FROM unnest($1::text[]) AS w(code)'}`;
const byCodesOf = (pii: boolean) => ({
  key: { many: byCodes(pii, 'key', false), one: byCodes(pii, 'key', true) },
  all: { many: byCodes(pii, 'all', false), one: byCodes(pii, 'all', true) },
});
const VISIBLE_BY_CODES = { partner: byCodesOf(false), pii: byCodesOf(true) };
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
    const sql = VISIBLE_BY_CODES[pii ? 'pii' : 'partner'][scope.keyId === null ? 'all' : 'key'];
    const [text, first] = codes.length === 1 ? [sql.one, codes[0]] : [sql.many, codes];
    try {
      const rows = await prepared<{ c: string; j: string | null }>(
        text,
        scope.keyId === null ? [first, scope.environment] : [first, scope.environment, scope.keyId],
        this.q,
      );
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
 * One statement: the page's ids are read through the matching index (key or environment, optionally
 * status) as a range scan with LIMIT/OFFSET, and only then are its rows' stored order texts read and
 * joined into the envelope: a deep page (docs/paging.md, "Partner orders") skips index entries, never
 * the table rows behind them. The texts are a subquery per id above the LIMIT, a probe of the primary
 * key each (a join could be planned, in a generic plan that cannot know the page size, as a hash of
 * every order). The page is aggregated in the order it was materialised in, the list's order (a
 * materialised CTE is read back in the order its rows were written); an ORDER BY in the aggregate
 * would be planned as a sort of its own by newer PostgreSQL versions (the embedded one). The
 * total is needed only when the page does not tell it (a page shorter than pageSize, and not past the
 * end, means total = offset + its length); the total is an uncorrelated subquery in a CASE branch,
 * which PostgreSQL evaluates lazily (an InitPlan runs on first use), so that case costs nothing.
 * Without time filters the total is a sum over a few rows of order_counts (exact counters kept by
 * triggers, migrations 0004 and 0006); with them, a count of the range. A key's page uses the `range`
 * form of the scope (visibility.ts: the key's environment checked once, not per row).
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
  const counters: string[] = ['c.environment = $1'];
  const keyId = scope.keyId === null ? undefined : param(scope.keyId);
  if (keyId !== undefined) counters.push(`c.key_id = ${keyId}`);
  const where = scopeConditions(scopeKind(scope), { environment: '$1', keyId }, 'range');
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
    `WITH page AS MATERIALIZED (
       SELECT i.id, i.created_at, (SELECT ${orderJsonSql(pii)} FROM orders o WHERE o.id = i.id) AS j
         FROM (SELECT o.id, o.created_at
                 FROM orders o
                WHERE ${condition}
                ORDER BY o.created_at DESC, o.id DESC
                LIMIT ${limit} OFFSET ${offset}) i
     ), s AS (
       SELECT count(*)::int AS n, string_agg(p.j, ',') AS items FROM page p
     )
     SELECT '{"page":' || ${pageNo} || ',"pageSize":' || ${limit}
            || ',"total":' || CASE WHEN s.n < ${limit} AND (s.n > 0 OR ${offset} = 0) THEN ${offset} + s.n ELSE ${count} END
            || ',"items":[' || coalesce(s.items, '') || ']}' AS j
       FROM s`,
    params,
    q,
  );
  return rows[0].j;
}

/**
 * Where orders are (environment and key), by code, as visibility reads them: the fan-out of
 * `batch.completed` routes by its orders. Unknown codes are left out.
 */
export async function findOrderPlacements(codes: string[], q: Queryable): Promise<Map<string, OrderPlacement>> {
  if (codes.length === 0) return new Map();
  const rows = await q.query<{ code: string; assigned_key_id: string | null; environment: ApiKeyEnvironment }>(
    'SELECT code, assigned_key_id, environment FROM orders WHERE code = ANY($1::text[])',
    [codes],
  );
  return new Map(rows.map((o) => [o.code, { environment: o.environment, assignedKeyId: o.assigned_key_id }]));
}
