/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'): Redis blackholed, then refused, under two app instances.
 * Server mode only; how the faults are injected: test/faults.test-helpers.ts.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { devAuth } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { REDIS_COMMAND_TIMEOUT_MS } from '../src/redis.js';
import { createKey, createPartner } from './factories.js';
import { FaultProxy } from './fault-proxy.js';
import { type Answer, logCapture, p99, redisUrl, sandboxOrders, serverMode, timed } from './faults.test-helpers.js';
import { createSecondApp, createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';

describe.skipIf(!serverMode)('Redis outage', () => {
  let redisProxy: FaultProxy;
  beforeAll(async () => {
    redisProxy = await FaultProxy.startFor(redisUrl as string);
  });
  afterAll(() => redisProxy.close());

  it('blackholed, then refused: answers keep coming (p99 under 1 s), a key revoked meanwhile is refused by the other instance within 5 s, shared limits resume within 5 s after, each outage logged once', async () => {
    const capture = logCapture();
    const viaProxy = { REDIS_URL: redisProxy.url(redisUrl as string) };
    const a = await createTestApp({ env: viaProxy, log: capture.log });
    onTestFinished(() => a.close());
    const b = await createSecondApp(a, viaProxy);
    onTestFinished(() => b.close());

    const partner = await createPartner(a.ctx);
    // A limit the loops below cannot reach however fast the machine is: while Redis is out each process
    // keeps its own window, and the default 600 a minute turned every answer of a fast run into a 429.
    const reader = await createKey(a.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 1_000_000 });
    const doomed = await createKey(a.ctx, partner.id, { environment: 'SANDBOX' });
    const [code] = await sandboxOrders(a, reader, 1);

    // Clients on both instances: reads of one order (the cached path), lists and /me, with two keys.
    const answers: Answer[] = [];
    let stop = false;
    const client = async (app: TestApp, i: number) => {
      const urls = [`/v1/partner/orders/${code}`, '/v1/partner/orders?pageSize=5', '/v1/partner/me'];
      for (let n = i; !stop; n++) {
        answers.push(await timed(app.sandbox, { method: 'GET', url: urls[n % urls.length], headers: reader.headers }));
      }
    };
    const clients = [client(a, 0), client(a, 1), client(b, 0), client(b, 1)];
    onTestFinished(async () => {
      stop = true;
      await Promise.allSettled(clients);
    });
    const okSince = (ms: number) => answers.filter((x) => x.startedMs >= ms && x.status === 200).length;
    // The doomed key is in both instances' key caches before the outage.
    for (const app of [a, b]) {
      expect((await app.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: doomed.headers })).statusCode).toBe(200);
    }
    await waitFor(() => okSince(0) >= 40);

    // 1. Blackhole: Redis holds every byte and answers nothing.
    const outageMs = Date.now();
    redisProxy.blackhole();
    await waitFor(() => !a.ctx.redisHealth.available && !b.ctx.redisHealth.available);
    const revoke = await timed(a.live, {
      method: 'DELETE',
      url: `/v1/developer/keys/${doomed.id}`,
      headers: await devAuth(a, partner),
    });
    expect(revoke.status, revoke.body).toBe(200);
    const revokedMs = Date.now();
    const refusedMs = await waitFor(async () => {
      const res = await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: doomed.headers });
      return res.statusCode === 401 && res.json().code === 'ERR_API_KEY_REVOKED' && Date.now();
    }, 10_000);
    expect(refusedMs - revokedMs).toBeLessThan(5_000);
    await waitFor(() => okSince(revokedMs) >= 60);

    // 2. Refused: every connection reset, new ones reset at once.
    const refusedFromMs = Date.now();
    redisProxy.down();
    await waitFor(() => okSince(refusedFromMs) >= 60);

    // 3. Back.
    const backMs = Date.now();
    redisProxy.pass();
    await waitFor(() => a.ctx.redisHealth.available && b.ctx.redisHealth.available, 10_000);
    expect(Date.now() - backMs).toBeLessThan(5_000);
    stop = true;
    await Promise.all(clients);

    const during = answers.filter((x) => x.startedMs >= outageMs && x.startedMs < backMs);
    // (At least 60 answered in each of the two phases above: enough for a p99 that means something.)
    expect(during.length).toBeGreaterThanOrEqual(120);
    expect(during.every((x) => x.status === 200)).toBe(true);
    expect(p99(during.map((x) => x.ms))).toBeLessThan(1_000);
    // No call waited much past its deadline.
    expect(Math.max(...during.map((x) => x.ms))).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS * 4 + 1_000);

    // Shared rate limits again: 10 a minute across both instances, not 10 each.
    const limited = await createKey(a.ctx, partner.id, { environment: 'SANDBOX', rateLimit: 10 });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const app = i % 2 === 0 ? a : b;
      statuses.push((await app.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: limited.headers })).statusCode);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429]);

    // The key cache is shared again too: a revocation is seen by the other instance on its next request.
    const later = await createKey(a.ctx, partner.id, { environment: 'SANDBOX' });
    expect((await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: later.headers })).statusCode).toBe(200);
    const revokeLater = await a.live.inject({
      method: 'DELETE',
      url: `/v1/developer/keys/${later.id}`,
      headers: await devAuth(a, partner),
    });
    expect(revokeLater.statusCode).toBe(200);
    expect((await b.sandbox.inject({ method: 'GET', url: '/v1/partner/me', headers: later.headers })).statusCode).toBe(401);

    // One outage (blackhole and refusal back to back), logged once at its start and once at its end.
    expect(capture.count(/^Redis unavailable/)).toBe(1);
    expect(capture.count(/^Redis available again/)).toBe(1);
  }, 120_000);
});
