/**
 * `/metrics` after real traffic: the series and labels docs/operating.md ("Metrics") lists, and no
 * caller-supplied value (an API key, a phone number, an order code) nor a webhook URL in any label.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createKey, createPartner, createUser, randomPhone, type TestKey, type TestPartner } from '../../test/factories.js';
import { createTestApp, freshDatabase, type TestApp } from '../../test/harness.js';
import { waitFor } from '../../test/wait.js';
import { WebhookReceiver } from '../../test/webhook-receiver.js';
import { ConfigError, loadConfig } from '../config.js';
import { DependencyHealth } from '../dependencies.js';
import { offeredOrder, withdraw } from '../modules/offers/offers.test-helpers.js';
import { adminStatus, advanceTo, orderFor } from '../modules/orders/orders.test-helpers.js';
import { openRealtime } from '../modules/realtime/realtime.test-helpers.js';
import { createWebhookVia, devAuth } from '../modules/webhooks/webhooks.test-helpers.js';
import { startRole, startupFailureLine } from '../roles.js';
import { startWorker, type Worker } from '../worker/worker.js';
import { Metrics } from './metrics.js';
import { type MetricsServer, startMetricsServer } from './metrics-server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's samples (label values unescaped). */
function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[k] = v.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const sumOf = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  find(samples, name, labels).reduce((sum, s) => sum + s.value, 0);

