/**
 * When a statement that joins tables to a set of rows given as parameters may be a NAMED prepared
 * statement (prepared.ts), planned once per session instead of on every call (docs/performance.md,
 * "Partner events").
 *
 * The danger of a named statement is its generic plan: after five executions PostgreSQL may keep one
 * plan, made without the parameters' values, for the session's life. Made while a table is nearly
 * empty, that plan reads the table whole (a hash join over a sequential scan), and keeps doing so as
 * the table grows. Made once the table holds MIN_PAGES pages (1 MB), it probes the table's index for
 * each row given, whatever the planner knows or does not know of the table (without statistics it
 * scales its row estimate with the file's size), and that plan stays right as the table grows.
 *
 * So these statements are planned per call until every table they read holds MIN_PAGES pages, and
 * prepared from then on. A statement over an array of rows may also need its transaction to force the
 * generic plan (Db.tx's `genericPlans`): otherwise PostgreSQL may judge it dearer than a plan for the
 * values at hand and plan every call anyway. The sizes are read in the background (a stat of each file, at most every
 * CHECK_EVERY_MS, started by a caller asking), never on a request's path; once grown, never again
 * (tables are not expected to shrink back: a table emptied by hand keeps its plans until the sessions
 * end, as any large deletion does).
 */
import type { Queryable } from './db.js';
import { MIN_PAGES } from './statistics.js';

/**
 * How often a gate still shut reads the sizes again, while callers ask: one small statement, in the
 * background, so a busy table is prepared for within seconds of growing (a gate that never opens, say
 * for a table a deployment never fills, costs a statement every 2 s while its callers are busy).
 */
const CHECK_EVERY_MS = 2_000;

export class JoinPlans {
  private grown = false;
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private checking = false;

  /** `tables`: every table the gated statements read (all must have grown). */
  constructor(
    private readonly db: Queryable,
    private readonly tables: readonly string[],
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Whether the gated statements may be prepared now; may start a size check for later calls. */
  get prepared(): boolean {
    if (!this.grown && !this.checking && this.nowMs() - this.checkedAtMs >= CHECK_EVERY_MS) void this.check();
    return this.grown;
  }

  /** Reads the tables' sizes now (tests; callers use `prepared`). Never rejects. */
  async check(): Promise<boolean> {
    this.checking = true;
    this.checkedAtMs = this.nowMs();
    try {
      const [row] = await this.db.query<{ pages: number }>(
        `SELECT min(pg_relation_size(t::regclass) / current_setting('block_size')::int)::int AS pages
           FROM unnest($1::text[]) AS t`,
        [this.tables],
      );
      if ((row?.pages ?? 0) >= MIN_PAGES) this.grown = true;
    } catch {
      // The next caller after CHECK_EVERY_MS tries again.
    } finally {
      this.checking = false;
    }
    return this.grown;
  }
}
