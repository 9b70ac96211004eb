/**
 * The contract test: real answers of every partner and developer route, success and error, validate
 * against the response schemas of the document itself, so code and document cannot drift apart.
 */
import { describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { type AnswerCheck, documentedAnswerCheck, setUpServedDocuments } from './openapi.test-helpers.js';

let t: TestApp;
let expectDocumented: AnswerCheck;
// As the app serves it in development (no public URLs configured).
setUpServedDocuments((served) => ([t, expectDocumented] = [served.t, documentedAnswerCheck(served.full)]), {});

/**
 * Sends a request to `operation` ('METHOD /path/{template}'; the path itself unless `url` says otherwise)
 * and checks the answer against the document; answers it.
 */
async function documented(
  operation: string,
  request: { url?: string; headers?: Record<string, string>; payload?: unknown; listener?: 'live' | 'sandbox' } = {},
) {
  const [method, path] = operation.split(' ') as ['GET' | 'POST' | 'PATCH' | 'DELETE', string];
  const res = await t[request.listener ?? 'live'].inject({
    method,
    url: request.url ?? path,
    headers: request.headers,
    payload: request.payload as never,
  });
  expectDocumented(method, path, res);
  return res;
}

describe('real answers match the document', () => {
  it('every partner and developer route, success and error answers', async () => {
    const admin = await createUser(t.ctx, 'ADMIN');
    const partner = await createPartner(t.ctx);
    const dev = partner.auth;

    // Developer keys.
    const created = (
      await documented('POST /v1/developer/keys', {
        headers: dev,
        payload: {
          name: 'Contract',
          environment: 'LIVE',
          scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
        },
      })
    ).json();
    const key = { 'x-api-key': created.key as string };
    await documented('GET /v1/developer/keys', { headers: dev });
    await documented('GET /v1/developer/limits', { headers: dev });
    await documented('GET /v1/developer/keys/{id}/usage', { url: `/v1/developer/keys/${created.id}/usage?days=3`, headers: dev });
    await documented('POST /v1/developer/keys', { headers: dev, payload: { name: 'x' } });

    // Orders through the operator API, then the partner routes.
    const order = await t.live.inject({
      method: 'POST',
      url: '/v1/admin/orders',
      headers: admin.auth,
      payload: {
        environment: 'live',
        paymentMethod: 'COD',
        totalQepik: 2500,
        codAmountQepik: 2500,
        items: [{ name: { az: 'Çay', ru: 'Чай', en: 'Tea' }, qty: 1, unitPriceQepik: 2500 }],
        customer: { name: 'Aysel', phone: '+994501234567', address: { street: 'Nizami 10' } },
      },
    });
    expect(order.statusCode).toBe(201);
    const code = order.json().code as string;
    const operate = (url: string, payload: unknown) =>
      t.live.inject({ method: 'POST', url, headers: admin.auth, payload: payload as never });
    expect((await operate(`/v1/admin/orders/${code}/assign`, { apiKeyId: created.id })).statusCode).toBe(200);
    for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED']) {
      expect((await operate(`/v1/admin/orders/${code}/status`, { status })).statusCode).toBe(200);
    }
    await documented('GET /v1/partner/me', { headers: key });
    await documented('GET /v1/partner/orders', { url: '/v1/partner/orders?pageSize=5', headers: key });
    await documented('GET /v1/partner/orders', { url: '/v1/partner/orders?pageSize=500', headers: key });
    await documented('GET /v1/partner/orders/{code}', { url: `/v1/partner/orders/${code}`, headers: key });
    await documented('GET /v1/partner/orders/{code}', { url: '/v1/partner/orders/NOPE', headers: key });
    await documented('GET /v1/partner/me', { headers: { 'x-api-key': `svc_live_${'Q'.repeat(32)}` } });
    // The same event twice: the second is refused as a transition from where the order now is.
    for (let i = 0; i < 2; i++) {
      await documented('POST /v1/partner/orders/{code}/events', {
        url: `/v1/partner/orders/${code}/events`,
        headers: key,
        payload: { type: 'PICKED_UP' },
      });
    }
    await documented('POST /v1/partner/sandbox/orders', { headers: key });
    const sandboxKey = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    await documented('POST /v1/partner/sandbox/orders', { headers: sandboxKey.headers, listener: 'sandbox' });

    // Webhooks and deliveries.
    const webhook = (
      await documented('POST /v1/developer/webhooks', {
        headers: dev,
        payload: { apiKeyId: created.id, url: 'http://localhost:9/hook', events: ['order.status_changed'] },
      })
    ).json();
    await documented('POST /v1/developer/webhooks', {
      headers: dev,
      payload: { apiKeyId: created.id, url: 'ftp://x', events: ['order.placed'] },
    });
    await documented('GET /v1/developer/webhooks', { headers: dev });
    const hookUrl = `/v1/developer/webhooks/${webhook.id}`;
    await documented('PATCH /v1/developer/webhooks/{id}', {
      url: hookUrl,
      headers: dev,
      payload: { events: ['order.placed', 'order.delivered'] },
    });
    const delivery = (await documented('POST /v1/developer/webhooks/{id}/test', { url: `${hookUrl}/test`, headers: dev })).json();
    await documented('GET /v1/developer/webhooks/{id}/deliveries', { url: `${hookUrl}/deliveries`, headers: dev });
    for (const id of [delivery.id, 'nope']) {
      await documented('POST /v1/developer/deliveries/{id}/redeliver', {
        url: `/v1/developer/deliveries/${id}/redeliver`,
        headers: dev,
      });
    }
    // Webhook operations (docs/decisions-log.md, 'Webhook operations'): answers and refusals.
    const test = (payload: unknown) =>
      documented('POST /v1/developer/webhooks/{id}/test', { url: `${hookUrl}/test`, headers: dev, payload });
    const sampled = await test({ event: 'order.delivered' });
    await test({ event: 'order.teleported' });
    for (const id of [sampled.json().id, 'nope']) {
      await documented('GET /v1/developer/deliveries/{id}', { url: `/v1/developer/deliveries/${id}`, headers: dev });
    }
    const since = new Date(t.clock.nowMs() - 3_600_000).toISOString();
    for (const payload of [{ since }, { since: '2001-01-01T00:00:00.000Z' }]) {
      await documented('POST /v1/developer/webhooks/{id}/recover', { url: `${hookUrl}/recover`, headers: dev, payload });
    }
    await documented('GET /v1/developer/webhooks/{id}/health', { url: `${hookUrl}/health`, headers: dev });
    await documented('GET /v1/developer/webhooks/{id}/signing-secret', { url: `${hookUrl}/signing-secret`, headers: dev });
    for (const payload of [{ graceHours: 2 }, { graceHours: 500 }]) {
      await documented('POST /v1/developer/webhooks/{id}/rotate-secret', {
        url: `${hookUrl}/rotate-secret`,
        headers: dev,
        payload,
      });
    }
    await documented('GET /v1/developer/event-types');
    // Deleted, then gone.
    for (let i = 0; i < 2; i++) await documented('DELETE /v1/developer/webhooks/{id}', { url: hookUrl, headers: dev });

    // Rotation and revocation last: they end the key.
    const keyUrl = `/v1/developer/keys/${created.id}`;
    await documented('POST /v1/developer/keys/{id}/rotate', { url: `${keyUrl}/rotate`, headers: dev });
    await documented('DELETE /v1/developer/keys/{id}', { url: keyUrl, headers: dev });
    await documented('POST /v1/developer/keys/{id}/rotate', { url: `${keyUrl}/rotate`, headers: dev });
    await documented('GET /v1/developer/keys');
    await documented('GET /v1/developer/keys', { headers: admin.auth });
  });
});
