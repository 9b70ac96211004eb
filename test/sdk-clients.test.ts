/**
 * @partner-logistics/sdk against the real app on real ports (both listeners on OS-chosen ports, a real
 * worker, a real webhook receiver written as the SDK README shows): every partner and developer
 * operation through the SDK, paging, retries of a real 429 and a real 503, idempotent events, token
 * refresh, and verifyWebhook on real signed deliveries. Waits are conditions with deadlines; where time
 * matters the service's test clock moves (the SDK's `sleep` is given one that moves it).
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createDeveloperClient,
  createPartnerClient,
  type DeveloperClient,
  OPERATIONS,
  PartnerApiError,
  type PartnerClient,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../packages/sdk/src/index.js';
import type { Db } from '../src/db/db.js';
import { AppError } from '../src/errors.js';
import { signAccessToken } from '../src/modules/auth/tokens.js';
import { orderFor } from '../src/modules/orders/orders.test-helpers.js';
import { pngBytes } from '../src/modules/uploads/uploads.test-helpers.js';
import { computeSignature, signatureHeader } from '../src/modules/webhooks/delivery/signature.js';
import { startWorker, type Worker } from '../src/worker/worker.js';
import { createKey, createPartner, createUser, type TestPartner } from './factories.js';
import { createTestApp, TEST_OTP, type TestApp } from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WAIT = { timeout: 20_000, interval: 20 };

// ---------------------------------------------------------------------------------------------------
// A database that answers 503 on demand: the next statement matching a pattern fails the way a lost
// database does (ERR_DEPENDENCY_UNAVAILABLE), through the real error path of the app.

let outage: { pattern: RegExp; times: number } | null = null;

function failIfArmed(text: string | { text: string }): void {
  const sql = typeof text === 'string' ? text : text.text;
  if (outage && outage.times > 0 && outage.pattern.test(sql)) {
    outage.times--;
    throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable; try again shortly');
  }
}

function withOutages(db: Db): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'query') {
        return async (text: string, params?: readonly unknown[]) => {
          failIfArmed(text);
          return target.query(text, params);
        };
      }
      if (prop === 'tx') {
        return (fn: (q: Pick<Db, 'query'>) => Promise<unknown>, options?: unknown) =>
          target.tx(
            (q) =>
              fn({
                query: async <R>(text: string, params?: readonly unknown[]) => {
                  failIfArmed(text);
                  return q.query<R>(text, params);
                },
              }),
            options as never,
          );
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Every operation the SDK sends, as `METHOD /path/{template}`, to check that each one ran.

const exercised = new Set<string>();
const recordOperations: Middleware = {
  onRequest({ request, schemaPath }) {
    exercised.add(`${request.method} ${schemaPath}`);
  },
};

/** Answers the tests look at (status, headers) as they came off the wire, every attempt included. */
interface Seen {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  requestHeaders: Headers;
}

function recordingFetch(into: Seen[]): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request);
    into.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      headers: response.headers,
      requestHeaders: request.headers,
    });
    return response;
  };
}

let t: TestApp;
let worker: Worker;
let liveUrl: string;
let sandboxUrl: string;
let adminUserId = '';

/** An operator's bearer header signed now (the tests move the clock past 15-minute tokens). */
async function admin(): Promise<{ authorization: string }> {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, { userId: adminUserId, role: 'ADMIN', partnerId: null });
  return { authorization: `Bearer ${token}` };
}

function urlOf(app: FastifyInstance): string {
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

function partnerClient(apiKey: string, options: Partial<Parameters<typeof createPartnerClient>[0]> = {}): PartnerClient {
  const client = createPartnerClient({
    apiKey,
    baseUrls: { live: liveUrl, sandbox: sandboxUrl },
    ...options,
  });
  client.raw.use(recordOperations);
  return client;
}

function developerClient(options: Partial<Parameters<typeof createDeveloperClient>[0]> = {}): DeveloperClient {
  const client = createDeveloperClient({ baseUrl: liveUrl, ...options });
  client.raw.use(recordOperations);
  return client;
}

async function signedIn(partner: TestPartner, options: Partial<Parameters<typeof createDeveloperClient>[0]> = {}) {
  const dev = developerClient(options);
  await dev.requestCode(partner.phone);
  await dev.verifyCode(partner.phone, TEST_OTP);
  return dev;
}

async function expectApiError(promise: Promise<unknown>, status: number, code: string): Promise<PartnerApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PartnerApiError);
  const apiError = err as PartnerApiError;
  expect({ status: apiError.status, code: apiError.code }, apiError.message).toEqual({ status, code });
  return apiError;
}

beforeAll(async () => {
  t = await createTestApp({ wrapDb: withOutages });
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
  liveUrl = urlOf(t.live);
  sandboxUrl = urlOf(t.sandbox);
  worker = startWorker(t.ctx, { pollIntervalMs: 50 });
  adminUserId = (await createUser(t.ctx, 'ADMIN')).userId;
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
});

