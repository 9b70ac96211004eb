/**
 * The simulator's and the checklist's real answers, success and error, validate against the response
 * schemas of the document the app serves (as the openapi module's contract test does for the partner
 * and developer routes), so code and document cannot drift apart.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { componentsToJsonSchema, openApiToJsonSchema } from '../../../test/openapi-json-schema.js';
import { devAuth } from '../webhooks/webhooks.test-helpers.js';
import { sandboxPost, sandboxSetup } from './sandbox.test-helpers.js';

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components: Record<string, unknown>;
};

let t: TestApp;
let doc: Doc;
let ajv: Ajv;

beforeAll(async () => {
  t = await createTestApp();
  doc = (await t.live.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: componentsToJsonSchema(doc.components) });
});
afterAll(() => t.close());

function expectDocumented(method: string, path: string, res: { statusCode: number; body: string }) {
  const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(res.statusCode)];
  expect(response, `${method} ${path} documents ${res.statusCode}: ${res.body}`).toBeDefined();
  const schema = response?.content?.['application/json']?.schema;
  expect(schema, `${method} ${path} ${res.statusCode} has a JSON schema`).toBeDefined();
  const validate = ajv.compile(
    JSON.parse(JSON.stringify(openApiToJsonSchema(schema)).replaceAll('"#/components/', '"doc#/components/')),
  );
  validate(JSON.parse(res.body));
  expect(validate.errors ?? [], `${method} ${path} ${res.statusCode}`).toEqual([]);
}

describe('sandbox simulator and checklist answers match the document', () => {
  it('partner, developer and operator routes, success and error answers', async () => {
    const s = await sandboxSetup(t, null);
    const dev = await devAuth(t, s.partner);
    const post = (path: string, url: string, payload?: unknown, listener: 'live' | 'sandbox' = 'sandbox') =>
      sandboxPost(t, s.key, url, payload, listener).then((res) => {
        expectDocumented('POST', path, res);
        return res.json();
      });

    const one = await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { status: 'PLACED' });
    const many = await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { count: 2, customer: false });
    await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { count: 0 });
    await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', {}, 'live');
    const status = '/v1/partner/sandbox/orders/{code}/platform-status';
    await post(status, `/v1/partner/sandbox/orders/${one.code}/platform-status`, { status: 'VENDOR_ACCEPTED' });
    await post(status, `/v1/partner/sandbox/orders/${one.code}/platform-status`, { status: 'DELIVERED' });
    await post(status, '/v1/partner/sandbox/orders/ORD-NOPE/platform-status', { status: 'CANCELLED' });
    const batch = await post('/v1/partner/sandbox/batches', '/v1/partner/sandbox/batches', {
      orderCodes: many.items.map((o: { code: string }) => o.code),
    });
    await post('/v1/partner/sandbox/batches', '/v1/partner/sandbox/batches', { orderCodes: ['ORD-NOPE'] });
    const move = '/v1/partner/sandbox/batches/{code}/status';
    await post(move, `/v1/partner/sandbox/batches/${batch.code}/status`, { status: 'DISPATCHED' });
    await post(move, `/v1/partner/sandbox/batches/${batch.code}/status`, { status: 'OPEN' });

    const developer = async (method: 'GET' | 'POST', path: string, url: string, payload?: unknown) => {
      const res = await t.live.inject({
        method,
        url,
        headers: dev,
        ...(payload === undefined ? {} : { payload: payload as never }),
      });
      expectDocumented(method, path, res);
      return res.json();
    };
    const base = `/v1/developer/keys/${s.key.id}`;
    await developer('GET', '/v1/developer/keys/{id}/sandbox', `${base}/sandbox`);
    await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `${base}/sandbox/orders`, { count: 1 });
    const live = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `/v1/developer/keys/${live.id}/sandbox/orders`, {});
    await developer(
      'POST',
      '/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status',
      `${base}/sandbox/orders/${one.code}/platform-status`,
      { status: 'CANCELLED' },
    );
    const other = await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `${base}/sandbox/orders`, {});
    const made = await developer('POST', '/v1/developer/keys/{id}/sandbox/batches', `${base}/sandbox/batches`, {
      orderCodes: [other.items[0].code],
    });
    await developer(
      'POST',
      '/v1/developer/keys/{id}/sandbox/batches/{code}/status',
      `${base}/sandbox/batches/${made.code}/status`,
      {
        status: 'COMPLETED',
      },
    );
    await developer('GET', '/v1/developer/keys/{id}/checklist', `${base}/checklist`);
    await developer('GET', '/v1/developer/keys/{id}/checklist', `/v1/developer/keys/${live.id}/checklist`);

    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    for (const id of [s.partner.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await t.live.inject({ method: 'GET', url: `/v1/admin/partners/${id}/checklist`, headers: admin });
      expectDocumented('GET', '/v1/admin/partners/{id}/checklist', res);
    }
  });
});
