/**
 * The partner read statements keep their shape as the orders table grows: each is planned (as a
 * generic plan, which is what a named prepared statement ends up using, and as a custom one) on a table
 * with thousands of orders of several keys, and the plan must read orders through the index that
 * matches the scope, never scan the table, and (for pages without time filters) take the page in index
 * order instead of sorting the key's orders. A plan that drifts to a scan would make these reads grow
 * with the table; the benchmark shows the figures, this shows the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import type { Queryable } from '../../db/db.js';
import type { OrderStatus } from '../../shared/schemas.js';
import { listVisibleOrders, type OrderListFilters, VisibleOrderLoader } from './order-reads.repo.js';
import type { PartnerOrderScope } from './visibility.js';

/** Key `a` holds a tenth of the live orders: the shape of a real deployment, where a key sees a slice. */
const ORDERS = { a: 1000, b: 8000, sandbox: 1000 };
const DAY_MS = 86_400_000;
const STATUSES: OrderStatus[] = ['PACKED', 'EN_ROUTE', 'DELIVERED', 'CANCELLED'];

let t: TestApp;
let a: TestKey;
let sandboxKey: TestKey;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** A statement as the repository sends it: its text and parameters, captured instead of run. */
interface Captured {
  text: string;
  params: unknown[];
}

function recorder(rows: unknown[]): { q: Queryable; captured: Captured[] } {
  const captured: Captured[] = [];
  const q: Queryable = {
    async query<R>(text: string | { text: string }, params?: readonly unknown[]) {
      captured.push({ text: typeof text === 'string' ? text : text.text, params: [...(params ?? [])] });
      return rows as R[];
    },
  } as Queryable;
  return { q, captured };
}

