/**
 * Webhooks through the SDK against the real app (sdk.test-helpers.ts): the developer operations, and
 * verifyWebhook on real signed deliveries received as the SDK README shows, a secret rotation included.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { orderFor } from '../../../src/modules/orders/orders.test-helpers.js';
import { computeSignature, signatureHeader } from '../../../src/modules/webhooks/delivery/signature.js';
import { createPartner, type TestPartner } from '../../../test/factories.js';
import { type DeveloperClient, type PartnerClient, verifyWebhook, WebhookVerificationError } from '../src/index.js';
import {
  admin,
  expectApiError,
  expectOperationsExercised,
  partnerClient,
  type Receiver,
  setUpSdkApp,
  signedIn,
  startReceiver,
  t,
  WAIT,
} from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

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

    const sent = await dev.GET('/v1/developer/deliveries/{id}/request-headers', { params: { path: { id: ping.id } } });
    expect(sent.attempts[0].headers['webhook-id']).toBe(first.event?.id);

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
    expect(await dev.webhooks.signingSecret(hookId)).toEqual({ webhookId: hookId, form: 'base64', rotationSuggested: false });

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

expectOperationsExercised(SDK_COVERAGE.webhooks);
