import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import spectralCore from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { componentsToJsonSchema, openApiToJsonSchema } from '../../../test/openapi-json-schema.js';
import { Nullable, StringEnum } from '../../shared/schemas.js';
import { generateOpenApi } from './openapi.generator.js';

const PUBLIC_URLS = {
  PUBLIC_URL: 'https://partners.trade-center.az',
  SANDBOX_PUBLIC_URL: 'https://sandbox.partners.trade-center.az',
};

const run = promisify(execFile);
const { Spectral, Document } = spectralCore;
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
        security?: unknown[];
        parameters?: Array<{ name: string; in: string }>;
      }
    >
  >;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/** The partner and developer operations, plus the sandbox helper (a /v1/partner operation; docs/decisions-log.md, 'Operator API'). */
const SPEC_OPERATIONS = [
  'GET /v1/partner/me',
  'GET /v1/partner/orders',
  'GET /v1/partner/orders/{code}',
  'POST /v1/partner/orders/{code}/events',
  'POST /v1/partner/orders/{code}/locations',
  'GET /v1/partner/orders/{code}/tracking',
  'GET /v1/partner/orders/{code}/proof',
  'POST /v1/partner/uploads',
  'GET /v1/partner/uploads/{id}',
  'GET /v1/developer/orders/{code}/proof',
  'GET /v1/developer/uploads/{id}',
  'POST /v1/partner/sandbox/orders',
  'GET /v1/developer/keys',
  'POST /v1/developer/keys',
  'DELETE /v1/developer/keys/{id}',
  'POST /v1/developer/keys/{id}/rotate',
  'GET /v1/developer/keys/{id}/usage',
  'GET /v1/developer/webhooks',
  'POST /v1/developer/webhooks',
  'PATCH /v1/developer/webhooks/{id}',
  'DELETE /v1/developer/webhooks/{id}',
  'GET /v1/developer/webhooks/{id}/deliveries',
  'POST /v1/developer/webhooks/{id}/test',
  'POST /v1/developer/deliveries/{id}/redeliver',
  'GET /v1/developer/openapi.json',
  // Sandbox simulator and go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist').
  'POST /v1/partner/sandbox/orders/{code}/platform-status',
  'POST /v1/partner/sandbox/batches',
  'POST /v1/partner/sandbox/batches/{code}/status',
  'GET /v1/developer/keys/{id}/checklist',
  'GET /v1/developer/keys/{id}/sandbox',
  'POST /v1/developer/keys/{id}/sandbox/orders',
  'POST /v1/developer/keys/{id}/sandbox/orders/{code}/platform-status',
  'POST /v1/developer/keys/{id}/sandbox/batches',
  'POST /v1/developer/keys/{id}/sandbox/batches/{code}/status',
  // Webhook operations (docs/decisions-log.md, 'Webhook operations').
  'GET /v1/developer/deliveries/{id}',
  'POST /v1/developer/webhooks/{id}/recover',
  'POST /v1/developer/webhooks/{id}/rotate-secret',
  'GET /v1/developer/webhooks/{id}/health',
  'GET /v1/developer/event-types',
  // Request log (docs/decisions-log.md, 'Request log').
  'GET /v1/developer/requests',
  'GET /v1/developer/requests/drops',
  'GET /v1/developer/requests/{id}',
  // Payments and settlements (docs/payments.md).
  'GET /v1/partner/payment-intents',
  'GET /v1/partner/payment-intents/{id}',
  'GET /v1/partner/balance',
  'GET /v1/partner/settlements',
  'GET /v1/partner/settlements/{id}',
  'GET /v1/partner/settlements/{id}/lines',
  'GET /v1/partner/settlements/{id}/lines.csv',
  'POST /v1/partner/sandbox/orders/{code}/payment/capture',
  'POST /v1/partner/sandbox/orders/{code}/payment/refunds',
  'POST /v1/partner/sandbox/settlements',
  'POST /v1/partner/sandbox/settlements/{id}/remittances',
  // The portal's payment reads (docs/payments.md, 'Developer portal reads').
  'GET /v1/developer/payments/balance',
  'GET /v1/developer/settlements',
  'GET /v1/developer/settlements/{id}',
  'GET /v1/developer/settlements/{id}/lines',
  'GET /v1/developer/settlements/{id}/lines.csv',
  'GET /v1/developer/orders/{code}/payment-intent',
].sort();

