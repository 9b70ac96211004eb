/**
 * SQL of the api_keys table: every statement whose subject is a key lives here. Every function that
 * touches a partner's keys takes the partner id first and filters by it; the few that reach a key by
 * something else say what in their name (by hash: the authentication; the owner of a key id: realtime;
 * as operator). Queryable (a transaction) last.
 *
 * Statements about another table that read a key's columns in the same round trip (a webhook with its
 * key's scopes, the operator's assignment locking an order and reading its key, the fan-out's
 * subscribers, a key's order list checking the key's environment) stay with that table's SQL: split,
 * each would cost a round trip.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../../shared/schemas.js';
import type { ResolvedKey } from './key.types.js';

export interface KeyRecord {
  id: string;
  partnerId: string;
  name: string;
  prefix: string;
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  rateLimit: number;
  receivesAllOrders: boolean;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  successorId: string | null;
  createdAt: Date;
}

interface KeyRow {
  id: string;
  partner_id: string;
  name: string;
  prefix: string;
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  rate_limit: number;
  receives_all_orders: boolean;
  last_used_at: Date | null;
  revoked_at: Date | null;
  successor_id: string | null;
  created_at: Date;
}

const COLUMNS = `id, partner_id, name, prefix, environment, scopes, rate_limit, receives_all_orders, last_used_at,
  revoked_at, successor_id, created_at`;

function toRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    partnerId: row.partner_id,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    scopes: row.scopes,
    rateLimit: row.rate_limit,
    receivesAllOrders: row.receives_all_orders,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    successorId: row.successor_id,
    createdAt: row.created_at,
  };
}

/** The partner's keys, newest first (revoked ones included). */
export async function listKeys(partnerId: string, q: Queryable): Promise<KeyRecord[]> {
  const rows = await q.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE partner_id = $1 ORDER BY created_at DESC, id DESC`, [
    partnerId,
  ]);
  return rows.map(toRecord);
}

/** One of the partner's keys; `forUpdate` locks it until the transaction ends. `id` must be a UUID. */
export async function findKey(partnerId: string, id: string, q: Queryable, forUpdate = false): Promise<KeyRecord | null> {
  const rows = await q.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE partner_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [partnerId, id],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * Locks the partner row until the transaction ends, so that concurrent key creations of one partner
 * are counted one after another (the 10-active-keys limit cannot be overshot by a race).
 */
export async function lockPartnerKeys(partnerId: string, q: Queryable): Promise<void> {
  await q.query('SELECT 1 FROM partners WHERE id = $1 FOR UPDATE', [partnerId]);
}

/** Keys with no `revoked_at` (a key in its rotation grace period is not active: its revocation is set). */
export async function countActiveKeys(partnerId: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_keys WHERE partner_id = $1 AND revoked_at IS NULL',
    [partnerId],
  );
  return rows[0].n;
}

export interface NewKey {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  rateLimit: number;
  receivesAllOrders: boolean;
  createdAt: Date;
}

export async function insertKey(partnerId: string, key: NewKey, q: Queryable): Promise<KeyRecord> {
  const rows = await q.query<KeyRow>(
    `INSERT INTO api_keys (id, partner_id, name, prefix, key_hash, environment, scopes, rate_limit, receives_all_orders, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     RETURNING ${COLUMNS}`,
    [
      key.id,
      partnerId,
      key.name,
      key.prefix,
      key.hash,
      key.environment,
      key.scopes,
      key.rateLimit,
      key.receivesAllOrders,
      key.createdAt,
    ],
  );
  return toRecord(rows[0]);
}

/**
 * Sets `revoked_at` to `at` unless the key has already stopped working by then (revoking a revoked key
 * changes nothing; a key in its rotation grace period stops now). Returns the key as it is afterwards.
 */
export async function revokeKey(partnerId: string, id: string, at: Date, q: Queryable): Promise<KeyRecord | null> {
  const rows = await q.query<KeyRow>(
    `UPDATE api_keys SET revoked_at = $3
      WHERE partner_id = $1 AND id = $2 AND (revoked_at IS NULL OR revoked_at > $3)
      RETURNING ${COLUMNS}`,
    [partnerId, id, at],
  );
  if (rows[0]) return toRecord(rows[0]);
  return findKey(partnerId, id, q);
}

/** Marks `id` as rotated out: it works until `revokedAt` and acts for `successorId`. */
export async function retireKey(
  partnerId: string,
  id: string,
  successorId: string,
  revokedAt: Date,
  q: Queryable,
): Promise<KeyRecord> {
  const rows = await q.query<KeyRow>(
    `UPDATE api_keys SET revoked_at = $4, successor_id = $3 WHERE partner_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [partnerId, id, successorId, revokedAt],
  );
  return toRecord(rows[0]);
}

/**
 * `key` with the key it acts for read again; the same object when that has not changed. For a record
 * that may predate a rotation committed while its request was on its way (the rotation moved the key's
 * orders and offers to its successor): a partner event, a decision on an offer and a read that found
 * nothing look again through it before answering 404.
 */
export async function withCurrentActsFor(key: ResolvedKey, q: Queryable): Promise<ResolvedKey> {
  const actsFor = await findActsForKeyId(key.partnerId, key.id, q);
  return actsFor && actsFor !== key.actsForKeyId ? { ...key, actsForKeyId: actsFor } : key;
}

/**
 * The key a key acts for now: itself, or the newest key of its rotation chain (orders and webhooks move
 * forward at each rotation). Read when a cached record may predate a rotation (withCurrentActsFor).
 */
