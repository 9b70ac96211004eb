/**
 * `commitOrderChange`: the unit of work (src/shared/unit-of-work.ts) for changes of orders, which
 * announce the scopes they touched to the read cache (read-cache.ts) after COMMIT: a client that saw
 * its write acknowledged never reads the order as it was before, whichever process it asks. Every
 * change of orders runs through it (payments' captures and refunds too: they change the order's
 * paymentStatus); a change that touches no order runs through `commitChange` itself.
 */
import { type ChangeTx, type CommitOptions, commitChange, type UnitOfWorkDeps } from '../../shared/unit-of-work.js';
import type { OrderChange } from './read-cache.js';

/** What commitOrderChange needs (AppContext and OrdersDeps satisfy it). */
export interface OrderChangeDeps extends UnitOfWorkDeps {
  orderCache: { changed(change: OrderChange): Promise<void> };
}

/** The handle of an order change: `changed(…)` names the scopes whose reads it invalidates. */
export type OrderTx = ChangeTx<OrderChange>;

/** Runs `fn` as one unit of work and announces its changes to the read cache after COMMIT. */
export function commitOrderChange<T>(
  deps: OrderChangeDeps,
  fn: (tx: OrderTx) => Promise<T>,
  options: Omit<CommitOptions<OrderChange>, 'announce'> = {},
): Promise<T> {
  return commitChange(deps, fn, {
    ...options,
    announce: { changed: (c) => deps.orderCache.changed(c), merge: mergedOrderChanges },
  });
}

/**
 * The announcements of one commit, as few as say the same: `'all'` covers everything; otherwise one per
 * environment with the keys of all its changes (one Redis round trip each).
 */
function mergedOrderChanges(changes: OrderChange[]): OrderChange[] {
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