const SPEC_SCHEMAS = [
  'PartnerOrder',
  'PartnerOrderItem',
  'PartnerOrderEvent',
  'PartnerCustomer',
  'PartnerCustomerAddress',
  'PartnerBatchRef',
  'PartnerZoneRef',
  'LocalizedText',
  'PageOfPartnerOrder',
  'PartnerMe',
  'PartnerUsage',
  'DeveloperKey',
  'DeveloperKeyCreated',
  'DeveloperKeyRotated',
  'DeveloperKeys',
  'DeveloperKeyUsageSeries',
  'DeveloperKeyUsage',
  'DeveloperWebhook',
  'DeveloperWebhookCreated',
  'DeveloperWebhooks',
  'DeveloperDelivery',
  'PageOfDeveloperDelivery',
  'CreateDeveloperKeyDto',
  'CreateDeveloperWebhookDto',
  'UpdateDeveloperWebhookDto',
  'CreatePartnerOrderEventDto',
  'ErrorEnvelope',
  'ApiKeyEnvironment',
  'PartnerEnvironment',
  'ApiKeyScope',
  'OrderStatus',
  'PaymentMethod',
  'OrderPaymentStatus',
  'PartnerEventType',
  'DeliveryFailReason',
  'WebhookEvent',
  'WebhookDeliveryStatus',
  // docs/decisions-log.md, 'Webhook operations': the operations' shapes and every webhook envelope.
  'DeveloperDeliveryDetail',
  'DeliveryAttempt',
  'RecoverDeliveriesDto',
  'RecoverQueued',
  'RotateWebhookSecretDto',
  'DeveloperWebhookRotated',
  'WebhookHealth',
  'TestWebhookDto',
  'EventTypes',
  'WebhookEventEnvelope',
  'PingEvent',
  'OrderPlacedEvent',
  'OrderStatusChangedEvent',
  'OrderDeliveredEvent',
  'OrderCancelledEvent',
  'BatchCompletedEvent',
  'OrderAssignedToPartnerEvent',
];

