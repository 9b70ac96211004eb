/**
 * What a partner request leaves in the request log (docs/decisions-log.md, 'Request log'), end to end
 * through the API. The log is flushed by hand (the recorder's flush) instead of waiting for its timer.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, ISO, orderFor } from '../orders/orders.test-helpers.js';
import { callAs, detailOf, listOf, partnerWithKey, REQUEST_ID } from './request-log.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('capture on the partner API', () => {
  it('logs a successful read with every field, no bodies, under the id of its X-Request-Id', async () => {
    const { partner, key } = await partnerWithKey(t);
    const before = t.clock.nowMs();
    const res = await callAs(t, key, 'GET', '/v1/partner/orders?status=PACKED&pageSize=5', {
      headers: { 'user-agent': 'courier-app/2.1', 'idempotency-key': 'poll-7' },
    });
    expect(res.statusCode).toBe(200);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(REQUEST_ID);

    const page = await listOf(t, partner);
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

    const detail = await detailOf(t, partner, id);
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toEqual({ ...page.items[0], requestBody: null, responseBody: null });
  });

  it('logs a successful write with both bodies and its Idempotency-Key', async () => {
    const { partner, key } = await partnerWithKey(t);
    const code = await orderFor(t, admin, key.id);
    const sent = '{"type":"PICKED_UP","note":"at the gate"}';
    const res = await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: sent,
      headers: { 'idempotency-key': 'evt-1' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const detail = (await detailOf(t, partner, res.headers['x-request-id'] as string)).json();
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
    const { partner, key } = await partnerWithKey(t);
    const odd = ['"quoted", {braced}', 'back\\slash \\" \\\\', 'NULL', ' ', '', 'sağ ol 🚚', '\t\n'];
    // Header values: the printable ones (HTTP allows no line breaks there).
    const header = (text: string) => (/^[\x20-\x7e]*$/.test(text) ? `h-${text}` : 'h-other');
    const ids: string[] = [];
    for (const text of odd) {
      const res = await callAs(t, key, 'POST', '/v1/partner/orders/NO-SUCH/events', {
        payload: JSON.stringify({ type: 'PICKED_UP', note: text }),
        headers: { 'user-agent': header(text), 'idempotency-key': header(text) },
      });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      ids.push(res.headers['x-request-id'] as string);
    }
    for (const [i, text] of odd.entries()) {
      const detail = (await detailOf(t, partner, ids[i])).json();
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
      const res = await callAs(t, key, 'POST', '/v1/partner/orders/NO-SUCH/events', { payload: body });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ statusCode: 404, code: 'ERR_NOT_FOUND' });
      const detail = await detailOf(t, partner, res.headers['x-request-id'] as string);
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
    const { partner, key } = await partnerWithKey(t);
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const missing = await callAs(t, key, 'GET', '/v1/partner/orders/NO-SUCH-ORDER');
    expectError(missing, 404, 'ERR_NOT_FOUND');
    const invalid = await callAs(t, sandboxKey, 'POST', '/v1/partner/orders/NO-SUCH-ORDER/events', {
      payload: { type: 'TELEPORTED' },
      listener: 'sandbox',
    });
    expectError(invalid, 400, 'ERR_VALIDATION');

    const notFound = (await detailOf(t, partner, missing.headers['x-request-id'] as string)).json();
    expect(notFound).toMatchObject({
      environment: 'LIVE',
      statusCode: 404,
      errorCode: 'ERR_NOT_FOUND',
      requestBody: null,
      responseBody: missing.body,
    });
    const refused = (await detailOf(t, partner, invalid.headers['x-request-id'] as string)).json();
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
    const { partner, key } = await partnerWithKey(t, { rateLimit: 1 });
    const readOnly = await createKey(t.ctx, partner.id, { scopes: ['orders:read'] });
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const revoked = await createKey(t.ctx, partner.id);
    await t.ctx.db.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1', [revoked.id, t.clock.now()]);
    t.ctx.keys.invalidateAll();

    const answers = [
      [await callAs(t, key, 'GET', '/v1/partner/me'), 200, null],
      [await callAs(t, key, 'GET', '/v1/partner/me'), 429, 'ERR_RATE_LIMITED'],
      [await callAs(t, revoked, 'GET', '/v1/partner/me'), 401, 'ERR_API_KEY_REVOKED'],
      [await callAs(t, sandboxKey, 'GET', '/v1/partner/me'), 403, 'ERR_API_KEY_ENVIRONMENT'],
      [await callAs(t, readOnly, 'POST', '/v1/partner/sandbox/orders', { listener: 'live' }), 403, 'ERR_API_KEY_ENVIRONMENT'],
      [
        await callAs(t, readOnly, 'POST', '/v1/partner/orders/X/events', { payload: { type: 'PICKED_UP' } }),
        403,
        'ERR_API_KEY_SCOPE',
      ],
    ] as const;
    const page = await listOf(t, partner);
    expect(page.total).toBe(answers.length);
    // Newest first.
    const logged = [...page.items].reverse();
    answers.forEach(([res, status, code], i) => {
      expect(res.statusCode).toBe(status);
      expect(res.headers['x-request-id']).toBe(logged[i].id);
      expect(logged[i]).toMatchObject({ statusCode: status, errorCode: code });
    });
    // The scope refusal came before the body was read: a note says so.
    const scope = (await detailOf(t, partner, logged[5].id as string)).json();
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
    const badKey = await callAs(t, unknown, 'GET', '/v1/partner/me');
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
    const { partner, key } = await partnerWithKey(t);
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
    await callAs(t, key, 'GET', `/v1/partner/orders?apiKey=${key.key}&token=${partner.token}`, { headers: everywhere });
    await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: { type: 'PICKED_UP', note: `key ${key.key} token ${partner.token} other ${other.key} hook ${signing}` },
      headers: everywhere,
    });
    await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, {
      payload: `{"type":"EN_ROUTE","apiKey":"${key.key}"}`,
      headers: everywhere,
    });
    await callAs(t, key, 'GET', `/v1/partner/orders/${key.key}`, { headers: everywhere });
    // A key that is only "a string": the header value itself is masked wherever it is echoed.
    await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, { payload: `{"type":"X","k":"${key.key.slice(0, 20)}"}` });

    const page = await listOf(t, partner);
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
    const { partner, key } = await partnerWithKey(t);
    const code = await orderFor(t, admin, key.id);
    const url = `/v1/partner/orders/${code}/events`;
    const broken = await callAs(t, key, 'POST', url, { payload: '{"type": PICKED' });
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
      [broken, text, latin1].map(
        async (r) => (await detailOf(t, partner, r.headers['x-request-id'] as string)).json().requestBody,
      ),
    );
    expect(bodies).toEqual([
      '[not JSON: 15 bytes]',
      '[not JSON: 9 bytes of text/plain, not read]',
      '[not valid UTF-8: 33 bytes]',
    ]);
  });

  it('keeps the first 8 KiB of a body and no more', async () => {
    const { partner, key } = await partnerWithKey(t);
    const code = await orderFor(t, admin, key.id);
    const sent = JSON.stringify({ type: 'PICKED_UP', note: 'ə'.repeat(10_000) });
    const res = await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, { payload: sent });
    expectError(res, 400, 'ERR_VALIDATION');
    const stored = (await detailOf(t, partner, res.headers['x-request-id'] as string)).json().requestBody as string;
    // 'ə' is 2 bytes: the cut never splits a character.
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(8192);
    expect(Buffer.byteLength(stored)).toBeGreaterThan(8190);
    expect(sent.startsWith(stored)).toBe(true);
  });
});
