/**
 * Helpers of the request-log tests: requests sent as a key and read back through the developer routes,
 * and logged requests written straight into the log for tests that need thousands of them (paging,
 * plans): the capture path would take minutes to make as many. Each such row is what the recorder writes.
 */
import { expect } from 'vitest';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import type { Queryable } from '../../db/db.js';

export const REQUEST_ID = /^req_[0-9a-f]{32}$/;

/** A request as the key; an object payload is sent as JSON, a string as it is. */
export async function callAs(
  t: TestApp,
  key: TestKey,
  method: 'GET' | 'POST',
  url: string,
  options: { payload?: string | object; headers?: Record<string, string>; listener?: 'live' | 'sandbox' } = {},
) {
  const body = options.payload;
  return t[options.listener ?? 'live'].inject({
    method,
    url,
    headers: {
      ...key.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    payload: typeof body === 'object' ? JSON.stringify(body) : body,
  });
}

/** GET /v1/developer/requests as the partner, after writing what is queued. */
export async function listOf(t: TestApp, partner: TestPartner, query = '') {
  await t.ctx.requestLog.flush();
  const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests${query}`, headers: partner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { page: number; pageSize: number; total: number; items: Array<Record<string, unknown>> };
}

/** GET /v1/developer/requests/{id} as the partner, after writing what is queued. */
export async function detailOf(t: TestApp, partner: TestPartner, id: string) {
  await t.ctx.requestLog.flush();
  return t.live.inject({ method: 'GET', url: `/v1/developer/requests/${id}`, headers: partner.auth });
}

export async function partnerWithKey(t: TestApp, options: Parameters<typeof createKey>[2] = {}) {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, options);
  return { partner, key };
}

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