// ---------------------------------------------------------------------------------------------------
// The webhook receiver, as packages/sdk/README.md writes it: Fastify, the raw body, verifyWebhook.

interface Receiver {
  app: FastifyInstance;
  url: string;
  /** Each delivery as it arrived, and what verifyWebhook made of it. */
  deliveries: Array<{ rawBody: string; signature: string; event: WebhookEvent | null; refused: string | null }>;
}

async function startReceiver(secrets: () => string[]): Promise<Receiver> {
  const deliveries: Receiver['deliveries'] = [];
  const app = Fastify();
  // Keep the body as the exact string that was signed: verify first, parse after.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/webhooks/partner', async (request, reply) => {
    const rawBody = request.body as string;
    const signature = request.headers['x-partner-signature'] as string;
    try {
      const event = verifyWebhook(rawBody, signature, secrets());
      deliveries.push({ rawBody, signature, event, refused: null });
      return reply.code(204).send();
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      deliveries.push({ rawBody, signature, event: null, refused: err.reason });
      return reply.code(400).send({ error: err.reason });
    }
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `${urlOf(app)}/webhooks/partner`, deliveries };
}

// ---------------------------------------------------------------------------------------------------

describe('developer client: sign-in, tokens, keys', () => {
  it('signs in with a one-time code, then lists, creates, rotates, revokes keys and reads their usage', async () => {
    const partner = await createPartner(t.ctx);
    const dev = developerClient();
    const requested = await dev.requestCode(partner.phone);
    expect(requested).toEqual({ expiresInSec: 300, resendAfterSec: 60 });
    const tokens = await dev.verifyCode(partner.phone, TEST_OTP);
    expect(tokens.user).toMatchObject({ id: partner.userId, role: 'PARTNER', partnerId: partner.id });
    expect(dev.tokens).toEqual({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
    expect(dev.user?.partnerName).toBe(partner.name);

    expect((await dev.keys.list()).items).toEqual([]);
    const created = await dev.keys.create({
      name: 'SDK key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write'],
    });
    expect(created.key).toMatch(/^svc_sandbox_/);
    expect((await dev.keys.list()).items.map((k) => k.id)).toEqual([created.id]);

    // The key works, and its use shows in the usage series.
    const partnerApi = partnerClient(created.key);
    expect((await partnerApi.me()).keyName).toBe('SDK key');
    await vi.waitFor(async () => {
      const usage = await dev.keys.usage(created.id, { days: 1 });
      expect(usage.items.reduce((n, d) => n + d.requests, 0)).toBeGreaterThanOrEqual(1);
    }, WAIT);

    const rotated = await dev.keys.rotate(created.id);
    expect(rotated.key).toMatch(/^svc_sandbox_/);
    expect(rotated.key).not.toBe(created.key);
    expect((await partnerClient(rotated.key).me()).keyName).toBe('SDK key');

    const revoked = await dev.keys.revoke(rotated.id);
    expect(revoked.revokedAt).not.toBeNull();
    const refused = await expectApiError(partnerClient(rotated.key).me(), 401, 'ERR_API_KEY_REVOKED');
    expect(refused.requestId).toBeTruthy();
  });

  it('refreshes an expired access token once, for concurrent calls too, and tells onTokens', async () => {
    const partner = await createPartner(t.ctx);
    const changes: Array<string | null> = [];
    const dev = await signedIn(partner, { onTokens: (tokens) => changes.push(tokens?.accessToken ?? null) });
    const first = dev.tokens!;
    expect(changes).toEqual([first.accessToken]);

    t.clock.advance(16 * 60); // access tokens last 15 minutes
    const lists = await Promise.all([dev.keys.list(), dev.webhooks.list(), dev.keys.list()]);
    expect(lists.map((l) => l.items)).toEqual([[], [], []]);
    // One refresh for the three calls (a refresh token works once; a second use would end the session).
    expect(changes).toHaveLength(2);
    expect(dev.tokens!.accessToken).toBe(changes[1]);
    expect(dev.tokens!.refreshToken).not.toBe(first.refreshToken);

    const refreshed = await dev.refresh();
    expect(changes).toHaveLength(3);
    expect((await dev.keys.list()).items).toEqual([]);
    expect(refreshed.user.id).toBe(partner.userId);
  });

  it('forgets the session when the refresh token is refused, and signOut ends it on the server', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    // A copy of the session that will present a refresh token already used by `dev`.
    const stale = developerClient({ tokens: { accessToken: null, refreshToken: dev.tokens!.refreshToken } });
    await dev.refresh();
    await expectApiError(stale.refresh(), 401, 'ERR_UNAUTHORIZED');
    expect(stale.tokens).toBeNull();

    // Reusing a refresh token signs that session out everywhere (docs/decisions-log.md, 'Accounts and sign-in'): sign in again (one
    // code a minute per phone; sign-in's 429 is not retried by the client).
    await expectApiError(developerClient().requestCode(partner.phone), 429, 'ERR_OTP_RATE_LIMITED');
    t.clock.advance(61);
    const again = await signedIn(partner);
    await again.signOut();
    expect(again.tokens).toBeNull();
    await expectApiError(again.keys.list(), 401, 'ERR_UNAUTHORIZED');
  });

  it('reads the OpenAPI document', async () => {
    const dev = developerClient();
    const doc = await dev.openApiDocument();
    expect(doc.openapi).toBe('3.0.0');
  });
});

