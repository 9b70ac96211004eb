/**
 * Standard Webhooks headers on real deliveries (docs/webhook-signatures.md), checked with the
 * `standardwebhooks` reference library and the secret string exactly as the partner was shown it:
 * before and during a rotation grace, a tampered body and a stale timestamp refused, a secret made
 * in the older base64url form signing with its decoded bytes; X-Partner-Signature beside them unchanged;
 * the SDK's verifyWebhook accepting either header set.
 */
import { createHmac } from 'node:crypto';
import { WebhookVerificationError as StandardError, Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it, vi } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from '../../../packages/sdk/src/index.js';
import { giveOlderFormSecret, type TestPartner } from '../../../test/factories.js';
import type { ReceivedRequest } from '../../../test/webhook-receiver.js';
import {
  createEndpoint,
  deliveredTestEvent,
  devAuth,
  receiver,
  setUpAppWithReceiver,
  startTestWorker,
  t,
} from './webhooks.test-helpers.js';

const stripe = new Stripe('sk_test_not_used');
setUpAppWithReceiver();

/** A worker for the test, and a webhook for order.placed on a path of its own. */
async function setup() {
  startTestWorker(t, { attemptTimeoutMs: 10_000, leaseMs: 30_000, pollIntervalMs: 50 });
  return createEndpoint(t, receiver, { events: ['order.placed'] });
}

/** Sends an order.placed sample and answers the request the endpoint received for it. */
function delivered(partner: TestPartner, webhookId: string, path: string): Promise<ReceivedRequest> {
  return deliveredTestEvent(t, receiver, { partner, hook: { id: webhookId }, path }, 'order.placed');
}