describe('GET /metrics', () => {
  let t: TestApp;
  let server: MetricsServer;
  let receiver: WebhookReceiver;
  let worker: Worker;
  let partner: TestPartner;
  let key: TestKey;
  let limited: TestKey;
  let hookUrl: string;
  let code: string;
  let admin: Awaited<ReturnType<typeof createUser>>['auth'];
  const phone = randomPhone();

  const scrape = async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: await res.text() };
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0' } });
    if (!t.ctx.metrics) throw new Error('METRICS_PORT=0 turns metrics on');
    server = await startMetricsServer(t.ctx.metrics, '127.0.0.1', 0, t.ctx.log);
    receiver = await WebhookReceiver.start();
    worker = startWorker(t.ctx, { pollIntervalMs: 50 });
    partner = await createPartner(t.ctx);
    key = await createKey(t.ctx, partner.id);
    limited = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    admin = (await createUser(t.ctx, 'ADMIN')).auth;
    hookUrl = receiver.url(`/metrics-hook-${partner.id}`);
    await createWebhookVia(t, await devAuth(t, partner), { apiKeyId: key.id, url: hookUrl, events: ['order.status_changed'] });
    code = await orderFor(t, admin, key.id, 'PACKED');
  });
  afterAll(async () => {
    await worker?.stop();
    await server?.close();
    await receiver?.close();
    await t?.close();
  });

  it('counts requests by listener, route pattern, method and status class, with durations', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers })).statusCode).toBe(200);
    }
    expect((await t.sandbox.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/orders/ZZ-NOPE-1', headers: key.headers })).statusCode).toBe(
      404,
    );
    const samples = parseSamples((await scrape()).text);
    const me = { listener: 'live', route: '/v1/partner/me', method: 'GET', status_class: '2xx' };
    expect(sumOf(samples, 'partner_api_http_requests_total', me)).toBeGreaterThanOrEqual(3);
    expect(sumOf(samples, 'partner_api_http_request_duration_seconds_count', me)).toBe(
      sumOf(samples, 'partner_api_http_requests_total', me),
    );
    expect(find(samples, 'partner_api_http_request_duration_seconds_bucket', { ...me, le: '+Inf' })).toHaveLength(1);
    expect(
      sumOf(samples, 'partner_api_http_requests_total', {
        listener: 'sandbox',
        route: '/healthz',
        method: 'GET',
        status_class: '2xx',
      }),
    ).toBe(1);
    expect(
      sumOf(samples, 'partner_api_http_requests_total', {
        listener: 'live',
        route: '/v1/partner/orders/:code',
        method: 'GET',
        status_class: '4xx',
      }),
    ).toBe(1);
    // Only these four labels, on every request series.
    for (const s of find(samples, 'partner_api_http_requests_total')) {
      expect(Object.keys(s.labels).sort()).toEqual(['listener', 'method', 'route', 'status_class']);
    }
  });

  it('counts partner requests refused by the rate limiter, not other 429s', async () => {
    const before = sumOf(parseSamples((await scrape()).text), 'partner_api_rate_limited_requests_total', { listener: 'live' });
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: limited.headers })).statusCode).toBe(200);
    const refused = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: limited.headers });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('ERR_RATE_LIMITED');
    // A sign-in code's own limit (429 ERR_OTP_RATE_LIMITED) is not the rate limiter's.
    const otpPhone = randomPhone();
    await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone: otpPhone } });
    const otpLimited = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone: otpPhone } });
    expect(otpLimited.statusCode).toBe(429);
    const samples = parseSamples((await scrape()).text);
    expect(sumOf(samples, 'partner_api_rate_limited_requests_total', { listener: 'live' })).toBe(before + 1);
  });

  it('counts an offer withdrawn by the operator, by cancelling its order or by moving it past PACKED', async () => {
    const withdrawn = async () =>
      sumOf(parseSamples((await scrape()).text), 'partner_api_offers_total', { outcome: 'withdrawn' });
    const before = await withdrawn();
    const [byOperator, byCancel, byMove] = [
      await offeredOrder(t, admin, key.id),
      await offeredOrder(t, admin, key.id),
      await offeredOrder(t, admin, key.id),
    ];
    expect((await withdraw(t, admin, byOperator.id)).statusCode).toBe(200);
    expect((await adminStatus(t, admin, byCancel.orderCode, 'CANCELLED')).statusCode).toBe(200);
    await advanceTo(t, admin, byMove.orderCode, 'SCANNED_TO_VAN');
    expect(await withdrawn()).toBe(before + 3);
  });

  it('reports webhook deliveries by outcome, attempt durations, the queue and the outbox', async () => {
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/events`,
      headers: key.headers,
      payload: { type: 'PICKED_UP' },
    });
    expect(res.statusCode, res.body).toBe(201);
    await waitFor(() => receiver.requestsTo(new URL(hookUrl).pathname).length >= 1);
    const samples = (await waitFor(async () => {
      const s = parseSamples((await scrape()).text);
      return sumOf(s, 'partner_api_webhook_deliveries_total', { outcome: 'delivered' }) >= 1 ? s : null;
    })) as Sample[];
    expect(sumOf(samples, 'partner_api_webhook_attempt_duration_seconds_count', { status_class: '2xx' })).toBeGreaterThanOrEqual(
      1,
    );
    for (const name of [
      'partner_api_webhook_queue_depth',
      'partner_api_webhook_oldest_due_age_seconds',
      'partner_api_outbox_lag_seconds',
    ]) {
      const [gauge] = find(samples, name);
      expect(gauge, name).toBeDefined();
      expect(gauge.value, name).toBeGreaterThanOrEqual(0);
    }
  });

  it('reports the request log, realtime connections, dependencies and the process', async () => {
    const samples = parseSamples((await scrape()).text);
    expect(find(samples, 'partner_api_request_log_queue_length')).toHaveLength(1);
    expect(find(samples, 'partner_api_request_log_dropped_total')).toHaveLength(1);
    expect(find(samples, 'partner_api_realtime_connections')).toHaveLength(1);
    expect(sumOf(samples, 'partner_api_dependency_up', { dependency: 'PostgreSQL' })).toBe(1);
    expect(find(samples, 'partner_api_dependency_outages_total', { dependency: 'PostgreSQL' })).toHaveLength(1);
    if (t.ctx.redis) expect(sumOf(samples, 'partner_api_dependency_up', { dependency: 'Redis' })).toBe(1);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(find(samples, name), name).not.toHaveLength(0);
    }
  });

  it('puts no API key, phone number, order code or webhook URL in any label, whatever the URL held', async () => {
    const urls = [
      `/v1/partner/orders/${code}`,
      `/v1/partner/orders/${code}?apiKey=${key.key}`,
      `/v1/${key.key}`,
      `/v1/auth/otp/${encodeURIComponent(phone)}`,
      `/v1/auth/otp/request?phone=${encodeURIComponent(phone)}`,
      `/v1/partner/orders?code=${code}&phone=${encodeURIComponent(phone)}`,
    ];
    for (const url of urls) await t.live.inject({ method: 'GET', url, headers: key.headers });
    const { text } = await scrape();
    const samples = parseSamples(text);
    const forbidden = [key.key, key.key.slice(0, 16), phone, phone.slice(1), code, hookUrl, new URL(hookUrl).pathname];
    for (const s of samples) {
      for (const value of Object.values(s.labels)) {
        for (const secret of forbidden) expect(value, `${s.name} ${JSON.stringify(s.labels)}`).not.toContain(secret);
      }
    }
    for (const secret of forbidden) expect(text).not.toContain(secret);
    // Unmatched paths are counted under one label, not their own.
    expect(
      sumOf(samples, 'partner_api_http_requests_total', { listener: 'live', route: '(unmatched)', status_class: '4xx' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('counts realtime connections as they open and close', async () => {
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    const socket = await openRealtime(t, partner.token);
    const connections = async () => sumOf(parseSamples((await scrape()).text), 'partner_api_realtime_connections');
    expect(await connections()).toBe(1);
    socket.disconnect();
    await waitFor(async () => (await connections()) === 0);
  });

  it('answers 404 for anything but GET /metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/partner/me`);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  });
});