function literal(value: unknown): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(',')}]`;
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** The plan of `statement` as PostgreSQL would run it, generic or custom. */
async function planOf(statement: Captured, mode: 'generic' | 'custom'): Promise<PlanNode> {
  return t.ctx.db.tx(async (q) => {
    await q.query(`SET LOCAL plan_cache_mode = ${mode === 'generic' ? 'force_generic_plan' : 'force_custom_plan'}`);
    await q.query(`PREPARE plan_probe AS ${statement.text}`);
    try {
      const rows = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
        `EXPLAIN (FORMAT JSON) EXECUTE plan_probe(${statement.params.map(literal).join(', ')})`,
      );
      const raw = rows[0]['QUERY PLAN'];
      return (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan;
    } finally {
      await q.query('DEALLOCATE plan_probe');
    }
  });
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

function ordersAccess(plan: PlanNode): PlanNode[] {
  return nodes(plan).filter((n) => n['Relation Name'] === 'orders');
}

beforeAll(async () => {
  t = await createTestApp();
  const partner = await createPartner(t.ctx);
  a = await createKey(t.ctx, partner.id);
  const b = await createKey(t.ctx, partner.id);
  const c = await createKey(t.ctx, (await createPartner(t.ctx)).id, { environment: 'SANDBOX' });
  sandboxKey = c;
  let n = 0;
  // Each key's orders are spread over the same months (one every few minutes), newest first.
  for (const [key, environment, count] of [
    [a, 'LIVE', ORDERS.a],
    [b, 'LIVE', ORDERS.b],
    [c, 'SANDBOX', ORDERS.sandbox],
  ] as const) {
    await t.ctx.db.query(
      `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area,
                           time_window_start, time_window_end, customer, assigned_key_id, partner_assigned_at, created_at, updated_at)
       SELECT gen_random_uuid(), 'QP' || lpad((g + $5)::text, 8, '0'), $2, ($4::text[])[1 + g % 4], 'COD', 'UNPAID', 100, 100, 'Yasamal',
              $3, $3, '{"name":"C","phone":"+994500000000","address":{"street":"S","details":null,"lat":null,"lng":null}}',
              $1, $3, o.at, o.at
         FROM generate_series(1, $6::int) g,
              LATERAL (SELECT $3::timestamptz - ((g * 90 * 24 * 60 / $6::int) || ' minutes')::interval AS at) o`,
      [key.id, environment, t.clock.now(), STATUSES, n, count],
    );
    n += count;
  }
  await t.ctx.db.query('ANALYZE orders');
  await t.ctx.db.query('ANALYZE order_counts');
}, 120_000);
afterAll(() => t.close());

describe('partner list statements', () => {
  const key = (): PartnerOrderScope => ({ environment: 'LIVE', keyId: a.id });
  const all = (): PartnerOrderScope => ({ environment: 'LIVE', keyId: null });
  const daysAgo = (days: number) => new Date(t.clock.nowMs() - days * DAY_MS).toISOString();
  const cases: Array<[string, () => PartnerOrderScope, () => OrderListFilters, string | null]> = [
    ["a key's orders", key, () => ({}), 'orders_key_created_idx'],
    ["a key's orders of one status", key, () => ({ status: 'EN_ROUTE' }), 'orders_key_status_created_idx'],
    ['every order of the environment', all, () => ({}), 'orders_env_created_idx'],
    ['every order of the environment of one status', all, () => ({ status: 'EN_ROUTE' }), 'orders_env_status_created_idx'],
    ["a key's orders created on one day", key, () => ({ from: daysAgo(3), to: daysAgo(2) }), null],
    ["a key's orders updated in the last day", key, () => ({ updatedSince: daysAgo(1) }), null],
  ];
  for (const [name, scope, filters, index] of cases) {
    for (const mode of ['generic', 'custom'] as const) {
      it(`${name}: ${index ? `read in order through ${index}` : 'an index, never a scan'} (${mode} plan)`, async () => {
        const { q, captured } = recorder([{ j: '{}' }]);
        await listVisibleOrders(scope(), filters(), { page: 3, pageSize: 50 }, true, q);
        expect(captured).toHaveLength(1);
        const plan = await planOf(captured[0], mode);
        const access = ordersAccess(plan);

        expect(access.length).toBeGreaterThan(0);
        expect(access.map((n) => n['Node Type'])).not.toContain('Seq Scan');
        if (index) {
          expect(access.map((n) => n['Index Name'])).toContain(index);
          expect(nodes(plan).map((n) => n['Node Type'])).not.toContain('Sort');
        }
      });
    }
  }
});

describe('partner single-order statement', () => {
  for (const [name, scope] of [
    ['a key', () => ({ environment: 'LIVE' as const, keyId: a.id })],
    ['every order of the environment', () => ({ environment: 'LIVE' as const, keyId: null })],
  ] as const) {
    for (const mode of ['generic', 'custom'] as const) {
      for (const codes of [['QP00000007', 'QP00000008'], ['QP00000009']]) {
        it(`${name}, ${codes.length} code(s): one probe of the unique index per code (${mode} plan)`, async () => {
          const { q, captured } = recorder([]);
          const loader = new VisibleOrderLoader(q);
          await Promise.all(codes.map((code) => loader.find(scope(), code, true)));
          expect(captured).toHaveLength(1);
          expect(captured[0].params[0]).toEqual(codes.length === 1 ? codes[0] : codes);
          const access = ordersAccess(await planOf(captured[0], mode));
          expect(access.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', 'orders_code_key']]);
        });
      }
    }

    it(`${name}, one code at a time: the session keeps the generic plan, not planning each read again`, async () => {
      const { q: capture, captured } = recorder([]);
      await new VisibleOrderLoader(capture).find(scope(), 'QP00000010', true);
      const plans = await t.ctx.db.tx(async (q) => {
        const loader = new VisibleOrderLoader(q);
        for (let i = 10; i < 18; i++) {
          expect(await loader.find(scope(), `QP000000${i}`, true)).not.toBeNull();
        }
        return q.query<{ generic_plans: number; custom_plans: number }>(
          'SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE statement = $1',
          [captured[0].text],
        );
      });
      // Five custom plans first (PostgreSQL's rule), then the generic one for good.
      expect(plans).toHaveLength(1);
      expect(plans[0].generic_plans).toBeGreaterThanOrEqual(3);
    });
  }
});

describe('the rule the key list relies on', () => {
  it('the database refuses an order assigned to a key of another environment, whoever writes it', async () => {
    const update = t.ctx.db.query("UPDATE orders SET assigned_key_id = $1 WHERE code = 'QP00000001'", [sandboxKey.id]);
    await expect(update).rejects.toMatchObject({ code: '23514' });
    const [row] = await t.ctx.db.query<{ environment: string; assigned_key_id: string }>(
      "SELECT environment, assigned_key_id FROM orders WHERE code = 'QP00000001'",
    );
    expect(row).toEqual({ environment: 'LIVE', assigned_key_id: a.id });
  });
});
