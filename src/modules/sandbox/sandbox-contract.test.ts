/**
 * The simulator's and the checklist's real answers, success and error, validate against the response
 * schemas of the document the app serves (as the openapi module's contract test does for the partner
 * and developer routes), so code and document cannot drift apart.
 */
import { describe, it } from 'vitest';
import { createKey, createUser } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { type AnswerCheck, documentedAnswerCheck, setUpServedDocuments } from '../openapi/openapi.test-helpers.js';
import { devAuth } from '../webhooks/webhooks.test-helpers.js';
import { sandboxPost, sandboxSetup } from './sandbox.test-helpers.js';

let t: TestApp;
let expectDocumented: AnswerCheck;
// As the app serves it in development (no public URLs configured).
setUpServedDocuments((served) => ([t, expectDocumented] = [served.t, documentedAnswerCheck(served.full)]), {});

describe('sandbox simulator and checklist answers match the document', () => {
  it('partner, developer and operator routes, success and error answers', async () => {
    const s = await sandboxSetup(t, null);
    const dev = await devAuth(t, s.partner);
    const post = (path: string, url: string, payload?: unknown, listener: 'live' | 'sandbox' = 'sandbox') =>
      sandboxPost(t, s.key, url, payload, listener).then((res) => {
        expectDocumented('POST', path, res);
        return res.json();
      });

    const one = await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { status: 'PLACED' });
    const many = await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { count: 2, customer: false });
    await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', { count: 0 });
    await post('/v1/partner/sandbox/orders', '/v1/partner/sandbox/orders', {}, 'live');
    const status = '/v1/partner/sandbox/orders/{code}/platform-status';
    await post(status, `/v1/partner/sandbox/orders/${one.code}/platform-status`, { status: 'VENDOR_ACCEPTED' });
    await post(status, `/v1/partner/sandbox/orders/${one.code}/platform-status`, { status: 'DELIVERED' });
    await post(status, '/v1/partner/sandbox/orders/ORD-NOPE/platform-status', { status: 'CANCELLED' });
    const batch = await post('/v1/partner/sandbox/batches', '/v1/partner/sandbox/batches', {
      orderCodes: many.items.map((o: { code: string }) => o.code),
    });
    await post('/v1/partner/sandbox/batches', '/v1/partner/sandbox/batches', { orderCodes: ['ORD-NOPE'] });
    const move = '/v1/partner/sandbox/batches/{code}/status';
    await post(move, `/v1/partner/sandbox/batches/${batch.code}/status`, { status: 'DISPATCHED' });
    await post(move, `/v1/partner/sandbox/batches/${batch.code}/status`, { status: 'OPEN' });

    const developer = async (method: 'GET' | 'POST', path: string, url: string, payload?: unknown) => {
      const res = await t.live.inject({
        method,
        url,
        headers: dev,
        ...(payload === undefined ? {} : { payload: payload as never }),
      });
      expectDocumented(method, path, res);
      return res.json();
    };
    const base = `/v1/developer/keys/${s.key.id}`;
    await developer('GET', '/v1/developer/keys/{id}/sandbox', `${base}/sandbox`);
    await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `${base}/sandbox/orders`, { count: 1 });
    const live = await createKey(t.ctx, s.partner.id, { environment: 'LIVE' });
    await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `/v1/developer/keys/${live.id}/sandbox/orders`, {});
    await developer(
      'POST',
      '/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status',
      `${base}/sandbox/orders/${one.code}/platform-status`,
      { status: 'CANCELLED' },
    );
    const other = await developer('POST', '/v1/developer/keys/{id}/sandbox/orders', `${base}/sandbox/orders`, {});
    const made = await developer('POST', '/v1/developer/keys/{id}/sandbox/batches', `${base}/sandbox/batches`, {
      orderCodes: [other.items[0].code],
    });
    await developer(
      'POST',
      '/v1/developer/keys/{id}/sandbox/batches/{code}/status',
      `${base}/sandbox/batches/${made.code}/status`,
      {
        status: 'COMPLETED',
      },
    );
    await developer('GET', '/v1/developer/keys/{id}/checklist', `${base}/checklist`);
    await developer('GET', '/v1/developer/keys/{id}/checklist', `/v1/developer/keys/${live.id}/checklist`);

    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    for (const id of [s.partner.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await t.live.inject({ method: 'GET', url: `/v1/admin/partners/${id}/checklist`, headers: admin });
      expectDocumented('GET', '/v1/admin/partners/{id}/checklist', res);
    }
  });
});