function standardHeaders(r: ReceivedRequest): Record<string, string> {
  return {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
}

function refusedBy(secret: string, body: string, headers: Record<string, string>): string {
  try {
    new Webhook(secret).verify(body, headers);
    return 'accepted';
  } catch (err) {
    expect(err).toBeInstanceOf(StandardError);
    return (err as Error).message;
  }
}

describe('Standard Webhooks headers on every delivery', () => {
  it('verify with the standardwebhooks library and the secret as shown; a tampered body and a stale timestamp are refused', async () => {
    const { partner, hook, path } = await setup();
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);
    const got = await delivered(partner, hook.id, path);
    const body = JSON.parse(got.body);
    const headers = standardHeaders(got);
    // webhook-id is the event id; webhook-timestamp the same t as X-Partner-Signature.
    expect(headers['webhook-id']).toBe(body.id);
    expect(`t=${headers['webhook-timestamp']}`).toBe(String(got.headers['x-partner-signature']).split(',')[0]);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    expect(new Webhook(hook.secret).verify(got.body, headers)).toEqual(body);
    expect(refusedBy(hook.secret, got.body.replace('"order.placed"', '"order.cancelled"'), headers)).toMatch(/signature/i);
    expect(refusedBy(hook.secret, got.body, { ...headers, 'webhook-id': 'evt_other' })).toMatch(/signature/i);
    expect(refusedBy(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got.body, headers)).toMatch(/signature/i);
    // Stale: the same authentic delivery judged six minutes later (the library allows five).
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Number(headers['webhook-timestamp']) * 1000 + 6 * 60_000);
      expect(refusedBy(hook.secret, got.body, headers)).toMatch(/too old/i);
    } finally {
      vi.useRealTimers();
    }

    // X-Partner-Signature is unchanged beside them: keyed with the whole string, Stripe's scheme.
    expect(stripe.webhooks.constructEvent(got.body, String(got.headers['x-partner-signature']), hook.secret).id).toBe(body.id);
  });

  it('during a rotation grace carries one signature per live secret, and either secret verifies', async () => {
    const { partner, hook, path } = await setup();
    const before = await delivered(partner, hook.id, path);
    expect(new Webhook(hook.secret).verify(before.body, standardHeaders(before))).toMatchObject({ type: 'order.placed' });

    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/developer/webhooks/${hook.id}/rotate-secret`,
      headers: await devAuth(t, partner),
      payload: { graceHours: 2 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json().secret as string;
    expect(rotated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const during = await delivered(partner, hook.id, path);
    const headers = standardHeaders(during);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    for (const secret of [rotated, hook.secret]) {
      expect(new Webhook(secret).verify(during.body, headers)).toMatchObject({ id: headers['webhook-id'] });
      expect(stripe.webhooks.constructEvent(during.body, String(during.headers['x-partner-signature']), secret).id).toBe(
        headers['webhook-id'],
      );
    }
    expect(refusedBy(rotated, `${during.body} `, headers)).toMatch(/signature/i);

    t.clock.advance((2 * 3_600_000 + 1000) / 1000);
    const after = await delivered(partner, hook.id, path);
    expect(standardHeaders(after)['webhook-signature'].split(' ')).toHaveLength(1);
    expect(new Webhook(rotated).verify(after.body, standardHeaders(after))).toMatchObject({ type: 'order.placed' });
    expect(refusedBy(hook.secret, after.body, standardHeaders(after))).toMatch(/signature/i);
  });

  it('a secret made in the older base64url form signs with its decoded bytes; X-Partner-Signature with the string', async () => {
    const { partner, hook, path } = await setup();
    const older = await giveOlderFormSecret(t.ctx, hook.id);
    expect(older).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(older).toMatch(/[-_]/);
    const bytes = Buffer.from(older.slice('whsec_'.length), 'base64url');
    expect(bytes).toHaveLength(32);

    const got = await delivered(partner, hook.id, path);
    const headers = standardHeaders(got);
    const expected = createHmac('sha256', bytes)
      .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${got.body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    // The library reads standard base64: the same bytes re-encoded verify (what rotating gives for good).
    expect(new Webhook(`whsec_${bytes.toString('base64')}`).verify(got.body, headers)).toMatchObject({ type: 'order.placed' });
    expect(stripe.webhooks.constructEvent(got.body, String(got.headers['x-partner-signature']), older).type).toBe('order.placed');
    // The SDK takes the string as shown, with either header set.
    expect(verifyWebhook(got.body, headers, older).id).toBe(headers['webhook-id']);
    expect(verifyWebhook(got.body, got.headers as Record<string, string>, older).id).toBe(headers['webhook-id']);
  });

  it("the SDK's verifyWebhook accepts either header set and refuses a tampered body or a stale timestamp in each", async () => {
    const { partner, hook, path } = await setup();
    const got = await delivered(partner, hook.id, path);
    const standard = standardHeaders(got);
    const partnerOnly = { 'x-partner-signature': String(got.headers['x-partner-signature']) };
    const reason = (fn: () => unknown) => {
      try {
        fn();
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(WebhookVerificationError);
        return (err as WebhookVerificationError).reason;
      }
    };
    const sentAtMs = Number(standard['webhook-timestamp']) * 1000;
    for (const headers of [standard, partnerOnly, new Headers(standard), got.headers as Record<string, string>]) {
      expect(verifyWebhook(got.body, headers, hook.secret).type).toBe('order.placed');
      expect(reason(() => verifyWebhook(`${got.body} `, headers, hook.secret))).toBe('SIGNATURE_MISMATCH');
      expect(reason(() => verifyWebhook(got.body, headers, hook.secret, { now: () => sentAtMs + 301_000 }))).toBe(
        'TIMESTAMP_OUTSIDE_TOLERANCE',
      );
    }
    expect(reason(() => verifyWebhook(got.body, { ...standard, 'webhook-signature': 'v1,abc' }, hook.secret))).toBe(
      'MALFORMED_SIGNATURE',
    );
    expect(reason(() => verifyWebhook(got.body, { 'webhook-signature': standard['webhook-signature'] }, hook.secret))).toBe(
      'MISSING_SIGNATURE',
    );
    expect(reason(() => verifyWebhook(got.body, {}, hook.secret))).toBe('MISSING_SIGNATURE');
  });
});
