/**
 * A webhook is managed through its key: once the key has lost webhooks:manage, every route that reaches
 * the webhook, its deliveries or its operations answers 403 ERR_API_KEY_SCOPE (creating one with such a
 * key: webhooks-create-list.test.ts). The bearer token itself is fine; the refusal is about the key.
 */
import { describe, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { seedDeliveryLog } from './webhook-history.test-helpers.js';
import { HOUR_MS, partnerWithKey, removeScope, setUpAppWithReceiver, t, webhookOf } from './webhooks.test-helpers.js';

setUpAppWithReceiver();

/** Each route, given the webhook and one of its (DEAD) deliveries. */
const ROUTES: Array<{
  route: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: (hookId: string, deliveryId: string) => string;
  payload?: () => unknown;
}> = [
  {
    route: 'PATCH /v1/developer/webhooks/{id}',
    method: 'PATCH',
    url: (h) => `/v1/developer/webhooks/${h}`,
    payload: () => ({ isActive: false }),
  },
  { route: 'DELETE /v1/developer/webhooks/{id}', method: 'DELETE', url: (h) => `/v1/developer/webhooks/${h}` },
  { route: 'GET /v1/developer/webhooks/{id}/deliveries', method: 'GET', url: (h) => `/v1/developer/webhooks/${h}/deliveries` },
  { route: 'POST /v1/developer/webhooks/{id}/test', method: 'POST', url: (h) => `/v1/developer/webhooks/${h}/test` },
  { route: 'GET /v1/developer/webhooks/{id}/health', method: 'GET', url: (h) => `/v1/developer/webhooks/${h}/health` },
  {
    route: 'POST /v1/developer/webhooks/{id}/recover',
    method: 'POST',
    url: (h) => `/v1/developer/webhooks/${h}/recover`,
    payload: () => ({ since: new Date(t.clock.nowMs() - HOUR_MS).toISOString() }),
  },
  { route: 'GET /v1/developer/deliveries/{id}', method: 'GET', url: (_, d) => `/v1/developer/deliveries/${d}` },
  {
    route: 'POST /v1/developer/deliveries/{id}/redeliver',
    method: 'POST',
    url: (_, d) => `/v1/developer/deliveries/${d}/redeliver`,
  },
];

describe('a webhook whose key no longer has webhooks:manage', () => {
  for (const { route, method, url, payload } of ROUTES) {
    it(`${route} answers 403 ERR_API_KEY_SCOPE`, async () => {
      const { partner, key } = await partnerWithKey(t);
      const hook = await webhookOf(t, partner, key.id);
      const [deliveryId] = await seedDeliveryLog(t, partner.id, hook.id, 1, ['DEAD']);
      await removeScope(t, key.id, 'webhooks:manage');
      const res = await t.live.inject({
        method,
        url: url(hook.id, deliveryId),
        headers: partner.auth,
        payload: payload?.() as never,
      });
      expectError(res, 403, 'ERR_API_KEY_SCOPE');
    });
  }
});
