/**
 * The gate of the prepared status-change statements (src/db/join-plans.ts): shut while a table is
 * small, open once every table it watches holds 1 MB, its sizes read in the background at most every
 * 2 s (a caller asking starts the read, and is answered from what is known), never a read per call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/harness.js';
import { waitFor } from '../../test/wait.js';
import type { Queryable } from './db.js';
import { JoinPlans } from './join-plans.js';
import { MIN_PAGES } from './statistics.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await t.ctx.db.query('CREATE TABLE join_plans_small (n int)');
  await t.ctx.db.query('CREATE TABLE join_plans_large (n int, pad text)');
  // 1 MB and more: rows of about 1 KB.
  await t.ctx.db.query(`INSERT INTO join_plans_large SELECT g, repeat('x', 1000) FROM generate_series(1, $1::int) g`, [
    MIN_PAGES * 8 + 100,
  ]);
}, 60_000);
afterAll(() => t?.close());

/** The app's database, counting the statements the gate sends. */
function counted(): { q: Queryable; sent: () => number } {
  let n = 0;
  return {
    q: {
      query: (text: string, params?: readonly unknown[]) => {
        n++;
        return t.ctx.db.query(text, params);
      },
    } as Queryable,
    sent: () => n,
  };
}

describe('JoinPlans', () => {
  it('opens once every table it watches has grown past 1 MB', async () => {
    expect(await new JoinPlans(t.ctx.db, ['join_plans_large']).check()).toBe(true);
    expect(await new JoinPlans(t.ctx.db, ['join_plans_large', 'join_plans_small']).check()).toBe(false);
    expect(await new JoinPlans(t.ctx.db, ['join_plans_small']).check()).toBe(false);
  });

  it('answers from what it knows: the first ask starts a read, later asks within 2 s send nothing', async () => {
    let nowMs = 1_000_000;
    const db = counted();
    const gate = new JoinPlans(db.q, ['join_plans_large'], () => nowMs);
    // Not known yet: shut, and a read starts in the background.
    expect(gate.prepared).toBe(false);
    expect(db.sent()).toBe(1);
    await waitFor(() => gate.prepared, { what: 'the gate open after its read' });
    expect(db.sent()).toBe(1);

    // A table still small is read again only after 2 s.
    const small = counted();
    const shut = new JoinPlans(small.q, ['join_plans_small'], () => nowMs);
    expect(await shut.check()).toBe(false);
    for (let i = 0; i < 100; i++) expect(shut.prepared).toBe(false);
    nowMs += 1_999;
    expect(shut.prepared).toBe(false);
    expect(small.sent()).toBe(1);
    nowMs += 1;
    expect(shut.prepared).toBe(false);
    expect(small.sent()).toBe(2);
  });

  it('stays shut, without throwing, when the sizes cannot be read', async () => {
    const gate = new JoinPlans(t.ctx.db, ['no_such_table']);
    expect(await gate.check()).toBe(false);
    expect(gate.prepared).toBe(false);
  });
});
