/**
 * POST /v1/developer/webhooks/{id}/rotate-secret (docs/decisions-log.md, 'Webhook operations'): during
 * the grace a delivery is signed with both secrets and Stripe's verification scheme accepts it with
 * either; at most two secrets; both stored encrypted.
 */
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { giveOlderFormSecret, type TestPartner } from '../../../test/factories.js';
import type { ReceivedRequest } from '../../../test/webhook-receiver.js';
import {
  callAs,
  createEndpoint,
  deliveredTestEvent,
  HOUR_MS,
  receiver,
  setUpAppWithReceiver,
  startTestWorker,
  stripeSchemeAccepts,
  t,
  type WebhookEndpoint,
} from './webhooks.test-helpers.js';

const stripe = new Stripe('sk_test_not_used');

setUpAppWithReceiver();

describe('POST /v1/developer/webhooks/{id}/rotate-secret', () => {
  async function rotate(partner: TestPartner, webhookId: string, payload?: unknown) {
    const res = await callAs(t, partner, 'POST', `/v1/developer/webhooks/${webhookId}/rotate-secret`, payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { id: string; secret: string; previousSecretExpiresAt: string; isActive: boolean };
  }

  const deliveredTest = (h: WebhookEndpoint): Promise<ReceivedRequest> => deliveredTestEvent(t, receiver, h);

  it("during the grace a delivery carries both signatures and Stripe's scheme accepts it with either secret; after it, only the new one", async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const oldSecret = h.hook.secret;
    const before = t.clock.nowMs();
    const rotated = await rotate(h.partner, h.hook.id, { graceHours: 2 });
    const rotatedBy = t.clock.nowMs();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated).toMatchObject({ id: h.hook.id, isActive: true });
    expect(Date.parse(rotated.previousSecretExpiresAt) - 2 * HOUR_MS).toBeGreaterThanOrEqual(before);
    expect(Date.parse(rotated.previousSecretExpiresAt) - 2 * HOUR_MS).toBeLessThanOrEqual(rotatedBy);

    const during = await deliveredTest(h);
    const header = String(during.headers['x-partner-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of [rotated.secret, oldSecret]) {
      expect(stripeSchemeAccepts(during.body, header, secret)).toBe(true);
      expect(stripe.webhooks.constructEvent(during.body, header, secret).id).toBe(JSON.parse(during.body).id);
    }
    expect(stripeSchemeAccepts(during.body, header, 'whsec_wrong')).toBe(false);

    t.clock.advance((2 * HOUR_MS + 1000) / 1000);
    const after = await deliveredTest(h);
    const single = String(after.headers['x-partner-signature']);
    expect(single).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stripeSchemeAccepts(after.body, single, rotated.secret)).toBe(true);
    expect(stripeSchemeAccepts(after.body, single, oldSecret)).toBe(false);
  });

  it('keeps at most two secrets: rotating again ends the older grace; graceHours 0 signs with the new one only', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const first = h.hook.secret;
    const second = (await rotate(h.partner, h.hook.id)).secret;
    const third = await rotate(h.partner, h.hook.id, { graceHours: 168 });
    expect(Date.parse(third.previousSecretExpiresAt) - t.clock.nowMs()).toBeGreaterThan(167 * HOUR_MS);
    const got = await deliveredTest(h);
    const header = String(got.headers['x-partner-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(stripeSchemeAccepts(got.body, header, third.secret)).toBe(true);
    expect(stripeSchemeAccepts(got.body, header, second)).toBe(true);
    expect(stripeSchemeAccepts(got.body, header, first)).toBe(false);

    const now = await rotate(h.partner, h.hook.id, { graceHours: 0 });
    expect(Date.parse(now.previousSecretExpiresAt)).toBeLessThanOrEqual(t.clock.nowMs());
    const next = await deliveredTest(h);
    expect(String(next.headers['x-partner-signature']).match(/v1=/g)).toHaveLength(1);
    expect(stripeSchemeAccepts(next.body, String(next.headers['x-partner-signature']), now.secret)).toBe(true);
  });

  it('stores both secrets encrypted, never in clear', async () => {
    const h = await createEndpoint(t, receiver);
    const rotated = await rotate(h.partner, h.hook.id);
    const [row] = await t.ctx.db.query<{ secret_ciphertext: string; previous_secret_ciphertext: string }>(
      'SELECT secret_ciphertext, previous_secret_ciphertext FROM webhooks WHERE id = $1',
      [h.hook.id],
    );
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(rotated.secret.slice(6));
    expect(stored).not.toContain(h.hook.secret.slice(6));
    expect(t.ctx.secrets.decrypt(row.secret_ciphertext)).toBe(rotated.secret);
    expect(t.ctx.secrets.decrypt(row.previous_secret_ciphertext)).toBe(h.hook.secret);
    const list = await callAs(t, h.partner, 'GET', '/v1/developer/webhooks');
    expect(list.body).not.toContain('whsec_');
  });

  it('refuses graceHours outside 0–168 and unknown fields, naming the field', async () => {
    const h = await createEndpoint(t, receiver);
    const url = `/v1/developer/webhooks/${h.hook.id}/rotate-secret`;
    for (const [payload, field] of [
      [{ graceHours: -1 }, 'graceHours'],
      [{ graceHours: 169 }, 'graceHours'],
      [{ graceHours: 1.5 }, 'graceHours'],
      [{ graceHours: '24' }, 'graceHours'],
      [{ grace: 24 }, 'grace'],
    ] as const) {
      const res = await callAs(t, h.partner, 'POST', url, payload);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
  });
});

describe('GET /v1/developer/webhooks/{id}/signing-secret', () => {
  it('says which form the current secret was made in, suggests rotating a base64url one, and never shows the secret', async () => {
    const h = await createEndpoint(t, receiver);
    const form = async () => {
      const res = await callAs(t, h.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/signing-secret`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).not.toContain('whsec_');
      return res.json();
    };
    expect(await form()).toEqual({ webhookId: h.hook.id, form: 'base64', rotationSuggested: false });

    // A secret of the earlier form: whsec_ + base64url of 32 bytes (43 characters, unpadded).
    await giveOlderFormSecret(t.ctx, h.hook.id);
    expect(await form()).toEqual({ webhookId: h.hook.id, form: 'base64url', rotationSuggested: true });

    // Rotated: the new secret is standard base64.
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/webhooks/${h.hook.id}/rotate-secret`, { graceHours: 1 });
    expect(res.statusCode, res.body).toBe(200);
    expect(await form()).toEqual({ webhookId: h.hook.id, form: 'base64', rotationSuggested: false });
  });

  it("answers 404 for another partner's webhook and for an id that is not one", async () => {
    const h = await createEndpoint(t, receiver);
    const other = await createEndpoint(t, receiver);
    expectError(
      await callAs(t, other.partner, 'GET', `/v1/developer/webhooks/${h.hook.id}/signing-secret`),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(await callAs(t, h.partner, 'GET', '/v1/developer/webhooks/not-a-uuid/signing-secret'), 404, 'ERR_NOT_FOUND');
  });
});
