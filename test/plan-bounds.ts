/**
 * What the plan guards (list-plans*.test.ts) measure: the statements a list's repository sends, run
 * again under EXPLAIN ANALYZE with their very parameters (a named statement's generic plan too), and
 * the rows each plan read from the list's table: returned by a scan node, or read and thrown away by
 * its filter or an index recheck, once per loop.
 */
import { expect } from 'vitest';
import type { Db, Queryable } from '../src/db/db.js';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

export interface Captured {
  text: string;
  params: unknown[];
  /** A named (prepared) statement: its plan may become generic; an unnamed one is planned each time. */
  named: boolean;
}

/** A Queryable that runs every statement and keeps its text and parameters. */
export function recording(q: Queryable): { q: Queryable; captured: Captured[] } {
  const captured: Captured[] = [];
  return {
    captured,
    q: {
      query<R>(text: string | { text: string }, params?: readonly unknown[]) {
        const named = typeof text !== 'string';
        captured.push({ text: named ? text.text : text, params: [...(params ?? [])], named });
        return q.query<R>(text as string, params);
      },
    } as Queryable,
  };
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(',')}]`;
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** The plan `statement` ran with, under EXPLAIN ANALYZE (generic or custom). */
export async function analyzed(db: Db, statement: Captured, mode: 'generic' | 'custom'): Promise<PlanNode> {
  return db.tx(async (q) => {
    await q.query(`SET LOCAL plan_cache_mode = ${mode === 'generic' ? 'force_generic_plan' : 'force_custom_plan'}`);
    await q.query(`PREPARE list_probe AS ${statement.text}`);
    try {
      const rows = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE list_probe${statement.params.length ? `(${statement.params.map(literal).join(', ')})` : ''}`,
      );
      const raw = rows[0]['QUERY PLAN'];
      return (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan;
    } finally {
      await q.query('DEALLOCATE list_probe');
    }
  });
}

/**
 * The generic plan of a statement (`text` as a repository sends it), without running it: the plan a
 * named prepared statement keeps after five runs. Parameters are not needed for a generic plan.
 */
export async function genericPlan(db: Db, text: string, paramCount: number): Promise<PlanNode> {
  return db.tx(async (q) => {
    await q.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await q.query(`PREPARE generic_probe AS ${text}`);
    try {
      const rows = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
        `EXPLAIN (FORMAT JSON) EXECUTE generic_probe(${Array.from({ length: paramCount }, () => 'NULL').join(', ')})`,
      );
      const raw = rows[0]['QUERY PLAN'];
      return (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan;
    } finally {
      await q.query('DEALLOCATE generic_probe');
    }
  });
}

/** The relations a plan reads and how (scan node types), e.g. to find a sequential scan. */
export function planReads(plan: PlanNode, tables: readonly string[]): PlanNode[] {
  return nodes(plan).filter((n) => n['Relation Name'] !== undefined && tables.includes(n['Relation Name']));
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Rows the plan read from `table` (its partitions included): returned or thrown away by a filter. */
export function rowsRead(plan: PlanNode, table: string): number {
  return nodes(plan)
    .filter((n) => n['Relation Name'] === table || n['Relation Name']?.startsWith(`${table}_d`))
    .reduce(
      (sum, n) =>
        sum +
        ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) *
          (n['Actual Loops'] ?? 1),
      0,
    );
}

/** Each captured statement read at most its bound of rows from `table`, in each plan it may run with. */
export async function expectBounded(db: Db, captured: Captured[], table: string, bounds: number[]): Promise<void> {
  expect(captured.map((c) => c.text.trim().split(/\s+/)[0])).toHaveLength(bounds.length);
  for (const [i, statement] of captured.entries()) {
    for (const mode of statement.named ? (['custom', 'generic'] as const) : (['custom'] as const)) {
      const plan = await analyzed(db, statement, mode);
      const read = rowsRead(plan, table);
      expect(
        read,
        `${mode} plan of\n${statement.text}\nread ${read} rows:\n${JSON.stringify(plan, null, 1)}`,
      ).toBeLessThanOrEqual(bounds[i]);
    }
  }
}