describe('partner client: orders, events, paging', () => {
  it('pages through every order with the iterator, and polls with updatedSince', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const seen: Seen[] = [];
    const sandbox = partnerClient(key.key, { fetch: recordingFetch(seen) });
    expect(sandbox.environment).toBe('sandbox');
    expect(sandbox.baseUrl).toBe(sandboxUrl);

    const created: string[] = [];
    for (let i = 0; i < 4; i++) created.push((await sandbox.createSandboxOrder()).code);
    created.push((await sandbox.createSandboxOrder({ paymentMethod: 'CARD' })).code);

    seen.length = 0;
    const codes: string[] = [];
    for await (const order of sandbox.orders({ pageSize: 2 })) codes.push(order.code);
    expect(codes.sort()).toEqual([...created].sort());
    expect(seen).toHaveLength(3); // pages of 2, 2 and 1

    const firstPage = await sandbox.listOrders({ pageSize: 2 });
    expect(firstPage).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    const pages = [];
    for await (const page of sandbox.pages('/v1/partner/orders', { query: { pageSize: 2 } })) pages.push(page.items.length);
    expect(pages).toEqual([2, 2, 1]);

    // Incremental sync: only what changed since the last poll.
    const mark = t.clock.now().toISOString();
    t.clock.advance(1);
    await sandbox.reportEvent(created[0], { type: 'PICKED_UP' });
    const changed: string[] = [];
    for await (const order of sandbox.orders({ updatedSince: mark })) changed.push(order.code);
    expect(changed).toEqual([created[0]]);

    const one = await sandbox.getOrder(created[1]);
    expect(one).toMatchObject({ code: created[1], status: 'PACKED' });
    await expectApiError(sandbox.getOrder('ORD-NOPE'), 404, 'ERR_NOT_FOUND');
  });

  it('reports events: a repeated Idempotency-Key answers the first outcome; without one the client sends a UUID', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const code = await orderFor(t, await admin(), key.id, 'PACKED');
    const seen: Seen[] = [];
    const live = partnerClient(key.key, { fetch: recordingFetch(seen) });
    expect(live.environment).toBe('live');

    const first = await live.reportEvent(code, { type: 'PICKED_UP' }, { idempotencyKey: 'sdk-test-pickup-1' });
    const again = await live.reportEvent(code, { type: 'PICKED_UP' }, { idempotencyKey: 'sdk-test-pickup-1' });
    expect(again).toEqual(first);
    expect((await live.getOrder(code)).timeline).toEqual(first.timeline);
    const conflict = await expectApiError(
      live.reportEvent(code, { type: 'EN_ROUTE' }, { idempotencyKey: 'sdk-test-pickup-1' }),
      409,
      'ERR_IDEMPOTENCY_CONFLICT',
    );
    expect(conflict.message).toBeTruthy();

    seen.length = 0;
    const enRoute = await live.reportEvent(code, { type: 'EN_ROUTE' });
    expect(enRoute.status).toBe('EN_ROUTE');
    expect(seen).toHaveLength(1);
    expect(seen[0].requestHeaders.get('idempotency-key')).toMatch(UUID);

    // Typed errors carry the envelope: code, message and details.
    const invalid = await expectApiError(live.reportEvent(code, { type: 'FAILED' }), 400, 'ERR_VALIDATION');
    expect(invalid.details).toEqual([expect.objectContaining({ field: 'failReason' })]);
    await expectApiError(live.reportEvent(code, { type: 'PICKED_UP' }), 409, 'ERR_INVALID_TRANSITION');
  });

  it('refuses a key on the wrong API before sending anything', () => {
    expect(() => createPartnerClient({ apiKey: 'svc_live_x', environment: 'sandbox' })).toThrow(TypeError);
  });
});

