/**
 * The request log end to end through the API (docs/decisions-log.md, 'Request log'): what a partner request leaves in the log
 * (capture), and what the developer routes read back (filters, paging, another partner's requests).
 * Each test has its own partner; the log is flushed by hand (the recorder's flush) instead of waiting
 * for its timer, except in the test of the timer itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerAuthContract } from '../../../test/contracts.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { type Auth, orderFor } from '../orders/orders.test-helpers.js';

const REQUEST_ID = /^req_[0-9a-f]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let t: TestApp;
let admin: Auth;
beforeAll(async () => {
  t = await createTestApp();
  admin = (await createUser(t.ctx, 'ADMIN')).auth;
});
afterAll(() => t.close());

type Listener = 'live' | 'sandbox';

async function call(
  key: TestKey,
  method: 'GET' | 'POST',
  url: string,
  options: { payload?: string | object; headers?: Record<string, string>; listener?: Listener } = {},
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
async function listOf(partner: TestPartner, query = '') {
  await t.ctx.requestLog.flush();
  const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests${query}`, headers: partner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { page: number; pageSize: number; total: number; items: Array<Record<string, unknown>> };
}

async function detailOf(partner: TestPartner, id: string) {
  await t.ctx.requestLog.flush();
  return t.live.inject({ method: 'GET', url: `/v1/developer/requests/${id}`, headers: partner.auth });
}

async function partnerWithKey(options: Parameters<typeof createKey>[2] = {}) {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, options);
  return { partner, key };
}

describe('capture on the partner API', () => {
  it('logs a successful read with every field, no bodies, under the id of its X-Request-Id', async () => {
    const { partner, key } = await partnerWithKey();
    const before = t.clock.nowMs();
    const res = await call(key, 'GET', '/v1/partner/orders?status=PACKED&pageSize=5', {
      headers: { 'user-agent': 'courier-app/2.1', 'idempotency-key': 'poll-7' },
    });
    expect(res.statusCode).toBe(200);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(REQUEST_ID);

    const page = await listOf(partner);
    expect(page).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(page.items[0]).toEqual({
      id,
      apiKeyId: key.id,
      environment: 'LIVE',
      method: 'GET',
      path: '/v1/partner/orders',
      query: 'status=PACKED&pageSize=5',
      statusCode: 200,
      errorCode: null,
      durationMs: expect.any(Number),
      ip: '127.0.0.1',
      userAgent: 'courier-app/2.1',
      idempotencyKey: 'poll-7',
      createdAt: expect.stringMatching(ISO),
    });
    const createdAt = Date.parse(page.items[0].createdAt as string);
    expect(createdAt).toBeGreaterThanOrEqual(before);
    expect(createdAt).toBeLessThanOrEqual(t.clock.nowMs());
    expect(page.items[0].durationMs).toBeGreaterThanOrEqual(0);

    const detail = await detailOf(partner, id);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toEqual({ ...page.items[0], requestBody: null, responseBody: null });
  });

  it('logs a successful write with both bodies and its Idempotency-Key', async () => {
    const { partner, key } = await partnerWithKey();
    const code = await orderFor(t, admin, key.id);
    const sent = '{"type":"PICKED_UP","note":"at the gate"}';
    const res = await call(key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: sent,
      headers: { 'idempotency-key': 'evt-1' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const detail = (await detailOf(partner, res.headers['x-request-id'] as string)).json();
    expect(detail).toMatchObject({
      method: 'POST',
      path: `/v1/partner/orders/${code}/events`,
      query: null,
      statusCode: 201,
      errorCode: null,
      idempotencyKey: 'evt-1',
      requestBody: sent,
      responseBody: res.body,
    });
  });

  it('stores text exactly, whatever it holds: quotes, backslashes, braces, commas, NULL, blanks, emoji', async () => {
    const { partner, key } = await partnerWithKey();
    const odd = ['"quoted", {braced}', 'back\\slash \\" \\\\', 'NULL', ' ', '', 'sağ ol 🚚', '\t\n'];
    // Header values: the printable ones (HTTP allows no line breaks there).
    const header = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? `h-${text}` : 'h-other');
    const ids: string[] = [];
    for (const text of odd) {
      const res = await call(key, 'POST', '/v1/partner/orders/NO-SUCH/events', {
        payload: JSON.stringify({ type: 'PICKED_UP', note: text }),
        headers: { 'user-agent': header(text), 'idempotency-key': header(text) },
      });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      ids.push(res.headers['x-request-id'] as string);
    }
    for (const [i, text] of odd.entries()) {
      const detail = (await detailOf(partner, ids[i])).json();
      expect(detail).toMatchObject({
        userAgent: header(text),
        idempotencyKey: header(text),
        requestBody: JSON.stringify({ type: 'PICKED_UP', note: text }),
      });
    }
    // Bodies kept as sent, with the characters COPY's text format must escape (a server's batches are
    // COPYed): raw tabs, line feeds and carriage returns between the tokens, backslash sequences such
    // as \N (COPY's NULL) and \. (its end-of-data mark) inside strings.
    const raw = ['{\r\n\t"type": "PICKED_UP",\n\t"note": "\\\\N"\r\n}', '{"type":"PICKED_UP","note":"a\\\\.\\tb\\\\\\\\"}\n'];
    for (const body of raw) {
      const res = await call(key, 'POST', '/v1/partner/orders/NO-SUCH/events', { payload: body });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, code: 'ERR_NOT_FOUND' });
      const detail = await detailOf(partner, res.headers['x-request-id'] as string);
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toMatchObject({
        statusCode: 404,
        errorCode: 'ERR_NOT_FOUND',
        requestBody: body,
        responseBody: res.body,
      });
    }
  });

  it('logs error answers with both bodies and the error code, on both listeners', async () => {
    const { partner, key } = await partnerWithKey();
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const missing = await call(key, 'GET', '/v1/partner/orders/NO-SUCH-ORDER');
    expectError(missing, 404, 'ERR_NOT_FOUND');
    const invalid = await call(sandboxKey, 'POST', '/v1/partner/orders/NO-SUCH-ORDER/events', {
      payload: { type: 'TELEPORTED' },
      listener: 'sandbox',
    });
    expectError(invalid, 400, 'ERR_VALIDATION');

    const notFound = (await detailOf(partner, missing.headers['x-request-id'] as string)).json();
    expect(notFound).toMatchObject({
      environment: 'LIVE',
      statusCode: 404,
      errorCode: 'ERR_NOT_FOUND',
      requestBody: null,
      responseBody: missing.body,
    });
    const refused = (await detailOf(partner, invalid.headers['x-request-id'] as string)).json();
    expect(refused).toMatchObject({
      apiKeyId: sandboxKey.id,
      environment: 'SANDBOX',
      statusCode: 400,
      errorCode: 'ERR_VALIDATION',
      requestBody: '{"type":"TELEPORTED"}',
      responseBody: invalid.body,
    });
  });

  it('logs the refusals of an identified key, each under the X-Request-Id it answered with', async () => {
    const { partner, key } = await partnerWithKey({ rateLimit: 1 });
    const readOnly = await createKey(t.ctx, partner.id, { scopes: ['orders:read'] });
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const revoked = await createKey(t.ctx, partner.id);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.id, t.clock.now()]);
    t.ctx.keys.invalidateAll();

    const answers = [
      [await call(key, 'GET', '/v1/partner/me'), 200, null],
      [await call(key, 'GET', '/v1/partner/me'), 429, 'ERR_RATE_LIMITED'],
      [await call(revoked, 'GET', '/v1/partner/me'), 401, 'ERR_API_KEY_REVOKED'],
      [await call(sandboxKey, 'GET', '/v1/partner/me'), 403, 'ERR_API_KEY_ENVIRONMENT'],
      [await call(readOnly, 'POST', '/v1/partner/sandbox/orders', { listener: 'live' }), 403, 'ERR_API_KEY_ENVIRONMENT'],
      [await call(readOnly, 'POST', '/v1/partner/orders/X/events', { payload: { type: 'PICKED_UP' } }), 403, 'ERR_API_KEY_SCOPE'],
    ] as const;
    const page = await listOf(partner);
    expect(page.total).toBe(answers.length);
    // Newest first.
    const logged = [...page.items].reverse();
    answers.forEach(([res, status, code], i) => {
      expect(res.statusCode).toBe(status);
      expect(res.headers['x-request-id']).toBe(logged[i].id);
      expect(logged[i]).toMatchObject({ statusCode: status, errorCode: code });
    });
    // The scope refusal came before the body was read: a note says so.
    const scope = (await detailOf(partner, logged[5].id as string)).json();
    expect(scope.requestBody).toMatch(/^\[not read: \d+ bytes; the request was refused before its body was read\]$/);
  });

  it('answers every error with an X-Request-Id, logging none for a key it cannot identify', async () => {
    const unknown = {
      id: '',
      key: `svc_live_${'Z'.repeat(32)}`,
      prefix: '',
      headers: { 'x-api-key': `svc_live_${'Z'.repeat(32)}` },
    };
    const noKey = await t.live.inject({ method: 'GET', url: '/v1/partner/me' });
    const badKey = await call(unknown, 'GET', '/v1/partner/me');
    const noRoute = await t.live.inject({ method: 'GET', url: '/v1/partner/nowhere' });
    const badUrl = await t.live.inject({ method: 'GET', url: '/v1/partner/orders/%E0%A4%A' });
    for (const res of [noKey, badKey, noRoute, badUrl]) {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    }
    await t.ctx.requestLog.flush();
    const ids = [noKey, badKey, noRoute, badUrl].map((r) => r.headers['x-request-id']);
    const rows = await t.ctx.db.query('SELECT id FROM request_log WHERE id = ANY($1)', [ids]);
    expect(rows).toEqual([]);
  });

  it('stores no credential anywhere in a row: not the key, wherever it was sent, nor a bearer token', async () => {
    const { partner, key } = await partnerWithKey();
    const code = await orderFor(t, admin, key.id);
    const other = await createKey(t.ctx, partner.id);
    // A webhook signing secret in standard base64, with + / and = in it.
    const signing = 'whsec_q+8/Zz0NnL2vP9xR7tW1yB4dF6hJ3kM5oS8uA0cE2gI=';
    const secrets = [key.key, other.key, partner.token, signing.slice(6, 20), signing.slice(20)];
    const everywhere = {
      'user-agent': `bot ${key.key}`,
      'idempotency-key': other.key,
      authorization: `Bearer ${partner.token}`,
      cookie: `session=${partner.token}`,
    };
    await call(key, 'GET', `/v1/partner/orders?apiKey=${key.key}&token=${partner.token}`, { headers: everywhere });
    await call(key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: { type: 'PICKED_UP', note: `key ${key.key} token ${partner.token} other ${other.key} hook ${signing}` },
      headers: everywhere,
    });
    await call(key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: `{"type":"EN_ROUTE","apiKey":"${key.key}"}`,
      headers: everywhere,
    });
    await call(key, 'GET', `/v1/partner/orders/${key.key}`, { headers: everywhere });
    // A key that is only "a string": the header value itself is masked wherever it is echoed.
    await call(key, 'POST', `/v1/partner/orders/${code}/events`, { payload: `{"type":"X","k":"${key.key.slice(0, 20)}"}` });

    const page = await listOf(partner);
    expect(page.total).toBe(5);
    const rows = await t.ctx.db.query<{ row: string }>(
      'SELECT row_to_json(r)::text AS row FROM request_log r WHERE partner_id = $1',
      [partner.id],
    );
    expect(rows).toHaveLength(5);
    for (const { row } of rows) {
      for (const secret of secrets) expect(row).not.toContain(secret);
      expect(row).not.toMatch(/svc_live_[A-Za-z0-9]{6}/);
    }
    expect(rows.map((r) => r.row).join('\n')).toContain('[redacted]');
  });

  it('stores a body that is not JSON, or not UTF-8, as a short note', async () => {
    const { partner, key } = await partnerWithKey();
    const code = await orderFor(t, admin, key.id);
    const url = `/v1/partner/orders/${code}/events`;
    const broken = await call(key, 'POST', url, { payload: '{"type": PICKED' });
    expectError(broken, 400, 'ERR_BAD_REQUEST');
    const text = await t.live.inject({
      method: 'POST',
      url,
      headers: { ...key.headers, 'content-type': 'text/plain' },
      payload: 'PICKED_UP',
    });
    expectError(text, 400, 'ERR_BAD_REQUEST');
    const latin1 = await t.live.inject({
      method: 'POST',
      url,
      headers: { ...key.headers, 'content-type': 'application/json' },
      payload: Buffer.concat([Buffer.from('{"type":"PICKED_UP","note":"'), Buffer.from([0xe7, 0x61, 0x79]), Buffer.from('"}')]),
    });
    expect(latin1.statusCode).toBe(201);

    const bodies = await Promise.all(
      [broken, text, latin1].map(async (r) => (await detailOf(partner, r.headers['x-request-id'] as string)).json().requestBody),
    );
    expect(bodies).toEqual([
      '[not JSON: 15 bytes]',
      '[not JSON: 9 bytes of text/plain, not read]',
      '[not valid UTF-8: 33 bytes]',
    ]);
  });

  it('keeps the first 8 KiB of a body and no more', async () => {
    const { partner, key } = await partnerWithKey();
    const code = await orderFor(t, admin, key.id);
    const sent = JSON.stringify({ type: 'PICKED_UP', note: 'ə'.repeat(10_000) });
    const res = await call(key, 'POST', `/v1/partner/orders/${code}/events`, { payload: sent });
    expectError(res, 400, 'ERR_VALIDATION');
    const stored = (await detailOf(partner, res.headers['x-request-id'] as string)).json().requestBody as string;
    // 'ə' is 2 bytes: the cut never splits a character.
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(8192);
    expect(Buffer.byteLength(stored)).toBeGreaterThan(8190);
    expect(sent.startsWith(stored)).toBe(true);
  });
});

describe('GET /v1/developer/requests', () => {
  bearerAuthContract(() => t, { method: 'GET', url: '/v1/developer/requests', role: 'PARTNER' });

  it('shows requests within 5 seconds without anyone asking for a flush', async () => {
    const { partner, key } = await partnerWithKey();
    const res = await call(key, 'GET', '/v1/partner/me');
    const deadline = Date.now() + 30_000;
    let items: unknown[] = [];
    while (items.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      items = (await t.live.inject({ method: 'GET', url: '/v1/developer/requests', headers: partner.auth })).json().items;
    }
    expect(items).toEqual([expect.objectContaining({ id: res.headers['x-request-id'] })]);
  });

  it("lists only the partner's own keys' requests, newest first, and pages them", async () => {
    const { partner, key } = await partnerWithKey();
    const stranger = await partnerWithKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call(key, 'GET', `/v1/partner/me?n=${i}`)).headers['x-request-id'] as string);
    await call(stranger.key, 'GET', '/v1/partner/me');
    const first = await listOf(partner, '?pageSize=2');
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    expect(first.items.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    const last = await listOf(partner, '?pageSize=2&page=3');
    expect(last.items.map((r) => r.id)).toEqual([ids[0]]);
    expect((await listOf(partner, '?pageSize=2&page=4')).items).toEqual([]);
    // The other partner's key as a filter: nothing, not an error.
    expect((await listOf(partner, `?apiKeyId=${stranger.key.id}`)).total).toBe(0);
  });

  it('filters by key, status class, status, code, method, exact path, path prefix and time', async () => {
    const { partner, key } = await partnerWithKey();
    const second = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
    const code = await orderFor(t, admin, key.id);
    const start = new Date(t.clock.nowMs()).toISOString();
    const a = await call(key, 'GET', `/v1/partner/orders/${code}`); // 200
    const b = await call(key, 'POST', `/v1/partner/orders/${code}/events`, { payload: { type: 'PICKED_UP' } }); // 201
    const c = await call(key, 'POST', `/v1/partner/orders/${code}/events`, { payload: { type: 'PICKED_UP' } }); // 409
    const d = await call(second, 'GET', '/v1/partner/orders/NOPE'); // 404
    const e = await call(second, 'GET', '/v1/partner/me'); // 200
    t.clock.advance(60);
    const middle = new Date(t.clock.nowMs()).toISOString();
    t.clock.advance(60);
    const f = await call(second, 'POST', '/v1/partner/orders/NOPE/events', { payload: {} }); // 400
    expect([a, b, c, d, e, f].map((r) => r.statusCode)).toEqual([200, 201, 409, 404, 200, 400]);
    const id = (r: typeof a) => r.headers['x-request-id'];
    const ids = async (query: string) => (await listOf(partner, query)).items.map((r) => r.id);

    expect(await ids('')).toEqual([f, e, d, c, b, a].map(id));
    expect(await ids(`?apiKeyId=${second.id}`)).toEqual([f, e, d].map(id));
    expect(await ids('?status=2xx')).toEqual([e, b, a].map(id));
    expect(await ids('?status=4xx')).toEqual([f, d, c].map(id));
    expect(await ids('?status=5xx')).toEqual([]);
    expect(await ids('?status=201')).toEqual([id(b)]);
    expect(await ids('?code=ERR_INVALID_TRANSITION')).toEqual([id(c)]);
    expect(await ids('?method=POST')).toEqual([f, c, b].map(id));
    expect(await ids(`?path=/v1/partner/orders/${code}`)).toEqual([id(a)]);
    expect(await ids(`?path=/v1/partner/orders/${code}*`)).toEqual([c, b, a].map(id));
    expect(await ids('?path=/v1/partner/orders/NOPE*&status=404')).toEqual([id(d)]);
    expect(await ids(`?since=${encodeURIComponent(middle)}`)).toEqual([id(f)]);
    expect(await ids(`?since=${encodeURIComponent(start)}&until=${encodeURIComponent(middle)}`)).toEqual([e, d, c, b, a].map(id));
    // A `%` or `_` in a prefix is a character, not a wildcard.
    expect(await ids('?path=/v1/partner/%25*')).toEqual([]);
  });

  it('answers bad filters with 400 ERR_VALIDATION naming the parameter', async () => {
    const partner = await createPartner(t.ctx);
    const cases: Array<[string, string]> = [
      ['?color=red', 'color'],
      ['?status=abc', 'status'],
      ['?status=2XX', 'status'],
      ['?status=99', 'status'],
      ['?status=4000', 'status'],
      ['?code=not-a-code', 'code'],
      ['?method=FETCH', 'method'],
      ['?path=orders', 'path'],
      ['?apiKeyId=nope', 'apiKeyId'],
      ['?since=yesterday', 'since'],
      ['?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['?page=0', 'page'],
      ['?page=10001', 'page'],
      ['?pageSize=0', 'pageSize'],
      ['?pageSize=51', 'pageSize'],
    ];
    for (const [query, field] of cases) {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests${query}`, headers: partner.auth });
      expectError(res, 400, 'ERR_VALIDATION');
      expect(
        res.json().details.map((d: { field: string }) => d.field),
        query,
      ).toContain(field);
    }
  });
});

describe('GET /v1/developer/requests/{id}', () => {
  bearerAuthContract(() => t, { method: 'GET', url: '/v1/developer/requests/req_0', role: 'PARTNER' });

  it("answers another partner's request, an unknown id and a malformed one with 404", async () => {
    const { key } = await partnerWithKey();
    const other = await createPartner(t.ctx);
    const res = await call(key, 'GET', '/v1/partner/me');
    const id = res.headers['x-request-id'] as string;
    for (const probe of [id, `req_${'0'.repeat(32)}`, `${id.slice(0, -1)}x`, 'nope', `${id}0`]) {
      expectError(await detailOf(other, probe), 404, 'ERR_NOT_FOUND');
    }
  });
});