function operations(doc: Doc): string[] {
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

describe('GET /v1/developer/openapi.json', () => {
  let t: TestApp;
  let doc: Doc;
  let dir: string;

  beforeAll(async () => {
    // As a deployment serves them: public base URLs configured (in development they default to localhost,
    // which Redocly rightly warns about).
    t = await createTestApp({ env: PUBLIC_URLS });
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    writeFileSync(join(dir, 'reduced.json'), res.body);
    const full = await t.live.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(full.statusCode).toBe(200);
    writeFileSync(join(dir, 'full.json'), full.body);
  });
  afterAll(() => t.close());

  it('is public, OpenAPI 3.0.0, version 0.1.0, on both listeners', async () => {
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.info.version).toBe('0.1.0');
    const sandbox = await t.sandbox.inject({ method: 'GET', url: '/v1/developer/openapi.json' });
    expect(sandbox.statusCode).toBe(200);
    expect(sandbox.json().openapi).toBe('3.0.0');
    const op = doc.paths['/v1/developer/openapi.json'].get;
    expect(op.security).toEqual([]);
    // No 401 or 403 of its own (docs/decisions-log.md, 'OpenAPI documents'); what any route may answer.
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '500', '503']);
  });

  it('lists both listeners under servers, at their configured public URLs', () => {
    expect((doc as unknown as { servers: unknown }).servers).toEqual([
      { url: PUBLIC_URLS.PUBLIC_URL, description: expect.stringMatching(/^Live API/), 'x-internal': false },
      { url: PUBLIC_URLS.SANDBOX_PUBLIC_URL, description: expect.stringMatching(/^Sandbox API/), 'x-internal': false },
    ]);
  });

  it('declares 500 ERR_INTERNAL and 503 ERR_DEPENDENCY_UNAVAILABLE and ERR_QUERY_TIMEOUT with the envelope on every operation', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const responses = op.responses as Record<string, { 'x-error-codes'?: string[]; content?: unknown }>;
        expect(responses['500']?.['x-error-codes'], `${method} ${path}`).toEqual(['ERR_INTERNAL']);
        expect(responses['503']?.['x-error-codes'], `${method} ${path}`).toEqual([
          'ERR_DEPENDENCY_UNAVAILABLE',
          'ERR_QUERY_TIMEOUT',
        ]);
        expect(JSON.stringify(responses['503'].content)).toContain('#/components/schemas/ErrorEnvelope');
      }
    }
  });

  it('says in the bearer scheme where a token comes from', () => {
    const bearer = doc.components.securitySchemes.BearerAuth as { description: string };
    expect(bearer.description).toContain('/v1/auth/otp/verify');
    expect(bearer.description).toContain('/v1/auth/refresh');
    expect(bearer.description).toContain('/v1/openapi.json');
  });

  it('writes a nullable reference as oneOf of the reference and null, and nullable only beside a type', () => {
    const order = doc.components.schemas.PartnerOrder as { properties: Record<string, unknown> };
    for (const field of ['zone', 'customer', 'batch']) {
      expect(order.properties[field], field).toEqual(
        expect.objectContaining({ oneOf: [{ $ref: expect.stringMatching(/^#\/components/) }, { enum: [null] }] }),
      );
    }
    // OpenAPI 3.0.3: `nullable` widens only a `type` of the same schema object; anywhere else strict
    // tools ignore it and null is refused.
    const walk = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const o = node as Record<string, unknown>;
      if (o.nullable === true) expect(typeof o.type, `${path} has a type beside nullable`).toBe('string');
      if (o.nullable === true)
        expect('allOf' in o || 'oneOf' in o || 'anyOf' in o || '$ref' in o || 'enum' in o, path).toBe(false);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    };
    walk(doc, '#');
    // Strict Ajv, as Prism compiles schemas: an uncompilable schema (the old `enum: [null, null]`) throws
    // here instead of silently validating nothing.
    const strict = new Ajv({ strict: true, allErrors: true });
    addFormats(strict);
    strict.addKeyword({ keyword: 'components' }); // the holder of the document's schemas
    strict.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
    const validate = strict.compile({ $ref: 'doc#/components/schemas/PartnerOrder' });
    const good = {
      code: 'ORD-1',
      status: 'PACKED',
      paymentMethod: 'COD',
      paymentStatus: 'UNPAID',
      totalQepik: 1000,
      codAmountQepik: 1000,
      area: null,
      zone: null,
      timeWindowStart: null,
      timeWindowEnd: null,
      items: [{ name: { az: 'a', ru: 'r', en: 'e' }, qty: 1, unitPriceQepik: 1000 }],
      timeline: [{ status: 'PLACED', at: '2026-11-23T10:00:00.000Z' }],
      customer: null,
      batch: null,
      partnerAssignedAt: null,
      updatedAt: '2026-11-23T10:00:00.000Z',
    };
    expect(validate(good), JSON.stringify(validate.errors)).toBe(true);
    const zone = { id: '0b6f5c1e-2f4a-4c4e-9a53-1f0c2b3d4e5f', name: { az: 'a', ru: 'r', en: 'e' } };
    expect(validate({ ...good, zone })).toBe(true);
    for (const wrong of [
      { ...good, totalQepik: 'string' },
      { ...good, zone: { id: 'not-a-uuid', name: 'Nərimanov' } },
      { ...good, customer: { name: 'x' } },
      { ...good, batch: 'B-1' },
    ]) {
      expect(validate(wrong), JSON.stringify(wrong)).toBe(false);
    }
  });

  it('writes any nullable schema a later route may add in a form strict 3.0.3 tools accept', () => {
    const Named = Type.Object({ a: Type.String({ maxLength: 5 }) }, { $id: 'NamedForNullable', additionalProperties: false });
    const body = Type.Object({
      ref: Nullable(Named),
      text: Nullable(Type.String({ maxLength: 5 })),
      kind: Nullable(StringEnum(['A', 'B'])),
      inline: Nullable(Type.Object({ b: Type.Integer({ minimum: 0, maximum: 9 }) })),
    });
    const generated = generateOpenApi(
      [{ method: 'GET', url: '/v1/partner/x', schema: { response: { 200: body } }, security: null }],
      {
        title: 't',
        description: 'd',
        include: () => true,
        tags: [],
        servers: [{ url: 'https://x.example', description: 'production' }],
      },
    ) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: Doc['components'] }> }> } }>;
    };
    const props = (
      generated.paths['/v1/partner/x'].get.responses['200'].content['application/json'].schema as unknown as {
        properties: Record<string, unknown>;
      }
    ).properties;
    expect(props.ref).toEqual({ oneOf: [{ $ref: '#/components/schemas/NamedForNullable' }, { enum: [null] }] });
    expect(props.text).toEqual({ type: 'string', maxLength: 5, nullable: true });
    expect(props.kind).toEqual({ oneOf: [{ type: 'string', enum: ['A', 'B'] }, { enum: [null] }] });
    expect(props.inline).toMatchObject({ type: 'object', nullable: true });
    const ajv = new Ajv({ strict: true });
    const validate = ajv.compile(openApiToJsonSchema({ ...(props.kind as object) }) as object);
    expect([validate(null), validate('A'), validate('C')]).toEqual([true, true, false]);
  });

  it('passes Spectral (spectral:oas) with no error and no warning, both documents', async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as Parameters<typeof spectral.setRuleset>[0]);
    for (const file of ['reduced.json', 'full.json']) {
      const results = await spectral.run(new Document(readFileSync(join(dir, file), 'utf8'), Parsers.Json, file));
      expect(
        results.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`),
        file,
      ).toEqual([]);
    }
  }, 60_000);

  it('passes the OWASP ruleset (spectral-owasp.mjs, @stoplight/spectral-owasp-ruleset) with no error, both documents', async () => {
    // The committed ruleset file, as `spectral lint -r spectral-owasp.mjs` reads it.
    const ruleset = (await import(join(import.meta.dirname, '../../../spectral-owasp.mjs'))).default;
    const spectral = new Spectral();
    spectral.setRuleset(ruleset as Parameters<typeof spectral.setRuleset>[0]);
    for (const file of ['reduced.json', 'full.json']) {
      const results = await spectral.run(new Document(readFileSync(join(dir, file), 'utf8'), Parsers.Json, file));
      expect(
        results.filter((r) => r.severity === 0).map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`),
        file,
      ).toEqual([]);
    }
  }, 60_000);

  it('validates against the OpenAPI 3.0 schema (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(join(dir, 'reduced.json'))).resolves.toBeTruthy();
    await expect(SwaggerParser.validate(join(dir, 'full.json'))).resolves.toBeTruthy();
  });

  it('passes the Redocly linter (recommended rules) with no error and no warning, both documents', async () => {
    for (const file of ['reduced.json', 'full.json']) {
      const { stdout } = await run(
        process.execPath,
        ['node_modules/@redocly/cli/bin/cli.js', 'lint', join(dir, file), '--format=json'],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
          maxBuffer: 10 * 1024 * 1024,
        },
      ).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
      const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
      const problems = report.problems.map((p: { ruleId: string; message: string }) => `${p.ruleId}: ${p.message}`);
      expect(problems, file).toEqual([]);
    }
  }, 60_000);

  it('holds exactly the partner and developer operations of the contract', () => {
    expect(operations(doc)).toEqual(SPEC_OPERATIONS);
  });

  it('names every schema of spec section 2 as a component, the error envelope included', () => {
    for (const name of SPEC_SCHEMAS) expect(Object.keys(doc.components.schemas)).toContain(name);
  });

  it('applies the API-key scheme to partner operations and the bearer scheme to developer operations', () => {
    expect(doc.components.securitySchemes.ApiKeyAuth).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }),
    );
    expect(doc.components.securitySchemes.BearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const op of Object.values(ops)) {
        if (path === '/v1/developer/openapi.json' || path === '/v1/developer/event-types') continue;
        expect(op.security).toEqual(path.startsWith('/v1/partner/') ? [{ ApiKeyAuth: [] }] : [{ BearerAuth: [] }]);
      }
    }
  });

  it('marks which request bodies are required, and documents the 400 of operations that take none', () => {
    type Op = { requestBody?: { required: boolean }; responses: Record<string, { 'x-error-codes'?: string[] }> };
    const op = (path: string, method: string) => (doc.paths[path] as unknown as Record<string, Op>)[method];
    expect(op('/v1/partner/sandbox/orders', 'post').requestBody?.required).toBe(false);
    expect(op('/v1/partner/orders/{code}/events', 'post').requestBody?.required).toBe(true);
    expect(op('/v1/developer/keys', 'post').requestBody?.required).toBe(true);
    expect(op('/v1/developer/webhooks/{id}/test', 'post').requestBody?.required).toBe(false);
    expect(op('/v1/developer/webhooks/{id}/rotate-secret', 'post').requestBody?.required).toBe(false);
    expect(op('/v1/developer/webhooks/{id}/recover', 'post').requestBody?.required).toBe(true);
    for (const [path, method] of [
      ['/v1/developer/keys/{id}', 'delete'],
      ['/v1/developer/keys/{id}/rotate', 'post'],
      ['/v1/developer/webhooks/{id}', 'delete'],
      ['/v1/developer/deliveries/{id}/redeliver', 'post'],
    ]) {
      expect(op(path, method).requestBody, path).toBeUndefined();
      expect(op(path, method).responses['400']['x-error-codes'], path).toEqual(['ERR_VALIDATION', 'ERR_BAD_REQUEST']);
    }
  });

  it('documents Retry-After on 429, the Idempotency-Key header, and error codes per response', () => {
    const me = doc.paths['/v1/partner/me'].get as unknown as {
      responses: Record<string, { headers?: Record<string, unknown>; 'x-error-codes'?: string[] }>;
    };
    expect(me.responses['429'].headers?.['Retry-After']).toBeDefined();
    expect(me.responses['429']['x-error-codes']).toEqual(['ERR_RATE_LIMITED']);
    expect(me.responses['401']['x-error-codes']).toEqual(expect.arrayContaining(['ERR_API_KEY_INVALID', 'ERR_API_KEY_REVOKED']));
    const events = doc.paths['/v1/partner/orders/{code}/events'].post as unknown as {
      parameters: Array<{ name: string; in: string }>;
      responses: Record<string, { 'x-error-codes'?: string[] }>;
    };
    expect(events.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]),
    );
    expect(events.responses['403']['x-error-codes']).toEqual(
      expect.arrayContaining(['ERR_PARTNER_ORDER_NOT_ASSIGNED', 'ERR_API_KEY_SCOPE']),
    );
    expect(events.responses['409']['x-error-codes']).toEqual(expect.arrayContaining(['ERR_INVALID_TRANSITION']));
  });

  it('serves the API reference page and its script locally, with nothing from a CDN', async () => {
    const page = await t.live.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).not.toMatch(/https?:\/\//);
    // The browser is held to this origin (Redoc's bundle would fetch its logo from a CDN).
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).toContain("script-src 'self';");
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual(['/docs/redoc.standalone.js', '/docs/reference.js']);
    const redoc = await t.live.inject({ method: 'GET', url: scripts[0] });
    expect(redoc.statusCode).toBe(200);
    expect(redoc.body.length).toBeGreaterThan(100_000);
    const init = await t.live.inject({ method: 'GET', url: scripts[1] });
    expect(init.statusCode).toBe(200);
    expect(init.headers['content-type']).toMatch(/javascript/);
    expect(init.body).toContain("Redoc.init('/v1/developer/openapi.json'");
  });
});