describe('retries', () => {
  it('retries a real 429 after its Retry-After (the wait spent on the test clock), with the same Idempotency-Key', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 2 });
    const code = await orderFor(t, await admin(), key.id, 'PACKED');
    const seen: Seen[] = [];
    const waits: number[] = [];
    const live = partnerClient(key.key, {
      fetch: recordingFetch(seen),
      retry: { maxDelayMs: 120_000 },
      sleep: async (ms) => {
        waits.push(ms);
        t.clock.advance(ms / 1000);
      },
    });
    await live.me();
    await live.getOrder(code);
    const order = await live.reportEvent(code, { type: 'PICKED_UP' }); // the third in a minute: 429, then admitted

    expect(order.status).toBe('SCANNED_TO_VAN');
    expect(seen.map((s) => s.status)).toEqual([200, 200, 429, 201]);
    const retryAfter = Number(seen[2].headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(waits[0]).toBeLessThanOrEqual(retryAfter * 1000 * 1.2 + 100);
    const sentKeys = seen.slice(2).map((s) => s.requestHeaders.get('idempotency-key'));
    expect(sentKeys[0]).toMatch(UUID);
    expect(sentKeys[1]).toBe(sentKeys[0]);
  });

  it('gives a 429 back as a typed error when Retry-After is beyond the cap, or retries are off', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    const waits: number[] = [];
    const capped = partnerClient(key.key, { retry: { maxDelayMs: 500 }, sleep: async (ms) => void waits.push(ms) });
    await capped.me();
    const limited = await expectApiError(capped.me(), 429, 'ERR_RATE_LIMITED');
    expect(limited.retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(waits).toEqual([]);

    const off = partnerClient(key.key, { retry: false, sleep: async (ms) => void waits.push(ms) });
    await expectApiError(off.me(), 429, 'ERR_RATE_LIMITED');
    expect(waits).toEqual([]);
  });

  it('retries a real 503 after Retry-After: 1, but not a POST without an Idempotency-Key', async () => {
    const partner = await createPartner(t.ctx);
    const seen: Seen[] = [];
    const waits: number[] = [];
    const dev = await signedIn(partner, {
      fetch: recordingFetch(seen),
      sleep: async (ms) => void waits.push(ms),
    });

    outage = { pattern: /FROM api_keys WHERE partner_id = \$1 ORDER BY created_at/, times: 1 };
    expect((await dev.keys.list()).items).toEqual([]);
    expect(outage.times).toBe(0);
    const statuses = seen.filter((s) => s.path === '/v1/developer/keys').map((s) => s.status);
    expect(statuses).toEqual([503, 200]);
    expect(seen.find((s) => s.status === 503)?.headers.get('retry-after')).toBe('1');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);

    // Creating a key is not idempotent: a 503 is given back (it was not applied), never sent twice.
    outage = { pattern: /INSERT INTO api_keys/, times: 1 };
    const unavailable = await expectApiError(
      dev.keys.create({ name: 'Not yet', environment: 'LIVE', scopes: ['orders:read'] }),
      503,
      'ERR_DEPENDENCY_UNAVAILABLE',
    );
    expect(unavailable.retryAfterSec).toBe(1);
    expect(waits).toHaveLength(1);
    outage = null;
    expect((await dev.keys.list()).items).toEqual([]);
  });
});

