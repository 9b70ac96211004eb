/**
 * Which database errors mean what (docs/decisions-log.md, 'Dependency faults'): a statement the server
 * cancelled past its statement_timeout (503 ERR_QUERY_TIMEOUT, slowness), a database that cannot be
 * reached or used right now (503 ERR_DEPENDENCY_UNAVAILABLE, an outage), or an error of the statement
 * itself (passed through). db.ts turns every driver error into one of these before a caller sees it.
 */
import { AppError } from '../errors.js';

// SQLSTATE classes that mean "the database is not reachable or not usable right now", as opposed to
// an error in the statement: 08 connection exception, 53 insufficient resources, 57 operator
// intervention (shutdown, crash recovery), 58 system error. Except 57014, a statement cancelled (by
// its statement_timeout): the server is there and said so.
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58)/;
const QUERY_CANCELED = '57014';
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);
/** pg-pool's error when no connection came free in time: the pool is busy, the database may be fine. */
export const POOL_BUSY = /timeout exceeded when trying to connect/;

/** Whether `err` is a statement the server cancelled (past its statement_timeout). */
export function isQueryCanceled(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'ERR_QUERY_TIMEOUT';
  return err instanceof Error && (err as { code?: unknown }).code === QUERY_CANCELED;
}

export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof AppError) return err.code === 'ERR_DEPENDENCY_UNAVAILABLE';
  const code = (err as { code?: unknown }).code;
  if (code === QUERY_CANCELED) return false;
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  return /Connection terminated|connection timeout|Cannot use a pool after calling end|PGlite is closed|Client was closed|not queryable|did not answer within|timeout exceeded when trying to connect/i.test(
    err.message,
  );
}

export function translate(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isQueryCanceled(err)) {
    return Object.assign(
      new AppError('ERR_QUERY_TIMEOUT', 'The request took too long to answer and was cancelled; narrow it or try again'),
      { cause: err },
    );
  }
  if (isUnavailableError(err)) {
    // The driver's error stays as the cause: for the log and for start-up's message, never for a body.
    return Object.assign(new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable; try again shortly'), {
      cause: err,
    });
  }
  return err;
}
