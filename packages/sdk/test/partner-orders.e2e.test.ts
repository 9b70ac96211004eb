/**
 * The SDK's partner client against the real app (sdk.test-helpers.ts): paging and polling orders,
 * idempotent events, and retries of a real 429 and a real 503 (the waits spent on the test clock).
 */
import { describe, expect, it } from 'vitest';
import { orderFor } from '../../../src/modules/orders/orders.test-helpers.js';
import { createKey, createPartner } from '../../../test/factories.js';
import { createPartnerClient } from '../src/index.js';
import {
  admin,
  baseUrls,
  expectApiError,
  expectOperationsExercised,
  outage,
  partnerClient,
  recordingFetch,
  type Seen,
  setUpSdkApp,
  signedIn,
  t,
  UUID,
} from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

describe('partner client: orders, events, paging', () => {
  it('pages through every order with the iterator, and polls with updatedSince', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX' });
    const seen: Seen[] = [];
    const sandbox = partnerClient(key.key, { fetch: recordingFetch(seen) });
    expect(sandbox.environment).toBe('sandbox');
    expect(sandbox.baseUrl).toBe(baseUrls().sandbox);

    const created: string[] = [];
    for (let i = 0; i < 4; i++) created.push((await sandbox.createSandboxOrder()).code);
    created.push((await sandbox.createSandboxOrder({ paymentMethod: 'CARD' })).code);

    seen.length = 0;
    const codes: string[] = [];
    for await (const order of sandbox.orders({ pageSize: 2 })) codes.push(order.code);
    expect(codes.sort()).toEqual([...created].sort());
    expect(seen).toHaveLength(3); // pages of 2, 2 and 1

    const firstPage = await sandbox.listOrders({ pageSize: 2 });
    expect(firstPage).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    const pages = [];
    for await (const page of sandbox.pages('/v1/partner/orders', { query: { pageSize: 2 } })) pages.push(page.items.length);
    expect(pages).toEqual([2, 2, 1]);

    // Incremental sync: only what changed since the last poll.
    const mark = t.clock.now().toISOString();
    t.clock.advance(1);
    await sandbox.reportEvent(created[0], { type: 'PICKED_UP' });
    const changed: string[] = [];
    for await (const order of sandbox.orders({ updatedSince: mark })) changed.push(order.code);
    expect(changed).toEqual([created[0]]);

    const one = await sandbox.getOrder(created[1]);
    expect(one).toMatchObject({ code: created[1], status: 'PACKED' });
    await expectApiError(sandbox.getOrder('ORD-NOPE'), 404, 'ERR_NOT_FOUND');
  });

  it('reports events: a repeated Idempotency-Key answers the first outcome; without one the client sends a UUID', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const code = await orderFor(t, await admin(), key.id, 'PACKED');
    const seen: Seen[] = [];
    const live = partnerClient(key.key, { fetch: recordingFetch(seen) });
    expect(live.environment).toBe('live');

    const first = await live.reportEvent(code, { type: 'PICKED_UP' }, { idempotencyKey: 'sdk-test-pickup-1' });
    const again = await live.reportEvent(code, { type: 'PICKED_UP' }, { idempotencyKey: 'sdk-test-pickup-1' });
    expect(again).toEqual(first);
    expect((await live.getOrder(code)).timeline).toEqual(first.timeline);
    const conflict = await expectApiError(
      live.reportEvent(code, { type: 'EN_ROUTE' }, { idempotencyKey: 'sdk-test-pickup-1' }),
      409,
      'ERR_IDEMPOTENCY_CONFLICT',
    );
    expect(conflict.message).toBeTruthy();

    seen.length = 0;
    const enRoute = await live.reportEvent(code, { type: 'EN_ROUTE' });
    expect(enRoute.status).toBe('EN_ROUTE');
    expect(seen).toHaveLength(1);
    expect(seen[0].requestHeaders.get('idempotency-key')).toMatch(UUID);

    // Typed errors carry the envelope: code, message and details.
    const invalid = await expectApiError(live.reportEvent(code, { type: 'FAILED' }), 400, 'ERR_VALIDATION');
    expect(invalid.details).toEqual([expect.objectContaining({ field: 'failReason' })]);
    await expectApiError(live.reportEvent(code, { type: 'PICKED_UP' }), 409, 'ERR_INVALID_TRANSITION');
  });

  it('refuses a key on the wrong API before sending anything', () => {
    expect(() => createPartnerClient({ apiKey: 'svc_live_x', environment: 'sandbox' })).toThrow(TypeError);
  });
});

