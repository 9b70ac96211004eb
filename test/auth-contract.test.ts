/**
 * The authentication contract on every route, by construction: the routes come from each listener's
 * route catalogue, and what each demands from the hook that enforces it (src/plugins/route-security.ts).
 * A new route is covered as soon as it is registered: an API-key route gets the partner contract (with
 * its scope and its deployment), a bearer route the bearer contract of its role. What cannot be derived
 * is listed here and checked for completeness: the public routes, and for each route whose path names a
 * partner's resource, how to make one (so that another partner can be refused it). A route in neither
 * list, or of the wrong family, fails this file.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { pngBytes } from '../src/modules/uploads/uploads.test-helpers.js';
import type { CatalogRoute } from '../src/plugins/route-catalog.js';
import type { ApiKeyScope } from '../src/shared/schemas.js';
import { bearerAuthContract, partnerAuthContract } from './contracts.js';
import { expectError } from './expect-error.js';
import { createKey, createPartner, type TestKey, type TestPartner } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';
import { WebhookReceiver } from './webhook-receiver.js';

const ALL_SCOPES: ApiKeyScope[] = ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'];

/** Routes anyone may call (health, documents, sign-in, the test clock, the portal's files). */
const PUBLIC = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /docs',
  'GET /docs/developer',
  'GET /docs/events',
  'GET /docs/partner.json',
  'GET /docs/developer.json',
  'GET /docs/events.json',
  'GET /docs/favicon.svg',
  'GET /docs/redoc.standalone.js',
  'GET /docs/reference.js',
  'GET /portal',
  'GET /portal/*',
  'GET /v1/openapi.json',
  'GET /v1/developer/openapi.json',
  'GET /v1/developer/event-types',
  'POST /v1/auth/otp/request',
  'POST /v1/auth/otp/verify',
  'POST /v1/auth/refresh',
  'POST /v1/auth/logout',
  'GET /v1/test/clock',
  'POST /v1/test/clock',
]);

/** The resources of one partner that another partner's credentials must not reach. */
interface Owned {
  partner: TestPartner;
  /** A SANDBOX key with every scope. */
  key: TestKey;
  order: () => Promise<string>;
  batch: () => Promise<string>;
  webhook: () => Promise<string>;
  delivery: () => Promise<string>;
  request: () => Promise<string>;
  /** A sandbox order on its way (EN_ROUTE): locations may be sent for it. */
  enRouteOrder: () => Promise<string>;
  /** A sandbox order DELIVERED with a proof. */
  provenOrder: () => Promise<string>;
  upload: () => Promise<string>;
  paymentIntent: () => Promise<string>;
  settlement: () => Promise<string>;
  /** A sandbox offer made to the key (docs/offers.md). */
  offer: () => Promise<string>;
}

/**
 * For each route whose path names a partner's resource: the path (and a valid body) reaching the owner's
 * resource. Another partner's credentials must get 404 ERR_NOT_FOUND there, as for an unknown id.
 */
