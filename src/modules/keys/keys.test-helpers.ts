/** Helpers of the developer key route tests: a key made through the API, and rows a rotation moves. */
import { expect } from 'vitest';
import type { TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { newId } from '../../shared/ids.js';

export const DAY_MS = 86_400_000;

export const KEY_BODY = { name: 'Dispatch integration', environment: 'LIVE', scopes: ['orders:read', 'logistics:write'] };

/** POST /v1/developer/keys as the partner; answers the created key (shown once). */
export async function createViaApi(t: TestApp, partner: TestPartner, body: Record<string, unknown> = KEY_BODY) {
  const res = await t.live.inject({ method: 'POST', url: '/v1/developer/keys', headers: partner.auth, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json();
}

/** An order row assigned to `keyId` (the orders domain is built elsewhere; only assignment matters here). */
export async function insertOrder(t: TestApp, keyId: string) {
  const now = t.clock.now();
  const id = newId();
  await t.ctx.db.query(
    `INSERT INTO orders (id, code, environment, status, payment_method, payment_status, total_qepik, cod_amount_qepik,
       assigned_key_id, partner_assigned_at, created_at, updated_at)
     VALUES ($1, $2, 'LIVE', 'PACKED', 'CARD', 'PAID', 1000, 0, $3, $4, $4, $4)`,
    [id, `ORD-${id.slice(0, 8)}`, keyId, now],
  );
  return id;
}

export async function insertWebhook(t: TestApp, partnerId: string, keyId: string) {
  const now = t.clock.now();
  const id = newId();
  await t.ctx.db.query(
    `INSERT INTO webhooks (id, partner_id, api_key_id, url, events, secret_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, 'https://example.com/hook', ARRAY['order.placed'], $4, $5, $5)`,
    [id, partnerId, keyId, t.ctx.secrets.encrypt('whsec_test'), now],
  );
  return id;
}