describe('webhooks: developer operations and verifyWebhook on real deliveries', () => {
  let partner: TestPartner;
  let dev: DeveloperClient;
  let receiver: Receiver;
  let secret = '';
  let hookId = '';
  let live: PartnerClient;
  let liveKeyId = '';

  beforeAll(async () => {
    partner = await createPartner(t.ctx);
    dev = await signedIn(partner);
    receiver = await startReceiver(() => [secret]);
    const key = await dev.keys.create({
      name: 'Webhook key',
      environment: 'LIVE',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
    });
    liveKeyId = key.id;
    live = partnerClient(key.key);
  });
  afterAll(async () => {
    await receiver?.app.close();
  });

  it('creates, lists, updates and tests a webhook; the ping is verified and redelivered with the same id', async () => {
    const created = await dev.webhooks.create({ apiKeyId: liveKeyId, url: receiver.url, events: ['order.assigned_to_partner'] });
    secret = created.secret;
    hookId = created.id;
    expect(secret).toMatch(/^whsec_/);
    expect((await dev.webhooks.list()).items.map((w) => w.id)).toEqual([hookId]);
    const updated = await dev.webhooks.update(hookId, { events: ['order.assigned_to_partner', 'order.status_changed'] });
    expect(updated.events.sort()).toEqual(['order.assigned_to_partner', 'order.status_changed']);

    const ping = await dev.webhooks.test(hookId);
    await vi.waitFor(() => expect(receiver.deliveries.length).toBeGreaterThanOrEqual(1), WAIT);
    const [first] = receiver.deliveries;
    expect(first.refused).toBeNull();
    expect(first.event).toMatchObject({ type: 'ping', environment: 'live', data: { webhookId: hookId } });
    await vi.waitFor(async () => {
      const page = await dev.webhooks.listDeliveries(hookId);
      expect(page.items.find((d) => d.id === ping.id)?.status).toBe('DELIVERED');
    }, WAIT);

    await dev.deliveries.redeliver(ping.id);
    await vi.waitFor(() => expect(receiver.deliveries.length).toBeGreaterThanOrEqual(2), WAIT);
    const second = receiver.deliveries[1];
    expect(second.refused).toBeNull();
    expect(second.event?.id).toBe(first.event?.id);
  });

  it('receives real order events, typed by `type`', async () => {
    const before = receiver.deliveries.length;
    const code = await orderFor(t, await admin(), liveKeyId, 'PACKED');
    await live.reportEvent(code, { type: 'PICKED_UP' });
    await vi.waitFor(() => {
      const types = receiver.deliveries.slice(before).map((d) => d.event?.type);
      expect(types).toEqual(expect.arrayContaining(['order.assigned_to_partner', 'order.status_changed']));
    }, WAIT);
    for (const delivery of receiver.deliveries.slice(before)) {
      expect(delivery.refused).toBeNull();
      const event = delivery.event!;
      switch (event.type) {
        case 'order.assigned_to_partner':
          expect(event.data.order.code).toBe(code);
          break;
        case 'order.status_changed':
          expect(event.data.order.code).toBe(code);
          expect(event.data.previousStatus).not.toBe(event.data.order.status);
          break;
        default:
          throw new Error(`unexpected ${event.type}`);
      }
      expect(event.id).toMatch(/^evt_/);
    }

    // The fan-out follows the outbox: once the last event's delivery is listed, the list is complete.
    const received = () => new Set(receiver.deliveries.map((d) => d.event?.id));
    await vi.waitFor(async () => {
      const page = await dev.webhooks.listDeliveries(hookId, { pageSize: 50 });
      expect(page.items.every((d) => d.status === 'DELIVERED')).toBe(true);
      expect(page.total).toBe(received().size);
      const last = receiver.deliveries.find(
        (d) => d.event?.type === 'order.status_changed' && d.event.data.order.status === 'SCANNED_TO_VAN',
      );
      expect(last).toBeDefined();
    }, WAIT);

    // The iterator pages through exactly the deliveries the list holds.
    const listed = (await dev.webhooks.listDeliveries(hookId, { pageSize: 50 })).items.map((d) => d.id);
    const iterated: string[] = [];
    for await (const d of dev.webhooks.deliveries(hookId, { pageSize: 2 })) iterated.push(d.id);
    expect(iterated).toEqual(listed);
    const delivered: string[] = [];
    for await (const d of dev.webhooks.deliveries(hookId, { status: 'DELIVERED' })) delivered.push(d.status);
    expect(delivered).toHaveLength(listed.length);
  });

  it('refuses a changed body, a wrong secret, an old timestamp, a missing or malformed header', () => {
    const { rawBody, signature } = receiver.deliveries[0];
    expect(verifyWebhook(rawBody, signature, secret).type).toBe('ping');
    expect(verifyWebhook(Buffer.from(rawBody), signature, secret).type).toBe('ping');

    const reason = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        expect(err).toBeInstanceOf(WebhookVerificationError);
        return (err as WebhookVerificationError).reason;
      }
      return 'accepted';
    };
    expect(reason(() => verifyWebhook(rawBody.replace('"ping"', '"order.delivered"'), signature, secret))).toBe(
      'SIGNATURE_MISMATCH',
    );
    expect(reason(() => verifyWebhook(`${rawBody} `, signature, secret))).toBe('SIGNATURE_MISMATCH');
    expect(reason(() => verifyWebhook(rawBody, signature, 'whsec_not_the_secret'))).toBe('SIGNATURE_MISMATCH');
    // `t` is the sending time: 301 s later it is a replay; within the tolerance it passes.
    const sentAtMs = Number(/t=(\d+)/.exec(signature)![1]) * 1000;
    expect(reason(() => verifyWebhook(rawBody, signature, secret, { now: () => sentAtMs + 301_000 }))).toBe(
      'TIMESTAMP_OUTSIDE_TOLERANCE',
    );
    expect(reason(() => verifyWebhook(rawBody, signature, secret, { now: () => sentAtMs - 301_000 }))).toBe(
      'TIMESTAMP_OUTSIDE_TOLERANCE',
    );
    expect(reason(() => verifyWebhook(rawBody, signature, secret, { now: () => sentAtMs + 299_000 }))).toBe('accepted');
    expect(reason(() => verifyWebhook(rawBody, signature, secret, { now: () => sentAtMs + 900_000, toleranceSec: 1000 }))).toBe(
      'accepted',
    );
    expect(reason(() => verifyWebhook(rawBody, undefined, secret))).toBe('MISSING_SIGNATURE');
    expect(reason(() => verifyWebhook(rawBody, signature.replace(/v1=[0-9a-f]+/, ''), secret))).toBe('MISSING_SIGNATURE');
    expect(reason(() => verifyWebhook(rawBody, signature.replace(/v1=[0-9a-f]+/, 'v1=zz'), secret))).toBe('MALFORMED_SIGNATURE');
    expect(reason(() => verifyWebhook(rawBody, signature.replace(/t=\d+/, 't=soon'), secret))).toBe('MALFORMED_SIGNATURE');

    // The receiver answered 400 to nothing so far: every real delivery verified.
    expect(receiver.deliveries.filter((d) => d.refused)).toEqual([]);
  });

  it('accepts one or two secrets, and a header with two v1 values (the rotation form, signed by our signing function)', () => {
    const { rawBody, signature } = receiver.deliveries[0];
    const other = 'whsec_the_other_one';
    // A real delivery, and the caller passes both secrets (either order) during its own rotation.
    expect(verifyWebhook(rawBody, signature, [secret, other]).type).toBe('ping');
    expect(verifyWebhook(rawBody, signature, [other, secret]).type).toBe('ping');

    // What a delivery during a secret rotation carries (docs/decisions-log.md, 'Webhook operations'): t=…,v1=<new>,v1=<old>.
    const t = Math.floor(Date.now() / 1000);
    const rotated = `${signatureHeader(other, t, rawBody)},v1=${computeSignature(secret, t, rawBody)}`;
    expect(rotated.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook(rawBody, rotated, secret).type).toBe('ping');
    expect(verifyWebhook(rawBody, rotated, other).type).toBe('ping');
    expect(verifyWebhook(rawBody, rotated, [other, secret]).type).toBe('ping');
    expect(() => verifyWebhook(rawBody, rotated, 'whsec_neither')).toThrow(WebhookVerificationError);
  });

  it('verifies the two signatures of a real delivery during a secret rotation', async () => {
    const oldSecret = secret;
    const rotated = await dev.webhooks.rotateSecret(hookId, { graceHours: 1 });
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated.previousSecretExpiresAt).toBeTruthy();
    const newSecret = rotated.secret;
    secret = newSecret;
    const before = receiver.deliveries.length;
    await dev.webhooks.test(hookId);
    await vi.waitFor(() => expect(receiver.deliveries.length).toBeGreaterThan(before), WAIT);
    const { rawBody, signature, refused } = receiver.deliveries[before];
    expect(refused).toBeNull();
    expect(signature.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook(rawBody, signature, oldSecret).type).toBe('ping');
    expect(verifyWebhook(rawBody, signature, newSecret).type).toBe('ping');
    expect(verifyWebhook(rawBody, signature, [oldSecret, newSecret]).type).toBe('ping');
    expect(() => verifyWebhook(rawBody, signature, 'whsec_neither')).toThrow(WebhookVerificationError);
  });

  it('sends a sample of any event kind, and reads a delivery, the health, the event types; recovers failed deliveries', async () => {
    const before = receiver.deliveries.length;
    const sample = await dev.webhooks.test(hookId, { event: 'order.status_changed' });
    await vi.waitFor(() => expect(receiver.deliveries.length).toBeGreaterThan(before), WAIT);
    const received = receiver.deliveries[before];
    expect(received.refused).toBeNull();
    const event = received.event!;
    expect(event.id).toMatch(/^evt_test_/);
    if (event.type !== 'order.status_changed') throw new Error(`a sample of ${event.type}`);
    expect(typeof event.data.order.code).toBe('string');

    await vi.waitFor(async () => expect((await dev.deliveries.get(sample.id)).status).toBe('DELIVERED'), WAIT);
    const detail = await dev.deliveries.get(sample.id);
    expect(detail.payload).toBe(received.rawBody);
    expect(detail.attempts.length).toBeGreaterThanOrEqual(1);

    const health = await dev.webhooks.health(hookId);
    expect(health).toMatchObject({ webhookId: hookId, isActive: true });
    expect(health.delivered).toBeGreaterThanOrEqual(1);

    const types = await dev.eventTypes();
    expect(types.items.map((i) => i.type)).toEqual(expect.arrayContaining(['ping', 'order.status_changed', 'batch.completed']));

    const recovered = await dev.webhooks.recover(hookId, { since: new Date(t.clock.nowMs() - 3_600_000).toISOString() });
    expect(recovered.queued).toBe(0); // nothing failed
  });

  it('deletes the webhook', async () => {
    await dev.webhooks.delete(hookId);
    expect((await dev.webhooks.list()).items).toEqual([]);
    await expectApiError(dev.webhooks.test(hookId), 404, 'ERR_NOT_FOUND');
  });
});