const OWNED: Record<string, (o: Owned) => Promise<{ url: string; body?: unknown }>> = {
  'GET /v1/partner/orders/:code': async (o) => ({ url: `/v1/partner/orders/${await o.order()}` }),
  'POST /v1/partner/orders/:code/events': async (o) => ({
    url: `/v1/partner/orders/${await o.order()}/events`,
    body: { type: 'PICKED_UP' },
  }),
  'POST /v1/partner/sandbox/orders/:code/platform-status': async (o) => ({
    url: `/v1/partner/sandbox/orders/${await o.order()}/platform-status`,
    body: { status: 'CANCELLED' },
  }),
  'POST /v1/partner/sandbox/batches/:code/status': async (o) => ({
    url: `/v1/partner/sandbox/batches/${await o.batch()}/status`,
    body: { status: 'DISPATCHED' },
  }),
  'DELETE /v1/developer/keys/:id': async (o) => ({ url: `/v1/developer/keys/${o.key.id}` }),
  'POST /v1/developer/keys/:id/rotate': async (o) => ({ url: `/v1/developer/keys/${o.key.id}/rotate`, body: {} }),
  'GET /v1/developer/keys/:id/usage': async (o) => ({ url: `/v1/developer/keys/${o.key.id}/usage` }),
  'GET /v1/developer/keys/:id/checklist': async (o) => ({ url: `/v1/developer/keys/${o.key.id}/checklist` }),
  'GET /v1/developer/keys/:id/sandbox': async (o) => ({ url: `/v1/developer/keys/${o.key.id}/sandbox` }),
  'POST /v1/developer/keys/:id/sandbox/orders': async (o) => ({
    url: `/v1/developer/keys/${o.key.id}/sandbox/orders`,
    body: {},
  }),
  'POST /v1/developer/keys/:id/sandbox/orders/:code/platform-status': async (o) => ({
    url: `/v1/developer/keys/${o.key.id}/sandbox/orders/${await o.order()}/platform-status`,
    body: { status: 'CANCELLED' },
  }),
  'POST /v1/developer/keys/:id/sandbox/batches': async (o) => ({
    url: `/v1/developer/keys/${o.key.id}/sandbox/batches`,
    body: { orderCodes: [await o.order()] },
  }),
  'POST /v1/developer/keys/:id/sandbox/batches/:code/status': async (o) => ({
    url: `/v1/developer/keys/${o.key.id}/sandbox/batches/${await o.batch()}/status`,
    body: { status: 'DISPATCHED' },
  }),
  'PATCH /v1/developer/webhooks/:id': async (o) => ({
    url: `/v1/developer/webhooks/${await o.webhook()}`,
    body: { isActive: false },
  }),
  'DELETE /v1/developer/webhooks/:id': async (o) => ({ url: `/v1/developer/webhooks/${await o.webhook()}` }),
  'GET /v1/developer/webhooks/:id/deliveries': async (o) => ({ url: `/v1/developer/webhooks/${await o.webhook()}/deliveries` }),
  'GET /v1/developer/webhooks/:id/health': async (o) => ({ url: `/v1/developer/webhooks/${await o.webhook()}/health` }),
  'GET /v1/developer/webhooks/:id/signing-secret': async (o) => ({
    url: `/v1/developer/webhooks/${await o.webhook()}/signing-secret`,
  }),
  'POST /v1/developer/webhooks/:id/recover': async (o) => ({
    url: `/v1/developer/webhooks/${await o.webhook()}/recover`,
    body: { since: new Date(t.clock.nowMs() - 3_600_000).toISOString() },
  }),
  'POST /v1/developer/webhooks/:id/rotate-secret': async (o) => ({
    url: `/v1/developer/webhooks/${await o.webhook()}/rotate-secret`,
    body: {},
  }),
  'POST /v1/developer/webhooks/:id/test': async (o) => ({ url: `/v1/developer/webhooks/${await o.webhook()}/test`, body: {} }),
  'GET /v1/developer/deliveries/:id': async (o) => ({ url: `/v1/developer/deliveries/${await o.delivery()}` }),
  'POST /v1/developer/deliveries/:id/redeliver': async (o) => ({
    url: `/v1/developer/deliveries/${await o.delivery()}/redeliver`,
  }),
  'GET /v1/developer/requests/:id': async (o) => ({ url: `/v1/developer/requests/${await o.request()}` }),
  'POST /v1/partner/orders/:code/locations': async (o) => ({
    url: `/v1/partner/orders/${await o.enRouteOrder()}/locations`,
    body: { points: [{ lat: 40.4, lng: 49.8, at: new Date(t.clock.nowMs()).toISOString() }] },
  }),
  'GET /v1/partner/orders/:code/tracking': async (o) => ({ url: `/v1/partner/orders/${await o.order()}/tracking` }),
  'GET /v1/partner/orders/:code/proof': async (o) => ({ url: `/v1/partner/orders/${await o.provenOrder()}/proof` }),
  'GET /v1/developer/orders/:code/proof': async (o) => ({ url: `/v1/developer/orders/${await o.provenOrder()}/proof` }),
  'GET /v1/partner/uploads/:id': async (o) => ({ url: `/v1/partner/uploads/${await o.upload()}` }),
  'GET /v1/developer/uploads/:id': async (o) => ({ url: `/v1/developer/uploads/${await o.upload()}` }),
  'GET /v1/partner/payment-intents/:id': async (o) => ({ url: `/v1/partner/payment-intents/${await o.paymentIntent()}` }),
  'POST /v1/partner/sandbox/orders/:code/payment/capture': async (o) => ({
    url: `/v1/partner/sandbox/orders/${await o.order()}/payment/capture`,
  }),
  'POST /v1/partner/sandbox/orders/:code/payment/refunds': async (o) => ({
    url: `/v1/partner/sandbox/orders/${await o.order()}/payment/refunds`,
    body: { amountQepik: 1 },
  }),
  'GET /v1/partner/settlements/:id': async (o) => ({ url: `/v1/partner/settlements/${await o.settlement()}` }),
  'GET /v1/partner/settlements/:id/lines': async (o) => ({ url: `/v1/partner/settlements/${await o.settlement()}/lines` }),
  'GET /v1/partner/settlements/:id/lines.csv': async (o) => ({
    url: `/v1/partner/settlements/${await o.settlement()}/lines.csv`,
  }),
  'GET /v1/developer/settlements/:id': async (o) => ({ url: `/v1/developer/settlements/${await o.settlement()}` }),
  'GET /v1/developer/settlements/:id/lines': async (o) => ({ url: `/v1/developer/settlements/${await o.settlement()}/lines` }),
  'GET /v1/developer/settlements/:id/lines.csv': async (o) => ({
    url: `/v1/developer/settlements/${await o.settlement()}/lines.csv`,
  }),
  'GET /v1/developer/orders/:code/payment-intent': async (o) => ({
    url: `/v1/developer/orders/${await o.order()}/payment-intent`,
  }),
  'GET /v1/developer/orders/:code': async (o) => ({ url: `/v1/developer/orders/${await o.order()}` }),
  'GET /v1/developer/deliveries/:id/request-headers': async (o) => ({
    url: `/v1/developer/deliveries/${await o.delivery()}/request-headers`,
  }),
  'POST /v1/developer/sandbox/settlements/:id/remittances': async (o) => ({
    url: `/v1/developer/sandbox/settlements/${await o.settlement()}/remittances`,
    body: { amountQepik: 1, reference: 'BANK-1' },
  }),
  'POST /v1/partner/sandbox/settlements/:id/remittances': async (o) => ({
    url: `/v1/partner/sandbox/settlements/${await o.settlement()}/remittances`,
    body: { amountQepik: 1, reference: 'BANK-1' },
  }),
  'GET /v1/partner/offers/:id': async (o) => ({ url: `/v1/partner/offers/${await o.offer()}` }),
  'POST /v1/partner/offers/:id/accept': async (o) => ({ url: `/v1/partner/offers/${await o.offer()}/accept` }),
  'POST /v1/partner/offers/:id/decline': async (o) => ({
    url: `/v1/partner/offers/${await o.offer()}/decline`,
    body: { reason: 'NO_CAPACITY' },
  }),
  'POST /v1/developer/offers/:id/accept': async (o) => ({ url: `/v1/developer/offers/${await o.offer()}/accept` }),
  'POST /v1/developer/offers/:id/decline': async (o) => ({
    url: `/v1/developer/offers/${await o.offer()}/decline`,
    body: { reason: 'NO_CAPACITY' },
  }),
};

