/**
 * The unit of work: a change of any domain runs in one transaction with its outbox rows, its
 * idempotency claim (idempotency.ts) and the instants it read (instants.ts, the clock), through
 * `commitChange`, which runs it and, after COMMIT and before the caller answers,
 *  1. announces what it changed, when the caller gives an announcer (orders give their read cache:
 *     src/modules/orders/order-change.ts; a client that saw its write acknowledged never reads the
 *     order as it was before, whichever process it asks), and
 *  2. wakes the outbox consumers if it wrote outbox rows (`OutboxSignal` in outbox.ts).
 * The change says what it touched through its `ChangeTx` (`changed(…)`); the statements that write
 * outbox rows mark it themselves (`wroteOutbox()`), and they accept nothing but a ChangeTx, so neither
 * step can be forgotten. A change that rolls back announces nothing and wakes no one.
 */
import type { Queryable, TxOptions } from '../db/db.js';
import type { OutboxTx } from './outbox.js';

/** What commitChange needs (AppContext satisfies it). */
export interface UnitOfWorkDeps {
  db: {
    kind?: 'embedded' | 'server';
    query: Queryable['query'];
    tx<T>(fn: (q: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  };
  /** Wakes the outbox consumers (outbox.ts `OutboxSignal`). */
  outbox: { committed(): void };
}

/**
 * Where a change's announcements go after COMMIT (`C`: what a change says it touched). `merge` makes the
 * announcements of one commit as few as say the same.
 */
export interface ChangeAnnouncer<C> {
  changed(change: C): Promise<void>;
  merge?(changes: C[]): C[];
}

/**
 * The handle of a change: its statements run on it, and it records what to do after COMMIT. `C` is
 * what its announcer takes; a change without one (`never`) has nothing to announce.
 */
export interface ChangeTx<C = never> extends OutboxTx {
  /** These things changed (announced after COMMIT). */
  changed(change: C): void;
}

export interface CommitOptions<C> {
  /** `false`: run `fn` on the pool, for a change made by ONE statement (atomic on its own). */
  transaction?: boolean;
  /** Runs once the change has committed, before it is announced (the database work is done). */
  afterCommit?: () => void;
  /** Where `tx.changed(…)` goes after COMMIT (none: nothing is announced). */
  announce?: ChangeAnnouncer<C>;
  /** How the transaction is opened (Db.tx). */
  tx?: TxOptions;
}

/**
 * Runs `fn` in one transaction and, once it has committed, announces and wakes (see the top of the
 * file). `{ transaction: false }` runs `fn` on the pool instead, for a change made by ONE statement
 * (atomic on its own: order creation); every statement then commits by itself.
 *
 * Nothing after the COMMIT throws: the change is committed, and a caller must never take a failure
 * there for a failed change (the partner-event writer would try it again). An announcer must not throw
 * (the read cache never does: a failed announcement is bounded by its MAX_AGE_MS), and a lost wake-up is
 * made up for by the worker's poll.
 */
export async function commitChange<T, C = never>(
  deps: UnitOfWorkDeps,
  fn: (tx: ChangeTx<C>) => Promise<T>,
  options: CommitOptions<C> = {},
): Promise<T> {
  let changes: C[] = [];
  let outbox = false;
  const run = (q: Queryable) =>
    fn({
      query: <R>(text: string, params?: readonly unknown[]) => q.query<R>(text, params),
      ...(q.commit ? { commit: () => (q.commit as () => Promise<void>)() } : {}),
      changed: (change) => {
        changes.push(change);
      },
      wroteOutbox: () => {
        outbox = true;
      },
    });
  const result = options.transaction === false ? await run(deps.db) : await deps.db.tx(run, options.tx);
  try {
    options.afterCommit?.();
    const announce = options.announce;
    if (announce && changes.length > 0) {
      if (announce.merge && changes.length > 1) changes = announce.merge(changes);
      for (const change of changes) await announce.changed(change);
    }
    if (outbox) deps.outbox.committed();
  } catch {
    // See above: committed is committed.
  }
  return result;
}
