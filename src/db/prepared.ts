/**
 * Runs `text` as a NAMED prepared statement: each connection parses and plans it once, later calls
 * only bind and execute. Planning the JSON-building order statements costs several times their
 * execution on the embedded database, so the hot partner paths use this.
 *
 * Only for statements whose plan stays right whatever the table's size was when a session planned
 * them: after five executions PostgreSQL may keep one generic plan for the session's life, made with
 * the statistics of that moment. A probe by equality on a unique column is such a statement (even on
 * a new, unanalysed table the planner prefers the index); a join of `orders` to a set of rows given
 * as parameters is not (planned while the table was new, it keeps a hash join over a sequential scan
 * of `orders` as the table grows: src/modules/orders/write-scans.test.ts). `Db.query`
 * hands its first argument to node-postgres unchanged, and node-postgres accepts a query config
 * `{ name, text }` there (it copies it before adding the values). Names must map to one text each:
 * they are derived from the text itself.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from './db.js';

const statementNames = new Map<string, string>();

export function prepared<R>(text: string, params: unknown[], q: Queryable): Promise<R[]> {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `stmt_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return q.query<R>({ name, text } as unknown as string, params);
}

/**
 * `text` as a named prepared statement when `prepare` is set, otherwise planned on this call: for the
 * statements that may be prepared only once their tables have grown (src/db/join-plans.ts says when).
 */
export function preparedWhen<R>(prepare: boolean | undefined, text: string, params: unknown[], q: Queryable): Promise<R[]> {
  return prepare ? prepared<R>(text, params, q) : q.query<R>(text, params);
}