/** A placeholder for every path parameter: authentication is decided before the path is looked at. */
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000001';
const withPlaceholders = (url: string) => url.replace(/:[A-Za-z]+/g, PLACEHOLDER_ID).replace('/*', '/x');

const t: TestApp = await createTestApp();
const receiver = await WebhookReceiver.start();
afterAll(async () => {
  await receiver.close();
  await t.close();
});
const getApp = () => t;

const listeners = [
  ['live', t.live.routeCatalog],
  ['sandbox', t.sandbox.routeCatalog],
] as const;
const name = (route: CatalogRoute) => `${route.method} ${route.url}`;
const hasPathParams = (route: CatalogRoute) => /:[A-Za-z]/.test(route.url);

describe('the route catalogue', () => {
  it('holds the same routes on both listeners', () => {
    expect(t.sandbox.routeCatalog.map(name).sort()).toEqual(t.live.routeCatalog.map(name).sort());
  });

  it('every route declares its authentication (from its onRequest hook) or is listed as public', () => {
    const undeclared = t.live.routeCatalog.filter((r) => r.security === null && !PUBLIC.has(name(r))).map(name);
    expect(
      undeclared,
      'routes with no authentication hook: add app.partnerAuth / app.requirePartner / app.requireAdmin, or list them as PUBLIC',
    ).toEqual([]);
    const publicButGuarded = t.live.routeCatalog.filter((r) => r.security !== null && PUBLIC.has(name(r))).map(name);
    expect(publicButGuarded).toEqual([]);
  });

  it('each family takes its credential: /v1/partner an API key, /v1/developer a PARTNER token, /v1/admin an ADMIN token', () => {
    const wrong = t.live.routeCatalog
      .filter((r) => r.security !== null)
      .filter((r) => {
        const s = r.security;
        if (r.url.startsWith('/v1/partner/')) return s?.kind !== 'api-key';
        if (r.url.startsWith('/v1/developer/')) return !(s?.kind === 'bearer' && s.role === 'PARTNER');
        if (r.url.startsWith('/v1/admin/')) return !(s?.kind === 'bearer' && s.role === 'ADMIN');
        return true;
      })
      .map((r) => `${name(r)}: ${JSON.stringify(r.security)}`);
    expect(wrong).toEqual([]);
  });

  it("every route whose path names a partner's resource has a way to make one listed (OWNED), and no listed route is gone", () => {
    const partnerOwned = t.live.routeCatalog.filter(
      (r) =>
        hasPathParams(r) && (r.security?.kind === 'api-key' || (r.security?.kind === 'bearer' && r.security.role === 'PARTNER')),
    );
    expect(partnerOwned.map(name).filter((n) => !(n in OWNED))).toEqual([]);
    expect(Object.keys(OWNED).filter((n) => !partnerOwned.some((r) => name(r) === n))).toEqual([]);
  });
});