describe('retries', () => {
  it('retries a real 429 after its Retry-After (the wait spent on the test clock), with the same Idempotency-Key', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 2 });
    const code = await orderFor(t, await admin(), key.id, 'PACKED');
    const seen: Seen[] = [];
    const waits: number[] = [];
    const live = partnerClient(key.key, {
      fetch: recordingFetch(seen),
      retry: { maxDelayMs: 120_000 },
      sleep: async (ms) => {
        waits.push(ms);
        t.clock.advance(ms / 1000);
      },
    });
    await live.me();
    await live.getOrder(code);
    const order = await live.reportEvent(code, { type: 'PICKED_UP' }); // the third in a minute: 429, then admitted

    expect(order.status).toBe('SCANNED_TO_VAN');
    expect(seen.map((s) => s.status)).toEqual([200, 200, 429, 201]);
    const retryAfter = Number(seen[2].headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(waits[0]).toBeLessThanOrEqual(retryAfter * 1000 * 1.2 + 100);
    const sentKeys = seen.slice(2).map((s) => s.requestHeaders.get('idempotency-key'));
    expect(sentKeys[0]).toMatch(UUID);
    expect(sentKeys[1]).toBe(sentKeys[0]);
  });

  it('gives a 429 back as a typed error when Retry-After is beyond the cap, or retries are off', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id, { rateLimit: 1 });
    const waits: number[] = [];
    const capped = partnerClient(key.key, { retry: { maxDelayMs: 500 }, sleep: async (ms) => void waits.push(ms) });
    await capped.me();
    const limited = await expectApiError(capped.me(), 429, 'ERR_RATE_LIMITED');
    expect(limited.retryAfterSec).toBeGreaterThanOrEqual(1);
    expect(waits).toEqual([]);

    const off = partnerClient(key.key, { retry: false, sleep: async (ms) => void waits.push(ms) });
    await expectApiError(off.me(), 429, 'ERR_RATE_LIMITED');
    expect(waits).toEqual([]);
  });

  it('retries a real 503 after Retry-After: 1, but not a POST without an Idempotency-Key', async () => {
    const partner = await createPartner(t.ctx);
    const seen: Seen[] = [];
    const waits: number[] = [];
    const dev = await signedIn(partner, {
      fetch: recordingFetch(seen),
      sleep: async (ms) => void waits.push(ms),
    });

    outage.armed = { pattern: /FROM api_keys WHERE partner_id = \$1 ORDER BY created_at/, times: 1 };
    expect((await dev.keys.list()).items).toEqual([]);
    expect(outage.armed?.times).toBe(0);
    const statuses = seen.filter((s) => s.path === '/v1/developer/keys').map((s) => s.status);
    expect(statuses).toEqual([503, 200]);
    expect(seen.find((s) => s.status === 503)?.headers.get('retry-after')).toBe('1');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);

    // Creating a key is not idempotent: a 503 is given back (it was not applied), never sent twice.
    outage.armed = { pattern: /INSERT INTO api_keys/, times: 1 };
    const unavailable = await expectApiError(
      dev.keys.create({ name: 'Not yet', environment: 'LIVE', scopes: ['orders:read'] }),
      503,
      'ERR_DEPENDENCY_UNAVAILABLE',
    );
    expect(unavailable.retryAfterSec).toBe(1);
    expect(waits).toHaveLength(1);
    outage.armed = null;
    expect((await dev.keys.list()).items).toEqual([]);
  });
});

expectOperationsExercised(SDK_COVERAGE.partnerOrders);
