/**
 * The expiry sweep stays one indexed statement whatever the number of open offers (docs/offers.md): with
 * 10,000 open offers and a handful due, its statement's plan reads the due ones through the partial
 * index offers_due_idx and nothing else; the statistics read of one partner (among many) is a range of
 * offers_partner_created_idx.
 * Rows are written directly (triggers and foreign keys off, in the set-up transaction only): the plans,
 * not the offers, are under test.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import type { Queryable } from '../../db/db.js';
import { DUE_OFFERS_PROBE, expireDueOffers, offerStats } from './offers.repo.js';

const OPEN = 10_000;
const DUE = 5;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

let t: TestApp;
const partnerId = randomUUID();

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function explain(q: Queryable, text: string, params: unknown[], analyze: boolean): Promise<PlanNode> {
  await q.query(`PREPARE plan_probe AS ${text}`);
  try {
    const literal = (v: unknown) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${String(v)}'`);
    const rows = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
      `EXPLAIN (FORMAT JSON${analyze ? ', ANALYZE' : ''}) EXECUTE plan_probe(${params.map(literal).join(', ')})`,
    );
    const raw = rows[0]['QUERY PLAN'];
    return (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan;
  } finally {
    await q.query('DEALLOCATE plan_probe');
  }
}

beforeAll(async () => {
  t = await createTestApp();
  const now = t.clock.now();
  await t.ctx.db.tx(async (q) => {
    await q.query('SET LOCAL session_replication_role = replica');
    await q.query(
      `INSERT INTO offers (id, order_id, order_code, api_key_id, partner_id, environment, status, created_at, expires_at)
       SELECT 'ofr_' || lpad(n::text, 24, '0'), gen_random_uuid(), 'ORD-' || n, gen_random_uuid(),
              CASE WHEN n % 100 = 0 THEN $1::uuid ELSE gen_random_uuid() END, 'LIVE', 'PENDING',
              $2::timestamptz - interval '1 minute',
              CASE WHEN n <= $4 THEN $2::timestamptz - interval '1 second' ELSE $2::timestamptz + interval '1 hour' END
         FROM generate_series(1, $3::int) AS n`,
      [partnerId, now, OPEN + DUE, DUE],
    );
  });
  await t.ctx.db.query('ANALYZE offers');
}, 120_000);
afterAll(() => t?.close());

describe('the expiry sweep', () => {
  it('reads only the due offers through offers_due_idx, with 10,000 open', async () => {
    // ANALYZE runs it (its row locks end with the transaction).
    const plan = await t.ctx.db.tx((q) => explain(q, DUE_OFFERS_PROBE, [t.clock.now().toISOString(), 500], true));
    const scans = nodes(plan).filter((n) => n['Relation Name'] === 'offers');
    expect(scans.map((n) => [n['Node Type'], n['Index Name']])).toEqual([['Index Scan', 'offers_due_idx']]);
    expect(scans[0]['Actual Rows']).toBe(DUE);
  });

  it('its whole statement (expire, events) reads offers through that index and never scans the table', async () => {
    const captured: { text: string; params: unknown[] }[] = [];
    const recorder = {
      async query<R>(text: string, params?: readonly unknown[]) {
        captured.push({ text, params: [...(params ?? [])] });
        return [] as R[];
      },
      wroteOutbox() {},
    };
    await expireDueOffers({ limit: 500 }, t.clock.now(), recorder);
    const { text, params } = captured[0];
    const plan = await t.ctx.db.tx((q) =>
      explain(
        q,
        text,
        params.map((p) => (p instanceof Date ? p.toISOString() : p)),
        false,
      ),
    );
    const offerScans = nodes(plan).filter((n) => n['Relation Name'] === 'offers');
    expect(offerScans.some((n) => n['Index Name'] === 'offers_due_idx')).toBe(true);
    expect(offerScans.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});

describe('the statistics', () => {
  it('read a range of offers_partner_created_idx, never the table', async () => {
    const captured: { text: string; params: unknown[] }[] = [];
    const recorder = {
      async query<R>(text: string, params?: readonly unknown[]) {
        captured.push({ text, params: [...(params ?? [])] });
        return [{}] as R[];
      },
    };
    const now = t.clock.now();
    await offerStats(partnerId, 'LIVE', new Date(now.getTime() - 30 * 86_400_000), now, recorder);
    const { text, params } = captured[0];
    const plan = await t.ctx.db.tx((q) =>
      explain(
        q,
        text,
        params.map((p) => (p instanceof Date ? p.toISOString() : p)),
        false,
      ),
    );
    const all = nodes(plan);
    expect(all.some((n) => n['Index Name'] === 'offers_partner_created_idx')).toBe(true);
    expect(all.filter((n) => n['Relation Name'] === 'offers' && n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});
