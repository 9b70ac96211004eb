/**
 * GET /v1/developer/openapi.json as a deployment serves it (docs/decisions-log.md, 'OpenAPI documents'):
 * the operations and schemas of the contract, servers, security schemes, the errors every operation
 * documents, request bodies and headers; and the API reference page served without a CDN.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { type Doc, operations, PUBLIC_URLS, setUpServedDocuments } from './openapi.test-helpers.js';
import { REDOC_LOGO_URL } from './reference-page.js';

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
  'GET /v1/developer/deliveries/{id}/request-headers',
  'POST /v1/developer/webhooks/{id}/recover',
  'POST /v1/developer/webhooks/{id}/rotate-secret',
  'GET /v1/developer/webhooks/{id}/health',
  'GET /v1/developer/webhooks/{id}/signing-secret',
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
  'GET /v1/developer/payment-intents',
  'POST /v1/developer/sandbox/settlements',
  'POST /v1/developer/sandbox/settlements/{id}/remittances',
  // The portal's order page (docs/portal.md, 'The order page').
  'GET /v1/developer/orders/{code}',
  // The limits on keys and webhooks, read by the portal (docs/portal.md, 'Limits').
  'GET /v1/developer/limits',
  // Order offers (docs/offers.md).
  'GET /v1/partner/offers',
  'GET /v1/partner/offers/{id}',
  'POST /v1/partner/offers/accept',
  'POST /v1/partner/offers/{id}/accept',
  'POST /v1/partner/offers/{id}/decline',
  'POST /v1/partner/sandbox/offers',
  'GET /v1/developer/offers',
  'POST /v1/developer/offers/{id}/accept',
  'POST /v1/developer/offers/{id}/decline',
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

let t: TestApp;
let doc: Doc;
// This file checks the reference pages as the server renders them (the harness leaves them to the browser).
setUpServedDocuments(
  (served) => {
    ({ t, doc } = served);
  },
  { ...PUBLIC_URLS, REFERENCE_SERVER_RENDER: 'on' },
);

describe('GET /v1/developer/openapi.json', () => {
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

  it('is sent compressed when asked (Brotli, else gzip), the same bytes once decoded, and revalidated by ETag', async () => {
    const url = '/v1/developer/openapi.json';
    const plain = await t.live.inject({ method: 'GET', url });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.headers['cache-control']).toBe('no-cache');
    expect(plain.json()).toEqual(doc);
    const coded = {
      br: (b: Buffer) => brotliDecompressSync(b),
      gzip: (b: Buffer) => gunzipSync(b),
    };
    const etags = new Set([plain.headers.etag]);
    for (const [accept, coding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip;q=1.0, identity;q=0.5', 'gzip'],
    ] as const) {
      const answer = await t.live.inject({ method: 'GET', url, headers: { 'accept-encoding': accept } });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['content-encoding']).toBe(coding);
      expect(answer.rawPayload.length).toBeLessThan(plain.rawPayload.length / 5);
      expect(coded[coding](answer.rawPayload).equals(plain.rawPayload)).toBe(true);
      etags.add(answer.headers.etag);
      // The client holds it: 304, no body; another coding's ETag is not this representation's.
      const again = await t.live.inject({
        method: 'GET',
        url,
        headers: { 'accept-encoding': accept, 'if-none-match': String(answer.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect(again.rawPayload.length).toBe(0);
      expect(again.headers.etag).toBe(answer.headers.etag);
      const other = await t.live.inject({
        method: 'GET',
        url,
        headers: { 'accept-encoding': accept, 'if-none-match': String(plain.headers.etag) },
      });
      expect(other.statusCode).toBe(200);
    }
    expect(etags.size).toBe(3);
    const full = await t.live.inject({ method: 'GET', url: '/v1/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(full.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(full.rawPayload).toString()).openapi).toBe('3.0.0');
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

  it('declares 409 ERR_CONFLICT with its Retry-After on every write (a transaction rolled back by a concurrent one), beside its own 409 codes', () => {
    let writes = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const conflict = (op.responses as Record<string, { 'x-error-codes'?: string[]; headers?: Record<string, unknown> }>)[
          '409'
        ];
        if (method === 'get') continue;
        writes++;
        expect(conflict?.['x-error-codes'], `${method} ${path}`).toContain('ERR_CONFLICT');
        expect(Object.keys(conflict?.headers ?? {}), `${method} ${path}`).toContain('Retry-After');
      }
    }
    expect(writes).toBeGreaterThan(20);
    // An operation with 409 codes of its own keeps them.
    const accept = doc.paths['/v1/partner/offers/{id}/accept'].post.responses as Record<string, { 'x-error-codes': string[] }>;
    expect(accept['409']['x-error-codes']).toEqual(expect.arrayContaining(['ERR_CONFLICT', 'ERR_OFFER_CLOSED']));
  });

  it('says in the bearer scheme where a token comes from', () => {
    const bearer = doc.components.securitySchemes.BearerAuth as { description: string };
    expect(bearer.description).toContain('/v1/auth/otp/verify');
    expect(bearer.description).toContain('/v1/auth/refresh');
    expect(bearer.description).toContain('/v1/openapi.json');
  });

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
    expect(init.body).toContain("Redoc.init(root.getAttribute('data-spec')");
    expect(init.body).toContain('Redoc.hydrate(JSON.parse(state.textContent), root');
    expect(page.body).toContain('data-spec="/docs/partner.json"');
  });

  it('serves each section rendered by the server once rendered, its state in a data block, no inline script, every code block focusable', async () => {
    let codeBlocks = 0;
    for (const [path, heading] of [
      ['/docs', 'Create a sandbox test order'],
      ['/docs/developer', 'Rotate an API key'],
    ]) {
      // The first request starts the render; until it is done the browser renders the page.
      const body = await waitFor(
        async () => {
          const page = await t.live.inject({ method: 'GET', url: path });
          return page.body.includes('id="redoc-state"') && page.body;
        },
        { timeoutMs: 90_000, intervalMs: 200, what: `${path} rendered by the server` },
      );
      expect(body).toContain(heading);
      expect(body).toMatch(/<style data-styled[^>]*>/);
      // Every script either comes from this origin or is data (the policy allows no inline script).
      const scripts = [...body.matchAll(/<script([^>]*)>/g)].map((m) => m[1].trim());
      expect(scripts).toEqual([
        'type="application/json" id="redoc-state"',
        'src="/docs/redoc.standalone.js"',
        'src="/docs/reference.js"',
      ]);
      const state = body.slice(
        body.indexOf('id="redoc-state">') + 17,
        body.indexOf('</script>', body.indexOf('id="redoc-state"')),
      );
      expect(JSON.parse(state)).toHaveProperty('spec.data.info.title', 'Partner Logistics and Developer API');
      // Nothing is loaded from another origin (Redoc's sidebar logo is an empty image here too).
      expect(body).not.toMatch(/\bsrc="https?:/);
      expect(body).not.toContain(REDOC_LOGO_URL);
      // Every code block can take focus before any script has run (the keyboard scrolls a wide one).
      const blocks = [...body.matchAll(/<pre\b[^>]*>/g)].map((m) => m[0]);
      codeBlocks += blocks.length;
      expect(blocks.filter((b) => !b.includes('tabindex="0"'))).toEqual([]);
    }
    expect(codeBlocks, 'code blocks in the rendered descriptions').toBeGreaterThan(0);
  }, 120_000);

  it('splits the reference into sections: each page renders its part of the document, every operation in exactly one', async () => {
    const whole = (await t.live.inject({ method: 'GET', url: '/v1/developer/openapi.json' })).json();
    const operations = (doc: { paths: Record<string, Record<string, unknown>> }) =>
      Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`));
    const seen: string[] = [];
    for (const [page, document] of [
      ['/docs', '/docs/partner.json'],
      ['/docs/developer', '/docs/developer.json'],
      ['/docs/events', '/docs/events.json'],
    ]) {
      const html = await t.live.inject({ method: 'GET', url: page });
      expect(html.statusCode).toBe(200);
      expect(html.body).toContain(`data-spec="${document}"`);
      const part = await t.live.inject({ method: 'GET', url: document });
      expect(part.statusCode).toBe(200);
      seen.push(...operations(part.json()));
    }
    expect(seen.sort()).toEqual(operations(whole).sort());
  });
});
