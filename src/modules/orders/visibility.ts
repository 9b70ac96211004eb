/**
 * What an API key may see of an order: the one home of this privacy rule (docs/decisions-log.md, 'Orders', 'API keys' and 'Webhooks').
 * Every consumer of orders (partner reads and events, the webhook fan-out, the realtime channel, the
 * sandbox helper) asks here instead of working it out again.
 *
 * 1. Which orders. A key sees the orders of its environment that are assigned to it, or, with
 *    `receivesAllOrders`, every order of its environment. "Assigned to it" counts rotation: a
 *    rotated-out key in its grace period acts for its successor (its orders moved forward), and an event
 *    raised before a rotation, naming the key the order had then, still reaches the successor's webhooks.
 *    - `keySeesOrder(viewer, order)`: the rule in TypeScript (webhook fan-out, tests).
 *    - `scopeOf(key, environment)` → `PartnerOrderScope`: the same rule for one partner request, in the
 *      form the SQL takes (`scopeConditions`); the read cache versions answers by it too. Partner reads
 *      and the partner event path select and lock orders THROUGH it (order-reads.repo.ts,
 *      order-locks.repo.ts `lockVisibleOrder(s)`), so an order the key may not see is never even read.
 * 2. What of an order. The customer (name, phone, address) only with the scope `orders:pii`.
 *    - `seesCustomer(key)`, `orderAsSeenBy(key, order)` on a PartnerOrder object (fan-out, realtime,
 *      sandbox helper); `orderTextAsSeenBy(key, pieces)` on the stored JSON pieces (partner events);
 *      `orderJsonSql(pii)` in SQL (partner reads), `orderJsonSqlWhen(piiSql)` in SQL per row (the stored
 *      answers of partner events under an Idempotency-Key).
 *
 * No imports from other modules: a key is described by the fields the rule reads (a ResolvedKey, a
 * webhook's key and a key's owner all fit), so anything may depend on this file.
 */
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import type { PartnerOrder } from './orders.schemas.js';

// --- Which orders ----------------------------------------------------------------------------------

/** A key as the "which orders" rule reads it. */
export interface OrderViewer {
  environment: ApiKeyEnvironment;
  receivesAllOrders: boolean;
  /**
   * The keys whose orders it holds: for a partner request the key it acts for (itself, or its successor
   * during a rotation grace); for an event fanned out later, the webhook's key and every key it
   * succeeded by rotation (the event names the key the order had when it happened).
   */
  keyIds: readonly string[];
}

/** An order as the "which orders" rule reads it. */
export interface OrderPlacement {
  environment: ApiKeyEnvironment;
  /** The key the order is (or, for an event, was) assigned to; null while unassigned. */
  assignedKeyId: string | null;
}

export function keySeesOrder(viewer: OrderViewer, order: OrderPlacement): boolean {
  if (order.environment !== viewer.environment) return false;
  return viewer.receivesAllOrders || (order.assignedKeyId !== null && viewer.keyIds.includes(order.assignedKeyId));
}

/**
 * Which orders a partner request may see (the SQL form of keySeesOrder for one key on one listener):
 * its environment's orders assigned to `keyId`, or all of them.
 */
export interface PartnerOrderScope {
  environment: ApiKeyEnvironment;
  /** The key the orders are assigned to (the caller's actsForKeyId); null = every order (receivesAllOrders). */
  keyId: string | null;
}

/** The fields of a ResolvedKey the scope reads. */
export interface RequestKey {
  receivesAllOrders: boolean;
  /** The key whose orders it acts on: itself, or its successor during a rotation grace. */
  actsForKeyId: string;
}

/** The orders a key sees on a listener: its (acted-for) key's orders, or all of the environment's. */
export function scopeOf(key: RequestKey, environment: ApiKeyEnvironment): PartnerOrderScope {
  return { environment, keyId: key.receivesAllOrders ? null : key.actsForKeyId };
}

/** The viewer of one partner request (keySeesOrder's form of scopeOf). */
export function requestViewer(key: RequestKey, environment: ApiKeyEnvironment): OrderViewer {
  return { environment, receivesAllOrders: key.receivesAllOrders, keyIds: [key.actsForKeyId] };
}

/** Whether a scope is one key's orders or the whole environment's (the two shapes of its SQL). */
export function scopeKind(scope: PartnerOrderScope): 'key' | 'all' {
  return scope.keyId === null ? 'all' : 'key';
}

