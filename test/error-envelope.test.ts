/**
 * The error envelope on every answer (docs/decisions-log.md, 'Requests, errors and input'): unknown
 * routes, validation details, malformed and oversized bodies, parser refusals, unexpected failures, and
 * the X-Request-Id of each answer. A probe app adds test-only routes to the real one.
 */
import { connect } from 'node:net';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { LocalizedText, Nullable } from '../src/shared/schemas.js';
import { createTestApp, type TestApp } from './harness.js';

const Envelope = { statusCode: expect.any(Number), code: expect.any(String), message: expect.any(String) };

describe('error envelope', () => {
  let t: TestApp;
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    t = await createTestApp();
    // A probe app with test-only routes: a nested body schema and a handler that fails unexpectedly.
    app = await buildApp(t.ctx, 'LIVE');
    app.post(
      '/__probe/echo',
      {
        schema: {
          body: Type.Object(
            {
              name: Type.String({ minLength: 2 }),
              items: Type.Array(
                Type.Object({ name: LocalizedText, qty: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
              ),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => request.body,
    );
    app.post(
      '/__probe/nullable',
      {
        schema: {
          body: Type.Object(
            {
              customer: Nullable(
                Type.Object(
                  { address: Type.Object({ street: Type.String() }, { additionalProperties: false }) },
                  { additionalProperties: false },
                ),
              ),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => request.body,
    );
    app.post('/__probe/no-body', async () => ({ ok: true }));
    app.get('/__probe/boom', async () => {
      throw new Error('secret internal detail at /srv/app/db.ts:42');
    });
    app.get('/__probe/db', async () => t.ctx.db.query('SELECT 1 AS one'));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  /** A POST whose body is sent exactly as written, with a JSON content type. */
  const postJsonText = (url: string, payload: string) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });

  it('answers an unknown route with 404 ERR_NOT_FOUND in the envelope', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ ...Envelope, statusCode: 404, code: 'ERR_NOT_FOUND' });
  });

  it('answers a malformed URL with 400 ERR_BAD_REQUEST and an over-long path parameter with 404 ERR_NOT_FOUND', async () => {
    const bad = await app.inject({ method: 'GET', url: '/v1/developer/keys/%zz' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ ...Envelope, statusCode: 400, code: 'ERR_BAD_REQUEST' });
    const long = await app.inject({ method: 'GET', url: `/v1/developer/keys/${'a'.repeat(3000)}` });
    expect(long.statusCode).toBe(404);
    expect(long.json()).toEqual({ ...Envelope, statusCode: 404, code: 'ERR_NOT_FOUND' });
    // Up to 1 KiB a parameter still reaches its route (and its authentication).
    const routed = await app.inject({ method: 'GET', url: `/v1/partner/orders/${'A'.repeat(500)}` });
    expect(routed.statusCode).toBe(401);
    expect(routed.json().code).toBe('ERR_API_KEY_INVALID');
  });

  it('names nested fields with dotted paths in ERR_VALIDATION details', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/__probe/echo',
      payload: {
        name: 'ok',
        items: [
          { name: { az: 'a', ru: 'b', en: 'c' }, qty: 1 },
          { name: { az: 'a', ru: 'b' }, qty: 0 },
        ],
      },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ statusCode: 400, code: 'ERR_VALIDATION' });
    const fields = body.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['items.1.name.en', 'items.1.qty']);
    for (const d of body.details) expect(d.messages.length).toBeGreaterThan(0);
  });

  it('rejects an unknown body field by name', async () => {
    const res = await app.inject({ method: 'POST', url: '/__probe/echo', payload: { name: 'ok', items: [], extra: 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'ERR_VALIDATION', details: [{ field: 'extra', messages: ['is not allowed'] }] });
  });

  it('does not coerce body types', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/__probe/echo',
      payload: { name: 'ok', items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: '1' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([{ field: 'items.0.qty', messages: ['must be integer'] }]);
  });

  it('answers malformed JSON with 400 ERR_BAD_REQUEST', async () => {
    const res = await postJsonText('/__probe/echo', '{"name": "ok",');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ ...Envelope, statusCode: 400, code: 'ERR_BAD_REQUEST' });
  });

  it('answers a wrong content type with 400 ERR_BAD_REQUEST', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/__probe/echo',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'ERR_BAD_REQUEST' });
  });

  it('answers a body over 1 MiB with 400 ERR_BAD_REQUEST', async () => {
    const res = await postJsonText('/__probe/echo', JSON.stringify({ name: 'x'.repeat(1024 * 1024), items: [] }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'ERR_BAD_REQUEST' });
  });

  it('refuses prototype-poisoning JSON with 400 ERR_BAD_REQUEST', async () => {
    const res = await postJsonText('/__probe/echo', '{"name":"ok","items":[],"__proto__":{"admin":true}}');
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('ERR_BAD_REQUEST');
    expect(res.json().message).toBe('Request body must not hold a "__proto__" or "constructor" key');
    const ctor = await postJsonText('/__probe/echo', '{"name":"ok","items":[],"constructor":{"prototype":{"admin":true}}}');
    expect(ctor.json()).toMatchObject({
      statusCode: 400,
      code: 'ERR_BAD_REQUEST',
      message: expect.stringContaining('constructor'),
    });
    expect((await postJsonText('/__probe/echo', '{"name":')).json().message).toBe('Request body is not valid JSON');
  });

  it('names only the inner field when an object that may be null is invalid inside', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/__probe/nullable',
      payload: { customer: { address: { street: 'Nizami', zip: 'AZ1000' } } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      ...Envelope,
      statusCode: 400,
      code: 'ERR_VALIDATION',
      details: [{ field: 'customer.address.zip', messages: ['is not allowed'] }],
    });
    const asNull = await app.inject({ method: 'POST', url: '/__probe/nullable', payload: { customer: null } });
    expect(asNull.statusCode).toBe(200);
    expect(asNull.json()).toEqual({ customer: null });
  });

  it('refuses a NUL character in any body string with 400 ERR_VALIDATION naming the field', async () => {
    const res = await postJsonText(
      '/__probe/echo',
      '{"name":"ok","items":[{"name":{"az":"a","ru":"b\\u0000c","en":"d"},"qty":1}]}',
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      ...Envelope,
      statusCode: 400,
      code: 'ERR_VALIDATION',
      details: [{ field: 'items.0.name.ru', messages: ['must not contain the NUL character (\\u0000)'] }],
    });
    // An escaped backslash followed by "u0000" is six ordinary characters, not a NUL.
    const literal = await postJsonText('/__probe/echo', '{"name":"a\\\\u0000b","items":[]}');
    expect(literal.statusCode).toBe(200);
    expect(literal.json().name).toBe('a\\u0000b');
  });

  it('answers a path holding a NUL character with 404 ERR_NOT_FOUND, like an unknown route', async () => {
    for (const url of ['/v1/partner/orders/ORD-%00', '/v1/admin/orders/%00/status', '/v1/developer/keys/%00']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ ...Envelope, statusCode: 404, code: 'ERR_NOT_FOUND' });
    }
  });

  it('lets an operation that takes no body have none, {} or null, and refuses anything else naming it', async () => {
    for (const payload of [undefined, '{}', 'null', '']) {
      const res = await app.inject({
        method: 'POST',
        url: '/__probe/no-body',
        ...(payload === undefined ? {} : { headers: { 'content-type': 'application/json' }, payload }),
      });
      expect(res.statusCode, String(payload)).toBe(200);
    }
    const fields = await app.inject({ method: 'POST', url: '/__probe/no-body', payload: { reason: 'x', force: true } });
    expect(fields.statusCode).toBe(400);
    expect(fields.json()).toMatchObject({
      statusCode: 400,
      code: 'ERR_VALIDATION',
      details: [
        { field: 'reason', messages: [expect.stringContaining('is not allowed')] },
        { field: 'force', messages: [expect.stringContaining('is not allowed')] },
      ],
    });
    const array = await app.inject({ method: 'POST', url: '/__probe/no-body', payload: [1] });
    expect(array.statusCode).toBe(400);
    expect(array.json()).toMatchObject({ code: 'ERR_VALIDATION', details: [{ field: 'body', messages: ['must be empty'] }] });
  });

  it('answers requests the HTTP parser refuses (huge headers, garbage) with 400 ERR_BAD_REQUEST in the envelope', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString('utf8');
        });
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    for (const request of [
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${'a'.repeat(20_000)}\r\n\r\n`,
      'THIS IS NOT HTTP\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n',
    ]) {
      const answer = await raw(request);
      const [head, body] = answer.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(head).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(body)).toEqual({ ...Envelope, statusCode: 400, code: 'ERR_BAD_REQUEST' });
    }
  });

  it('answers an unexpected failure with 500 ERR_INTERNAL and nothing internal in the body', async () => {
    const res = await app.inject({ method: 'GET', url: '/__probe/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ statusCode: 500, code: 'ERR_INTERNAL', message: 'Internal server error' });
    expect(res.body).not.toMatch(/secret|\/srv|db\.ts|stack/);
  });

  it('answers every request with an X-Request-Id of its own, never the one the caller sent', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    const again = await app.inject({ method: 'GET', url: '/nope' });
    expect(again.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    expect(again.headers['x-request-id']).not.toBe(res.headers['x-request-id']);
  });
});
