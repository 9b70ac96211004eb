/**
 * The data layer stays in step after failing statements, on both databases: every statement gets its
 * own answer. (With PGlite's node-postgres adapter, letting pg-pool destroy the client after a failing
 * parameterised statement put the protocol stream out of step: later statements failed, then received
 * the results of earlier ones.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../test/harness.js';
import type { Db } from './db.js';

let db: Db;
let drop: () => Promise<void>;

beforeAll(async () => {
  const fresh = await freshDatabase();
  db = fresh.db;
  drop = async () => {
    await fresh.db.close();
    await fresh.drop();
  };
  await db.query('CREATE TABLE probe (a int PRIMARY KEY)');
  await db.query('INSERT INTO probe VALUES (1)');
});
afterAll(() => drop());

async function expectInStep() {
  for (let i = 0; i < 5; i++) {
    expect(await db.query<{ v: number }>('SELECT $1::int AS v', [i])).toEqual([{ v: i }]);
  }
  expect(await db.query<{ n: number }>('SELECT count(*)::int AS n FROM probe')).toEqual([{ n: 1 }]);
}

describe('after a failing statement', () => {
  it('a parameterised statement that fails reports its error, and the next ones get their own answers', async () => {
    await expect(db.query('INSERT INTO probe VALUES ($1)', [1])).rejects.toMatchObject({ code: '23505' });
    await expectInStep();
    await expect(db.query('SELECT $1::int / 0 AS v', [1])).rejects.toMatchObject({ code: '22012' });
    await expectInStep();
  });

  it('a statement without parameters that fails, too', async () => {
    await expect(db.query('INSERT INTO probe VALUES (1)')).rejects.toMatchObject({ code: '23505' });
    await expectInStep();
  });

  it('a transaction whose statement fails rolls back, and the next statements get their own answers', async () => {
    await expect(
      db.tx(async (q) => {
        await q.query('INSERT INTO probe VALUES ($1)', [2]);
        await q.query('INSERT INTO probe VALUES ($1)', [1]);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    await expectInStep();
  });

  it('several failing and succeeding statements at once each get their own outcome', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0 ? db.query('INSERT INTO probe VALUES ($1)', [1]) : db.query<{ v: number }>('SELECT $1::int AS v', [i]),
      ),
    );
    outcomes.forEach((o, i) => {
      if (i % 3 === 0) expect(o).toMatchObject({ status: 'rejected', reason: { code: '23505' } });
      else expect(o).toEqual({ status: 'fulfilled', value: [{ v: i }] });
    });
    await expectInStep();
  });
});
