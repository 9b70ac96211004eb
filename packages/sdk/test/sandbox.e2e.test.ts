/**
 * The sandbox simulator, the go-live checklist and the request log through the SDK against the real app
 * (sdk.test-helpers.ts), as the partner and as the developer.
 */
import { describe, expect, it, vi } from 'vitest';
import { createPartner } from '../../../test/factories.js';
import { expectOperationsExercised, partnerClient, setUpSdkApp, signedIn, t, WAIT } from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

describe('sandbox simulator, go-live checklist and request log', () => {
  it('drives sandbox orders and batches as the partner and as the developer, reads the checklist and the request log', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Sandbox key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
    });
    const sandbox = partnerClient(key.key);

    // As the partner (API key, sandbox API).
    const [placed, packedA, packedB] = await sandbox.createSandboxOrders(3, { status: 'PLACED' });
    expect(placed.status).toBe('PLACED');
    const accepted = await sandbox.POST('/v1/partner/sandbox/orders/{code}/platform-status', {
      params: { path: { code: placed.code } },
      body: { status: 'VENDOR_ACCEPTED' },
    });
    expect(accepted.status).toBe('VENDOR_ACCEPTED');
    for (const order of [packedA, packedB]) {
      for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'] as const) {
        await sandbox.POST('/v1/partner/sandbox/orders/{code}/platform-status', {
          params: { path: { code: order.code } },
          body: { status },
        });
      }
    }
    const batch = await sandbox.POST('/v1/partner/sandbox/batches', { body: { orderCodes: [packedA.code, packedB.code] } });
    expect(batch).toMatchObject({ status: 'OPEN', orderCodes: expect.arrayContaining([packedA.code, packedB.code]) });
    const dispatched = await sandbox.POST('/v1/partner/sandbox/batches/{code}/status', {
      params: { path: { code: batch.code } },
      body: { status: 'DISPATCHED' },
    });
    expect(dispatched.status).toBe('DISPATCHED');

    // As the developer (bearer token, for one of the partner's sandbox keys).
    const made = await dev.POST('/v1/developer/keys/{id}/sandbox/orders', {
      params: { path: { id: key.id } },
      body: { count: 2, status: 'PLACED' },
    });
    expect(made.items).toHaveLength(2);
    const [first, second] = made.items;
    const moved = await dev.POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
      params: { path: { id: key.id, code: first.code } },
      body: { status: 'VENDOR_ACCEPTED' },
    });
    expect(moved.status).toBe('VENDOR_ACCEPTED');
    for (const status of ['VENDOR_ACCEPTED', 'RUNNER_PICKUP', 'AT_HUB', 'PACKED'] as const) {
      await dev.POST('/v1/developer/keys/{id}/sandbox/orders/{code}/platform-status', {
        params: { path: { id: key.id, code: second.code } },
        body: { status },
      });
    }
    const devBatch = await dev.POST('/v1/developer/keys/{id}/sandbox/batches', {
      params: { path: { id: key.id } },
      body: { orderCodes: [second.code] },
    });
    const devDispatched = await dev.POST('/v1/developer/keys/{id}/sandbox/batches/{code}/status', {
      params: { path: { id: key.id, code: devBatch.code } },
      body: { status: 'DISPATCHED' },
    });
    expect(devDispatched.status).toBe('DISPATCHED');
    const overview = await dev.GET('/v1/developer/keys/{id}/sandbox', { params: { path: { id: key.id } } });
    expect(overview.apiKeyId).toBe(key.id);
    expect(overview.orders.length).toBeGreaterThanOrEqual(5);

    // What the key did shows in its go-live checklist (listing orders with updatedSince is one item).
    for await (const _ of sandbox.orders({ updatedSince: new Date(0).toISOString() })) break;
    const checklist = await dev.keys.checklist(key.id);
    expect(checklist.apiKeyId).toBe(key.id);
    expect(checklist.items.length).toBeGreaterThan(0);

    // The request log: every request of the key shows there within seconds.
    await vi.waitFor(async () => {
      const page = await dev.requests.list({ apiKeyId: key.id, method: 'POST' });
      expect(page.total).toBeGreaterThanOrEqual(10);
    }, WAIT);
    const logged = [];
    for await (const request of dev.requests.all({ apiKeyId: key.id, pageSize: 5 })) logged.push(request);
    expect(logged.length).toBeGreaterThanOrEqual(10);
    const detail = await dev.requests.get(logged[0].id);
    expect(detail.id).toBe(logged[0].id);
    const drops = await dev.GET('/v1/developer/requests/drops');
    expect(drops.dropped).toBeGreaterThanOrEqual(0);
  });
});

expectOperationsExercised(SDK_COVERAGE.sandbox);
