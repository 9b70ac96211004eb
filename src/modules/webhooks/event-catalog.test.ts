/**
 * The event catalog's schemas as a receiver uses them (docs/openapi.md, "Event catalog schemas"): each
 * `schema` of `GET /v1/developer/event-types` compiles on its own in Ajv, draft-07 and 2020-12, strict,
 * with no `$id` twice and every `$ref` resolvable inside it; the catalog's examples and the sample events
 * that `POST /v1/developer/webhooks/{id}/test {event}` really delivers validate against it.
 */
import { gunzipSync } from 'node:zlib';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createKey, createPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { startWorker } from '../../worker/worker.js';
import { EVENT_TYPES } from './event-catalog.js';
import { createWebhookVia, devAuth, waitForDeliveries } from './webhooks.test-helpers.js';

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

type Json = Record<string, unknown>;
type Item = { type: string; schema: Json; example: unknown };

let t: TestApp;
let receiver: WebhookReceiver;
let items: Item[];

beforeAll(async () => {
  t = await createTestApp();
  receiver = await WebhookReceiver.start();
  const res = await t.live.inject({ method: 'GET', url: '/v1/developer/event-types' });
  expect(res.statusCode, res.body).toBe(200);
  items = res.json().items;
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const MODES = {
  'draft-07': () => new Ajv({ strict: true, allErrors: true }),
  '2020-12': () => new Ajv2020({ strict: true, allErrors: true }) as unknown as Ajv,
};

/** Each schema compiled alone, in a fresh Ajv of the mode: nothing registered beforehand. */
function compileAlone(mode: keyof typeof MODES, schema: Json) {
  const ajv = MODES[mode]();
  addFormats(ajv);
  return ajv.compile(schema);
}

function walk(node: unknown, visit: (o: Json) => void): void {
  if (Array.isArray(node)) for (const n of node) walk(n, visit);
  else if (typeof node === 'object' && node !== null) {
    visit(node as Json);
    for (const v of Object.values(node as Json)) walk(v, visit);
  }
}

describe('GET /v1/developer/event-types as sent', () => {
  it('is the same catalog gzip-coded when asked, with an ETag a client revalidates (304)', async () => {
    const url = '/v1/developer/event-types';
    const plain = await t.live.inject({ method: 'GET', url });
    const coded = await t.live.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
    expect(coded.statusCode).toBe(200);
    expect(coded.headers['content-encoding']).toBe('gzip');
    expect(coded.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(gunzipSync(coded.rawPayload).equals(plain.rawPayload)).toBe(true);
    const again = await t.live.inject({
      method: 'GET',
      url,
      headers: { 'accept-encoding': 'gzip', 'if-none-match': String(coded.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });
});

describe('GET /v1/developer/event-types schemas', () => {
  it('compile on their own in Ajv draft-07 and 2020-12 (strict), no $id twice, every $ref inside', () => {
    expect(items.map((i) => i.type)).toEqual([...EVENT_TYPES]);
    for (const item of items) {
      const ids: string[] = [];
      walk(item.schema, (o) => {
        if (typeof o.$id === 'string') ids.push(o.$id);
        if (typeof o.$ref === 'string') {
          const target = o.$ref.startsWith('#/$defs/') ? (item.schema.$defs as Json | undefined)?.[o.$ref.slice(8)] : undefined;
          expect(target, `${item.type}: ${o.$ref} resolves inside the schema`).toBeDefined();
        }
      });
      expect(new Set(ids).size, item.type).toBe(ids.length);
      for (const mode of Object.keys(MODES) as Array<keyof typeof MODES>) {
        const validate = compileAlone(mode, item.schema);
        expect(validate(item.example), `${item.type} ${mode}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(validate({ ...(item.example as Json), type: 'order.teleported' }), `${item.type} ${mode}`).toBe(false);
      }
    }
    // The order events share their named parts (LocalizedText, PartnerOrder, …) once each.
    const placed = items.find((i) => i.type === 'order.placed') as Item;
    expect(Object.keys(placed.schema.$defs as Json)).toEqual(expect.arrayContaining(['LocalizedText', 'PartnerOrder']));
  });

  it('validate every sample event the test route really delivers, with and without orders:pii', async () => {
    const worker = startWorker(t.ctx, { attemptTimeoutMs: 10_000, leaseMs: 30_000, pollIntervalMs: 50 });
    onTestFinished(() => worker.stop());
    const scopeSets: ApiKeyScope[][] = [
      ['orders:read', 'orders:pii', 'webhooks:manage', 'payments:read'],
      ['orders:read', 'webhooks:manage', 'payments:read'],
    ];
    for (const [n, scopes] of scopeSets.entries()) {
      const partner = await createPartner(t.ctx);
      const key = await createKey(t.ctx, partner.id, { scopes });
      const auth = await devAuth(t, partner);
      const path = `/catalog-${n}`;
      const hook = await createWebhookVia(t, auth, { apiKeyId: key.id, url: receiver.url(path), events: ['order.placed'] });
      for (const event of EVENT_TYPES) {
        const res = await t.live.inject({
          method: 'POST',
          url: `/v1/developer/webhooks/${hook.id}/test`,
          headers: auth,
          payload: { event },
        });
        expect(res.statusCode, res.body).toBe(200);
      }
      await waitForDeliveries(
        t,
        partner,
        hook.id,
        (d) => d.length === EVENT_TYPES.length && d.every((x) => x.status === 'DELIVERED'),
      );
      const received = receiver.requestsTo(path);
      expect(received).toHaveLength(EVENT_TYPES.length);
      for (const request of received) {
        const body = JSON.parse(request.body);
        const item = items.find((i) => i.type === body.type) as Item;
        expect(item, body.type).toBeDefined();
        for (const mode of Object.keys(MODES) as Array<keyof typeof MODES>) {
          const validate = compileAlone(mode, item.schema);
          expect(validate(body), `${body.type} ${mode}: ${JSON.stringify(validate.errors)}`).toBe(true);
        }
      }
    }
  }, 60_000);
});
