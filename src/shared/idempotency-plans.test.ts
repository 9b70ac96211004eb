/**
 * The statements of many Idempotency-Keys at once (the partner-event groups' claim, stored-answer reads
 * and answers, src/shared/idempotency.ts) probe the key's primary key whatever the planner knows of the
 * table: on a table of 40,000 keys never analysed (as a deployment's is for a long while: autovacuum
 * may be off), their generic plans (what a group's transaction runs, Db.tx's genericPlans) and their
 * plans for the values at hand read no key row but those asked for.
 * Rows are written directly: the plans, not the keys, are under test.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { type Captured, genericPlan, type PlanNode, planReads, recording, rowsRead } from '../../test/plan-bounds.js';
import { claimIdempotencyKeys, type IdempotencyScope, saveIdempotentResponses } from './idempotency.js';

const KEYS = 40_000;

let t: TestApp;
const apiKeyId = randomUUID();

beforeAll(async () => {
  t = await createTestApp();
  await t.ctx.db.query(
    `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
     SELECT CASE WHEN n % 10 = 0 THEN $1::uuid ELSE gen_random_uuid() END, 'key-' || n, 'hash-' || n, 201,
            '{"code":"ORD-0000000","status":"PACKED"}'::jsonb, $2::timestamptz
       FROM generate_series(1, $3::int) AS n`,
    [apiKeyId, t.clock.now(), KEYS],
  );
  const [{ reltuples }] = await t.ctx.db.query<{ reltuples: number }>(
    "SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = 'idempotency_keys'",
  );
  expect(reltuples).toBeLessThanOrEqual(0);
}, 60_000);
afterAll(() => t?.close());

/** The statements of a claim of three keys (two of them taken, so their answers are read) and of two answers. */
async function statements(): Promise<Captured[]> {
  const scopes: IdempotencyScope[] = [
    { apiKeyId, key: 'key-10', requestHash: 'hash-10' },
    { apiKeyId, key: 'key-20', requestHash: 'another request' },
    { apiKeyId, key: 'fresh', requestHash: 'hash-fresh' },
  ];
  let captured: Captured[] = [];
  // Rolled back: the claims are run, never kept.
  await t.ctx.db
    .tx(async (q) => {
      const recorder = recording(q);
      const claims = await claimIdempotencyKeys(scopes, t.clock.now(), recorder.q);
      expect(claims.map((c) => ('kind' in c ? c.kind : c.code))).toEqual(['replay', 'ERR_IDEMPOTENCY_CONFLICT', 'new']);
      const stored = { apiKeyId, key: 'key-30', requestHash: 'hash-30' };
      await saveIdempotentResponses(
        [
          { scope: scopes[2], statusCode: 201, json: '{}' },
          { scope: stored, statusCode: 201, json: '{}' },
        ],
        recorder.q,
      );
      captured = recorder.captured;
      throw new Error('rolled back');
    })
    .catch((err: Error) => {
      if (err.message !== 'rolled back') throw err;
    });
  return captured;
}

/** The plan `statement` runs with for its own values (EXPLAIN ANALYZE, in a transaction rolled back). */
async function runPlan(statement: Captured): Promise<PlanNode> {
  let plan: PlanNode | undefined;
  await t.ctx.db
    .tx(async (q) => {
      const rows = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
        statement.params,
      );
      const raw = rows[0]['QUERY PLAN'];
      plan = (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan;
      throw new Error('rolled back');
    })
    .catch((err: Error) => {
      if (err.message !== 'rolled back') throw err;
    });
  return plan as PlanNode;
}

describe('Idempotency-Key statements of a group on a large table never analysed', () => {
  it('probe the primary key in their generic plans and in plans for the values at hand', async () => {
    const captured = await statements();
    // The claim, the two reads of stored answers, the answers.
    expect(captured).toHaveLength(4);
    for (const statement of captured) {
      const generic: PlanNode = await genericPlan(t.ctx.db, statement.text, statement.params.length);
      const reads = planReads(generic, ['idempotency_keys']);
      expect(
        reads.map((n) => n['Node Type']),
        statement.text,
      ).not.toContain('Seq Scan');
      const custom = await runPlan(statement);
      expect(rowsRead(custom, 'idempotency_keys'), statement.text).toBeLessThanOrEqual(3);
    }
  });
});