export async function findActsForKeyId(partnerId: string, keyId: string, q: Queryable): Promise<string | null> {
  const rows = await q.query<{ id: string }>(
    `WITH RECURSIVE chain AS (
       SELECT k.id, k.successor_id, 0 AS depth FROM api_keys k WHERE k.partner_id = $1 AND k.id = $2
       UNION ALL
       SELECT s.id, s.successor_id, c.depth + 1 FROM chain c JOIN api_keys s ON s.id = c.successor_id
       WHERE c.depth < 100
     )
     SELECT id FROM chain ORDER BY depth DESC LIMIT 1`,
    [partnerId, keyId],
  );
  return rows[0]?.id ?? null;
}

/** Operator change of a key's limit or flag (any partner's key: the admin API is cross-tenant). */
export async function updateKeyAsOperator(
  id: string,
  patch: { rateLimit?: number; receivesAllOrders?: boolean },
  q: Queryable,
): Promise<KeyRecord | null> {
  const rows = await q.query<KeyRow>(
    `UPDATE api_keys SET rate_limit = COALESCE($2, rate_limit), receives_all_orders = COALESCE($3, receives_all_orders)
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, patch.rateLimit ?? null, patch.receivesAllOrders ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/**
 * The key of an `X-Api-Key` (by the SHA-256 of the key) with its partner's name and the key it acts
 * for now (itself, or the newest key of its rotation chain); the authentication's one read (KeyResolver).
 */
export async function findKeyByHash(hash: string, q: Queryable): Promise<ResolvedKey | null> {
  const rows = await q.query<{
    id: string;
    partner_id: string;
    partner_name: string;
    name: string;
    environment: ApiKeyEnvironment;
    scopes: ApiKeyScope[];
    rate_limit: number;
    receives_all_orders: boolean;
    revoked_at: Date | null;
    acts_for_key_id: string;
    proof_policy: ResolvedKey['proofPolicy'];
  }>(
    `WITH RECURSIVE chain AS (
       SELECT k.id, k.successor_id, 0 AS depth FROM api_keys k WHERE k.key_hash = $1
       UNION ALL
       SELECT s.id, s.successor_id, c.depth + 1 FROM chain c JOIN api_keys s ON s.id = c.successor_id
       WHERE c.depth < 100
     )
     SELECT k.id, k.partner_id, p.name AS partner_name, k.name, k.environment, k.scopes, k.rate_limit,
            k.receives_all_orders, k.revoked_at, p.proof_policy,
            (SELECT c.id FROM chain c ORDER BY c.depth DESC LIMIT 1) AS acts_for_key_id
       FROM api_keys k JOIN partners p ON p.id = k.partner_id
      WHERE k.key_hash = $1`,
    [hash],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    partnerId: row.partner_id,
    partnerName: row.partner_name,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes,
    rateLimit: row.rate_limit,
    receivesAllOrders: row.receives_all_orders,
    revokedAtMs: row.revoked_at ? row.revoked_at.getTime() : null,
    actsForKeyId: row.acts_for_key_id,
    proofPolicy: row.proof_policy,
  };
}

/** Who owns the key `keyId` and what it may see (realtime: the partner room an order event goes to). */
export async function findKeyOwner(keyId: string, q: Queryable): Promise<{ partnerId: string; scopes: ApiKeyScope[] } | null> {
  const rows = await q.query<{ partner_id: string; scopes: ApiKeyScope[] }>(
    'SELECT partner_id, scopes FROM api_keys WHERE id = $1',
    [keyId],
  );
  return rows[0] ? { partnerId: rows[0].partner_id, scopes: rows[0].scopes } : null;
}

/** The key a webhook is created for. */
export interface KeyForWebhooks {
  id: string;
  scopes: ApiKeyScope[];
  environment: ApiKeyEnvironment;
  revokedAt: Date | null;
}

/**
 * The partner's key, locked against concurrent webhook creation for it (the 5-per-key limit is a
 * count-then-insert; FOR NO KEY UPDATE serialises creators without blocking foreign-key inserts that
 * reference the key, such as order assignment).
 */
export async function lockKeyForWebhooks(partnerId: string, keyId: string, q: Queryable): Promise<KeyForWebhooks | null> {
  const rows = await q.query<{ id: string; scopes: ApiKeyScope[]; environment: ApiKeyEnvironment; revoked_at: Date | null }>(
    'SELECT id, scopes, environment, revoked_at FROM api_keys WHERE partner_id = $1 AND id = $2 FOR NO KEY UPDATE',
    [partnerId, keyId],
  );
  const row = rows[0];
  return row ? { id: row.id, scopes: row.scopes, environment: row.environment, revokedAt: row.revoked_at } : null;
}

/**
 * Moves each key's `last_used_at` forward to the latest of `uses` for it (the usage flush: only
 * requests the key was accepted for count). The keys are those the authentication found.
 */
export async function markKeysUsed(uses: ReadonlyArray<{ keyId: string; lastUsedMs: number }>, q: Queryable): Promise<void> {
  if (uses.length === 0) return;
  await q.query(
    `UPDATE api_keys k SET last_used_at = GREATEST(COALESCE(k.last_used_at, t.u), t.u)
       FROM (SELECT k AS id, max(u) AS u FROM unnest($1::uuid[], $2::timestamptz[]) AS x(k, u) GROUP BY k) t
      WHERE k.id = t.id`,
    [uses.map((c) => c.keyId), uses.map((c) => new Date(c.lastUsedMs))],
  );
}