for (const [listener, catalog] of listeners) {
  const environment = listener === 'live' ? 'LIVE' : 'SANDBOX';
  for (const route of catalog) {
    const security = route.security;
    if (security === null) continue;
    const method = route.method as 'GET' | 'POST' | 'PATCH' | 'DELETE';
    const url = withPlaceholders(route.url);
    describe(`${name(route)} on the ${listener} API`, () => {
      if (security.kind === 'api-key') {
        if (security.onlyOn !== null && security.onlyOn !== environment) {
          it(`answers a valid ${environment} key with every scope with 403 ERR_API_KEY_ENVIRONMENT (the route exists on the ${security.onlyOn.toLowerCase()} API only)`, async () => {
            const partner = await createPartner(t.ctx);
            const key = await createKey(t.ctx, partner.id, {
              environment,
              scopes: ALL_SCOPES,
            });
            expectError(await t[listener].inject({ method, url, headers: key.headers }), 403, 'ERR_API_KEY_ENVIRONMENT');
          });
          return;
        }
        partnerAuthContract(getApp, { method, url, listener, scope: security.scope ?? undefined });
      } else {
        if (security.role === 'USER') throw new Error(`${name(route)}: no contract for routes open to any signed-in account`);
        bearerAuthContract(getApp, { method, url, listener, role: security.role });
      }
    });
  }
}

