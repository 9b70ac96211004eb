/**
 * Helpers for the webhook tests: webhooks are created through the developer API (HTTP); domain events
 * are either produced by the real operator API or, for routing corner cases, appended to the outbox
 * with the orders module's own appendOutbox and commitOrderChange, exactly as a producer does.
 */
import { createHmac } from 'node:crypto';
import { expect, vi } from 'vitest';
import type { TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import type { ReceivedRequest } from '../../../test/webhook-receiver.js';
import type { ApiKeyEnvironment, OrderStatus, WebhookEvent } from '../../shared/schemas.js';
import { signAccessToken } from '../auth/tokens.js';
import { commitOrderChange } from '../orders/order-change.js';
import { appendOutbox } from '../orders/outbox.js';
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
  return vi.waitFor(
    async () => {
      const items = await deliveriesVia(t, partner, webhookId);
      if (!check(items)) throw new Error(`deliveries not there yet: ${JSON.stringify(items.map((d) => [d.event, d.status]))}`);
      return items;
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 15_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await fn();
      if (!value) throw new Error('condition not met yet');
      return value;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/** An HMAC check written independently of src/modules/webhooks/delivery/signature.ts. */
export function independentlyVerified(request: ReceivedRequest, secret: string): boolean {
  const header = String(request.headers['x-partner-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${request.body}`).digest('hex');
  return expected === match[2];
}
