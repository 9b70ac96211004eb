/**
 * The partner's request log as the developer API reads it (docs/decisions-log.md, 'Request log'): its own keys' requests
 * only, newest first, filtered; one request with its bodies; what was left out, per minute. Rows are
 * returned as stored: bodies are never parsed again on the way out.
 */
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { notFound, validationError } from '../../errors.js';
import { requestIdTime } from './request-id.js';
import { findRequest, listRequests, type RequestFilter, type RequestRow, readMinuteCounts } from './request-log.repo.js';
import type {
  DeveloperRequest,
  DeveloperRequestDetail,
  PageOfDeveloperRequest,
  RequestLogDrops,
  RequestLogDropsQuery,
  RequestsQuery,
} from './request-log.schemas.js';
import { REQUEST_LOG_RETENTION_DAYS } from './request-log-purge.js';

export interface RequestLogDeps {
  db: Db;
  clock: Clock;
}

const DAY_MS = 86_400_000;
/** Minutes listed by the drops route (a day's worth); the totals cover the whole period. */
const MAX_DROP_MINUTES = 1440;

function toDeveloperRequest(r: RequestRow): DeveloperRequest {
  return {
    id: r.id,
    apiKeyId: r.api_key_id,
    environment: r.environment,
    method: r.method,
    path: r.path,
    query: r.query,
    statusCode: r.status_code,
    errorCode: r.error_code,
    durationMs: r.duration_ms,
    ip: r.ip,
    userAgent: r.user_agent,
    idempotencyKey: r.idempotency_key,
    createdAt: r.created_at.toISOString(),
  };
}

/** `since` must not be after `until` (400 naming `since`). */
function period(since: string | undefined, until: string | undefined): { since?: Date; until?: Date } {
  const from = since === undefined ? undefined : new Date(since);
  const to = until === undefined ? undefined : new Date(until);
  if (from && to && from.getTime() > to.getTime()) throw validationError('since', 'must not be after until');
  return { since: from, until: to };
}

function filterOf(query: RequestsQuery): RequestFilter {
  const filter: RequestFilter = { ...period(query.since, query.until) };
  if (query.apiKeyId !== undefined) filter.apiKeyId = query.apiKeyId.toLowerCase();
  if (query.status !== undefined) {
    const s = query.status;
    filter.status = s.endsWith('xx')
      ? { from: Number(s[0]) * 100, to: Number(s[0]) * 100 + 99 }
      : { from: Number(s), to: Number(s) };
  }
  if (query.code !== undefined) filter.code = query.code;
  if (query.method !== undefined) filter.method = query.method;
  if (query.path !== undefined) {
    const prefix = query.path.endsWith('*');
    filter.path = { value: prefix ? query.path.slice(0, -1) : query.path, prefix };
  }
  return filter;
}

export async function listPartnerRequests(
  deps: RequestLogDeps,
  partnerId: string,
  query: RequestsQuery,
): Promise<PageOfDeveloperRequest> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const filter = filterOf(query);
  // The count and the page read one snapshot.
  const { total, rows } = await deps.db.tx((q) => listRequests(partnerId, filter, { page, pageSize }, q), {
    isolation: 'repeatable read',
    readOnly: true,
  });
  return { page, pageSize, total, items: rows.map(toDeveloperRequest) };
}

/** One of the partner's requests with its bodies; anything else (another partner's, unknown) is 404. */
export async function getPartnerRequest(deps: RequestLogDeps, partnerId: string, id: string): Promise<DeveloperRequestDetail> {
  const at = requestIdTime(id);
  const row = at === null ? null : await findRequest(partnerId, id, new Date(at), deps.db);
  if (!row) throw notFound('Request');
  return { ...toDeveloperRequest(row), requestBody: row.request_body, responseBody: row.response_body };
}

export async function readRequestLogDrops(
  deps: RequestLogDeps,
  partnerId: string,
  query: RequestLogDropsQuery,
): Promise<RequestLogDrops> {
  const given = period(query.since, query.until);
  const until = given.until ?? deps.clock.now();
  const since = given.since ?? new Date(until.getTime() - DAY_MS);
  if (until.getTime() - since.getTime() > REQUEST_LOG_RETENTION_DAYS * DAY_MS) {
    throw validationError('since', `must be at most ${REQUEST_LOG_RETENTION_DAYS} days before until`);
  }
  const { rows, dropped, notStreamed } = await readMinuteCounts(partnerId, since, until, MAX_DROP_MINUTES, deps.db);
  return {
    since: since.toISOString(),
    until: until.toISOString(),
    dropped,
    notStreamed,
    items: rows.map((r) => ({ minute: r.minute.toISOString(), dropped: r.dropped, notStreamed: r.not_streamed })),
  };
}
