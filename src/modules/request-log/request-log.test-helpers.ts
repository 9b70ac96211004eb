/**
 * Logged requests written straight into the log for tests that need thousands of them (paging, plans):
 * the capture path would take minutes to make as many. Each row is what the recorder writes.
 */
import type { Queryable } from '../../db/db.js';

/**
 * `count` requests of `partnerId`, the n-th (1-based) arriving `n × stepMs` before `nowMs`, made with
 * `keyIds[n % keyIds.length]`: statuses 200 but every 10th 404 (ERR_NOT_FOUND) and every 50th 503
 * (ERR_DEPENDENCY_UNAVAILABLE); every 20th a POST; paths /v1/partner/me and /v1/partner/orders/<n> in turn.
 * Returns the ids, newest first.
 */
export async function seedLoggedRequests(
  q: Queryable,
  options: { partnerId: string; keyIds: string[]; count: number; nowMs: number; stepMs: number },
): Promise<string[]> {
  const { partnerId, keyIds, count, nowMs, stepMs } = options;
  const days = new Set<string>();
  for (let ms = nowMs; ms >= nowMs - (count + 1) * stepMs; ms -= 86_400_000) days.add(new Date(ms).toISOString().slice(0, 10));
  days.add(new Date(nowMs - (count + 1) * stepMs).toISOString().slice(0, 10));
  await q.query('SELECT request_log_ensure_day(d::date) FROM unnest($1::text[]) AS d', [[...days]]);
  const rows = await q.query<{ id: string }>(
    `INSERT INTO request_log (id, created_at, partner_id, api_key_id, environment, method, path, query, status_code, error_code,
                              duration_ms, ip, user_agent, idempotency_key, request_body, response_body)
     SELECT 'req_' || lpad(to_hex(ms), 12, '0') || lpad(to_hex(g), 6, '0') || substr(md5($2::text || g), 1, 14),
            timestamptz 'epoch' + ms * interval '1 millisecond', $2::uuid, ($3::uuid[])[1 + g % cardinality($3::uuid[])], 'LIVE',
            CASE WHEN g % 20 = 0 THEN 'POST' ELSE 'GET' END,
            CASE WHEN g % 2 = 0 THEN '/v1/partner/me' ELSE '/v1/partner/orders/' || g END, NULL,
            s.code, CASE s.code WHEN 404 THEN 'ERR_NOT_FOUND' WHEN 503 THEN 'ERR_DEPENDENCY_UNAVAILABLE' END,
            3, '127.0.0.1', 'test', NULL, NULL, NULL
       FROM generate_series(1, $1::int) g,
            LATERAL (SELECT ($4::bigint - g * $5::bigint) AS ms) t,
            LATERAL (SELECT CASE WHEN g % 50 = 0 THEN 503 WHEN g % 10 = 0 THEN 404 ELSE 200 END AS code) s
     RETURNING id`,
    [count, partnerId, keyIds, nowMs, stepMs],
  );
  // Ids begin with the arrival time in fixed-width hex: in descending order, they are newest first.
  return rows.map((r) => r.id).sort((a, b) => (a < b ? 1 : -1));
}
