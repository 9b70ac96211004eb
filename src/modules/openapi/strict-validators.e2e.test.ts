/**
 * The partner's tools, not ours: real answers of the running app, with nulls and without, validated
 * against the developer document it serves by
 *   - Ajv over `@openapi-contrib/openapi-schema-to-json-schema` (strict OpenAPI 3.0.3 `nullable`), and
 *   - Prism's validating proxy (`prism proxy --errors`, a child process) in front of real listeners.
 * The same calls run through both (docs/openapi.md, "Nullable fields").
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { spawnOwned } from '../../../test/child-processes.js';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, createUser, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { componentsToJsonSchema, openApiToJsonSchema } from '../../../test/openapi-json-schema.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { startWorker } from '../../worker/worker.js';
import { assign, createOrder } from '../orders/orders.test-helpers.js';
import { devAuth, waitForDeliveries } from '../webhooks/webhooks.test-helpers.js';

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Listener = 'live' | 'sandbox';
type Answer = { statusCode: number; body: string; headers: Record<string, string | string[] | undefined> };
/** One checked call: the operation (method and path template) and the concrete request. */
type Call = (
  listener: Listener,
  method: 'GET' | 'POST',
  template: string,
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) => Promise<Answer>;

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: { schemas: Record<string, unknown> };
};

let t: TestApp;
let receiver: WebhookReceiver;
let doc: Doc;
let docText: string;

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
  const res = await t.live.inject({ method: 'GET', url: '/v1/developer/openapi.json' });
  expect(res.statusCode).toBe(200);
  docText = res.body;
  doc = res.json();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

/**
 * The calls: orders with zone, batch and customer and without each; keys; webhooks; deliveries before
 * and after an attempt; request-log entries with and without bodies. Setup goes straight to the app.
 */