describe('sandbox simulator, go-live checklist and request log', () => {
  it('drives sandbox orders and batches as the partner and as the developer, reads the checklist and the request log', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Sandbox key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
    });
    const sandbox = partnerClient(key.key);

    // As the partner (API key, sandbox API).
    const [placed, packedA, packedB] = await sandbox.createSandboxOrders(3, { status: 'PLACED' });
    expect(placed.status).toBe('PLACED');
    const accepted = await sandbox.POST('/v1/partner/sandbox/orders/{code}/platform-status', {
      params: { path: { code: placed.code } },
      body: { status: 'VENDOR_ACCEPTED' },
    });
    expect(accepted.status).toBe('VENDOR_ACCEPTED');
    for (const order of [packedA, packedB]) {
      for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'] as const) {
        await sandbox.POST('/v1/partner/sandbox/orders/{code}/platform-status', {
          params: { path: { code: order.code } },
          body: { status },
        });
      }
    }
    const batch = await sandbox.POST('/v1/partner/sandbox/batches', { body: { orderCodes: [packedA.code, packedB.code] } });
    expect(batch).toMatchObject({ status: 'OPEN', orderCodes: expect.arrayContaining([packedA.code, packedB.code]) });
    const dispatched = await sandbox.POST('/v1/partner/sandbox/batches/{code}/status', {
      params: { path: { code: batch.code } },
      body: { status: 'DISPATCHED' },
    });
    expect(dispatched.status).toBe('DISPATCHED');

    // As the developer (bearer token, for one of the partner's sandbox keys).
    const made = await dev.POST('/v1/developer/keys/{id}/sandbox/orders', {
      params: { path: { id: key.id } },
      body: { count: 2, status: 'PLACED' },
    });
    expect(made.items).toHaveLength(2);
    const [first, second] = made.items;
    const moved = await dev.POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
      params: { path: { id: key.id, code: first.code } },
      body: { status: 'VENDOR_ACCEPTED' },
    });
    expect(moved.status).toBe('VENDOR_ACCEPTED');
    for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'] as const) {
      await dev.POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
        params: { path: { id: key.id, code: second.code } },
        body: { status },
      });
    }
    const devBatch = await dev.POST('/v1/developer/keys/{id}/sandbox/batches', {
      params: { path: { id: key.id } },
      body: { orderCodes: [second.code] },
    });
    const devDispatched = await dev.POST('/v1/developer/keys/{id}/sandbox/batches/{code}/status', {
      params: { path: { id: key.id, code: devBatch.code } },
      body: { status: 'DISPATCHED' },
    });
    expect(devDispatched.status).toBe('DISPATCHED');
    const overview = await dev.GET('/v1/developer/keys/{id}/sandbox', { params: { path: { id: key.id } } });
    expect(overview.apiKeyId).toBe(key.id);
    expect(overview.orders.length).toBeGreaterThanOrEqual(5);

    // What the key did shows in its go-live checklist (listing orders with updatedSince is one item).
    for await (const _ of sandbox.orders({ updatedSince: new Date(0).toISOString() })) break;
    const checklist = await dev.keys.checklist(key.id);
    expect(checklist.apiKeyId).toBe(key.id);
    expect(checklist.items.length).toBeGreaterThan(0);

    // The request log: every request of the key shows there within seconds.
    await vi.waitFor(async () => {
      const page = await dev.requests.list({ apiKeyId: key.id, method: 'POST' });
      expect(page.total).toBeGreaterThanOrEqual(10);
    }, WAIT);
    const logged = [];
    for await (const request of dev.requests.all({ apiKeyId: key.id, pageSize: 5 })) logged.push(request);
    expect(logged.length).toBeGreaterThanOrEqual(10);
    const detail = await dev.requests.get(logged[0].id);
    expect(detail.id).toBe(logged[0].id);
    const drops = await dev.GET('/v1/developer/requests/drops');
    expect(drops.dropped).toBeGreaterThanOrEqual(0);
  });
});

