import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { Writable } from 'node:stream';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { startRole, startupFailureLine } from '../src/roles.js';
import { LocalizedText, Nullable } from '../src/shared/schemas.js';
import { spawnOwned } from './child-processes.js';
import { createTestApp, freshDatabase, type TestApp, testConfig } from './harness.js';

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

describe('health and the database being down', () => {
  it('answers /healthz and /readyz, then 503 ERR_DEPENDENCY_UNAVAILABLE once the database is gone', async () => {
    const t = await createTestApp();
    const app = await buildApp(t.ctx, 'LIVE');
    app.get('/__probe/db', async () => t.ctx.db.query('SELECT 1 AS one'));
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    await t.ctx.db.close();
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ statusCode: 503, code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    const probe = await app.inject({ method: 'GET', url: '/__probe/db' });
    expect(probe.statusCode).toBe(503);
    expect(probe.json()).toMatchObject({ statusCode: 503, code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await app.close();
    await t.live.close();
    await t.sandbox.close();
  });
});

describe('test clock', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('reads and advances the clock, never back', async () => {
    const before = Date.parse((await t.live.inject({ method: 'GET', url: '/v1/test/clock' })).json().now);
    const res = await t.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: 3600 } });
    expect(res.statusCode).toBe(200);
    const after = Date.parse(res.json().now);
    expect(after - before).toBeGreaterThanOrEqual(3600_000);
    expect(after - before).toBeLessThan(3660_000);

    const back = await t.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: -5 } });
    expect(back.statusCode).toBe(400);
    expect(back.json()).toMatchObject({ code: 'ERR_VALIDATION', details: [{ field: 'advanceSec' }] });
  });

  it('is absent without TEST_CLOCK', async () => {
    const fresh = await freshDatabase();
    const ctx = await createContext(testConfig({ TEST_CLOCK: undefined }), { db: fresh.db });
    const app = await buildApp(ctx, 'LIVE');
    const res = await app.inject({ method: 'GET', url: '/v1/test/clock' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('ERR_NOT_FOUND');
    await app.close();
    await ctx.close();
    await fresh.drop();
  });
});

describe('configuration', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SANDBOX_PORT: '3000' }, 'SANDBOX_PORT'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
    [{ REDIS_KEY_PREFIX: 'a b*' }, 'REDIS_KEY_PREFIX'],
    [{ TEST_CLOCK: 'maybe' }, 'TEST_CLOCK'],
    [{ OTP_FIXED_CODE: '12' }, 'OTP_FIXED_CODE'],
    [{ BOOTSTRAP_ADMIN_PHONE: '+1555' }, 'BOOTSTRAP_ADMIN_PHONE'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), OTP_FIXED_CODE: '123456' }, 'OTP_FIXED_CODE'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), TEST_CLOCK: '1' }, 'TEST_CLOCK'],
  ];
  for (const [env, variable] of cases) {
    it(`refuses ${JSON.stringify(env)} naming ${variable}`, () => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      try {
        loadConfig(env);
      } catch (err) {
        expect((err as ConfigError).variable).toBe(variable);
        expect((err as Error).message.startsWith(`${variable}: `)).toBe(true);
      }
    });
  }

  it('accepts an empty environment with the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      sandboxPort: 3001,
      dataDir: './data',
      databaseUrl: null,
      redisUrl: null,
      redisKeyPrefix: 'partner-api',
      testClock: false,
    });
  });

  it('stops the process with one line naming the variable', async () => {
    const { code, stderr } = await runMain(['start'], { PORT: 'nope' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^Configuration error: PORT: /);
  });

  // In process (startRole is what `main.ts start` runs): a spawned child per case spent most of its time
  // loading the sources, which a busy machine stretched past any deadline.
  it('names the variable, in one line, when a well-formed setting cannot be used', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const busyPort = (busy.address() as AddressInfo).port;
    const cases: Array<[Record<string, string>, RegExp]> = [
      // Nothing listens on port 1: refused at once.
      [
        { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' },
        /^Configuration error: DATABASE_URL: cannot reach the database \(.*ECONNREFUSED/,
      ],
      [{ REDIS_URL: 'redis://127.0.0.1:1' }, /^Configuration error: REDIS_URL: cannot connect to Redis \(.*ECONNREFUSED/],
      // The sandbox port is never reached: the live listener is bound first.
      [
        { HOST: '127.0.0.1', PORT: String(busyPort), SANDBOX_PORT: String(busyPort === 65535 ? 1 : busyPort + 1) },
        /^Configuration error: PORT: cannot listen on port \d+ \(already in use\)/,
      ],
    ];
    for (const [env, line] of cases) {
      const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: 'memory://', ...env });
      const failure = await startRole(config, { kind: 'start' }).then(
        async (running) => {
          await running.stop();
          return null;
        },
        (err: unknown) => err,
      );
      expect(failure, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      const printed = startupFailureLine(failure);
      expect(printed.split('\n'), printed).toHaveLength(1);
      expect(printed).toMatch(line);
    }
  }, 60_000);
});

