/**
 * Per-endpoint concurrency: a slow endpoint holds at most its cap of attempts and delays no other
 * endpoint; a fast one is given more attempts in flight, up to the ceiling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../test/wait.js';
import {
  createEndpoint,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  startTestWorker,
  t,
  waitForDeliveries,
} from '../modules/webhooks/webhooks.test-helpers.js';
import { startWorker, type Worker } from './worker.js';

setUpAppWithReceiver();

describe('per-endpoint concurrency', () => {
  let worker: Worker;
  beforeAll(() => {
    // The cap is an option (default 8 of 128 slots); 4 of 8 here keeps the test small.
    worker = startWorker(t.ctx, {
      attemptTimeoutMs: 10_000,
      leaseMs: 30_000,
      pollIntervalMs: 100,
      concurrency: 8,
      perWebhookConcurrency: 4,
      maxPerWebhookConcurrency: 4,
    });
  });
  afterAll(async () => {
    receiver.releaseHung(200);
    await worker.stop();
  });

  it('a slow endpoint holds at most 4 attempts at once and does not delay other endpoints', async () => {
    const slow = await createEndpoint(t, receiver);
    const fast = await createEndpoint(t, receiver);
    receiver.on(slow.path, { hang: true });
    for (let i = 0; i < 10; i++) await sendTestEvent(t, slow.partner, slow.hook.id);
    await waitFor(() => receiver.hungCount(slow.path) === 4);

    const started = Date.now();
    await sendTestEvent(t, fast.partner, fast.hook.id);
    await waitForDeliveries(t, fast.partner, fast.hook.id, (items) => items[0]?.status === 'DELIVERED');
    // Well within the slow endpoint's 10 s timeout: the fast one did not wait for a slot.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(receiver.hungCount(slow.path)).toBe(4);
    expect(receiver.maxInFlightOn(slow.path)).toBe(4);

    // Released, the backlog drains, never more than 4 at a time.
    receiver.on(slow.path, { delayMs: 20 });
    receiver.releaseHung(200, slow.path);
    const items = await waitForDeliveries(
      t,
      slow.partner,
      slow.hook.id,
      (all) => all.length === 10 && all.every((d) => d.status === 'DELIVERED'),
    );
    expect(items).toHaveLength(10);
    expect(receiver.requestsTo(slow.path)).toHaveLength(10);
    expect(receiver.maxInFlightOn(slow.path)).toBe(4);
  });
});

describe('adaptive per-endpoint concurrency', () => {
  it('an endpoint answering quickly gets more attempts in flight than the starting cap, never more than the ceiling', async () => {
    const fast = await createEndpoint(t, receiver);
    receiver.on(fast.path, { status: 204, delayMs: 30 });
    // A backlog first (no worker of this test runs yet), so the cap, not the arrival rate, bounds what is in flight.
    for (let i = 0; i < 50; i++) await sendTestEvent(t, fast.partner, fast.hook.id);
    startTestWorker(t, { concurrency: 16, perWebhookConcurrency: 2, maxPerWebhookConcurrency: 6 });
    await waitForDeliveries(
      t,
      fast.partner,
      fast.hook.id,
      (all) => all.length === 50 && all.every((d) => d.status === 'DELIVERED'),
      60_000,
    );
    expect(receiver.maxInFlightOn(fast.path)).toBeGreaterThan(2);
    expect(receiver.maxInFlightOn(fast.path)).toBeLessThanOrEqual(6);
  }, 90_000);
});
