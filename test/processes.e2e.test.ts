/**
 * The process around the API (docs/decisions-log.md, 'Processes and configuration' and 'Test clock'):
 * health while the database goes away, the test clock, the configuration refusing what it cannot use,
 * and a clean stop on SIGTERM.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { startRole, startupFailureLine } from '../src/roles.js';
import { createTestApp, freshDatabase, type TestApp, testConfig } from './harness.js';
import { runMain, spawnChild } from './main-process.js';

describe('health and the database being down', () => {
  // The file's first app (the embedded database's first start in this worker): a minute.
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
  }, 60_000);
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

  // A child process that loads the code through tsx: a minute on a busy machine, as below.
  it('stops the process with one line naming the variable', async () => {
    const { code, stderr } = await runMain(['start'], { PORT: 'nope' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^Configuration error: PORT: /);
  }, 60_000);

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
