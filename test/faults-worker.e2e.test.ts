/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'): the worker process riding out a Redis outage and then a PostgreSQL outage.
 * Server mode only; how the faults are injected: test/faults.test-helpers.ts.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createWebhookVia, devAuth } from '../src/modules/webhooks/webhooks.test-helpers.js';
import { startRole } from '../src/roles.js';
import { createKey, createPartner } from './factories.js';
import { FaultProxy } from './fault-proxy.js';
import { databaseUrl, redisUrl, serverMode } from './faults.test-helpers.js';
import { createTestApp, testConfig } from './harness.js';
import { waitFor } from './wait.js';
import { WebhookReceiver } from './webhook-receiver.js';

describe.skipIf(!serverMode)('the worker process', () => {
  let pgProxy: FaultProxy;
  let redisProxy: FaultProxy;
  beforeAll(async () => {
    pgProxy = await FaultProxy.startFor(databaseUrl as string);
    redisProxy = await FaultProxy.startFor(redisUrl as string);
  });
  afterAll(async () => {
    await pgProxy.close();
    await redisProxy.close();
  });

  it('rides out a Redis outage and then a PostgreSQL outage, and delivers what was queued meanwhile', async () => {
    const api = await createTestApp();
    onTestFinished(() => api.close());
    const receiver = await WebhookReceiver.start();
    onTestFinished(() => receiver.close());
    // The worker role, as `main.ts worker` starts it, reaching both dependencies through the proxies.
    const config = testConfig({
      DATABASE_URL: pgProxy.url(api.ctx.config.databaseUrl as string),
      REDIS_URL: redisProxy.url(redisUrl as string),
      REDIS_KEY_PREFIX: api.ctx.config.redisKeyPrefix,
    });
    const worker = await startRole(config, { kind: 'worker' });
    onTestFinished(async () => {
      pgProxy.pass();
      redisProxy.pass();
      await worker.stop();
    });

    const partner = await createPartner(api.ctx);
    const key = await createKey(api.ctx, partner.id);
    const hookId = (
      await createWebhookVia(api, await devAuth(api, partner), {
        apiKeyId: key.id,
        url: receiver.url('/w'),
        events: ['order.status_changed'],
      })
    ).id;
    const pingVia = async () => {
      const sent = await api.live.inject({
        method: 'POST',
        url: `/v1/developer/webhooks/${hookId}/test`,
        headers: await devAuth(api, partner),
      });
      expect(sent.statusCode, sent.body).toBe(200);
    };

    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 1);

    // Redis: blackholed, then refused. The worker publishes realtime updates through it all along (and
    // needs it for nothing else: its own idle connection notices the outage only once it is refused).
    redisProxy.blackhole();
    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 2);
    redisProxy.down();
    await waitFor(() => !worker.ctx.redisHealth.available);
    await pingVia();
    await waitFor(() => receiver.requestsTo('/w').length === 3);
    redisProxy.pass();
    await waitFor(() => worker.ctx.redisHealth.available, 10_000);

    // PostgreSQL: every connection reset and refused; deliveries queued meanwhile wait, then go.
    pgProxy.down();
    await pingVia();
    await pingVia();
    await waitFor(() => !worker.ctx.db.health.available);
    expect(receiver.requestsTo('/w')).toHaveLength(3);
    pgProxy.pass();
    await waitFor(() => receiver.requestsTo('/w').length === 5, 20_000);
    await waitFor(async () => {
      const rows = await api.ctx.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE webhook_id = $1', [
        hookId,
      ]);
      return rows.length === 5 && rows.every((r) => r.status === 'DELIVERED');
    });
  }, 90_000);
});