async function exercise(call: Call): Promise<void> {
  const admin = await createUser(t.ctx, 'ADMIN');
  const partner: TestPartner = await createPartner(t.ctx);
  const dev = await devAuth(t, partner);
  const key = await createKey(t.ctx, partner.id);
  const sandboxKey: TestKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });

  const zone = await t.live.inject({
    method: 'POST',
    url: '/v1/admin/zones',
    headers: admin.auth,
    payload: { name: { az: 'Nəsimi', ru: 'Насими', en: 'Nasimi' } },
  });
  expect(zone.statusCode, zone.body).toBe(201);
  const full = await createOrder(t, admin.auth, { zoneId: zone.json().id });
  const bare = await createOrder(t, admin.auth, {
    area: null,
    timeWindowStart: null,
    timeWindowEnd: null,
    customer: undefined,
  });
  for (const code of [full.code, bare.code]) await assign(t, admin.auth, code, key.id);
  const batch = await t.live.inject({
    method: 'POST',
    url: '/v1/admin/batches',
    headers: admin.auth,
    payload: { orderCodes: [full.code] },
  });
  expect(batch.statusCode, batch.body).toBe(201);

  const ok = async (expected: number, ...args: Parameters<Call>) => {
    const res = await call(...args);
    expect(res.statusCode, `${args[1]} ${args[3]}: ${res.body}`).toBe(expected);
    return JSON.parse(res.body);
  };

  // Orders: zone, batch and customer set on one, null on the other.
  const page = await ok(200, 'live', 'GET', '/v1/partner/orders', '/v1/partner/orders?pageSize=50', key.headers);
  const byCode = new Map(page.items.map((o: { code: string }) => [o.code, o]));
  expect(byCode.get(full.code)).toMatchObject({ zone: { id: zone.json().id }, batch: { code: batch.json().code } });
  expect(byCode.get(full.code)).not.toMatchObject({ customer: null });
  expect(byCode.get(bare.code)).toMatchObject({ zone: null, batch: null, customer: null, area: null });
  for (const code of [full.code, bare.code]) {
    await ok(200, 'live', 'GET', '/v1/partner/orders/{code}', `/v1/partner/orders/${code}`, key.headers);
  }
  const sandboxOrders = '/v1/partner/sandbox/orders';
  await ok(201, 'sandbox', 'POST', sandboxOrders, sandboxOrders, sandboxKey.headers, {});
  await ok(201, 'sandbox', 'POST', sandboxOrders, sandboxOrders, sandboxKey.headers, { count: 2, customer: false });
  await ok(200, 'sandbox', 'GET', '/v1/partner/orders', '/v1/partner/orders', sandboxKey.headers);
  await ok(200, 'live', 'GET', '/v1/partner/me', '/v1/partner/me', key.headers);

  // Keys: one never used (lastUsedAt null) beside used ones.
  await ok(201, 'live', 'POST', '/v1/developer/keys', '/v1/developer/keys', dev, {
    name: 'Strict tools',
    environment: 'LIVE',
    scopes: ['orders:read'],
  });
  await ok(200, 'live', 'GET', '/v1/developer/keys', '/v1/developer/keys', dev);

  // Webhooks and deliveries: queued (no attempt yet), then delivered.
  const hook = await ok(201, 'live', 'POST', '/v1/developer/webhooks', '/v1/developer/webhooks', dev, {
    apiKeyId: key.id,
    url: receiver.url(`/strict-${partner.id}`),
    events: ['order.placed', 'order.status_changed'],
  });
  await ok(200, 'live', 'GET', '/v1/developer/webhooks', '/v1/developer/webhooks', dev);
  const testPath = '/v1/developer/webhooks/{id}/test';
  const queued = await ok(200, 'live', 'POST', testPath, `/v1/developer/webhooks/${hook.id}/test`, dev, {
    event: 'order.placed',
  });
  const deliveries = '/v1/developer/webhooks/{id}/deliveries';
  await ok(200, 'live', 'GET', deliveries, `/v1/developer/webhooks/${hook.id}/deliveries`, dev);
  await ok(200, 'live', 'GET', '/v1/developer/deliveries/{id}', `/v1/developer/deliveries/${queued.id}`, dev);
  const worker = startWorker(t.ctx, { attemptTimeoutMs: 10_000, leaseMs: 30_000, pollIntervalMs: 50 });
  onTestFinished(() => worker.stop());
  await waitForDeliveries(t, partner, hook.id, (d) => d.some((x) => x.id === queued.id && x.status === 'DELIVERED'));
  await ok(200, 'live', 'GET', deliveries, `/v1/developer/webhooks/${hook.id}/deliveries`, dev);
  await ok(200, 'live', 'GET', '/v1/developer/deliveries/{id}', `/v1/developer/deliveries/${queued.id}`, dev);

  // Request-log entries: reads without a body, writes with one, an error.
  await t.ctx.requestLog.flush();
  const log = await ok(200, 'live', 'GET', '/v1/developer/requests', '/v1/developer/requests?pageSize=50', dev);
  expect(log.items.length).toBeGreaterThan(0);
  for (const entry of log.items.slice(0, 6)) {
    await ok(200, 'live', 'GET', '/v1/developer/requests/{id}', `/v1/developer/requests/${entry.id}`, dev);
  }
}

describe('real answers validate under strict OpenAPI 3.0.3 semantics', () => {
  it('Ajv with @openapi-contrib/openapi-schema-to-json-schema accepts every answer, nulls included', async () => {
    const ajv = new Ajv({ strict: true, allErrors: true });
    addFormats(ajv);
    ajv.addKeyword({ keyword: 'components' }); // the holder of the document's schemas
    ajv.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
    let checked = 0;
    await exercise(async (listener, method, template, url, headers, payload) => {
      const res = await t[listener].inject({
        method,
        url,
        headers,
        ...(payload === undefined ? {} : { payload: payload as never }),
      });
      const schema =
        doc.paths[template]?.[method.toLowerCase()]?.responses[String(res.statusCode)]?.content?.['application/json']?.schema;
      expect(schema, `${method} ${template} documents ${res.statusCode}`).toBeDefined();
      const rebased = JSON.parse(JSON.stringify(openApiToJsonSchema(schema)).replaceAll('"#/components/', '"doc#/components/'));
      const validate = ajv.compile(rebased);
      validate(JSON.parse(res.body));
      expect(validate.errors ?? [], `${method} ${url}`).toEqual([]);
      checked++;
      return { statusCode: res.statusCode, body: res.body, headers: res.headers as Answer['headers'] };
    });
    expect(checked).toBeGreaterThan(20);
  }, 60_000);

  it("Prism's validating proxy passes every answer, nulls included", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'prism-')), 'developer.json');
    writeFileSync(file, docText);
    const proxies = {} as Record<Listener, string>;
    await Promise.all(
      (['live', 'sandbox'] as const).map(async (listener) => {
        await t[listener].listen({ host: '127.0.0.1', port: 0 });
        const upstream = `http://127.0.0.1:${(t[listener].server.address() as AddressInfo).port}`;
        proxies[listener] = await startPrism(file, upstream);
      }),
    );
    let checked = 0;
    await exercise(async (listener, method, _template, url, headers, payload) => {
      const res = await fetch(proxies[listener] + url, {
        method,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });
      const body = await res.text();
      // With --errors a violation of request or answer becomes Prism's own error instead of the answer.
      expect(body, `${method} ${url}`).not.toContain('stoplight.io/prism/errors');
      expect(res.headers.get('sl-violations'), `${method} ${url}`).toBeNull();
      checked++;
      return { statusCode: res.status, body, headers: Object.fromEntries(res.headers) };
    });
    expect(checked).toBeGreaterThan(20);
  }, 120_000);
});

