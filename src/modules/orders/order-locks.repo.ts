/**
 * Order SQL, row locks: the columns the rules run on, read with SELECT … FOR UPDATE for the rest of the
 * caller's transaction. The partner event path locks orders THROUGH the key's scope
 * (`lockVisibleOrder(s)`, visibility.ts): an order the key may not see is never locked. Multi-row locks
 * are taken in code order, so two lockers never wait for each other in a cycle. The Queryable comes
 * LAST, as in every repo.
 */
import type { Queryable } from '../../db/db.js';
import { prepared, preparedWhen } from '../../db/prepared.js';
import type { ApiKeyEnvironment, OrderStatus, PaymentMethod } from '../../shared/schemas.js';
import { collectionPeriodPairs, collectionPeriodsHeldCte } from '../payments/collection-period-lock.js';
import { type PartnerOrderScope, scopeConditions } from './visibility.js';

/** The columns the rules need, read with a row lock (SELECT … FOR UPDATE) for the rest of the transaction. */
export interface LockedOrder {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  paymentMethod: PaymentMethod;
  codAmountQepik: number;
  failedAttempts: number;
  assignedKeyId: string | null;
  batchCode: string | null;
  /** The delivery address's coordinates (the proof's geofence), null when it has none. */
  addressPoint: { lat: number; lng: number } | null;
}

interface LockedRow {
  id: string;
  code: string;
  environment: ApiKeyEnvironment;
  status: OrderStatus;
  payment_method: PaymentMethod;
  cod_amount_qepik: number;
  failed_attempts: number;
  assigned_key_id: string | null;
  batch_code: string | null;
  address_lat: number | null;
  address_lng: number | null;
}

/** The locked columns, of the table aliased `o`. */
const LOCKED_COLUMNS = [
  ...[
    'id',
    'code',
    'environment',
    'status',
    'payment_method',
    'cod_amount_qepik',
    'failed_attempts',
    'assigned_key_id',
    'batch_code',
  ].map((c) => `o.${c}`),
  // Read with the lock so that a proof's geofence costs the event no round trip of its own.
  "(o.customer->'address'->>'lat')::float8 AS address_lat",
  "(o.customer->'address'->>'lng')::float8 AS address_lng",
].join(', ');

function lockedOrder(r: LockedRow): LockedOrder {
  return {
    id: r.id,
    code: r.code,
    environment: r.environment,
    status: r.status,
    paymentMethod: r.payment_method,
    codAmountQepik: Number(r.cod_amount_qepik),
    failedAttempts: r.failed_attempts,
    assignedKeyId: r.assigned_key_id,
    batchCode: r.batch_code,
    addressPoint: r.address_lat !== null && r.address_lng !== null ? { lat: r.address_lat, lng: r.address_lng } : null,
  };
}

/**
 * Locks the order row (the operator's status change: an operator sees every order): a concurrent change
 * of the same order waits here until this transaction ends, then reads the committed row, so of two
 * racing changes the second sees the first's outcome.
 */
export async function lockOrderByCode(code: string, q: Queryable): Promise<LockedOrder | null> {
  const rows = await prepared<LockedRow>(`SELECT ${LOCKED_COLUMNS} FROM orders o WHERE o.code = $1 FOR UPDATE`, [code], q);
  return rows[0] ? lockedOrder(rows[0]) : null;
}

const lockVisible = (kind: 'key' | 'all') =>
  `SELECT ${LOCKED_COLUMNS} FROM orders o WHERE ${['o.code = $1', ...scopeConditions(kind, { environment: '$2', keyId: '$3' }, 'probe')].join(' AND ')} FOR UPDATE`;
const LOCK_VISIBLE = { key: lockVisible('key'), all: lockVisible('all') };

/**
 * Locks the order `code` if `scope` may see it (as lockOrderByCode, through the scope: an order of
 * another key or environment is neither locked nor read); null when there is none the scope sees.
 */
export async function lockVisibleOrder(scope: PartnerOrderScope, code: string, q: Queryable): Promise<LockedOrder | null> {
  const rows =
    scope.keyId === null
      ? await prepared<LockedRow>(LOCK_VISIBLE.all, [code, scope.environment], q)
      : await prepared<LockedRow>(LOCK_VISIBLE.key, [code, scope.environment, scope.keyId], q);
  return rows[0] ? lockedOrder(rows[0]) : null;
}