describe('payments', () => {
  it('captures and refunds a sandbox card order, closes and remits a sandbox period, reads intents, balance, settlements, lines and CSV', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Payments key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write', 'payments:read'],
    });
    const sandbox = partnerClient(key.key);
    const [card] = await sandbox.createSandboxOrders(1, { paymentMethod: 'CARD' });
    const captured = await sandbox.POST('/v1/partner/sandbox/orders/{code}/payment/capture', {
      params: { path: { code: card.code } },
    });
    expect(captured.status).toBe('SUCCEEDED');
    const refunded = await sandbox.POST('/v1/partner/sandbox/orders/{code}/payment/refunds', {
      params: { path: { code: card.code } },
      body: { amountQepik: 1 },
    });
    expect(refunded.amountRefundedQepik).toBe(1);
    const intents = await sandbox.GET('/v1/partner/payment-intents', { params: { query: { orderCode: card.code } } });
    expect(intents.items[0].id).toBe(captured.id);
    expect((await sandbox.GET('/v1/partner/payment-intents/{id}', { params: { path: { id: captured.id } } })).orderCode).toBe(
      card.code,
    );
    const [cod] = await sandbox.createSandboxOrders(1, { paymentMethod: 'COD' });
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED'] as const) {
      await sandbox.POST('/v1/partner/orders/{code}/events', { params: { path: { code: cod.code } }, body: { type } });
    }
    expect((await sandbox.GET('/v1/partner/balance')).codOnHandQepik).toBe(cod.codAmountQepik);
    t.clock.advance(1);
    const settlement = await sandbox.POST('/v1/partner/sandbox/settlements', {});
    expect(settlement.collectionsCount).toBe(1);
    expect((await sandbox.GET('/v1/partner/settlements')).items[0].id).toBe(settlement.id);
    expect((await sandbox.GET('/v1/partner/settlements/{id}', { params: { path: { id: settlement.id } } })).id).toBe(
      settlement.id,
    );
    const lines = await sandbox.GET('/v1/partner/settlements/{id}/lines', { params: { path: { id: settlement.id } } });
    expect(lines.items[0].orderCode).toBe(cod.code);
    const csv = await sandbox.GET('/v1/partner/settlements/{id}/lines.csv', {
      params: { path: { id: settlement.id } },
      parseAs: 'text',
    });
    expect(String(csv).split('\r\n')[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    const remitted = await sandbox.POST('/v1/partner/sandbox/settlements/{id}/remittances', {
      params: { path: { id: settlement.id } },
      body: { amountQepik: settlement.outstandingQepik, reference: 'SDK-1' },
    });
    expect(remitted.type).toBe('REMITTANCE');

    // The same money as the partner's user reads it (the portal's Payments page).
    const balance = await dev.GET('/v1/developer/payments/balance', { params: { query: { environment: 'SANDBOX' } } });
    expect(balance.codOnHandQepik).toBe(0);
    const settlements = await dev.GET('/v1/developer/settlements', { params: { query: { environment: 'SANDBOX' } } });
    expect(settlements.items[0].id).toBe(settlement.id);
    const path = { params: { path: { id: settlement.id } } };
    expect((await dev.GET('/v1/developer/settlements/{id}', path)).status).toBe('SETTLED');
    expect((await dev.GET('/v1/developer/settlements/{id}/lines', path)).items[0].orderCode).toBe(cod.code);
    const devCsv = await dev.GET('/v1/developer/settlements/{id}/lines.csv', { ...path, parseAs: 'text' });
    expect(String(devCsv)).toBe(
      String(await sandbox.GET('/v1/partner/settlements/{id}/lines.csv', { ...path, parseAs: 'text' })),
    );
    const intent = await dev.GET('/v1/developer/orders/{code}/payment-intent', { params: { path: { code: card.code } } });
    expect(intent.id).toBe(captured.id);
  });
});