/**
 * A scope as SQL conditions on `orders o`, given the placeholders of its environment and (`kind` 'key')
 * its key. `probe`: for a lookup by a unique column (code): environment and key on the row. `range`:
 * for a range scan of a key's orders (lists): the key on the row, and the key's environment checked
 * ONCE (a gating EXISTS on api_keys, not a per-row filter: an order only ever belongs to a key of its
 * environment, migration 0008; filtering every row by environment too let a generic plan pick the
 * environment's index for a small key; query-plans.test.ts pins the plans).
 */
export function scopeConditions(
  kind: 'key' | 'all',
  placeholders: { environment: string; keyId?: string },
  form: 'probe' | 'range',
): string[] {
  const { environment, keyId } = placeholders;
  if (kind === 'all') return [`o.environment = ${environment}`];
  if (keyId === undefined) throw new Error('a key scope needs the placeholder of its key');
  return form === 'probe'
    ? [`o.environment = ${environment}`, `o.assigned_key_id = ${keyId}`]
    : [
        `o.assigned_key_id = ${keyId}`,
        `EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ${keyId} AND k.environment = ${environment})`,
      ];
}

// --- What of an order ------------------------------------------------------------------------------

/** Whether the key sees an order's customer (name, phone, address): the scope `orders:pii`. */
export function seesCustomer(key: { scopes: readonly ApiKeyScope[] }): boolean {
  return key.scopes.includes('orders:pii');
}

/** The order as a key without `orders:pii` sees it. */
export function withoutCustomer<T extends { customer?: unknown }>(order: T): T {
  return order.customer === null ? order : { ...order, customer: null };
}

/** An order (a PartnerOrder with customer, as stored and as the outbox carries it) as `key` sees it. */
export function orderAsSeenBy<T extends { customer?: unknown }>(key: { scopes: readonly ApiKeyScope[] }, order: T): T {
  return seesCustomer(key) ? order : withoutCustomer(order);
}

/**
 * The exact JSON text of a `T` as PostgreSQL rendered it (keys in the schema's order, compact): the
 * partner routes send it as the body unchanged, so Node neither parses nor re-serialises it.
 */
export type JsonText<T> = string & { readonly __jsonOf?: T };
/** The same as UTF-8 bytes, ready for the socket (what the read cache keeps). */
export type JsonBytes<T> = Buffer & { readonly __jsonOf?: T };

/** The three stored pieces of an order's PartnerOrder JSON text (migration 0006). */
export interface PartnerOrderPieces {
  head: string;
  /** The PartnerCustomer JSON text; null when the order has none. */
  customer: string | null;
  tail: string;
}

/** The PartnerOrder JSON text from its pieces, with the customer (`pii`) or without. */
export function partnerOrderText(pieces: PartnerOrderPieces, pii: boolean): JsonText<PartnerOrder> {
  return pieces.head + (pii && pieces.customer !== null ? pieces.customer : 'null') + pieces.tail;
}

/** The PartnerOrder JSON text from its pieces as `key` sees it. */
export function orderTextAsSeenBy(key: { scopes: readonly ApiKeyScope[] }, pieces: PartnerOrderPieces): JsonText<PartnerOrder> {
  return partnerOrderText(pieces, seesCustomer(key));
}

/**
 * The PartnerOrder JSON text of the order row `alias` in SQL, from the pieces the triggers of migration
 * 0006 keep on the row: with the customer (`pii`: orders:pii, and the outbox's snapshots) or without.
 */
export function orderJsonSql(pii: boolean, alias = 'o'): string {
  return pii
    ? `${alias}.pv_head || coalesce(${alias}.pv_customer, 'null') || ${alias}.pv_tail`
    : `${alias}.pv_head || 'null' || ${alias}.pv_tail`;
}

/**
 * The same text when whether the key sees the customer is a value of the statement, `pii` a boolean SQL
 * expression (true for a key with `orders:pii`: `seesCustomer`); the exact text `orderTextAsSeenBy`
 * makes from the same pieces.
 */
export function orderJsonSqlWhen(pii: string, alias = 'o'): string {
  return `${alias}.pv_head || CASE WHEN ${pii} THEN coalesce(${alias}.pv_customer, 'null') ELSE 'null' END || ${alias}.pv_tail`;
}
