/**
 * `runIdempotentChange` as the last work of its transaction: the answer (or a storable error) is stored
 * with the COMMIT, the change is undone back to its savepoint when it fails, and a repeat gets the stored
 * answer. On a PostgreSQL server the savepoint travels with the change's first statement and the stored
 * answer with the COMMIT (seen through a proxy holding what the client sends: each pair reaches it
 * before the first of the two is answered).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dbThroughProxy, setUpFreshDatabase } from '../../test/database-per-file.js';
import { waitFor } from '../../test/wait.js';
import type { Db, Queryable } from '../db/db.js';
import { AppError } from '../errors.js';
import { claimIdempotencyKeys, type IdempotencyScope, runIdempotentChange } from './idempotency.js';

let db: Db;
let url: string | null;

setUpFreshDatabase(async (fresh, freshUrl) => {
  [db, url] = [fresh, freshUrl];
  await db.query('CREATE TABLE changed (a int PRIMARY KEY)');
});

const scope = (): IdempotencyScope => ({ apiKeyId: randomUUID(), key: randomUUID(), requestHash: 'h' });
const now = new Date('2026-11-29T10:00:00Z');

async function stored(s: IdempotencyScope): Promise<{ status_code: number; response: unknown } | undefined> {
  const [row] = await db.query<{ status_code: number; response: unknown }>(
    'SELECT status_code, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
    [s.apiKeyId, s.key],
  );
  return row;
}

describe('an idempotent change', () => {
  it('stores its answer with the change; a repeat gets the stored answer and changes nothing', async () => {
    const s = scope();
    const change = (q: Queryable, a: number) => async () => {
      await q.query('INSERT INTO changed (a) VALUES ($1)', [a]);
      return { answer: { a }, json: JSON.stringify({ a }) };
    };
    const first = await db.tx((q) => runIdempotentChange(s, now, 'sp', 201, change(q, 1), q));
    expect(first).toEqual({ kind: 'ok', answer: { a: 1 }, replayed: false });
    expect(await stored(s)).toEqual({ status_code: 201, response: { a: 1 } });
    const repeat = await db.tx((q) => runIdempotentChange(s, now, 'sp', 201, change(q, 2), q));
    expect(repeat).toEqual({ kind: 'ok', answer: { a: 1 }, replayed: true });
    expect((await db.query<{ a: number }>('SELECT a FROM changed ORDER BY a')).map((r) => r.a)).toEqual([1]);
  });

  it('a refusal undoes the change back to its savepoint and is stored as the answer', async () => {
    const s = scope();
    const outcome = await db.tx((q) =>
      runIdempotentChange(
        s,
        now,
        'sp',
        201,
        async () => {
          await q.query('INSERT INTO changed (a) VALUES (3)');
          throw new AppError('ERR_CONFLICT', 'no');
        },
        q,
      ),
    );
    expect(outcome).toMatchObject({ kind: 'error', error: { code: 'ERR_CONFLICT' } });
    expect(await stored(s)).toMatchObject({ status_code: 409, response: { code: 'ERR_CONFLICT', message: 'no' } });
    expect(await db.query('SELECT a FROM changed WHERE a = 3')).toEqual([]);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('on a server', () => {
  it('sends the savepoint with the first statement and the stored answer with the COMMIT', async () => {
    const proxied = await dbThroughProxy(url as string);
    const { proxy, db: viaProxy } = proxied;
    // Holds everything from the statement that starts with `opening` on, until `follower` is sent too.
    const heldUntil = async (opening: string, follower: string) => {
      try {
        await waitFor(() => proxy.heldToTarget.includes(opening) && proxy.heldToTarget.includes(follower), {
          timeoutMs: 5_000,
          what: `${follower} sent while ${opening} is unanswered`,
        });
      } finally {
        proxy.pass();
      }
    };
    const s = scope();
    const waits: Promise<void>[] = [];
    try {
      const outcome = await viaProxy.tx(async (q) => {
        const watched: Queryable = {
          query: (text, params) => {
            // A prepared statement comes as node-postgres's query config (src/db/prepared.ts).
            const sql = typeof text === 'string' ? text : (text as { text: string }).text;
            if (sql.startsWith('SAVEPOINT')) {
              proxy.blackhole();
              waits.push(heldUntil('SAVEPOINT', 'the change'));
            } else if (sql.startsWith('UPDATE idempotency_keys')) {
              proxy.blackhole();
              waits.push(heldUntil('UPDATE idempotency_keys', 'COMMIT'));
            }
            return q.query(text, params);
          },
          commit: q.commit,
        };
        return runIdempotentChange(
          s,
          now,
          'sp',
          201,
          async () => {
            await watched.query(`INSERT INTO changed (a) SELECT 4 WHERE 'the change' <> ''`);
            return { answer: 4, json: '4' };
          },
          watched,
        );
      });
      await Promise.all(waits);
      expect(waits).toHaveLength(2);
      expect(outcome).toEqual({ kind: 'ok', answer: 4, replayed: false });
      expect(await stored(s)).toEqual({ status_code: 201, response: 4 });
    } finally {
      await proxied.close();
    }
  });
});

describe('claims of several keys', () => {
  it('claims new keys, replays answered ones and refuses another request, whatever the spelling of the API key id', async () => {
    const answered = scope();
    await db.tx((q) => runIdempotentChange(answered, now, 'sp', 201, async () => ({ answer: { a: 9 }, json: '{"a":9}' }), q));
    const upper = { ...scope(), apiKeyId: randomUUID().toUpperCase() };
    const other = { ...answered, requestHash: 'another request' };
    const claims = await db.tx((q) => claimIdempotencyKeys([upper, answered, scope()], now, q));
    expect(claims).toEqual([{ kind: 'new' }, { kind: 'replay', statusCode: 201, response: { a: 9 } }, { kind: 'new' }]);
    const [refused] = await db.tx((q) => claimIdempotencyKeys([other], now, q));
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ statusCode: 409, code: 'ERR_IDEMPOTENCY_CONFLICT' });
  });
});
