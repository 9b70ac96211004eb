/**
 * The partner's request log as the developer API reads it (docs/decisions-log.md, 'Request log'): its own keys' requests
 * only, newest first, filtered; one request with its bodies; what was left out, per minute. Rows are
 * returned as stored: bodies are never parsed again on the way out.
 */
import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import { notFound, validationError } from '../../errors.js';
import { parseInstantMs } from '../../shared/instants.js';
import { requestIdTime } from './request-id.js';
import {
  findRequest,
  listRequests,
  REQUEST_TOTAL_CAP,
  type RequestFilter,
  type RequestRow,
  readMinuteCounts,
  requestMatches,
} from './request-log.repo.js';
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
  /** The lists known to count past the cap (CappedCounts below). */
  cappedRequestCounts: CappedCounts;
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
  const from = since === undefined ? undefined : new Date(parseInstantMs('since', since));
  const to = until === undefined ? undefined : new Date(parseInstantMs('until', until));
  if (from && to && from.getTime() > to.getTime()) throw validationError('since', 'must not be after until');
  return { since: from, until: to };
}

function filterOf(query: RequestsQuery): RequestFilter {
  const filter: RequestFilter = { ...period(query.since, query.until) };
  if (query.apiKeyId !== undefined) filter.apiKeyId = query.apiKeyId.toLowerCase();
  if (query.status !== undefined) {
    const s = query.status;
    filter.status = s.endsWith('xx') ? { class: Number(s[0]) } : { code: Number(s) };
  }
  if (query.code !== undefined) filter.code = query.code;
  if (query.method !== undefined) filter.method = query.method;
  if (query.path !== undefined) {
    const prefix = query.path.endsWith('*');
    filter.path = { value: prefix ? query.path.slice(0, -1) : query.path, prefix };
  }
  return filter;
}

/**
 * The lists (partner and filter) this process found to match more than the cap, and when: for a minute
 * their count is not taken again (docs/paging.md, "Request log": 10,001 index entries are most of a
 * page's cost). A log only grows between its daily purges, so such a list stays capped; the purge of a
 * day can bring one under the cap, which this process then sees within the minute. One per process
 * (createContext: `ctx.cappedRequestCounts`).
 */
export class CappedCounts {
  private readonly since = new Map<string, number>();
  constructor(
    private readonly forMs = 60_000,
    private readonly max = 10_000,
  ) {}

  has(key: string, nowMs: number): boolean {
    const at = this.since.get(key);
    if (at === undefined) return false;
    if (nowMs - at < this.forMs && nowMs >= at) return true;
    this.since.delete(key);
    return false;
  }

  add(key: string, nowMs: number): void {
    // Oldest first out: a Map iterates in insertion order.
    if (this.since.size >= this.max) this.since.delete(this.since.keys().next().value as string);
    this.since.set(key, nowMs);
  }
}

/**
 * A page of the partner's log (docs/paging.md, "Request log"): by page number while `page` × `pageSize`
 * stays within the counted total's cap, beyond that by cursor (`startingAfter`, a request of this list).
 */
export async function listPartnerRequests(
  deps: RequestLogDeps,
  partnerId: string,
  query: RequestsQuery,
): Promise<PageOfDeveloperRequest> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const filter = filterOf(query);
  const cursor = query.startingAfter;
  if (cursor !== undefined && page !== 1) throw validationError('page', 'must be omitted with startingAfter');
  if (page * pageSize > REQUEST_TOTAL_CAP) {
    throw validationError('page', `times pageSize must be at most ${REQUEST_TOTAL_CAP}; use startingAfter to go deeper`);
  }
  const cursorMs = cursor === undefined ? null : requestIdTime(cursor);
  if (cursor !== undefined && cursorMs === null) throw validationError('startingAfter', 'must be a request id (req_…)');
  const countKey = `${partnerId} ${JSON.stringify(filter)}`;
  const knownCapped = deps.cappedRequestCounts.has(countKey, deps.clock.nowMs());
  const read = async (q: Queryable) => {
    if (cursor === undefined) {
      return listRequests(partnerId, filter, { offset: (page - 1) * pageSize }, pageSize, q, { knownCapped });
    }
    const after = { id: cursor, createdAt: new Date(cursorMs as number) };
    if (!(await requestMatches(partnerId, filter, after.id, after.createdAt, q))) {
      throw validationError('startingAfter', 'must be a request of this list (its partner and its filters)');
    }
    return listRequests(partnerId, filter, { after }, pageSize, q, { knownCapped });
  };
  // A count and its page read one snapshot (a transaction); without a count there is nothing to keep
  // in step (a cursor's request, once logged, stays until its day is purged), so no BEGIN and COMMIT.
  const { counted, rows, more } = knownCapped
    ? await read(deps.db)
    : await deps.db.tx(read, { isolation: 'repeatable read', readOnly: true });
  if (counted > REQUEST_TOTAL_CAP && !knownCapped) deps.cappedRequestCounts.add(countKey, deps.clock.nowMs());
  const items = rows.map(toDeveloperRequest);
  return {
    page,
    pageSize,
    total: Math.min(counted, REQUEST_TOTAL_CAP),
    totalCapped: counted > REQUEST_TOTAL_CAP,
    nextStartingAfter: more ? items[items.length - 1].id : null,
    items,
  };
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
