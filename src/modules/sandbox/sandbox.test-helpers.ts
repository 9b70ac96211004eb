/**
 * Helpers for the sandbox simulator tests: every order, move and webhook goes through the HTTP API
 * (partner sandbox routes, operator API, developer API), as a partner and an operator would.
 */
import { expect } from 'vitest';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import type { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { ApiKeyScope, OrderStatus } from '../../shared/schemas.js';
import { platformPathTo } from '../orders/state-machine.js';
import { ALL_EVENTS, createWebhookVia, devAuth } from '../webhooks/webhooks.test-helpers.js';
import { SANDBOX_START_STATUSES } from './sandbox.schemas.js';

export const ALL_SCOPES: ApiKeyScope[] = ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'];

export interface SandboxSetup {
  partner: TestPartner;
  key: TestKey;
  /** The receiver path of the key's webhook (subscribed to every event), when it has one. */
  path: string;
  webhookId: string | null;
}

let paths = 0;

/** A partner with a sandbox key and, unless `webhook` is false, a webhook of the key on `receiver`. */
export async function sandboxSetup(
  t: TestApp,
  receiver: WebhookReceiver | null,
  options: { scopes?: ApiKeyScope[]; receivesAllOrders?: boolean; partner?: TestPartner } = {},
): Promise<SandboxSetup> {
  const partner = options.partner ?? (await createPartner(t.ctx));
  const key = await createKey(t.ctx, partner.id, {
    environment: 'SANDBOX',
    scopes: options.scopes ?? ALL_SCOPES,
    receivesAllOrders: options.receivesAllOrders,
  });
  const path = `/sandbox-${++paths}`;
  if (!receiver) return { partner, key, path, webhookId: null };
  const hook = await createWebhookVia(t, await devAuth(t, partner), {
    apiKeyId: key.id,
    url: receiver.url(path),
    events: ALL_EVENTS,
  });
  return { partner, key, path, webhookId: hook.id };
}

/** Rotates the setup's key through the developer API; answers the successor (the old key keeps its grace). */
export async function rotateKey(t: TestApp, s: Pick<SandboxSetup, 'partner' | 'key'>): Promise<TestKey> {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/keys/${s.key.id}/rotate`,
    headers: await devAuth(t, s.partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  return { ...s.key, id: res.json().id, key: res.json().key, headers: { 'x-api-key': res.json().key } };
}

export function sandboxPost(t: TestApp, key: TestKey, url: string, payload?: unknown, listener: 'live' | 'sandbox' = 'sandbox') {
  return t[listener].inject({
    method: 'POST',
    url,
    headers: key.headers,
    ...(payload === undefined ? {} : { payload: payload as never }),
  });
}

/** A test order of `key` (POST /v1/partner/sandbox/orders), in `status` (any status on the platform path). */
export async function testOrder(
  t: TestApp,
  key: TestKey,
  status: OrderStatus = 'PACKED',
  body: Record<string, unknown> = {},
): Promise<{ code: string; status: OrderStatus; paymentMethod: string; codAmountQepik: number }> {
  const path = platformPathTo(status);
  if (!path) throw new Error(`${status} is not reachable from PLACED`);
  // The furthest status a test order can start in, then the marketplace's moves.
  const start = [...path].reverse().find((step) => SANDBOX_START_STATUSES.includes(step)) ?? 'PLACED';
  const res = await sandboxPost(t, key, '/v1/partner/sandbox/orders', { ...body, status: start });
  expect(res.statusCode, res.body).toBe(201);
  const order = res.json();
  for (const next of path.slice(path.indexOf(start) + 1)) {
    const moved = await platformMove(t, key, order.code, next);
    expect(moved.statusCode, moved.body).toBe(200);
  }
  return { ...order, status };
}

export function platformMove(t: TestApp, key: TestKey, code: string, status: string) {
  return sandboxPost(t, key, `/v1/partner/sandbox/orders/${code}/platform-status`, { status });
}

export function partnerEvent(t: TestApp, key: TestKey, code: string, body: Record<string, unknown>, idempotencyKey?: string) {
  return t.sandbox.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: idempotencyKey === undefined ? key.headers : { ...key.headers, 'idempotency-key': idempotencyKey },
    payload: body as never,
  });
}

export interface ReceivedEvent {
  id: string;
  type: string;
  environment: string;
  data: {
    order?: { code: string; status: string; customer: unknown };
    previousStatus?: string;
    batch?: { code: string; status: string; orderCodes: string[] };
  };
}

/** The event envelopes `receiver` got on `path`, parsed. */
export function receivedOn(receiver: WebhookReceiver, path: string): ReceivedEvent[] {
  return receiver.requestsTo(path).map((r) => JSON.parse(r.body) as ReceivedEvent);
}

/** Waits until `receiver` got on `path` every event id of `ids` (real time, bounded). */
export async function waitForEvents(receiver: WebhookReceiver, path: string, ids: string[]): Promise<ReceivedEvent[]> {
  const all = await waitFor((): ReceivedEvent[] | false => {
    const got = receivedOn(receiver, path);
    const seen = new Set(got.map((e) => e.id));
    return ids.every((id) => seen.has(id)) && got;
  });
  return all || [];
}

export interface OutboxEvent {
  event_id: string;
  type: string;
  environment: string;
  assigned_key_id: string | null;
  data: { order?: { code: string; status: string }; previousStatus?: string; batch?: unknown };
}

/** The order events of the orders of `keyId` (as assigned when written), oldest first; their payment intents' rows left out. */
export async function outboxOfKey(t: TestApp, keyId: string): Promise<OutboxEvent[]> {
  return t.ctx.db.query<OutboxEvent>(
    `SELECT event_id, type, environment, assigned_key_id, data FROM outbox
      WHERE assigned_key_id = $1 AND type NOT LIKE 'payment\\_intent.%' ORDER BY id`,
    [keyId],
  );
}