describe("another partner's resources", () => {
  /** The owner's resources, made on first use. */
  async function owner(): Promise<Owned> {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      scopes: ALL_SCOPES,
    });
    const once = <T>(make: () => Promise<T>) => {
      let made: Promise<T> | undefined;
      return () => {
        made ??= make();
        return made;
      };
    };
    const asOwner = async (method: 'GET' | 'POST', url: string, payload?: unknown, on: 'live' | 'sandbox' = 'live') => {
      const headers = url.startsWith('/v1/partner/') ? key.headers : partner.auth;
      const res = await t[on].inject({ method, url, headers, payload: payload as never });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res;
    };
    const order = once(async () => (await asOwner('POST', '/v1/partner/sandbox/orders', {}, 'sandbox')).json().code as string);
    const webhook = once(
      async () =>
        (
          await asOwner('POST', '/v1/developer/webhooks', {
            apiKeyId: key.id,
            url: receiver.url(`/owner-${partner.id}`),
            events: ['order.status_changed'],
          })
        ).json().id as string,
    );
    return {
      partner,
      key,
      order,
      batch: once(
        async () =>
          (await asOwner('POST', '/v1/partner/sandbox/batches', { orderCodes: [await order()] }, 'sandbox')).json()
            .code as string,
      ),
      webhook,
      delivery: once(
        async () => (await asOwner('POST', `/v1/developer/webhooks/${await webhook()}/test`, {})).json().id as string,
      ),
      enRouteOrder: once(async () => {
        const code = (await asOwner('POST', '/v1/partner/sandbox/orders', {}, 'sandbox')).json().code as string;
        for (const type of ['PICKED_UP', 'EN_ROUTE']) {
          await asOwner('POST', `/v1/partner/orders/${code}/events`, { type }, 'sandbox');
        }
        return code;
      }),
      provenOrder: once(async () => {
        const code = (await asOwner('POST', '/v1/partner/sandbox/orders', {}, 'sandbox')).json().code as string;
        for (const type of ['PICKED_UP', 'EN_ROUTE']) {
          await asOwner('POST', `/v1/partner/orders/${code}/events`, { type }, 'sandbox');
        }
        await asOwner(
          'POST',
          `/v1/partner/orders/${code}/events`,
          { type: 'DELIVERED', proof: { recipientName: 'Owner' } },
          'sandbox',
        );
        return code;
      }),
      upload: once(async () => {
        const res = await t.sandbox.inject({
          method: 'POST',
          url: '/v1/partner/uploads',
          headers: { ...key.headers, 'content-type': 'image/png' },
          payload: pngBytes(),
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json().id as string;
      }),
      paymentIntent: once(
        async () =>
          (await asOwner('GET', `/v1/partner/payment-intents?orderCode=${await order()}`, undefined, 'sandbox')).json().items[0]
            .id as string,
      ),
      settlement: once(async () => (await asOwner('POST', '/v1/partner/sandbox/settlements', {}, 'sandbox')).json().id as string),
      offer: once(
        async () => (await asOwner('POST', '/v1/partner/sandbox/offers', { count: 1 }, 'sandbox')).json().items[0].id as string,
      ),
      request: once(async () => {
        const id = (await asOwner('GET', '/v1/partner/me', undefined, 'sandbox')).headers['x-request-id'] as string;
        // The log is written off the request path: wait (with a deadline) until its owner reads it.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests/${id}`, headers: partner.auth });
          if (res.statusCode === 200) return id;
          if (Date.now() > deadline) throw new Error(`request ${id} not logged within 10 s: ${res.body}`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }),
    };
  }

  for (const [route, reach] of Object.entries(OWNED)) {
    const [method] = route.split(' ') as ['GET' | 'POST' | 'PATCH' | 'DELETE'];
    it(`${route}: another partner gets 404 ERR_NOT_FOUND for the owner's resource, which stays as it was`, async () => {
      const o = await owner();
      const { url, body } = await reach(o);
      const other = await createPartner(t.ctx);
      const otherKey = await createKey(t.ctx, other.id, {
        environment: 'SANDBOX',
        scopes: ALL_SCOPES,
      });
      const partnerRoute = url.startsWith('/v1/partner/');
      const listener = partnerRoute ? 'sandbox' : 'live';
      const headers = partnerRoute ? otherKey.headers : other.auth;
      expectError(await t[listener].inject({ method, url, headers, payload: body as never }), 404, 'ERR_NOT_FOUND');
      // The owner still reaches it (the refusal was about the caller, not a missing resource).
      if (method === 'GET') {
        const own = await t[listener].inject({ method, url, headers: partnerRoute ? o.key.headers : o.partner.auth });
        expect(own.statusCode, own.body).toBe(200);
      }
    });
  }
});
