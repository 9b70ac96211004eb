/**
 * One test clock across processes (docs/decisions-log.md, 'Dependency faults'): with TEST_CLOCK=1 on a PostgreSQL server every
 * process reads the offset kept in the database (src/clock.ts, SharedTestClock). Two app instances on
 * one database stand for two processes. The embedded database belongs to one process, whose clock is
 * in memory: nothing to share there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedTestClock } from '../src/clock.js';
import { createSecondApp, createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';

const server = Boolean(process.env.DATABASE_URL);
if (!server)
  console.info('test/shared-clock.e2e.test.ts: skipped (the embedded database has one process and an in-memory clock)');

const HOUR_MS = 3_600_000;

describe.skipIf(!server)('the shared test clock', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp({ configuredClock: true });
    b = await createSecondApp(a, {}, { configuredClock: true });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const clockOf = async (app: TestApp) =>
    Date.parse((await app.live.inject({ method: 'GET', url: '/v1/test/clock' })).json().now);

  it('is the database one on a server', () => {
    expect(a.clock).toBeInstanceOf(SharedTestClock);
    expect(b.clock).toBeInstanceOf(SharedTestClock);
  });

  it('an advance answered by one process is the time any other process answers next', async () => {
    const before = await clockOf(b);
    const res = await a.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: 3600 } });
    expect(res.statusCode).toBe(200);
    expect(Date.parse(res.json().now) - before).toBeGreaterThanOrEqual(HOUR_MS);
    // Asked right after, with nothing waited for: B reads the shared offset before answering.
    expect((await clockOf(b)) - before).toBeGreaterThanOrEqual(HOUR_MS);
  });

  it("reaches the other process's own rules and its worker promptly without being asked (NOTIFY)", async () => {
    let woken = 0;
    const onWake = () => woken++;
    b.ctx.events.on('wake', onWake);
    try {
      const offset = () => b.ctx.clock.nowMs() - Date.now();
      const start = offset();
      const res = await a.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: 7200 } });
      expect(res.statusCode).toBe(200);
      const seenMs = Date.now();
      await waitFor(() => offset() - start >= 2 * HOUR_MS - 1_000, 5_000);
      // Bounded by the 1 s poll even if the notification were lost; in practice milliseconds.
      expect(Date.now() - seenMs).toBeLessThan(1_500);
      expect(woken).toBeGreaterThanOrEqual(1);
    } finally {
      b.ctx.events.off('wake', onWake);
    }
  });

  it('a process started later starts at the shared time, and no process goes back', async () => {
    const c = await createSecondApp(a, {}, { configuredClock: true });
    try {
      expect(c.ctx.clock.nowMs() - Date.now()).toBeGreaterThanOrEqual(3 * HOUR_MS - 1_000);
      const res = await c.live.inject({ method: 'POST', url: '/v1/test/clock', payload: { advanceSec: -1 } });
      expect(res.statusCode).toBe(400);
    } finally {
      await c.close();
    }
  });
});
