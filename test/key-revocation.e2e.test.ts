/**
 * A revocation crosses processes within 100 ms while partner reads make no Redis round trip
 * (docs/performance.md, 'Partner reads without a Redis round trip'). Two app instances on one database
 * and one Redis stand for two processes: B serves a busy key from its key cache and a slice of the
 * key's rate-limit window held in memory; A revokes the key; B must refuse it (401 ERR_API_KEY_REVOKED)
 * within the deadline, measured from A's answer. What carries it is the published announcement (the
 * key cache of every process is dropped on it), not a check per request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from './factories.js';
import { createSecondApp, createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';

const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
if (!shared) console.info('test/key-revocation.e2e.test.ts: skipped (needs the PostgreSQL server and Redis)');

const DEADLINE_MS = 100;

describe.skipIf(!shared)('a revocation across processes', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createSecondApp(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it(`is refused by the other process within ${DEADLINE_MS} ms of the answer`, async () => {
    const partner = await createPartner(a.ctx);
    const key = await createKey(a.ctx, partner.id);
    const me = () => b.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    // Busy on B: the key is cached there and admitted from a slice of its window held in memory.
    for (let i = 0; i < 20; i++) expect((await me()).statusCode).toBe(200);
    expect(b.ctx.rateLimiter.hit(key.id, 600, 60_000)).not.toBeInstanceOf(Promise);

    const revoked = await a.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${key.id}`, headers: partner.auth });
    expect(revoked.statusCode, revoked.body).toBe(200);
    const answeredMs = Date.now();
    await waitFor(
      async () => {
        const res = await me();
        return res.statusCode === 401 && res.json().code === 'ERR_API_KEY_REVOKED';
      },
      { timeoutMs: DEADLINE_MS, intervalMs: 1, what: 'B refuses the revoked key' },
    );
    console.info(`revocation seen by the other process ${Date.now() - answeredMs} ms after the answer`);
  });
});
