/**
 * A COD collection and the statement of its period (docs/payments.md, "Collections and periods").
 *
 * A collection belongs to the settlement whose [periodStart, periodEnd) holds its capturedAt. A
 * settlement takes the collections committed before its statement runs; a DELIVERED stamped with an
 * instant before the period's end but committing after the settlement would land on the next statement,
 * outside that statement's period. So the two are serialised per partner and environment with a
 * transaction-level advisory lock on one key:
 *  - a DELIVERED takes it SHARED (deliveries never wait for each other), then reads the clock for its
 *    instant: when a settlement held the lock first, the instant is after that settlement committed,
 *    hence not before its periodEnd (which is never in the future), so the collection falls in the next
 *    period;
 *  - a settlement creation takes it EXCLUSIVE before the statement that takes the collections: a
 *    DELIVERED that held it first has committed by then, and is taken exactly when its instant is before
 *    periodEnd.
 * Both are released at COMMIT or ROLLBACK. The shared lock is taken before any row lock of the
 * DELIVERED, or after its order's row lock only (the platform path), which a settlement never waits on:
 * no cycle. Another partner hashing to the same key only waits needlessly.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';

/** The advisory lock's first key: this lock's own class (two-int keys never meet one-bigint keys). */
const COLLECTION_PERIOD_LOCK = 0x5e7c;
const KEY = `hashtext(partner_id::text || ':' || environment)`;

/**
 * The shared locks of (partner, environment) pairs, as a common table expression `name` that takes
 * them when it is read, for a statement that does other work in the same round trip (the group-commit
 * writer locks its orders with it). `$partners` and `$environments` are the placeholders of two text
 * arrays of the same length, built by collectionPeriodPairs.
 */
export function collectionPeriodsHeldCte(name: string, partners: string, environments: string): string {
  return `${name} AS MATERIALIZED (
    SELECT count(pg_advisory_xact_lock_shared(${COLLECTION_PERIOD_LOCK}, ${KEY})) AS held
      FROM unnest(${partners}::text[], ${environments}::text[]) AS c(partner_id, environment)
  )`;
}

/** The distinct pairs of `collecting`, as the two arrays collectionPeriodsHeldCte reads. */
export function collectionPeriodPairs(
  collecting: ReadonlyArray<{ partnerId: string; environment: ApiKeyEnvironment }>,
): [string[], string[]] {
  const pairs = [...new Set(collecting.map((c) => `${c.partnerId} ${c.environment}`))].sort();
  return [pairs.map((p) => p.split(' ')[0]), pairs.map((p) => p.split(' ')[1])];
}

/** Takes the shared lock of each (partner, environment) collecting; nothing when there is none. */
export async function holdCollectionPeriods(
  collecting: ReadonlyArray<{ partnerId: string; environment: ApiKeyEnvironment }>,
  q: Queryable,
): Promise<void> {
  if (collecting.length === 0) return;
  // In one order, whatever the group's (shared locks do not conflict among themselves, but a fixed
  // order costs nothing).
  await q.query(
    `SELECT pg_advisory_xact_lock_shared(${COLLECTION_PERIOD_LOCK}, ${KEY})
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS c(partner_id, environment, n) ORDER BY n`,
    collectionPeriodPairs(collecting),
  );
}

/** The shared lock for a collection by the partner of key `keyId` (the platform's DELIVERED). */
export async function holdCollectionPeriodOfKey(keyId: string, environment: ApiKeyEnvironment, q: Queryable): Promise<void> {
  await q.query(
    `SELECT pg_advisory_xact_lock_shared(${COLLECTION_PERIOD_LOCK}, hashtext(k.partner_id::text || ':' || $2))
       FROM api_keys k WHERE k.id = $1`,
    [keyId, environment],
  );
}

/** The exclusive lock of a settlement creation for the partner's collections in the environment. */
export async function closeCollectionPeriod(partnerId: string, environment: ApiKeyEnvironment, q: Queryable): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(${COLLECTION_PERIOD_LOCK}, hashtext($1::text || ':' || $2))`, [
    partnerId,
    environment,
  ]);
}
