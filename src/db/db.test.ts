/**
 * The data layer stays in step after failing statements, on both databases: every statement gets its
 * own answer. (With PGlite's node-postgres adapter, letting pg-pool destroy the client after a failing
 * parameterised statement put the protocol stream out of step: later statements failed, then received
 * the results of earlier ones.)
 *
 * Pipelined transactions (Db.tx): on a PostgreSQL server the BEGIN travels with the first statement
 * and `commit()` sends COMMIT with the last ones; the transaction is still one transaction, a statement
 * that fails takes the whole of it with it, and the connection goes back to the pool out of pipeline
 * mode (a COPY runs on it afterwards). The embedded database's transactions send one statement at a
 * time and have no `commit()`.
 */
import { describe, expect, it } from 'vitest';
import { dbThroughProxy, setUpFreshDatabase } from '../../test/database-per-file.js';
import { waitFor } from '../../test/wait.js';
import type { Db } from './db.js';

let db: Db;
let url: string | null;

setUpFreshDatabase(async (fresh, freshUrl) => {
  [db, url] = [fresh, freshUrl];
  await db.query('CREATE TABLE probe (a int PRIMARY KEY)');
  await db.query('INSERT INTO probe VALUES (1)');
  await db.query('CREATE TABLE pipelined (a int PRIMARY KEY, note text)');
});

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

async function rows(): Promise<number[]> {
  return (await db.query<{ a: number }>('SELECT a FROM pipelined ORDER BY a')).map((r) => r.a);
}

const server = Boolean(process.env.DATABASE_URL);

it.skipIf(server)('is an ordinary transaction on the embedded database', async () => {
  await db.tx(async (q) => {
    expect(q.commit).toBeUndefined();
    await q.query('INSERT INTO pipelined (a) VALUES (1)');
  });
  await expect(
    db.tx(async (q) => {
      await q.query('INSERT INTO pipelined (a) VALUES (2)');
      await q.query('INSERT INTO pipelined (a) VALUES (1)');
    }),
  ).rejects.toMatchObject({ code: '23505' });
  expect(await rows()).toEqual([1]);
  await db.query('DELETE FROM pipelined');
});

describe.skipIf(!server)('a pipelined transaction', () => {
  it('sends a statement without waiting for the answers of those before it', async () => {
    // Through a proxy that holds what the client sends: both statements reach it before any answer.
    const proxied = await dbThroughProxy(url as string);
    const { proxy, db: viaProxy } = proxied;
    try {
      const answers = await viaProxy.tx(async (q) => {
        proxy.blackhole();
        const first = q.query<{ m: string }>(`SELECT 'first statement' AS m`);
        const second = q.query<{ m: string }>(`SELECT 'second statement' AS m`);
        try {
          await waitFor(() => proxy.heldToTarget.includes('second statement'), {
            timeoutMs: 5_000,
            what: 'the second statement sent while the first is unanswered',
          });
        } finally {
          proxy.pass();
        }
        return [...(await first), ...(await second)].map((r) => r.m);
      });
      expect(answers).toEqual(['first statement', 'second statement']);
    } finally {
      await proxied.close();
    }
  });

  it('runs its statements in one transaction and commits the last ones with its COMMIT', async () => {
    const seen = await db.tx(async (q) => {
      const [first] = await q.query<{ id: string }>('SELECT txid_current()::text AS id');
      // Sent together with the COMMIT, none of them awaited before it is sent.
      const [inserted, second] = await Promise.all([
        q.query<{ a: number }>('INSERT INTO pipelined (a) VALUES ($1), ($2) RETURNING a', [1, 2]),
        q.query<{ id: string }>('SELECT txid_current()::text AS id'),
        q.commit?.(),
      ]);
      return { inserted: inserted.map((r) => r.a), same: first.id === second[0].id };
    });
    expect(seen).toEqual({ inserted: [1, 2], same: true });
    expect(await rows()).toEqual([1, 2]);
    await db.query('DELETE FROM pipelined');
  });

  it('a statement that fails ahead of the COMMIT fails the transaction: nothing of it is kept', async () => {
    await db.query('INSERT INTO pipelined (a) VALUES (1)');
    const attempt = db.tx(async (q) => {
      await q.query('INSERT INTO pipelined (a) VALUES ($1)', [2]);
      const results = [
        q.query('INSERT INTO pipelined (a) VALUES ($1)', [1]), // a duplicate key
        q.query('INSERT INTO pipelined (a) VALUES ($1)', [3]),
        q.commit?.(),
      ];
      await Promise.all(results);
    });
    await expect(attempt).rejects.toMatchObject({ code: '23505' });
    expect(await rows()).toEqual([1]);
    // The connection is in step: the next statements and transactions get their own answers.
    for (let i = 0; i < 5; i++) expect(await db.query<{ v: number }>('SELECT $1::int AS v', [i])).toEqual([{ v: i }]);
    await db.tx(async (q) => q.query('INSERT INTO pipelined (a) VALUES (4)'));
    expect(await rows()).toEqual([1, 4]);
    await db.query('DELETE FROM pipelined');
  });

  it('an error thrown by its code after statements were sent rolls them back', async () => {
    const attempt = db.tx(async (q) => {
      void q.query('INSERT INTO pipelined (a) VALUES (5)');
      throw new Error('refused by the code');
    });
    await expect(attempt).rejects.toThrow('refused by the code');
    expect(await rows()).toEqual([]);
  });

  it('leaves every connection out of pipeline mode: COPY runs on each of them afterwards', async () => {
    // Every connection of the pool (5 in the tests) takes a pipelined transaction at once, then a COPY.
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        db.tx(async (q) => {
          await q.query('SELECT pg_sleep(0.05)');
          await Promise.all([q.query('INSERT INTO pipelined (a) VALUES ($1)', [10 + i]), q.commit?.()]);
        }),
      ),
    );
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => db.copyFrom('COPY pipelined (a, note) FROM STDIN', `${20 + i}\tcopied\n`)),
    );
    expect(await rows()).toEqual([10, 11, 12, 13, 14, 20, 21, 22, 23, 24]);
  });
});