describe('graceful shutdown', () => {
  it('answers on both ports, then stops cleanly on SIGTERM', async () => {
    // Server mode: the child gets a migrated database of its own (as a deployment would), so its start
    // does not depend on migrating a shared one while other test files load the server.
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    // PORT=0: the system chooses both ports; the "started" line says which.
    const child = spawnChild(['start'], {
      DATABASE_URL: fresh.url ?? '',
      PORT: '0',
      SANDBOX_PORT: '0',
      DATA_DIR: 'memory://',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
    });
    const started = await child.waitForLine((line) => line.includes('"started"'), 45_000);
    const { port, sandboxPort } = JSON.parse(started) as { port: number; sandboxPort: number };
    for (const p of [port, sandboxPort]) {
      const res = await fetch(`http://127.0.0.1:${p}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    }
    child.process.kill('SIGTERM');
    // Exit code 0 means it stopped by itself: past its 8 s shutdown budget it exits 1.
    expect(await child.exited).toBe(0);
    expect(child.stdout()).toContain('"stopped"');
  }, 60_000);
});

describe('log redaction', () => {
  it('never writes API keys, bearer tokens, secrets or codes to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger('trace', sink);
    const apiKey = `svc_live_${'A'.repeat(32)}`;
    log.info({ req: { headers: { 'x-api-key': apiKey, authorization: 'Bearer abc.def.ghi' } } }, 'request');
    log.info(
      { key: apiKey, secret: 'whsec_topsecret', refreshToken: 'rt_1', otp: '654321', nested: { token: 'tok_1' } },
      'objects',
    );
    const t = await createTestApp({ log });
    await t.live.inject({
      method: 'GET',
      url: '/v1/partner/me',
      headers: { 'x-api-key': apiKey, authorization: 'Bearer abc.def.ghi' },
    });
    await t.close();
    const all = lines.join('');
    expect(lines.length).toBeGreaterThan(2);
    for (const leaked of [apiKey, 'abc.def.ghi', 'whsec_topsecret', 'rt_1', '654321', 'tok_1']) expect(all).not.toContain(leaked);
    expect(all).toContain('[redacted]');
  });

  it('writes one line per request with its request id and listener, and nothing below the level', async () => {
    const capture = (level: string) => {
      const lines: Array<Record<string, unknown>> = [];
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(JSON.parse(String(chunk)));
          cb();
        },
      });
      return { lines, log: createLogger(level, sink) };
    };
    const info = capture('info');
    const t = await createTestApp({ log: info.log });
    const first = await t.live.inject({ method: 'GET', url: '/healthz?x=1', headers: { 'x-request-id': 'client-42' } });
    const second = await t.sandbox.inject({ method: 'GET', url: '/nope' });
    await t.close();
    expect(info.lines.filter((l) => l.msg === 'request')).toEqual([
      expect.objectContaining({
        reqId: first.headers['x-request-id'],
        clientRequestId: 'client-42',
        listener: 'live',
        method: 'GET',
        url: '/healthz',
        statusCode: 200,
      }),
      expect.objectContaining({
        reqId: second.headers['x-request-id'],
        listener: 'sandbox',
        method: 'GET',
        url: '/nope',
        statusCode: 404,
      }),
    ]);

    const warn = capture('warn');
    const quiet = await createTestApp({ log: warn.log });
    await quiet.live.inject({ method: 'GET', url: '/healthz' });
    await quiet.close();
    expect(warn.lines.filter((l) => l.msg === 'request')).toEqual([]);
  });
});

interface SpawnedChild {
  process: ChildProcess;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line that matches, or rejects at the deadline or when the child exits. */
  waitForLine(match: (line: string) => boolean, deadlineMs: number): Promise<string>;
}

/** A child never outlives this, even if its test is still waiting for it. */
const CHILD_DEADLINE_MS = 60_000;

/**
 * `src/main.ts` in a child process with `env` over this one's. The child is killed when the test ends,
 * whatever happened (a failed expectation must not leave a server running), and at its deadline.
 */
function spawnChild(args: string[], env: Record<string, string>): SpawnedChild {
  const child = spawnOwned(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, DATA_DIR: 'memory://', ...env },
    deadlineMs: CHILD_DEADLINE_MS,
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (d) => {
    out += d;
    for (const w of waiters) w();
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      for (const w of waiters) w();
      resolve(code);
    }),
  );
  return {
    process: child,
    exited,
    stdout: () => out,
    stderr: () => err,
    waitForLine: (match, deadlineMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = out.split('\n').find(match);
          if (line !== undefined) done(() => resolve(line));
          else if (child.exitCode !== null || child.signalCode !== null) {
            done(() => reject(new Error(`child exited before the line appeared:\n${out}\n${err}`)));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no such line within ${deadlineMs} ms:\n${out}\n${err}`))),
          deadlineMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      }),
  };
}

async function runMain(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnChild(args, env);
  const code = await child.exited;
  return { code, stderr: child.stderr() };
}
