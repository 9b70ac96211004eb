/**
 * SQL of the request log (migration 0016): the recorder's batched writes, the partner's reads (partner
 * id first, always in the WHERE clause) and the retention purge.
 */
import type { Db, Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { RequestLogEntry } from './request-log.types.js';

/** Creates the partitions of these UTC days (`YYYY-MM-DD`) where missing (request_log_ensure_day). */
export async function ensureDayPartitions(days: readonly string[], q: Queryable): Promise<void> {
  await q.query('SELECT request_log_ensure_day(d::date) FROM unnest($1::text[]) AS d', [days]);
}

const COLUMNS =
  'id, created_at, partner_id, api_key_id, environment, method, path, query, status_code, error_code, duration_ms, ip, user_agent, idempotency_key, request_body, response_body';

/**
 * Writes a batch. On a PostgreSQL server: ONE `COPY … FROM STDIN` (the server inserts the rows many to a
 * page and a WAL record, where an INSERT writes them one by one: measured on the same tables, about
 * 10 µs of the server's CPU a row against 16, and 6 µs of ours against 8; docs/performance.md). On the
 * embedded database, which cannot COPY from a client (db.ts), one multi-row INSERT: each column as one
 * array parameter, unnested together. Either way a batch of thousands is one statement and one round trip.
 */
export async function insertEntries(entries: readonly RequestLogEntry[], db: Db): Promise<void> {
  if (entries.length === 0) return;
  if (db.kind === 'server') {
    await db.copyFrom(`COPY request_log (${COLUMNS}) FROM STDIN`, copyText(entries));
    return;
  }
  const n = entries.length;
  const columns = Array.from({ length: 16 }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    columns[0][i] = e.id;
    columns[1][i] = e.createdMs;
    columns[2][i] = e.partnerId;
    columns[3][i] = e.apiKeyId;
    columns[4][i] = e.environment;
    columns[5][i] = e.method;
    columns[6][i] = e.path;
    columns[7][i] = e.query;
    columns[8][i] = e.statusCode;
    columns[9][i] = e.errorCode;
    columns[10][i] = e.durationMs;
    columns[11][i] = e.ip;
    columns[12][i] = e.userAgent;
    columns[13][i] = e.idempotencyKey;
    columns[14][i] = e.requestBody;
    columns[15][i] = e.responseBody;
  }
  await db.query(
    `INSERT INTO request_log (${COLUMNS})
     SELECT id, timestamptz 'epoch' + ms * interval '1 millisecond', partner_id, api_key_id, environment, method, path,
            query, status_code, error_code, duration_ms, ip, user_agent, idempotency_key, request_body, response_body
       FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::smallint[], $10::text[], $11::real[], $12::text[], $13::text[], $14::text[], $15::text[],
                   $16::text[])
         AS r(id, ms, partner_id, api_key_id, environment, method, path, query, status_code, error_code, duration_ms,
              ip, user_agent, idempotency_key, request_body, response_body)`,
    columns,
  );
}

/** COPY's text format: a NULL is \N; a backslash, tab, newline or carriage return in a value is escaped. */
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyValue(value: string | null): string {
  if (value === null) return '\\N';
  return COPY_SPECIAL.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : value;
}

/** The batch as COPY text rows, columns in the order of COLUMNS. */
function copyText(entries: readonly RequestLogEntry[]): string {
  let text = '';
  for (const e of entries) {
    text += `${e.id}\t${new Date(e.createdMs).toISOString()}\t${e.partnerId}\t${e.apiKeyId}\t${e.environment}\t${copyValue(e.method)}\t${copyValue(e.path)}\t${copyValue(e.query)}\t${e.statusCode}\t${copyValue(e.errorCode)}\t${e.durationMs}\t${copyValue(e.ip)}\t${copyValue(e.userAgent)}\t${copyValue(e.idempotencyKey)}\t${copyValue(e.requestBody)}\t${copyValue(e.responseBody)}\n`;
  }
  return text;
}

export interface MinuteCounts {
  partnerId: string;
  /** Start of the minute, ms since the epoch. */
  minuteMs: number;
  dropped: number;
  notStreamed: number;
}

/** Adds per-minute counts (additive upsert: several processes count the same minutes). */
export async function addMinuteCounts(counts: readonly MinuteCounts[], q: Queryable): Promise<void> {
  if (counts.length === 0) return;
  await q.query(
    `INSERT INTO request_log_minutes (partner_id, minute, dropped, not_streamed)
     SELECT p, timestamptz 'epoch' + m * interval '1 millisecond', d, n
       FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::int[]) AS t(p, m, d, n)
     ON CONFLICT (partner_id, minute) DO UPDATE SET
       dropped = request_log_minutes.dropped + EXCLUDED.dropped,
       not_streamed = request_log_minutes.not_streamed + EXCLUDED.not_streamed`,
    [
      counts.map((c) => c.partnerId),
      counts.map((c) => c.minuteMs),
      counts.map((c) => c.dropped),
      counts.map((c) => c.notStreamed),
    ],
  );
}

export interface RequestFilter {
  apiKeyId?: string;
  /** A class (`4` for 4xx) or one status code. */
  status?: { class: number; code?: undefined } | { code: number; class?: undefined };
  code?: string;
  method?: string;
  /** Exact path, or a prefix. */
  path?: { value: string; prefix: boolean };
  since?: Date;
  until?: Date;
}

export interface RequestRow {
  id: string;
  api_key_id: string;
  environment: ApiKeyEnvironment;
  method: string;
  path: string;
  query: string | null;
  status_code: number;
  error_code: string | null;
  duration_ms: number;
  ip: string;
  user_agent: string | null;
  idempotency_key: string | null;
  created_at: Date;
}

export interface RequestDetailRow extends RequestRow {
  request_body: string | null;
  response_body: string | null;
}

const SUMMARY_COLUMNS = `id, api_key_id, environment, method, path, query, status_code, error_code, duration_ms, ip,
  user_agent, idempotency_key, created_at`;

/** The method as an SQL literal; only the methods the filter's schema allows get this far. */
function methodLiteral(method: string): string {
  if (!/^[A-Z]{3,7}$/.test(method)) throw new Error(`not a method: ${method}`);
  return method;
}

/**
 * The WHERE clause of a filter; parameters start at $2 ($1 is the partner). Each filter is written so
 * that its own index (migrations 0021 and 0033) gives the rows in list order: a status class as
 * `status_code / 100 = N` (the class index; 2xx as a range of the column), one status as
 * `status_code = N`, a method as a literal, so that the planner sees the filter imply its partial
 * index's predicate. The values most requests have
 * (status 200, class 2xx, GET) have no index of their own: they read the partner's time index (or the
 * key's, the path's) and are checked on its rows (docs/paging.md, "Request log").
 */
function whereOf(filter: RequestFilter, params: unknown[]): string {
  const where = ['partner_id = $1'];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (filter.apiKeyId !== undefined) add((n) => `api_key_id = ${n}::uuid`, filter.apiKeyId);
  // Validated integers, written as literals: the class index is on the expression `status_code / 100`.
  // 2xx is a range of the column (whose statistics tell the planner most rows are in it; the class index
  // holds the other classes only, so the expression has no statistics of its own for 2).
  const statusClass = filter.status?.class === undefined ? undefined : Math.trunc(filter.status.class);
  if (statusClass === 2) where.push('status_code >= 200 AND status_code < 300');
  else if (statusClass !== undefined) where.push(`(status_code / 100) = ${statusClass}`);
  if (filter.status?.code !== undefined) where.push(`status_code = ${Math.trunc(filter.status.code)}`);
  if (filter.code !== undefined) add((n) => `error_code = ${n}`, filter.code);
  // A validated method (REQUEST_METHODS), also a literal: the method index holds every method but GET.
  if (filter.method !== undefined) where.push(`method = '${methodLiteral(filter.method)}'`);
  if (filter.path) {
    if (filter.path.prefix) add((n) => `path LIKE ${n}`, `${filter.path.value.replace(/[\\%_]/g, '\\$&')}%`);
    else add((n) => `path = ${n}`, filter.path.value);
  }
  if (filter.since) add((n) => `created_at >= ${n}`, filter.since);
  if (filter.until) add((n) => `created_at < ${n}`, filter.until);
  return where.join(' AND ');
}

/** The summary columns of the page's rows (`r`), the rows its (created_at, id) pairs lead to. */
const PAGE_COLUMNS = SUMMARY_COLUMNS.replace(/(^|,\s*)/g, '$1r.');

/** Matching requests are counted up to this many; a list with more says its total is capped. */
export const REQUEST_TOTAL_CAP = 10_000;

/** Where a page starts: an offset into the list, or just after (older than) one of its requests. */
export type RequestPageStart = { offset: number } | { after: { id: string; createdAt: Date } };

/**
 * One page of the partner's log, newest first, whether more follow, and the number of matching rows
 * counted up to REQUEST_TOTAL_CAP + 1 (docs/paging.md, "Request log"). Every statement is one range of
 * the filter's index in list order, ending where the page (or the cap) ends: it reads at most
 * offset + pageSize + 1 entries, and the count at most 10,001, whatever the log holds. The count is
 * ordered like the page although order does not change it: so it is planned on the filter's index in
 * that order (a range of the partner's entries), never as a scan of whole partitions that stops after
 * 10,001 matches, which reads every other partner's rows on the way.
 */
export async function listRequests(
  partnerId: string,
  filter: RequestFilter,
  start: RequestPageStart,
  pageSize: number,
  q: Queryable,
  options: { knownCapped?: boolean } = {},
): Promise<{ counted: number; rows: RequestRow[]; more: boolean }> {
  const params: unknown[] = [partnerId];
  const where = whereOf(filter, params);
  // `knownCapped`: the caller knows more than the cap match (the count is skipped).
  const counted = options.knownCapped
    ? REQUEST_TOTAL_CAP + 1
    : (
        await q.query<{ counted: number }>(
          `SELECT count(*)::int AS counted FROM (
             SELECT 1 FROM request_log WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${REQUEST_TOTAL_CAP + 1}) m`,
          params,
        )
      )[0].counted;
  let range = where;
  let offset = 0;
  if ('after' in start) {
    params.push(start.after.createdAt, start.after.id);
    range += ` AND (created_at, id) < ($${params.length - 1}, $${params.length})`;
  } else {
    offset = start.offset;
    if (counted === 0 || offset >= counted) return { counted, rows: [], more: false };
  }
  // The page's (created_at, id) first, from the filter's index alone (an index-only range, however deep
  // the offset), then only those rows, each found by the partner's time index in its own day's partition:
  // a deep page skips index entries, never table rows. The LATERAL … LIMIT 1 keeps the second step a
  // probe per row (a plain join may be planned as a hash join over every partition of the log).
  const rows = await q.query<RequestRow>(
    `SELECT ${PAGE_COLUMNS}
       FROM (SELECT created_at, id FROM request_log WHERE ${range}
              ORDER BY created_at DESC, id DESC LIMIT ${Math.trunc(pageSize) + 1} OFFSET ${Math.trunc(offset)}) p
      CROSS JOIN LATERAL (SELECT * FROM request_log l
                           WHERE l.partner_id = $1 AND l.created_at = p.created_at AND l.id = p.id LIMIT 1) r
      ORDER BY p.created_at DESC, p.id DESC`,
    params,
  );
  const more = rows.length > pageSize;
  if (more) rows.pop();
  return { counted, rows, more };
}

/** Whether request `id` (arrived at `createdAt`) is the partner's and matches `filter`. */
export async function requestMatches(
  partnerId: string,
  filter: RequestFilter,
  id: string,
  createdAt: Date,
  q: Queryable,
): Promise<boolean> {
  const params: unknown[] = [partnerId];
  const where = whereOf(filter, params);
  params.push(createdAt, id);
  const rows = await q.query(
    `SELECT 1 FROM request_log WHERE ${where} AND created_at = $${params.length - 1} AND id = $${params.length}`,
    params,
  );
  return rows.length > 0;
}

/** One request of the partner's, found in its own day's partition (`createdAt` comes from the id). */
export async function findRequest(
  partnerId: string,
  id: string,
  createdAt: Date,
  q: Queryable,
): Promise<RequestDetailRow | null> {
  const rows = await q.query<RequestDetailRow>(
    `SELECT ${SUMMARY_COLUMNS}, request_body, response_body FROM request_log
      WHERE partner_id = $1 AND id = $2 AND created_at = $3`,
    [partnerId, id, createdAt],
  );
  return rows[0] ?? null;
}

export interface MinuteRow {
  minute: Date;
  dropped: number;
  not_streamed: number;
}

/** The partner's minutes with drops or unsent live entries in [since, until), newest first, and totals. */
export async function readMinuteCounts(
  partnerId: string,
  since: Date,
  until: Date,
  limit: number,
  q: Queryable,
): Promise<{ rows: MinuteRow[]; dropped: number; notStreamed: number }> {
  const [totals] = await q.query<{ dropped: number; not_streamed: number }>(
    `SELECT coalesce(sum(dropped), 0)::int AS dropped, coalesce(sum(not_streamed), 0)::int AS not_streamed
       FROM request_log_minutes WHERE partner_id = $1 AND minute >= $2 AND minute < $3`,
    [partnerId, since, until],
  );
  const rows = await q.query<MinuteRow>(
    `SELECT minute, dropped, not_streamed FROM request_log_minutes
      WHERE partner_id = $1 AND minute >= $2 AND minute < $3 ORDER BY minute DESC LIMIT $4`,
    [partnerId, since, until, limit],
  );
  return { rows, dropped: totals.dropped, notStreamed: totals.not_streamed };
}

/** Drops the partitions of days before `firstKeptDay` and the minute counts before it. */
export async function deleteDaysBefore(firstKeptDay: string, q: Queryable): Promise<number> {
  const [{ n }] = await q.query<{ n: number }>('SELECT request_log_drop_days_before($1::date) AS n', [firstKeptDay]);
  await q.query('DELETE FROM request_log_minutes WHERE minute < $1::timestamptz', [`${firstKeptDay}T00:00:00Z`]);
  return n;
}
