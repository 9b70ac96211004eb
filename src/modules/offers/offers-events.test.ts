/**
 * Offer events (docs/offers.md, "Events") out of a running worker: the webhook kinds reach only the
 * offered key's webhooks subscribed to them, with the PartnerOffer itself as `data`; the expiry is
 * recorded and announced by the sweep after the deadline without any request; the realtime channel
 * tells the partner's users and operators (`{ offer }`); and the go-live checklist counts an
 * offer.created answered 2xx.
 */
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import type { WebhookEvent } from '../../shared/schemas.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { openRealtime } from '../realtime/realtime.test-helpers.js';
import { createWebhookVia, devAuth } from '../webhooks/webhooks.test-helpers.js';
import type { PartnerOffer } from './offers.schemas.js';
import { accept, decline, offeredOrder, withdraw } from './offers.test-helpers.js';

let t: TestApp;
let worker: Worker;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await createTestApp();
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  receiver = await WebhookReceiver.start();
  worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 });
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
  await t.close();
});

let paths = 0;
function bodies(path: string): Array<{ id: string; type: string; data: PartnerOffer }> {
  return receiver.requestsTo(path).map((r) => JSON.parse(r.body));
}
/** The events a path got, each once (deliveries are at least once: a receiver de-duplicates by id). */
function unique(path: string) {
  const seen = new Set<string>();
  return bodies(path).filter((b) => !seen.has(b.id) && seen.add(b.id));
}
function collect(socket: Socket, event: string): Array<{ offer: { id: string; status: string } }> {
  const got: Array<{ offer: { id: string; status: string } }> = [];
  socket.on(event, (payload) => got.push(payload));
  return got;
}