describe('dependency metrics', () => {
  // A health of its own: the app's database health is ended by any statement that succeeds meanwhile
  // (its worker polls), which is the rule (dependencies.ts) but makes the moment of the scrape a race.
  it('reports an outage while it lasts and counts it once', async () => {
    const metrics = new Metrics();
    const health = new DependencyHealth('PostgreSQL');
    metrics.trackDependency(health);
    const state = async () => {
      const samples = parseSamples(await metrics.render());
      return {
        up: sumOf(samples, 'partner_api_dependency_up', { dependency: 'PostgreSQL' }),
        count: sumOf(samples, 'partner_api_dependency_outages_total', { dependency: 'PostgreSQL' }),
      };
    };
    expect(await state()).toEqual({ up: 1, count: 0 });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    health.failed(refused);
    health.failed(refused);
    expect(await state()).toEqual({ up: 0, count: 1 });
    health.succeeded();
    expect(await state()).toEqual({ up: 1, count: 1 });
  });
});

describe('METRICS_PORT', () => {
  it('is off by default in development, 9464 in production, and refuses a port taken by the API', () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(40),
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: 'http://127.0.0.1:9/s',
      SMS_HTTP_SECRET: 'y'.repeat(20),
    };
    expect(loadConfig(production).metricsPort).toBe(9464);
    expect(loadConfig({ ...production, METRICS_PORT: 'off' }).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    for (const env of [{ METRICS_PORT: 'abc' }, { METRICS_PORT: '3000' }]) {
      const err = (() => {
        try {
          loadConfig(env);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('METRICS_PORT');
    }
  });

  it('names METRICS_PORT, in one line, when its port is taken', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = (busy.address() as { port: number }).port;
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATA_DIR: 'memory://',
      HOST: '127.0.0.1',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: String(port),
    });
    const failure = await startRole(config, { kind: 'worker' }).then(
      async (running) => {
        await running.stop();
        return null;
      },
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ConfigError);
    expect(startupFailureLine(failure)).toMatch(
      /^Configuration error: METRICS_PORT: cannot listen on port \d+ \(already in use\)$/,
    );
  });

  it('serves each role its own metrics: the API its requests, the worker its queue', async () => {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const env = {
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: '0',
      ...(fresh.url ? { DATABASE_URL: fresh.url } : { DATA_DIR: 'memory://' }),
    };
    const api = await startRole(loadConfig(env), { kind: 'api', environment: 'LIVE' });
    onTestFinished(() => api.stop());
    // Embedded, each role opens a database of its own; on a server they share it, as deployed.
    const worker = await startRole(loadConfig(env), { kind: 'worker' });
    onTestFinished(() => worker.stop());
    expect(api.metricsPort).toEqual(expect.any(Number));
    expect((await fetch(`http://127.0.0.1:${api.ports.LIVE}/healthz`)).status).toBe(200);
    const apiText = await (await fetch(`http://127.0.0.1:${api.metricsPort}/metrics`)).text();
    expect(apiText).toMatch(
      /^partner_api_http_requests_total\{listener="live",route="\/healthz",method="GET",status_class="2xx"\} 1$/m,
    );
    expect(apiText).not.toMatch(/^partner_api_webhook_queue_depth /m);
    const workerText = await (await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`)).text();
    expect(workerText).toMatch(/^partner_api_webhook_queue_depth 0$/m);
    expect(workerText).toMatch(/^partner_api_outbox_lag_seconds 0$/m);
    expect(workerText).not.toMatch(/^partner_api_http_requests_total\{/m);
  }, 60_000);
});
