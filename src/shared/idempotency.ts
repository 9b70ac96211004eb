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
import { hash } from 'node:crypto';
import { type Db, lastStatements, type Queryable, together } from '../db/db.js';
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
  return hash('sha256', `${target}\n${canonicalJson(body ?? null)}`, 'hex');
}

/**
 * Claims the key for this request inside transaction `q`, or finds the answer stored for it.
 * An expired row (older than 24 h, not yet purged) is taken over as if it did not exist.
 */
export async function claimIdempotencyKey(scope: IdempotencyScope, now: Date, q: Queryable): Promise<IdempotencyClaim> {
  const [claim] = await claimIdempotencyKeys([scope], now, q);
  if (claim instanceof AppError) throw claim;
  return claim;
}

/**
 * Claims several keys (distinct) in one statement, as claimIdempotencyKey does one: for each scope, in
 * the order given, its claim, or the refusal (409) to answer instead. The rows are written in key
 * order, so two transactions claiming overlapping keys never wait for each other in a cycle. A key
 * another transaction has claimed and not yet committed makes the statement wait for its end; then the
 * key is claimed (that transaction rolled back) or its stored answer read (one statement more, with a
 * probe per key, sent only when some key was not claimed).
 */
export async function claimIdempotencyKeys(
  scopes: readonly IdempotencyScope[],
  now: Date,
  q: Queryable,
): Promise<Array<IdempotencyClaim | AppError>> {
  const cutoff = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
  const claims = new Array<IdempotencyClaim | AppError | undefined>(scopes.length);
  let open = scopes.map((_, i) => i);
  // Two rounds at most: the second covers a purge deleting a row between the claim and its read.
  for (let round = 0; round < 2 && open.length > 0; round++) {
    const sorted = [...open].sort((a, b) => compareScopes(scopes[a], scopes[b]));
    // An insert of rows given as arrays, whatever the table holds: its plan has nothing to choose, so it
    // is prepared (planned once per session, src/db/prepared.ts).
    const claimed = await prepared<{ api_key_id: string; key: string }>(
      `INSERT INTO idempotency_keys (api_key_id, key, request_hash, status_code, response, created_at)
       SELECT a, k, h, 0, 'null'::jsonb, $4 FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS s(a, k, h, n)
        ORDER BY n
       ON CONFLICT (api_key_id, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, status_code = 0, response = 'null'::jsonb, created_at = EXCLUDED.created_at
        WHERE idempotency_keys.created_at <= $5
       RETURNING api_key_id, key`,
      [
        sorted.map((i) => scopes[i].apiKeyId),
        sorted.map((i) => scopes[i].key),
        sorted.map((i) => scopes[i].requestHash),
        now,
        cutoff,
      ],
      q,
    );
    const isClaimed = new Set(claimed.map((r) => rowKey(r.api_key_id, r.key)));
    const unclaimed: number[] = [];
    for (const i of open) {
      if (isClaimed.has(rowKey(scopes[i].apiKeyId, scopes[i].key))) claims[i] = { kind: 'new' };
      else unclaimed.push(i);
    }
    // Each a probe of the primary key, prepared; sent together (one round trip on a server).
    const stored = await together(
      q,
      ...unclaimed.map(
        (i) => () =>
          prepared<{ request_hash: string; status_code: number; response: unknown }>(
            'SELECT request_hash, status_code, response FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
            [scopes[i].apiKeyId, scopes[i].key],
            q,
          ),
      ),
    );
    open = [];
    unclaimed.forEach((i, n) => {
      const row = stored[n][0];
      if (!row) open.push(i);
      else if (row.request_hash !== scopes[i].requestHash) {
        claims[i] = new AppError(
          'ERR_IDEMPOTENCY_CONFLICT',
          'This Idempotency-Key was already used with a different request; use a new key for a new request',
        );
      } else claims[i] = { kind: 'replay', statusCode: row.status_code, response: row.response };
    });
  }
  for (const i of open) claims[i] = new AppError('ERR_CONFLICT', 'The Idempotency-Key is in use by a concurrent request; retry');
  return claims as Array<IdempotencyClaim | AppError>;
}

/** A key row's identity as text: the API key's id in one spelling (PostgreSQL prints a uuid lower-case, with hyphens; it reads others too). */
function rowKey(apiKeyId: string, key: string): string {
  return `${apiKeyId.toLowerCase().replace(/[{}-]/g, '')}\n${key}`;
}

function compareScopes(a: IdempotencyScope, b: IdempotencyScope): number {
  if (a.apiKeyId !== b.apiKeyId) return a.apiKeyId < b.apiKeyId ? -1 : 1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** The outcome a repeat gets from the answer stored for its key (a stored error as its AppError, marked replayed). */
export function replayedOutcome<T>(claim: Extract<IdempotencyClaim, { kind: 'replay' }>): IdempotentOutcome<T> {
  if (claim.statusCode >= 400) {
    const stored = claim.response as { code: AppError['code']; message: string; details?: never };
    return {
      kind: 'error',
      error: new AppError(stored.code, stored.message, stored.details, { 'Idempotent-Replayed': 'true' }),
    };
  }
  return { kind: 'ok', answer: claim.response as T, replayed: true };
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

/** An answer to store for a claimed key: its status and its JSON text. */
export interface IdempotentAnswer {
  scope: IdempotencyScope;
  statusCode: number;
  json: string;
}

/**
 * The JSON text stored for a refusal: the error envelope's fields, replayed as the same AppError
 * (replayedOutcome).
 */
export function storedErrorJson(err: AppError): string {
  return JSON.stringify({ statusCode: err.statusCode, code: err.code, message: err.message, details: err.details });
}

/**
 * The statement that stores the answers of claimed keys (same transaction as their claims): an UPDATE
 * of each key's row from `source`, a SELECT of rows (api_key_id uuid, key text, status_code int,
 * response text: the answer's JSON). Also a WITH item of a write statement that makes the answers, so
 * they are stored by the statement that writes the change (src/modules/orders/order-writes.repo.ts).
 * It probes the primary key for each row of `source` (src/shared/idempotency-plans.test.ts).
 */
export function storeAnswersSql(source: string): string {
  return `UPDATE idempotency_keys i SET status_code = a.status_code, response = a.response::jsonb
       FROM (${source}) AS a(api_key_id, key, status_code, response)
      WHERE i.api_key_id = a.api_key_id AND i.key = a.key`;
}

/**
 * Stores the answers of several claimed keys (same transaction as their claims) in one statement.
 * Planned on every call: it joins the table to rows given as arrays (src/db/join-plans.ts says why
 * such a statement is not kept prepared).
 */
export async function saveIdempotentResponses(answers: readonly IdempotentAnswer[], q: Queryable): Promise<void> {
  await q.query(storeAnswersSql('SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[])'), [
    answers.map((a) => a.scope.apiKeyId),
    answers.map((a) => a.scope.key),
    answers.map((a) => a.statusCode),
    answers.map((a) => a.json),
  ]);
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
  if (claim.kind === 'replay') return replayedOutcome<T>(claim);
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
    await lastStatements(
      q,
      () => q.query(`ROLLBACK TO SAVEPOINT ${savepoint}`),
      () => saveIdempotentResponse(scope, err.statusCode, storedErrorJson(err), q),
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
