/**
 * GET /v1/developer/limits: the numbers the create routes enforce, as the portal reads them.
 */
import { describe, expect, it } from 'vitest';
import { expectPlainError } from '../../../test/expect-error.js';
import { createPartner, createUser } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { MAX_WEBHOOKS_PER_KEY } from '../webhooks/webhooks.schemas.js';
import { MAX_ACTIVE_KEYS } from './keys.service.js';
import { createViaApi, insertWebhook, KEY_BODY } from './keys.test-helpers.js';

let t: TestApp;
setUpTestAppWithOperator((app) => (t = app));

describe('GET /v1/developer/limits', () => {
  it('answers the limits the create routes enforce', async () => {
    const partner = await createPartner(t.ctx);
    const res = await t.live.inject({ method: 'GET', url: '/v1/developer/limits', headers: partner.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ activeKeysPerPartner: MAX_ACTIVE_KEYS, webhooksPerKey: MAX_WEBHOOKS_PER_KEY });
    const { activeKeysPerPartner, webhooksPerKey } = res.json();

    const keys = [];
    for (let i = 0; i < activeKeysPerPartner; i++) keys.push(await createViaApi(t, partner));
    expectPlainError(
      await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: KEY_BODY }),
      409,
      'ERR_API_KEY_LIMIT',
    );
    const scoped = { ...KEY_BODY, scopes: ['orders:read', 'webhooks:manage'] };
    await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${keys[0].id}`, headers: partner.auth });
    const key = await createViaApi(t, partner, scoped);
    for (let i = 0; i < webhooksPerKey; i++) await insertWebhook(t, partner.id, key.id);
    const over = await t.live.inject({
      method: 'POST',
      url: '/v1/developer/webhooks',
      headers: partner.auth,
      payload: { apiKeyId: key.id, url: 'https://hooks.example.com/over', events: ['order.placed'] },
    });
    expectPlainError(over, 409, 'ERR_WEBHOOK_LIMIT');
  });

  it('needs a partner account: 401 without a token, 403 for an operator', async () => {
    expect((await t.live.inject({ method: 'GET', url: '/v1/developer/limits' })).statusCode).toBe(401);
    const admin = await createUser(t.ctx, 'ADMIN');
    expect((await t.live.inject({ method: 'GET', url: '/v1/developer/limits', headers: admin.auth })).statusCode).toBe(403);
  });
});