/**
 * Locks several orders, each through its own scope (as lockVisibleOrder; codes distinct), in code order:
 * the order every multi-row locker uses, batches.repo.ts included, so two of them never wait for each
 * other in a cycle. Returns the locked orders by code; a code its scope does not see is left out.
 *
 * `collecting`: partners and environments whose collection periods are held shared by the same
 * statement (src/modules/payments/collection-period-lock.ts), before any of the rows is locked (the
 * rows are all read and sorted before the first is locked): a group of events with a DELIVERED pays
 * no round trip for it.
 */
export async function lockVisibleOrders(
  wanted: ReadonlyArray<{ scope: PartnerOrderScope; code: string }>,
  q: Queryable,
  collecting: ReadonlyArray<{ partnerId: string; environment: ApiKeyEnvironment }> = [],
  options: { prepare?: boolean } = {},
): Promise<Map<string, LockedOrder>> {
  const params: unknown[] = [wanted.map((w) => w.code), wanted.map((w) => w.scope.environment), wanted.map((w) => w.scope.keyId)];
  const held = collecting.length > 0;
  if (held) params.push(...collectionPeriodPairs(collecting));
  // `prepare` only once `orders` has grown (src/db/join-plans.ts): a generic plan for a set of codes,
  // made while the table was small, can be a sequential scan. Otherwise planned on every call. The codes
  // are probed on the unique index (`code = ANY`); the scopes are joined to the rows found. Prepared, it
  // still needs its transaction to force the generic plan (Db.tx's genericPlans; the partner-event
  // writer does), or PostgreSQL plans it for the codes at hand on every call.
  const rows = await preparedWhen<LockedRow>(
    options.prepare,
    `${held ? `WITH ${collectionPeriodsHeldCte('periods', '$4', '$5')}` : ''}
     SELECT ${LOCKED_COLUMNS}
       FROM ${held ? 'periods, ' : ''}orders o
       JOIN unnest($1::text[], $2::text[], $3::uuid[]) AS s(code, environment, key_id)
         ON s.code = o.code AND o.environment = s.environment AND (s.key_id IS NULL OR o.assigned_key_id = s.key_id)
      WHERE o.code = ANY($1::text[])
      ORDER BY o.code
        FOR UPDATE OF o`,
    params,
    q,
  );
  return new Map(rows.map((r) => [r.code, lockedOrder(r)]));
}

export interface AssignableKey {
  id: string;
  environment: ApiKeyEnvironment;
  revokedAt: Date | null;
}

/**
 * The order to assign, locked (as lockOrderByCode), and the key it is to be assigned to, in one
 * statement; `order` null: no such order; `key` null: no such key. The one statement here that reads
 * api_keys: reading the key by itself (keys.repo.ts) would cost the operator's assignment a round trip
 * (docs/performance.md, 'Operator writes').
 *
 * The key's row is held FOR KEY SHARE (before the order's): a rotation of that key (which locks it FOR
 * UPDATE, then moves its open offers and its orders) either waits for this assignment to commit and then
 * moves the order with the others, or has committed before this reads the key, which then shows it
 * rotated out. Without it the assignment could land on the old key just after the rotation moved its
 * orders, and an acceptance waiting on the key for its foreign key check while the rotation waited on
 * the offer it holds was a deadlock. Updates of the key's other columns (its last use) do not wait.
 */
export async function lockOrderForAssignment(
  code: string,
  apiKeyId: string,
  q: Queryable,
  options: { prepare?: boolean } = {},
): Promise<{ order: LockedOrder | null; key: AssignableKey | null }> {
  type Row = LockedRow & { key_id: string | null; key_environment: ApiKeyEnvironment | null; key_revoked_at: Date | null };
  // `prepare`: planned once per database session (src/db/join-plans.ts says when).
  const rows = await preparedWhen<Row>(
    options.prepare,
    `SELECT ${LOCKED_COLUMNS}, k.id AS key_id, k.environment AS key_environment, k.revoked_at AS key_revoked_at
       FROM orders o
       LEFT JOIN LATERAL (SELECT id, environment, revoked_at FROM api_keys WHERE id = $2 FOR KEY SHARE) k ON true
      WHERE o.code = $1
        FOR UPDATE OF o`,
    [code, apiKeyId],
    q,
  );
  const r = rows[0];
  if (!r) return { order: null, key: null };
  return {
    order: lockedOrder(r),
    key:
      r.key_id === null
        ? null
        : { id: r.key_id, environment: r.key_environment as ApiKeyEnvironment, revokedAt: r.key_revoked_at },
  };
}
