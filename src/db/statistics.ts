/**
 * Statistics that do not wait for autovacuum (docs/paging.md, 'Plans without fresh statistics').
 *
 * Every paged list is written to read one index range in order, but the planner takes that range only
 * when it believes the range is long: on a table it has never analysed it assumes a filter keeps a
 * fraction of a percent of the rows, so a page 100 deep (5,000 entries) "cannot" be reached, and it
 * reads every match through a bitmap and sorts them instead: at 400,000 matches of one day's request-log
 * partition, a second or more, where the index range takes a few milliseconds. A server run with
 * autovacuum off (CI's, this project's benchmark machine), or one whose autovacuum is behind on a busy
 * morning, keeps such tables unanalysed for as long as it likes.
 *
 * So the service analyses its own tables: `analyseGrownTables` finds every ordinary table of the schema
 * (each day partition of the request log is one) that holds at least MIN_PAGES pages and either was
 * never analysed or has more than doubled since its last ANALYZE, and analyses those, largest growth
 * first, with a VACUUM (see analyseGrownTables). The size is the file's (pg_relation_size, a stat of the
 * file: exact at once, no statistics collector in the way); an ANALYZE reads a sample of 30,000 rows at
 * most, and the VACUUM of a table that is only inserted into reads the pages added since the last one,
 * so doubling keeps a day's partition to a dozen passes in a day, about twice its size read in all. The worker runs it
 * every few seconds (worker.ts); an advisory lock keeps two workers from analysing at the same time.
 * Row counts the planner already scales with the file's size; what an ANALYZE adds is the share of
 * each value (a partner's share of the day's requests), which changes slowly.
 */
import type { Db, Queryable } from './db.js';

/** A table smaller than this (1 MB) is read whole faster than it is analysed: left alone. */
export const MIN_PAGES = 128;
/** Analysed again once it holds this many times the pages it had at its last ANALYZE. */
const GROWTH = 2;
/** Tables analysed by one pass at most (the next pass takes the rest). */
const MAX_PER_PASS = 8;
/** One advisory lock for the pass, whichever process runs it (an arbitrary constant of this service). */
const LOCK_KEY = 7_231_044_027;

interface Candidate {
  name: string;
  pages: number;
  analysed_pages: number;
}

/** The tables `analyseGrownTables` would analyse now, most grown first. */
export async function grownTables(q: Queryable, schema = 'public'): Promise<Candidate[]> {
  return q.query<Candidate>(
    `SELECT c.relname AS name, s.pages::int AS pages, greatest(c.relpages, 0)::int AS analysed_pages
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_stat_user_tables t ON t.relid = c.oid
       CROSS JOIN LATERAL (SELECT pg_relation_size(c.oid) / current_setting('block_size')::int AS pages) s
      WHERE n.nspname = $1 AND c.relkind = 'r' AND s.pages >= $2
        AND (c.reltuples < 0 OR (t.last_analyze IS NULL AND t.last_autoanalyze IS NULL) OR s.pages > $3 * c.relpages)
      ORDER BY s.pages::float8 / greatest(c.relpages, 1) DESC
      LIMIT $4`,
    [schema, MIN_PAGES, GROWTH, MAX_PER_PASS],
  );
}

/**
 * Vacuums and analyses the tables that need it (see the module comment); returns their names. Nothing
 * happens on the embedded database (one small session: its tables stay small, and a statement there
 * holds the event loop) or while another process runs a pass. The VACUUM is what an insert-only table
 * gets from autovacuum besides statistics: its visibility map, without which an index-only range is
 * costed (and run) as a read of the table row behind every entry, and a count of 10,001 entries loses
 * to a bitmap over all the rows that match.
 */
export async function analyseGrownTables(db: Db): Promise<string[]> {
  if (db.kind !== 'server') return [];
  const client = await db.connect();
  // A connection whose settings this pass changed is not given back to the pool (see below).
  let changed = false;
  try {
    const locked = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [LOCK_KEY]);
    if (!locked.rows[0].locked) return [];
    try {
      const q: Queryable = { query: async (text, params) => (await client.query(text, params as unknown[])).rows };
      const candidates = await grownTables(q);
      if (candidates.length === 0) return [];
      changed = true;
      // Background work: a large table takes seconds, and one being dropped or created (a day partition,
      // the retention purge) is skipped, not waited for.
      await client.query("SET statement_timeout = '300s'");
      await client.query("SET lock_timeout = '1s'");
      const done: string[] = [];
      for (const { name } of candidates) {
        try {
          await client.query(`VACUUM (ANALYZE) ${quoteIdent(name)}`);
          done.push(name);
        } catch (err) {
          if ((err as { code?: string }).code !== '55P03') throw err;
        }
      }
      return done;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
    }
  } finally {
    // The pool keeps its own statement timeout on each connection: one set here would outlive the pass.
    client.release(changed);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
