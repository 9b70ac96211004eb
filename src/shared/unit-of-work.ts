/**
 * What runs after an order change commits, in one place: every change of orders goes through
 * `commitOrderChange`, which runs it and, after COMMIT and before the caller answers,
 *  1. announces the scopes it touched to the read cache (read-cache.ts: a client that saw its write
 *     acknowledged never reads the order as it was before, whichever process it asks), and
 *  2. wakes the outbox consumers if it wrote outbox rows (outbox.ts `outboxCommitted`).
 * The change says what it touched through its `OrderTx` (`changed(…)`); the statements that write
 * outbox rows mark it themselves (`wroteOutbox()`), and they accept nothing but an OrderTx, so neither
 * step can be forgotten. A change that rolls back announces nothing and wakes no one.
 */
import type { Queryable } from '../../db/db.js';
import { type OUTBOX_EVENT, type OutboxTx, outboxCommitted } from './outbox.js';
import type { OrderChange } from './read-cache.js';

/** What commitOrderChange needs (AppContext and OrdersDeps satisfy it). */
export interface OrderChangeDeps {
  db: { kind?: 'embedded' | 'server'; query: Queryable['query']; tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> };
  events: { emit(event: typeof OUTBOX_EVENT): boolean };
  orderCache: { changed(change: OrderChange): Promise<void> };
}

/** The handle of an order change: its statements run on it, and it records what to do after COMMIT. */
export interface OrderTx extends OutboxTx {
  /** Orders of these scopes changed (announced to the read cache after COMMIT). */
  changed(change: OrderChange): void;
}

/**
 * Runs `fn` in one transaction and, once it has committed, announces and wakes (see the top of the
 * file). `{ transaction: false }` runs `fn` on the pool instead, for a change made by ONE statement
 * (atomic on its own: order creation); every statement then commits by itself.
 *
 * Nothing after the COMMIT throws: the change is committed, and a caller must never take a failure
 * there for a failed change (the partner-event writer would try it again). The read cache never throws
 * (a failed announcement is bounded by its MAX_AGE_MS), and a lost wake-up is made up for by the poll.
 *
 * `afterCommit` runs once the change has committed, before it is announced: the database work is
 * done (the partner-event writer lets its next group begin while this one's announcement travels).
 */
export async function commitOrderChange<T>(
  deps: OrderChangeDeps,
  fn: (tx: OrderTx) => Promise<T>,
  options: { transaction?: boolean; afterCommit?: () => void } = {},
): Promise<T> {
  const changes: OrderChange[] = [];
  let outbox = false;
  const run = (q: Queryable) =>
    fn({
      query: <R>(text: string, params?: readonly unknown[]) => q.query<R>(text, params),
      changed: (change) => {
        changes.push(change);
      },
      wroteOutbox: () => {
        outbox = true;
      },
    });
  const result = options.transaction === false ? await run(deps.db) : await deps.db.tx(run);
  try {
    options.afterCommit?.();
    for (const change of merged(changes)) await deps.orderCache.changed(change);
    if (outbox) outboxCommitted(deps);
  } catch {
    // See above: committed is committed.
  }
  return result;
}

/**
 * The announcements of one commit, as few as say the same: `'all'` covers everything; otherwise one per
 * environment with the keys of all its changes (one Redis round trip each).
 */
function merged(changes: OrderChange[]): OrderChange[] {
  if (changes.length <= 1) return changes;
  if (changes.includes('all')) return ['all'];
  const byEnvironment = new Map<string, Extract<OrderChange, object>>();
  for (const change of changes) {
    if (change === 'all') continue;
    const seen = byEnvironment.get(change.environment);
    if (seen) byEnvironment.set(change.environment, { ...seen, keyIds: [...seen.keyIds, ...change.keyIds] });
    else byEnvironment.set(change.environment, change);
  }
  return [...byEnvironment.values()];
}
