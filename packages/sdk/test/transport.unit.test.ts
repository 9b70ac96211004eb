/**
 * The SDK's retry and token rules on their own (partner-orders.e2e.test.ts runs them against the
 * real app): a scripted `fetch` answers each attempt, so every rule is checked without a server or a wait.
 */
import { describe, expect, it } from 'vitest';
import { PartnerApiError } from '../src/errors.js';
import { createTransport, defaultSleep, retryDelayMs } from '../src/transport.js';

const OPTIONS = { maxAttempts: 3, maxDelayMs: 30_000, baseDelayMs: 500 };

/** A fetch that answers from a script and keeps each request it was sent (body read). */
function scripted(...answers: Array<() => Response>) {
  const sent: Array<{ method: string; url: string; headers: Headers; body: string }> = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    return next();
  };
  return { fetch, sent };
}

const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    new Response(JSON.stringify({ statusCode: code, code: 'ERR_X', message: 'x' }), { status: code, headers });

describe('retryDelayMs', () => {
  it('waits Retry-After plus up to 20 % (at least 100 ms of room) at random', () => {
    expect(retryDelayMs(2, 1, OPTIONS, () => 0)).toBe(2000);
    expect(retryDelayMs(2, 1, OPTIONS, () => 0.999_999)).toBeCloseTo(2400, 0);
    expect(retryDelayMs(1, 1, OPTIONS, () => 0.999_999)).toBeCloseTo(1200, 0);
    expect(retryDelayMs(0, 1, OPTIONS, () => 0.999_999)).toBeCloseTo(100, 0);
  });

  it('never retries sooner than Retry-After: one beyond the cap gives the answer back', () => {
    expect(retryDelayMs(31, 1, OPTIONS, () => 0)).toBeNull();
    expect(retryDelayMs(30, 1, OPTIONS, () => 0.999)).toBe(30_000);
  });

  it('without Retry-After: exponential backoff with jitter, capped', () => {
    for (const r of [0, 0.5, 0.999]) {
      const first = retryDelayMs(null, 1, OPTIONS, () => r)!;
      const third = retryDelayMs(null, 3, OPTIONS, () => r)!;
      expect(first).toBeGreaterThanOrEqual(250);
      expect(first).toBeLessThanOrEqual(500);
      expect(third).toBeGreaterThanOrEqual(1000);
      expect(third).toBeLessThanOrEqual(2000);
      expect(retryDelayMs(null, 20, OPTIONS, () => r)).toBeLessThanOrEqual(30_000);
    }
  });
});

