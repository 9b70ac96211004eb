/**
 * Sample events (POST /v1/developer/webhooks/{id}/test with an event kind) and the event catalog
 * (GET /v1/developer/event-types): every kind, really signed, valid against its catalog schema
 * (docs/decisions-log.md, 'Webhook operations').
 */
import Value from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { WEBHOOK_EVENTS } from '../../shared/schemas.js';
import { EVENT_SCHEMAS, EVENT_TYPES, type EventType, standaloneSchema } from './event-catalog.js';
import {
  callAs,
  createEndpoint,
  deliveryDetail,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  startTestWorker,
  stripeSchemeAccepts,
  t,
  waitForDeliveries,
} from './webhooks.test-helpers.js';

setUpAppWithReceiver();

describe('POST /v1/developer/webhooks/{id}/test with an event kind', () => {
  it('sends a realistic, really signed sample of every kind, valid against its catalog schema, with an evt_test_ id', async () => {
    startTestWorker(t);
    // payments:read: the payment kinds' samples need it (docs/payments.md).
    const h = await createEndpoint(t, receiver, {
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'],
    });
    const sent = new Map<string, EventType>();
    for (const kind of EVENT_TYPES) sent.set((await sendTestEvent(t, h.partner, h.hook.id, kind)).id, kind);
    await waitForDeliveries(
      t,
      h.partner,
      h.hook.id,
      (d) => d.length === EVENT_TYPES.length && d.every((x) => x.status === 'DELIVERED'),
    );
    for (const request of receiver.requestsTo(h.path)) {
      const kind = sent.get(String(request.headers['x-partner-delivery'])) as EventType;
      const body = JSON.parse(request.body);
      expect(request.headers['x-partner-event']).toBe(kind);
      expect(body.type).toBe(kind);
      expect(body.id).toMatch(/^evt_test_[0-9a-f]{32}$/);
      expect(body.environment).toBe('live');
      expect([...Value.Errors(EVENT_SCHEMAS[kind], body)], kind).toEqual([]);
      expect(stripeSchemeAccepts(request.body, String(request.headers['x-partner-signature']), h.hook.secret)).toBe(true);
    }
  });

  it("shows the sample's order as the key sees orders: no customer without orders:pii", async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver, { scopes: ['orders:read', 'webhooks:manage'] });
    const queued = await sendTestEvent(t, h.partner, h.hook.id, 'order.delivered');
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const body = JSON.parse((await deliveryDetail(t, h.partner, queued.id)).payload);
    expect(body.data.order.customer).toBeNull();
    expect(body.data).toMatchObject({ previousStatus: 'EN_ROUTE', order: { status: 'DELIVERED' } });
  });

  it("sends an offer kind's sample with the PartnerOffer itself as data, its order untouched (no customer field, even without orders:pii)", async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver, { scopes: ['orders:read', 'webhooks:manage'] });
    const kinds = ['offer.created', 'offer.expired', 'offer.withdrawn'] as const;
    const queued = [];
    for (const kind of kinds) queued.push(await sendTestEvent(t, h.partner, h.hook.id, kind));
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.length === 3 && d.every((x) => x.status === 'DELIVERED'));
    for (const [i, kind] of kinds.entries()) {
      const body = JSON.parse((await deliveryDetail(t, h.partner, queued[i].id)).payload);
      expect(body.data.id, kind).toMatch(/^ofr_/);
      expect(body.data).not.toHaveProperty('offer');
      expect(body.data.order).not.toHaveProperty('customer');
      expect([...Value.Errors(EVENT_SCHEMAS[kind], body)], kind).toEqual([]);
    }
  });

  it('refuses an unknown kind naming the field, and sends a ping when the body names no kind', async () => {
    const h = await createEndpoint(t, receiver);
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/test`, { event: 'order.teleported' });
    expectError(res, 400, 'ERR_VALIDATION');
    expect(res.json().details[0].field).toBe('event');
    expect((await sendTestEvent(t, h.partner, h.hook.id)).event).toBe('ping');
  });
});

describe('GET /v1/developer/event-types', () => {
  it('is public and lists ping and every WebhookEvent kind, each with its envelope schema and a valid example', async () => {
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/event-types' });
    expect(res.statusCode).toBe(200);
    const { items } = res.json() as { items: Array<{ type: string; description: string; schema: object; example: unknown }> };
    expect(items.map((i) => i.type)).toEqual(['ping', ...WEBHOOK_EVENTS]);
    for (const item of items) {
      expect(item.description.length).toBeGreaterThan(20);
      expect(item.schema).toEqual(standaloneSchema(EVENT_SCHEMAS[item.type as EventType]));
      expect([...Value.Errors(EVENT_SCHEMAS[item.type as EventType], item.example)], item.type).toEqual([]);
    }
    expect((await t.sandbox.inject({ method: 'GET', url: '/v1/developer/event-types' })).statusCode).toBe(200);
  });
});