describe('offer webhooks', () => {
  it('reach only the offered key’s webhooks subscribed to them: created, withdrawn, expired', async () => {
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const allOrders = await createKey(t.ctx, partner.id, { receivesAllOrders: true });
    const auth = await devAuth(t, partner);
    const subscribed = `/offers-${++paths}`;
    const ordersOnly = `/offers-${++paths}`;
    const sees = `/offers-${++paths}`;
    const kinds: WebhookEvent[] = ['offer.created', 'offer.expired', 'offer.withdrawn'];
    await createWebhookVia(t, auth, { apiKeyId: key.id, url: receiver.url(subscribed), events: kinds });
    await createWebhookVia(t, auth, {
      apiKeyId: key.id,
      url: receiver.url(ordersOnly),
      events: ['order.placed', 'order.status_changed'],
    });
    await createWebhookVia(t, auth, { apiKeyId: allOrders.id, url: receiver.url(sees), events: [...kinds, 'order.placed'] });

    const withdrawn = await offeredOrder(t, admin, key.id);
    expect((await withdraw(t, admin, withdrawn.id)).statusCode).toBe(200);
    const expiring = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    // Delivered before the clock moves (an attempt in flight across a jump of the clock may be sent again).
    await waitFor(() => unique(subscribed).length === 3, { what: 'three offer events delivered' });
    // No request after the deadline: the worker's sweep records and announces the expiry.
    t.clock.advance(60);
    await waitFor(() => unique(subscribed).some((b) => b.type === 'offer.expired'), { what: 'offer.expired delivered' });
    // Deliveries run concurrently, so the order of receipt is not the order of the changes.
    const got = unique(subscribed)
      .map((b) => [b.type, b.data.id, b.data.status])
      .sort();
    expect(got).toEqual(
      [
        ['offer.created', withdrawn.id, 'PENDING'],
        ['offer.withdrawn', withdrawn.id, 'WITHDRAWN'],
        ['offer.created', expiring.id, 'PENDING'],
        ['offer.expired', expiring.id, 'EXPIRED'],
      ].sort(),
    );
    // The key that receives all orders got the orders' placement, but none of another key's offers.
    await waitFor(() => bodies(sees).filter((b) => b.type === 'order.placed').length === 2);
    expect(bodies(sees).filter((b) => b.type.startsWith('offer.'))).toEqual([]);
    expect(bodies(ordersOnly).filter((b) => b.type.startsWith('offer.'))).toEqual([]);
    const rows = await t.ctx.db.query<{ status: string }>('SELECT status FROM offers WHERE id = $1', [expiring.id]);
    expect(rows[0].status).toBe('EXPIRED');
  });

  it('carry the PartnerOffer itself as data, as GET /v1/partner/offers/{id} reads it: no { offer } wrapper', async () => {
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const auth = await devAuth(t, partner);
    const path = `/offers-${++paths}`;
    const kinds: WebhookEvent[] = ['offer.created', 'offer.expired', 'offer.withdrawn'];
    await createWebhookVia(t, auth, { apiKeyId: key.id, url: receiver.url(path), events: kinds });
    const read = async (id: string) => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${id}`, headers: key.headers });
      expect(res.statusCode, res.body).toBe(200);
      return res;
    };
    /** The data of the one `type` event of offer `id`, once delivered. */
    const delivered = async (type: string, id: string) => {
      const find = () => unique(path).find((b) => b.type === type && b.data.id === id);
      await waitFor(() => find() !== undefined, { what: `${type} of ${id} delivered` });
      return find()?.data;
    };

    // Each body is compared with a read made after it arrived and before the offer changes again.
    const pulled = await offeredOrder(t, admin, key.id);
    const created = await delivered('offer.created', pulled.id);
    const pending = await read(pulled.id);
    expect(created).toEqual(pending.json());
    expect(created?.id).toMatch(/^ofr_/);
    expect(created).not.toHaveProperty('offer');
    // Fields in the order of the API's answer (the body is put in its schema's order).
    expect(JSON.stringify(created)).toBe(pending.body);

    expect((await withdraw(t, admin, pulled.id)).statusCode).toBe(200);
    const withdrawn = await delivered('offer.withdrawn', pulled.id);
    expect(withdrawn).toEqual((await read(pulled.id)).json());
    expect(withdrawn).toMatchObject({ id: pulled.id, status: 'WITHDRAWN' });

    // A row written by an earlier version ({ offer }), as a rolling restart may leave: delivered as
    // the PartnerOffer all the same.
    const oldShape = `evt_old_${pulled.id}`;
    await t.ctx.db.query(
      `INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at, partner_id)
       SELECT $2, type, environment, order_id, assigned_key_id, jsonb_build_object('offer', data), created_at, partner_id
         FROM outbox WHERE type = 'offer.created' AND data->>'id' = $1`,
      [pulled.id, oldShape],
    );
    await waitFor(() => unique(path).some((b) => b.id === oldShape), { what: 'the old-shape row delivered' });
    expect(unique(path).find((b) => b.id === oldShape)?.data).toEqual(created);

    const lapsing = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    await delivered('offer.created', lapsing.id);
    t.clock.advance(60);
    const expired = await delivered('offer.expired', lapsing.id);
    expect(expired).toEqual((await read(lapsing.id)).json());
    expect(expired).toMatchObject({ id: lapsing.id, status: 'EXPIRED', decidedAt: lapsing.expiresAt });
  });
});

describe('offer realtime events', () => {
  it('tell the partner’s users of created, withdrawn and expired offers, and operators of decisions', async () => {
    const a = await createPartner(t.ctx);
    const b = await createPartner(t.ctx);
    const operator = await createUser(t.ctx, 'ADMIN');
    const key = await createKey(t.ctx, a.id);
    const [sa, sb, sAdmin] = await Promise.all([
      openRealtime(t, a.token),
      openRealtime(t, b.token),
      openRealtime(t, operator.token),
    ]);
    const createdA = collect(sa, 'offer.created');
    const withdrawnA = collect(sa, 'offer.withdrawn');
    const createdB = collect(sb, 'offer.created');
    const acceptedAdmin = collect(sAdmin, 'offer.accepted');
    const declinedAdmin = collect(sAdmin, 'offer.declined');
    const acceptedA = collect(sa, 'offer.accepted');

    const taken = await offeredOrder(t, operator.auth, key.id);
    const passed = await offeredOrder(t, operator.auth, key.id);
    const pulled = await offeredOrder(t, operator.auth, key.id);
    expect((await accept(t, key, taken.id)).statusCode).toBe(200);
    expect((await decline(t, key, passed.id, { reason: 'TIME_WINDOW' })).statusCode).toBe(200);
    expect((await withdraw(t, operator.auth, pulled.id)).statusCode).toBe(200);

    await waitFor(
      () => createdA.length === 3 && withdrawnA.length === 1 && acceptedAdmin.length === 1 && declinedAdmin.length === 1,
    );
    expect(createdA.map((m) => m.offer.id)).toEqual([taken.id, passed.id, pulled.id]);
    expect(acceptedAdmin[0].offer).toMatchObject({ id: taken.id, status: 'ACCEPTED' });
    expect(declinedAdmin[0].offer).toMatchObject({ id: passed.id, status: 'DECLINED', declineReason: 'TIME_WINDOW' });
    expect(createdB).toEqual([]);
    expect(acceptedA).toEqual([]);
  });
});

describe('the go-live checklist', () => {
  it('marks an offer.created webhook answered 2xx', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const auth = await devAuth(t, partner);
    await createWebhookVia(t, auth, { apiKeyId: key.id, url: receiver.url(`/offers-${++paths}`), events: ['offer.created'] });
    const made = await t.sandbox.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: key.headers,
      payload: { count: 1 },
    });
    expect(made.statusCode, made.body).toBe(201);
    await waitFor(async () => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/keys/${key.id}/checklist`, headers: auth });
      return (res.json().items as Array<{ id: string; done: boolean }>).find((i) => i.id === 'webhook-offer-created')?.done;
    });
  });
});
