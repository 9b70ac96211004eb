/**
 * `Idempotency-Key` for partner event POSTs (docs/decisions-log.md, 'Orders'), Stripe-style:
 *  - keys are scoped to the API key that sent them and live 24 h;
 *  - a repeat with the same key and the same request (order code + body) returns the first answer
 *    again, same status and body (error answers included, except 5xx and 429, which are never stored:
 *    they say "try again", so a retry must really run again);
 *  - the same key with another request answers 409 ERR_IDEMPOTENCY_CONFLICT;
 *  - requests refused before the handler ran (authentication, schema and body-only rules) store
 *    nothing, so fixing a malformed body and retrying with the same key works.
 *
 * Concurrency: the key row is claimed with an INSERT inside the same transaction as the change it
 * guards. A concurrent duplicate's INSERT blocks on the primary key until the first transaction ends:
 * on COMMIT it finds the stored answer and replays it; on ROLLBACK (a 5xx) its INSERT goes through
 * and it runs the request itself. Two duplicates can therefore never both apply the change.
 */
import { createHash } from 'node:crypto';
import { type Db, lastStatements, type Queryable } from '../db/db.js';
import { prepared } from '../db/prepared.js';
import { AppError } from '../errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyScope {
  apiKeyId: string;
  key: string;
  /** SHA-256 of the canonical request; a different request under the same key is a conflict. */
  requestHash: string;
}

export type IdempotencyClaim = { kind: 'new' } | { kind: 'replay'; statusCode: number; response: unknown };

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(target: string, body: unknown): string {
  return createHash('sha256')
    .update(`${target}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/**
 * Claims the key for this request inside transaction `q`, or finds the answer stored for it.
 * An expired row (older than 24 h, not yet purged) is taken over as if it did not exist.
 */
export async function claimIdempotencyKey(scope: IdempotencyScope, now: Date, q: Queryable): Promise<IdempotencyClaim> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
  // Two rounds at most: the second covers a purge deleting the row between the two statements.
  for (let round = 0; round < 2; round++) {
    // Each statement is a probe of the key's primary key: prepared, it is planned once per session
    // (src/db/prepared.ts).
    const claimed = await prepared(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       VALUES ($1, $2, $3, 0, 'null'::jsonb, $4)
       ON CONFLICT (api_key_id, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, status_code = 0, response = 'null'::jsonb, created_at = EXCLUDED.created_at
        WHERE idempotency_keys.created_at <= $5
       RETURNING 1`,
      [scope.apiKeyId, scope.key, scope.requestHash, now, cutoff],
      q,
    );
    if (claimed.length > 0) return { kind: 'new' };
    const rows = await prepared<{ request_hash: string; status_code: number; response: unknown }>(
      'SELECT request_hash, status_code, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
      [scope.apiKeyId, scope.key],
      q,
    );
    const stored = rows[0];
    if (!stored) continue;
    if (stored.request_hash !== scope.requestHash) {
      throw new AppError(
        'ERR_IDEMPOTENCY_CONFLICT',
        'This Idempotency-Key was already used with a different request; use a new key for a new request',
      );
    }
    return { kind: 'replay', statusCode: stored.status_code, response: stored.response };
  }
  throw new AppError('ERR_CONFLICT', 'The Idempotency-Key is in use by a concurrent request; retry');
}

/** Stores the answer (its JSON text) for a claimed key (same transaction as the claim). */
export async function saveIdempotentResponse(
  scope: IdempotencyScope,
  statusCode: number,
  responseJson: string,
  q: Queryable,
): Promise<void> {
  await prepared(
    'UPDATE idempotency_keys SET status_code = $3, response = $4 WHERE api_key_id = $1 AND key = $2',
    [scope.apiKeyId, scope.key, statusCode, responseJson],
    q,
  );
}

/** Whether an error answer is replayed to a repeat (everything but 5xx and 429). */
export function isStorableError(err: AppError): boolean {
  return err.statusCode < 500 && err.statusCode !== 429;
}

/** How an idempotent change ended: its answer (new or replayed), or the error to throw once committed. */
export type IdempotentOutcome<T> = { kind: 'ok'; answer: T; replayed: boolean } | { kind: 'error'; error: AppError };

/**
 * Runs `change` under the claimed key `scope`, inside the transaction `q` of the change: a repeat gets
 * the stored answer instead (a stored error answer as its AppError, marked Idempotent-Replayed);
 * otherwise `change` runs under the savepoint `savepoint` and its answer is stored with `statusCode`.
 * A storable error (isStorableError) undoes the change back to the savepoint and is stored as the
 * answer: the caller throws it after COMMIT, so that the stored answer is kept. Any other error
 * propagates and rolls the whole transaction back.
 *
 * It is the transaction's last work: the answer is stored with the COMMIT (`lastStatements`; on a
 * server one round trip, docs/decisions-log.md "Pipelined transactions"), so nothing may be sent on `q`
 * after it.
 */
export async function runIdempotentChange<T>(
  scope: IdempotencyScope,
  now: Date,
  savepoint: string,
  statusCode: number,
  change: () => Promise<{ answer: T; json: string }>,
  q: Queryable,
): Promise<IdempotentOutcome<T>> {
  const claim = await claimIdempotencyKey(scope, now, q);
  if (claim.kind === 'replay') {
    if (claim.statusCode >= 400) {
      const stored = claim.response as { code: AppError['code']; message: string; details?: never };
      return {
        kind: 'error',
        error: new AppError(stored.code, stored.message, stored.details, { 'Idempotent-Replayed': 'true' }),
      };
    }
    return { kind: 'ok', answer: claim.response as T, replayed: true };
  }
  // Pipelined (a server), the savepoint is sent with the change's first statement; its failure (the
  // connection lost) fails every statement behind it, so it is awaited once the change has run.
  const saved = q.query(`SAVEPOINT ${savepoint}`);
  if (q.commit) saved.catch(() => {});
  else await saved;
  try {
    const { answer, json } = await change();
    await saved;
    await lastStatements(q, () => saveIdempotentResponse(scope, statusCode, json, q));
    return { kind: 'ok', answer, replayed: false };
  } catch (err) {
    if (!(err instanceof AppError) || !isStorableError(err)) throw err;
    await saved;
    const envelope = { statusCode: err.statusCode, code: err.code, message: err.message, details: err.details };
    await lastStatements(
      q,
      () => q.query(`ROLLBACK TO SAVEPOINT ${savepoint}`),
      () => saveIdempotentResponse(scope, err.statusCode, JSON.stringify(envelope), q),
    );
    return { kind: 'error', error: err };
  }
}

/** Deletes idempotency rows older than 24 h (the worker calls it periodically); returns how many. */
export async function purgeExpiredIdempotencyKeys(now: Date | number, db: Queryable | Db): Promise<number> {
  const nowMs = typeof now === 'number' ? now : now.getTime();
  const rows = await db.query<{ n: number }>(
    'WITH gone AS (DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
    [new Date(nowMs - IDEMPOTENCY_TTL_MS)],
  );
  return rows[0].n;
}