describe('limits the document declares are enforced (docs/openapi.md, "OWASP ruleset")', () => {
  it('answers 400 ERR_VALIDATION naming the field for each declared request limit', async () => {
    const admin = await createUser(t.ctx, 'ADMIN');
    const partner = await createPartner(t.ctx);
    const dev = await devAuth(t, partner);
    const key = await createKey(t.ctx, partner.id);
    const refused = async (
      method: 'POST' | 'PATCH',
      url: string,
      headers: Record<string, string>,
      payload: unknown,
      field: string,
    ) => {
      const res = await t.live.inject({ method, url, headers, payload: payload as never });
      expectError(res, 400, 'ERR_VALIDATION');
      const fields = (res.json().details as Array<{ field: string }>).map((d) => d.field);
      expect(fields, `${url} ${res.body}`).toContain(field);
    };
    const text = (n: number) => 'ş'.repeat(n);
    await refused('POST', '/v1/admin/zones', admin.auth, { name: { az: text(501), ru: 'r', en: 'e' } }, 'name.az');
    await refused('POST', '/v1/admin/batches', admin.auth, { orderCodes: [`ORD-${'X'.repeat(61)}`] }, 'orderCodes.0');
    await refused(
      'POST',
      '/v1/developer/keys',
      dev,
      {
        name: 'x',
        environment: 'LIVE',
        scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read', 'orders:read'],
      },
      'scopes',
    );
    const longUrl = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: dev,
      payload: { apiKeyId: key.id, url: `https://partner.example.com/${'a'.repeat(2100)}`, events: ['order.placed'] },
    });
    expectError(longUrl, 400, 'ERR_WEBHOOK_URL_INVALID'); // the URL policy's own code, declared as maxLength 2048
    await refused(
      'POST',
      '/v1/developer/webhooks',
      dev,
      { apiKeyId: `${key.id}0`, url: 'https://partner.example.com/h', events: ['order.placed'] },
      'apiKeyId',
    );
    const code = (await createOrder(t, admin.auth)).code as string;
    await assign(t, admin.auth, code, key.id);
    await refused(
      'POST',
      `/v1/partner/orders/${code}/events`,
      key.headers,
      { type: 'PICKED_UP', at: '2026-11-25T10:00:00.000000000000000000000Z' },
      'at',
    );
  });
});

/** `prism proxy` on an OS-chosen port; resolves with its base URL once it listens. */
async function startPrism(documentFile: string, upstream: string): Promise<string> {
  const child = spawnOwned(
    process.execPath,
    [
      'node_modules/@stoplight/prism-cli/dist/index.js',
      'proxy',
      documentFile,
      upstream,
      '--errors',
      '-h',
      '127.0.0.1',
      '-p',
      '0',
    ],
    { deadlineMs: 110_000, env: { ...process.env, NO_COLOR: '1' } },
  );
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  return vi.waitFor(
    () => {
      const match = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (!match) throw new Error(`prism not listening yet: ${output.slice(-500)}`);
      return match[1];
    },
    { timeout: 60_000, interval: 50 },
  );
}