/**
 * The contract test: real answers of every partner and developer route validate against the response
 * schemas of the document itself, so code and document cannot drift apart.
 */
describe('real answers match the document', () => {
  let t: TestApp;
  let doc: Doc;
  let ajv: Ajv;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.live.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addKeyword({ keyword: 'example' });
    ajv.addKeyword({ keyword: 'x-error-codes' });
    ajv.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
  });
  afterAll(() => t.close());

  /** Checks a real answer against the documented response of its operation and status. */
  function expectDocumented(method: string, path: string, res: { statusCode: number; body: string }) {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path} is documented`).toBeDefined();
    const response = op.responses[String(res.statusCode)];
    expect(response, `${method} ${path} documents status ${res.statusCode}`).toBeDefined();
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      expect(res.body).toBe('');
      return;
    }
    const validate = ajv.compile(rebase(openApiToJsonSchema(schema)));
    const ok = validate(JSON.parse(res.body));
    expect(validate.errors ?? [], `${method} ${path} ${res.statusCode}`).toEqual([]);
    expect(ok).toBe(true);
  }

  function rebase(schema: unknown): Record<string, unknown> {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
  }

  it('every partner and developer route, success and error answers', async () => {
    const admin = await createUser(t.ctx, 'ADMIN');
    const partner = await createPartner(t.ctx);
    const dev = partner.auth;

    // Developer keys.
    let res = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/keys',
      headers: dev,
      payload: {
        name: 'Contract',
        environment: 'LIVE',
        scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
      },
    });
    expectDocumented('POST', '/v1/developer/keys', res);
    const created = res.json();
    const key = { 'x-api-key': created.key as string };
    expectDocumented(
      'GET',
      '/v1/developer/keys',
      await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: dev }),
    );
    expectDocumented(
      'GET',
      '/v1/developer/keys/{id}/usage',
      await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${created.id}/usage?days=3`, headers: dev }),
    );
    expectDocumented(
      'POST',
      '/v1/developer/keys',
      await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: dev, payload: { name: 'x' } }),
    );

    // Orders through the operator API, then the partner routes.
    res = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin.auth,
      payload: {
        environment: 'live',
        paymentMethod: 'COD',
        totalQepik: 2500,
        codAmountQepik: 2500,
        items: [{ name: { az: 'Çay', ru: 'Чай', en: 'Tea' }, qty: 1, unitPriceQepik: 2500 }],
        customer: { name: 'Aysel', phone: '+994501234567', address: { street: 'Nizami 10' } },
      },
    });
    expect(res.statusCode).toBe(201);
    const code = res.json().code as string;
    expect(
      (
        await t.live.inject({
          method: 'POST',
          url: `/v1/admin/orders/${code}/assign`,
          headers: admin.auth,
          payload: { apiKeyId: created.id },
        })
      ).statusCode,
    ).toBe(200);
    for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED']) {
      expect(
        (
          await t.live.inject({
            method: 'POST',
            url: `/v1/admin/orders/${code}/status`,
            headers: admin.auth,
            payload: { status },
          })
        ).statusCode,
      ).toBe(200);
    }
    expectDocumented('GET', '/v1/partner/me', await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key }));
    expectDocumented(
      'GET',
      '/v1/partner/orders',
      await t.live.inject({ method: 'GET', url: '/v1/partner/orders?pageSize=5', headers: key }),
    );
    expectDocumented(
      'GET',
      '/v1/partner/orders',
      await t.live.inject({ method: 'GET', url: '/v1/partner/orders?pageSize=500', headers: key }),
    );
    expectDocumented(
      'GET',
      '/v1/partner/orders/{code}',
      await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: key }),
    );
    expectDocumented(
      'GET',
      '/v1/partner/orders/{code}',
      await t.live.inject({ method: 'GET', url: '/v1/partner/orders/NOPE', headers: key }),
    );
    expectDocumented(
      'GET',
      '/v1/partner/me',
      await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: { 'x-api-key': `svc_live_${'Q'.repeat(32)}` } }),
    );
    expectDocumented(
      'POST',
      '/v1/partner/orders/{code}/events',
      await t.live.inject({
        method: 'POST',
        url: `/v1/partner/orders/${code}/events`,
        headers: key,
        payload: { type: 'PICKED_UP' },
      }),
    );
    expectDocumented(
      'POST',
      '/v1/partner/orders/{code}/events',
      await t.live.inject({
        method: 'POST',
        url: `/v1/partner/orders/${code}/events`,
        headers: key,
        payload: { type: 'PICKED_UP' },
      }),
    );
    expectDocumented(
      'POST',
      '/v1/partner/sandbox/orders',
      await t.live.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key }),
    );
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    expectDocumented(
      'POST',
      '/v1/partner/sandbox/orders',
      await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: sandboxKey.headers }),
    );

    // Webhooks and deliveries.
    res = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: dev,
      payload: { apiKeyId: created.id, url: 'http://localhost:9/hook', events: ['order.status_changed'] },
    });
    expectDocumented('POST', '/v1/developer/webhooks', res);
    const webhook = res.json();
    expectDocumented(
      'POST',
      '/v1/developer/webhooks',
      await t.live.inject({
        method: 'POST',
        url: '/v1/developer/webhooks',
        headers: dev,
        payload: { apiKeyId: created.id, url: 'ftp://x', events: ['order.placed'] },
      }),
    );
    expectDocumented(
      'GET',
      '/v1/developer/webhooks',
      await t.live.inject({ method: 'GET', url: '/v1/developer/webhooks', headers: dev }),
    );
    expectDocumented(
      'PATCH',
      '/v1/developer/webhooks/{id}',
      await t.live.inject({
        method: 'PATCH',
        url: `/v1/developer/webhooks/${webhook.id}`,
        headers: dev,
        payload: { events: ['order.placed', 'order.delivered'] },
      }),
    );
    res = await t.live.inject({ method: 'POST', url: `/v1/developer/webhooks/${webhook.id}/test`, headers: dev });
    expectDocumented('POST', '/v1/developer/webhooks/{id}/test', res);
    const delivery = res.json();
    expectDocumented(
      'GET',
      '/v1/developer/webhooks/{id}/deliveries',
      await t.live.inject({ method: 'GET', url: `/v1/developer/webhooks/${webhook.id}/deliveries`, headers: dev }),
    );
    expectDocumented(
      'POST',
      '/v1/developer/deliveries/{id}/redeliver',
      await t.live.inject({ method: 'POST', url: `/v1/developer/deliveries/${delivery.id}/redeliver`, headers: dev }),
    );
    expectDocumented(
      'POST',
      '/v1/developer/deliveries/{id}/redeliver',
      await t.live.inject({ method: 'POST', url: '/v1/developer/deliveries/nope/redeliver', headers: dev }),
    );
    // Webhook operations (docs/decisions-log.md, 'Webhook operations'): answers and refusals.
    const hookUrl = `/v1/developer/webhooks/${webhook.id}`;
    const sampled = await t.live.inject({
      method: 'POST',
      url: `${hookUrl}/test`,
      headers: dev,
      payload: { event: 'order.delivered' },
    });
    expectDocumented('POST', '/v1/developer/webhooks/{id}/test', sampled);
    expectDocumented(
      'POST',
      '/v1/developer/webhooks/{id}/test',
      await t.live.inject({ method: 'POST', url: `${hookUrl}/test`, headers: dev, payload: { event: 'order.teleported' } }),
    );
    for (const id of [sampled.json().id, 'nope']) {
      expectDocumented(
        'GET',
        '/v1/developer/deliveries/{id}',
        await t.live.inject({ method: 'GET', url: `/v1/developer/deliveries/${id}`, headers: dev }),
      );
    }
    const since = new Date(t.clock.nowMs() - 3_600_000).toISOString();
    for (const payload of [{ since }, { since: '2001-01-01T00:00:00.000Z' }]) {
      expectDocumented(
        'POST',
        '/v1/developer/webhooks/{id}/recover',
        await t.live.inject({ method: 'POST', url: `${hookUrl}/recover`, headers: dev, payload }),
      );
    }
    expectDocumented(
      'GET',
      '/v1/developer/webhooks/{id}/health',
      await t.live.inject({ method: 'GET', url: `${hookUrl}/health`, headers: dev }),
    );
    for (const payload of [{ graceHours: 2 }, { graceHours: 500 }]) {
      expectDocumented(
        'POST',
        '/v1/developer/webhooks/{id}/rotate-secret',
        await t.live.inject({ method: 'POST', url: `${hookUrl}/rotate-secret`, headers: dev, payload }),
      );
    }
    expectDocumented(
      'GET',
      '/v1/developer/event-types',
      await t.live.inject({ method: 'GET', url: '/v1/developer/event-types' }),
    );
    expectDocumented(
      'DELETE',
      '/v1/developer/webhooks/{id}',
      await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${webhook.id}`, headers: dev }),
    );
    expectDocumented(
      'DELETE',
      '/v1/developer/webhooks/{id}',
      await t.live.inject({ method: 'DELETE', url: `/v1/developer/webhooks/${webhook.id}`, headers: dev }),
    );

    // Rotation and revocation last: they end the key.
    expectDocumented(
      'POST',
      '/v1/developer/keys/{id}/rotate',
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${created.id}/rotate`, headers: dev }),
    );
    expectDocumented(
      'DELETE',
      '/v1/developer/keys/{id}',
      await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${created.id}`, headers: dev }),
    );
    expectDocumented(
      'POST',
      '/v1/developer/keys/{id}/rotate',
      await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${created.id}/rotate`, headers: dev }),
    );
    expectDocumented('GET', '/v1/developer/keys', await t.live.inject({ method: 'GET', url: '/v1/developer/keys' }));
    expectDocumented(
      'GET',
      '/v1/developer/keys',
      await t.live.inject({ method: 'GET', url: '/v1/developer/keys', headers: admin.auth }),
    );
  });
});