describe('tracking and proof', () => {
  it('sends locations, reads the tracking, uploads a photo and reads it back, delivers with proof and reads the proof', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Courier key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write'],
    });
    const sandbox = partnerClient(key.key);
    const [order] = await sandbox.createSandboxOrders(1, {});
    for (const type of ['PICKED_UP', 'EN_ROUTE'] as const) {
      await sandbox.POST('/v1/partner/orders/{code}/events', { params: { path: { code: order.code } }, body: { type } });
    }
    const at = new Date(t.clock.nowMs()).toISOString();
    const sent = await sandbox.POST('/v1/partner/orders/{code}/locations', {
      params: { path: { code: order.code } },
      body: { points: [{ lat: 40.41, lng: 49.86, accuracyM: 8, at }] },
    });
    expect(sent.accepted).toBe(1);
    const tracking = await sandbox.GET('/v1/partner/orders/{code}/tracking', { params: { path: { code: order.code } } });
    expect(tracking.orderCode).toBe(order.code);
    const bytes = pngBytes();
    const upload = await sandbox.POST('/v1/partner/uploads', {
      body: bytes as never,
      bodySerializer: (b: unknown) => b as never,
      headers: { 'content-type': 'image/png' },
    });
    expect(upload).toMatchObject({ contentType: 'image/png', bytes: bytes.length });
    const back = await sandbox.GET('/v1/partner/uploads/{id}', { params: { path: { id: upload.id } }, parseAs: 'arrayBuffer' });
    expect(Buffer.from(back as unknown as ArrayBuffer).equals(bytes)).toBe(true);
    await sandbox.POST('/v1/partner/orders/{code}/events', {
      params: { path: { code: order.code } },
      body: { type: 'DELIVERED', proof: { photoIds: [upload.id], recipientName: 'Leyla' } },
    });
    const proof = await sandbox.GET('/v1/partner/orders/{code}/proof', { params: { path: { code: order.code } } });
    expect(proof).toMatchObject({ orderCode: order.code, event: 'DELIVERED', recipientName: 'Leyla' });
    expect((await dev.GET('/v1/developer/orders/{code}/proof', { params: { path: { code: order.code } } })).event).toBe(
      'DELIVERED',
    );
    const devBack = await dev.GET('/v1/developer/uploads/{id}', { params: { path: { id: upload.id } }, parseAs: 'arrayBuffer' });
    expect(Buffer.from(devBack as unknown as ArrayBuffer).equals(bytes)).toBe(true);
  });
});

describe('coverage', () => {
  it('every partner, developer and sign-in operation the SDK was generated for went through the SDK above', () => {
    const missing = OPERATIONS.map((op) => `${op.method} ${op.path}`).filter((op) => !exercised.has(op));
    expect(missing, 'operations no SDK test sent: add them to test/sdk-clients.test.ts').toEqual([]);
    expect(OPERATIONS.length).toBeGreaterThan(20);
  });
});
