/**
 * Helpers for the webhook tests: webhooks are created through the developer API (HTTP); domain events
 * are either produced by the real operator API or, for routing corner cases, appended to the outbox
 * with the orders module's own appendOutbox and commitOrderChange, exactly as a producer does. Delivery
 * histories a test needs as a given are inserted directly (webhook-history.test-helpers.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { type ReceivedRequest, WebhookReceiver } from '../../../test/webhook-receiver.js';
import { appendOutbox } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, ApiKeyScope, OrderStatus, WebhookEvent } from '../../shared/schemas.js';
import { startWorker, type Worker, type WorkerOptions } from '../../worker/worker.js';
import { signAccessToken } from '../auth/tokens.js';
import { commitOrderChange } from '../orders/order-change.js';
import type { DeveloperDelivery } from './webhooks.schemas.js';

export type Auth = { authorization: string };

/** A bearer header signed now: tests that move the clock by hours outlive the 15-minute tokens. */
export async function devAuth(t: TestApp, partner: TestPartner): Promise<Auth> {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, {
    userId: partner.userId,
    role: 'PARTNER',
    partnerId: partner.id,
  });
  return { authorization: `Bearer ${token}` };
}

export async function createWebhookVia(
  t: TestApp,
  auth: Auth,
  body: { apiKeyId: string; url: string; events: WebhookEvent[] },
): Promise<{ id: string; secret: string; apiKeyId: string }> {
  const res = await t.live.inject({ method: 'POST', url: '/v1/developer/webhooks', headers: auth, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/**
 * The file's app (on a fresh database) and local receiver, made by setUpAppWithReceiver before the file's
 * tests and closed after them. Each test file runs in a module instance of its own, so these are the file's.
 */
export let t: TestApp;
export let receiver: WebhookReceiver;

/** Makes the file's app and receiver (`t`, `receiver`) before its tests and closes them after. */
export function setUpAppWithReceiver(): void {
  beforeAll(async () => {
    t = await createTestApp();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
}

export const HOUR_MS = 3_600_000;

/** Short attempt timeouts and leases, a fast poll: what most delivery tests run their worker with. */
export const TEST_WORKER_OPTIONS: Partial<WorkerOptions> = { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 };

/** A worker for the running test only (TEST_WORKER_OPTIONS unless overridden), stopped when the test ends. */
export function startTestWorker(t: TestApp, options: Partial<WorkerOptions> = {}): Worker {
  const worker = startWorker(t.ctx, { ...TEST_WORKER_OPTIONS, ...options });
  onTestFinished(() => worker.stop());
  return worker;
}

export interface WebhookEndpoint {
  partner: TestPartner;
  key: TestKey;
  hook: { id: string; secret: string; apiKeyId: string };
  /** The receiver path the webhook points at (its own: the receiver answers per path). */
  path: string;
}

let pathSeq = 0;

/** A receiver path no other test of the file uses (the receiver answers and records per path). */
export function uniquePath(name: string): string {
  return `/${name}-${++pathSeq}`;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A well-formed id that names nothing. */
export const SOME_ID = '7d0c1a52-3a59-4c1f-9d5e-0b1f4f0e2a11';

/** A new partner and a key of it (every scope but payments:read unless `scopes` says otherwise). */
export async function partnerWithKey(
  t: TestApp,
  scopes?: ApiKeyScope[],
  environment: ApiKeyEnvironment = 'LIVE',
): Promise<{ partner: TestPartner; key: TestKey }> {
  const partner = await createPartner(t.ctx);
  const key = await createKey(t.ctx, partner.id, { scopes, environment });
  return { partner, key };
}

/** A webhook of the key for order.placed (at a URL that is never called: no worker runs for it). */
export async function webhookOf(t: TestApp, partner: TestPartner, keyId: string, url = 'https://hooks.example.com/orders') {
  return createWebhookVia(t, partner.auth, { apiKeyId: keyId, url, events: ['order.placed'] });
}

/** A key of a new partner (or of `partner`) and a webhook of it pointing at a path of its own on the receiver. */
export async function createEndpoint(
  t: TestApp,
  receiver: WebhookReceiver,
  options: {
    partner?: TestPartner;
    scopes?: ApiKeyScope[];
    receivesAllOrders?: boolean;
    environment?: ApiKeyEnvironment;
    events?: WebhookEvent[];
  } = {},
): Promise<WebhookEndpoint> {
  const partner = options.partner ?? (await createPartner(t.ctx));
  const key = await createKey(t.ctx, partner.id, {
    scopes: options.scopes,
    receivesAllOrders: options.receivesAllOrders,
    environment: options.environment,
  });
  const path = uniquePath('hook');
  const hook = await createWebhookVia(t, await devAuth(t, partner), {
    apiKeyId: key.id,
    url: receiver.url(path),
    events: options.events ?? ALL_EVENTS,
  });
  return { partner, key, hook, path };
}

/** POST /v1/developer/webhooks/{id}/test as the partner (a sample of `event` when given); answers the queued delivery. */
export async function sendTestEvent(
  t: TestApp,
  partner: TestPartner,
  webhookId: string,
  event?: string,
): Promise<{ id: string; event: string }> {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/webhooks/${webhookId}/test`,
    headers: await devAuth(t, partner),
    payload: event === undefined ? undefined : { event },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Sends a test event (a ping, or a sample of `event`) and answers the request the endpoint received for it once DELIVERED. */
export async function deliveredTestEvent(
  t: TestApp,
  receiver: WebhookReceiver,
  endpoint: { partner: TestPartner; hook: { id: string }; path: string },
  event?: string,
): Promise<ReceivedRequest> {
  const { partner, hook, path } = endpoint;
  const queued = await sendTestEvent(t, partner, hook.id, event);
  await waitForDeliveries(t, partner, hook.id, (d) => d.some((x) => x.id === queued.id && x.status === 'DELIVERED'));
  const got = receiver.requestsTo(path).find((r) => r.headers['x-partner-delivery'] === queued.id);
  if (!got) throw new Error('not received');
  return got;
}

/** A developer API call as the partner (signed now), or with no credentials for `null`. */
export async function callAs(
  t: TestApp,
  partner: TestPartner | null,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return t.live.inject({ method, url, headers: partner ? await devAuth(t, partner) : {}, payload: payload as never });
}

/** GET /v1/developer/deliveries/{id} as the partner: the delivery with its payload and attempts. */
export async function deliveryDetail(t: TestApp, partner: TestPartner, deliveryId: string) {
  const res = await callAs(t, partner, 'GET', `/v1/developer/deliveries/${deliveryId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export const ALL_EVENTS: WebhookEvent[] = [
  'order.placed',
  'order.status_changed',
  'order.delivered',
  'order.cancelled',
  'batch.completed',
  'order.assigned_to_partner',
  'order.courier_location',
];

/** A PartnerOrder snapshot as the orders module writes it into the outbox (customer filled). */
export function orderSnapshot(code: string, status: OrderStatus = 'PLACED'): Record<string, unknown> {
  return {
    code,
    status,
    paymentMethod: 'COD',
    paymentStatus: 'UNPAID',
    totalQepik: 1000,
    codAmountQepik: 1000,
    area: null,
    zone: null,
    timeWindowStart: null,
    timeWindowEnd: null,
    items: [{ name: { az: 'a', ru: 'b', en: 'c' }, qty: 1, unitPriceQepik: 1000 }],
    timeline: [{ status, at: '2030-01-01T00:00:00.000Z' }],
    customer: { name: 'Aysel', phone: '+994501234567', address: { street: 'Nizami 1', details: null, lat: null, lng: null } },
    batch: null,
    partnerAssignedAt: null,
    updatedAt: '2030-01-01T00:00:00.000Z',
  };
}

/** Appends an order event to the outbox as the orders module would (which wakes the worker after COMMIT). */
export async function appendOrderEvent(
  t: TestApp,
  input: { type: WebhookEvent; environment?: ApiKeyEnvironment; assignedKeyId: string | null; code?: string },
): Promise<string> {
  return commitOrderChange(t.ctx, (tx) =>
    appendOutbox(
      {
        type: input.type,
        environment: input.environment ?? 'LIVE',
        orderId: null,
        assignedKeyId: input.assignedKeyId,
        data: { order: orderSnapshot(input.code ?? `ORD-${Math.random().toString(36).slice(2, 8)}`) as never },
        createdAt: t.clock.now(),
      },
      tx,
    ),
  );
}

export async function deliveriesVia(
  t: TestApp,
  partner: TestPartner,
  webhookId: string,
  query = '',
): Promise<DeveloperDelivery[]> {
  const res = await t.live.inject({
    method: 'GET',
    url: `/v1/developer/webhooks/${webhookId}/deliveries?pageSize=50${query}`,
    headers: await devAuth(t, partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

/** Waits (real time, bounded generously: the machine may be busy) until the webhook's deliveries satisfy `check`; returns them. */
export async function waitForDeliveries(
  t: TestApp,
  partner: TestPartner,
  webhookId: string,
  check: (items: DeveloperDelivery[]) => boolean,
  timeoutMs = 15_000,
): Promise<DeveloperDelivery[]> {
  let items: DeveloperDelivery[] = [];
  return waitFor(
    async () => {
      items = await deliveriesVia(t, partner, webhookId);
      return check(items) && items;
    },
    {
      timeoutMs,
      what: () => `the deliveries of ${webhookId} (last seen: ${JSON.stringify(items.map((d) => [d.event, d.status]))})`,
    },
  );
}

/** Takes a scope away from a key, as a partner editing it would. */
export async function removeScope(t: TestApp, keyId: string, scope: ApiKeyScope): Promise<void> {
  await t.ctx.db.query('UPDATE api_keys SET scopes = array_remove(scopes, $2) WHERE id = $1', [keyId, scope]);
}

/**
 * Stripe's verification scheme, written here from its documentation: the header is comma-separated
 * `k=v` pairs; `t` the timestamp; every `v1` a candidate; the body is accepted when any v1 equals the
 * hex HMAC-SHA256 of `${t}.${body}` keyed with the secret, and t is within the tolerance.
 */
export function stripeSchemeAccepts(body: string, header: string, secret: string, toleranceSec = 300): boolean {
  const pairs = header.split(',').map((p) => p.split('='));
  const t = Number(pairs.find(([k]) => k === 't')?.[1]);
  if (!Number.isFinite(t) || Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex'));
  return pairs
    .filter(([k]) => k === 'v1')
    .some(([, v]) => v !== undefined && v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}

/** Resolves once every outbox row has been fanned out. */
export async function outboxDrained(t: TestApp): Promise<void> {
  await waitFor(async () => {
    const [{ n }] = await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE processed_at IS NULL');
    return n === 0;
  });
}

/** An HMAC check written independently of src/modules/webhooks/delivery/signature.ts. */
export function independentlyVerified(request: ReceivedRequest, secret: string): boolean {
  const header = String(request.headers['x-partner-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${request.body}`).digest('hex');
  return expected === match[2];
}