describe('createTransport', () => {
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);

  it('retries a 503 GET after Retry-After, sending the same request again', async () => {
    waits.length = 0;
    const { fetch, sent } = scripted(status(503, { 'retry-after': '1' }), status(200));
    const send = createTransport({ fetch, sleep });
    const res = await send(new Request('http://api.test/v1/developer/keys', { headers: { 'x-trace': 'a' } }));
    expect(res.status).toBe(200);
    expect(sent.map((s) => s.headers.get('x-trace'))).toEqual(['a', 'a']);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
  });

  it('retries a 503 POST only when it carries an Idempotency-Key, with the same key and body', async () => {
    const plain = scripted(status(503, { 'retry-after': '1' }), status(201));
    const refused = await createTransport({ fetch: plain.fetch, sleep })(
      new Request('http://api.test/v1/developer/keys', { method: 'POST', body: '{"name":"k"}' }),
    );
    expect(refused.status).toBe(503);
    expect(plain.sent).toHaveLength(1);

    const keyed = scripted(status(503, { 'retry-after': '1' }), status(201));
    const created = await createTransport({ fetch: keyed.fetch, sleep })(
      new Request('http://api.test/v1/partner/orders/ORD-1/events', {
        method: 'POST',
        headers: { 'idempotency-key': 'k-1', 'content-type': 'application/json' },
        body: '{"type":"PICKED_UP"}',
      }),
    );
    expect(created.status).toBe(201);
    expect(keyed.sent.map((s) => [s.headers.get('idempotency-key'), s.body])).toEqual([
      ['k-1', '{"type":"PICKED_UP"}'],
      ['k-1', '{"type":"PICKED_UP"}'],
    ]);
  });

  it('retries a 409 that carries Retry-After (rolled back by a concurrent change) as a 503, never another 409', async () => {
    const rolledBack = scripted(status(409, { 'retry-after': '1' }), status(200));
    const accepted = await createTransport({ fetch: rolledBack.fetch, sleep })(
      new Request('http://api.test/v1/partner/offers/off_1/accept', { method: 'POST', headers: { 'idempotency-key': 'k-2' } }),
    );
    expect(accepted.status).toBe(200);
    expect(rolledBack.sent.map((s) => s.headers.get('idempotency-key'))).toEqual(['k-2', 'k-2']);

    const unkeyed = scripted(status(409, { 'retry-after': '1' }), status(200));
    const refused = await createTransport({ fetch: unkeyed.fetch, sleep })(
      new Request('http://api.test/v1/developer/keys', { method: 'POST', body: '{"name":"k"}' }),
    );
    expect(refused.status).toBe(409);
    expect(unkeyed.sent).toHaveLength(1);

    const conflict = scripted(status(409), status(200));
    const closed = await createTransport({ fetch: conflict.fetch, sleep })(
      new Request('http://api.test/v1/partner/offers/off_1/accept', { method: 'POST', headers: { 'idempotency-key': 'k-3' } }),
    );
    expect(closed.status).toBe(409);
    expect(conflict.sent).toHaveLength(1);
  });

  it('stops after maxAttempts and answers the last refusal; retry: false sends once', async () => {
    waits.length = 0;
    const three = scripted(
      status(429, { 'retry-after': '1' }),
      status(429, { 'retry-after': '1' }),
      status(429, { 'retry-after': '2' }),
    );
    const res = await createTransport({ fetch: three.fetch, sleep, retry: { maxAttempts: 3 } })(
      new Request('http://api.test/v1/partner/me'),
    );
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(three.sent).toHaveLength(3);
    expect(waits).toHaveLength(2);

    const once = scripted(status(429, { 'retry-after': '1' }));
    const off = await createTransport({ fetch: once.fetch, sleep, retry: false })(new Request('http://api.test/v1/partner/me'));
    expect(off.status).toBe(429);
    expect(once.sent).toHaveLength(1);
  });

  it("leaves sign-in's 429 to the person signing in", async () => {
    const { fetch, sent } = scripted(status(429, { 'retry-after': '5' }));
    const res = await createTransport({ fetch, sleep })(
      new Request('http://api.test/v1/auth/otp/request', { method: 'POST', body: '{}' }),
    );
    expect(res.status).toBe(429);
    expect(sent).toHaveLength(1);
  });

  it('renews the bearer token once on a 401 and sends the request again with the new one', async () => {
    let token = 'old';
    const renewals: string[] = [];
    const auth = {
      accessToken: () => token,
      skip: (url: URL) => url.pathname.startsWith('/v1/auth/'),
      renew: async (used: string) => {
        renewals.push(used);
        token = `new-${renewals.length}`;
        return token;
      },
    };
    const ok = scripted(status(401), status(200));
    expect(
      (await createTransport({ fetch: ok.fetch, sleep }, auth)(new Request('http://api.test/v1/developer/keys'))).status,
    ).toBe(200);
    expect(ok.sent.map((s) => s.headers.get('authorization'))).toEqual(['Bearer old', 'Bearer new-1']);

    // A 401 with the fresh token is the answer: no second renewal, no loop.
    const still = scripted(status(401), status(401));
    expect(
      (await createTransport({ fetch: still.fetch, sleep }, auth)(new Request('http://api.test/v1/developer/keys'))).status,
    ).toBe(401);
    expect(renewals).toEqual(['old', 'new-1']);

    // Sign-in requests carry no token.
    const signIn = scripted(status(200));
    await createTransport(
      { fetch: signIn.fetch, sleep },
      auth,
    )(new Request('http://api.test/v1/auth/refresh', { method: 'POST' }));
    expect(signIn.sent[0].headers.get('authorization')).toBeNull();
  });

  it("a token store's own: an awaited token, the 401 handed to renew, and a refusal of the renewed token reported", async () => {
    let token = 'old';
    const seen: string[] = [];
    const refused: string[] = [];
    const auth = {
      // A store that refreshes a token about to expire before answering it.
      accessToken: async () => token,
      skip: () => false,
      renew: async (_used: string, response: Response) => {
        const { code } = (await response.clone().json()) as { code: string };
        seen.push(code);
        if (code !== 'ERR_UNAUTHORIZED') return null;
        token = 'new';
        return token;
      },
      refused: (used: string, response: Response) => refused.push(`${used} ${response.status}`),
    };
    const unauthorized = () =>
      new Response(JSON.stringify({ statusCode: 401, code: 'ERR_UNAUTHORIZED', message: 'x' }), { status: 401 });
    const revoked = () =>
      new Response(JSON.stringify({ statusCode: 401, code: 'ERR_API_KEY_REVOKED', message: 'x' }), { status: 401 });

    // Another 401 code is the answer: no renewal, and its body is still there to read.
    const other = scripted(revoked);
    const answer = await createTransport(
      { fetch: other.fetch, sleep },
      auth,
    )(new Request('http://api.test/v1/developer/keys/k/rotate'));
    expect(((await answer.json()) as { code: string }).code).toBe('ERR_API_KEY_REVOKED');
    expect(other.sent[0].headers.get('authorization')).toBe('Bearer old');

    // The renewed token refused again: the store is told.
    const twice = scripted(unauthorized, unauthorized);
    expect(
      (await createTransport({ fetch: twice.fetch, sleep }, auth)(new Request('http://api.test/v1/developer/keys'))).status,
    ).toBe(401);
    expect(twice.sent.map((s) => s.headers.get('authorization'))).toEqual(['Bearer old', 'Bearer new']);
    expect(seen).toEqual(['ERR_API_KEY_REVOKED', 'ERR_UNAUTHORIZED']);
    expect(refused).toEqual(['new 401']);
  });

  it('a wait is cut short by the request signal', async () => {
    const controller = new AbortController();
    const { fetch } = scripted(status(503, { 'retry-after': '20' }));
    const pending = createTransport({ fetch, sleep: defaultSleep })(
      new Request('http://api.test/v1/partner/me', { signal: controller.signal }),
    );
    // The abort is sent once the first answer is in (the scripted fetch answers at once).
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('PartnerApiError', () => {
  const error = (code: string, details: unknown) =>
    new PartnerApiError({ status: 400, code, message: 'x', details, method: 'POST', url: 'http://api.test/v1/developer/keys' });

  it("fieldErrors lists an ERR_VALIDATION answer's fields and their messages, and nothing for another code", () => {
    const details = [
      { field: 'name', messages: ['is required'] },
      { field: 'scopes.0', messages: ['must be one of …'] },
      'noise',
    ];
    expect(error('ERR_VALIDATION', details).fieldErrors).toEqual(details.slice(0, 2));
    expect(error('ERR_VALIDATION', { field: 'name' }).fieldErrors).toEqual([]);
    expect(error('ERR_CONFLICT', details).fieldErrors).toEqual([]);
  });
});
