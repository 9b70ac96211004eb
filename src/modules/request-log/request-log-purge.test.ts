/**
 * Retention of the request log (docs/decisions-log.md, 'Request log'): 35 days, by whole days, on the test clock. The worker's
 * periodic purge runs purgeExpired (src/worker/purge.ts), which calls purgeExpiredRequestLog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { purgeExpired } from '../../worker/purge.js';
import { signAccessToken } from '../auth/tokens.js';
import { purgeExpiredRequestLog } from './request-log-purge.js';

const DAY = 86_400;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ requestLog: { autoFlush: false } });
});
afterAll(() => t.close());

/** The UTC days that have a partition, oldest first. */
async function partitionDays(): Promise<string[]> {
  const rows = await t.ctx.db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'request_log'::regclass ORDER BY c.relname`,
  );
  return rows.map((r) => `${r.name.slice(13, 17)}-${r.name.slice(17, 19)}-${r.name.slice(19, 21)}`);
}

describe('request log retention', () => {
  it('keeps a day for 35 days, then drops it whole (test clock), through the worker’s purge', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    // A token signed now: the clock moves by days in this test.
    const auth = async () => ({
      authorization: `Bearer ${await signAccessToken(t.ctx.secrets.jwtKey, t.clock, { userId: partner.userId, role: 'PARTNER', partnerId: partner.id })}`,
    });
    const list = async () => {
      await t.ctx.requestLog.flush();
      const res = await t.live.inject({ method: 'GET', url: '/v1/developer/requests', headers: await auth() });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().items as Array<{ id: string }>).map((r) => r.id);
    };
    const firstDay = t.clock.now().toISOString().slice(0, 10);
    const first = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect(await list()).toEqual([first.headers['x-request-id']]);
    // The day's partition and the next day's exist once a batch of the day was written.
    expect(await partitionDays()).toContain(firstDay);

    // 34 days later the first day is still one of the 35 kept (today and the 34 before it).
    t.clock.advance(34 * DAY);
    const later = await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers });
    expect(await purgeExpiredRequestLog(t.clock.now(), t.ctx.db)).toBe(0);
    expect(await list()).toEqual([later, first].map((r) => r.headers['x-request-id']));

    // One more day: the first day goes as a whole (its partition), through the worker's pass.
    t.clock.advance(DAY);
    await purgeExpired(t.ctx);
    expect(await list()).toEqual([later.headers['x-request-id']]);
    expect(await partitionDays()).not.toContain(firstDay);
    // Idempotent.
    expect(await purgeExpiredRequestLog(t.clock.now(), t.ctx.db)).toBe(0);
    // The detail of a purged request is gone too.
    const gone = await t.live.inject({
      method: 'GET',
      url: `/v1/developer/requests/${first.headers['x-request-id']}`,
      headers: await auth(),
    });
    expect(gone.statusCode).toBe(404);
  });

  it('drops the per-minute drop counts of purged days too', async () => {
    const partner = await createPartner(t.ctx);
    const minute = new Date(Math.floor(t.clock.nowMs() / 60_000) * 60_000);
    await t.ctx.db.query('INSERT INTO request_log_minutes (partner_id, minute, dropped) VALUES ($1, $2, 7)', [
      partner.id,
      minute,
    ]);
    t.clock.advance(35 * DAY);
    await purgeExpiredRequestLog(t.clock.now(), t.ctx.db);
    const rows = await t.ctx.db.query('SELECT 1 FROM request_log_minutes WHERE partner_id = $1', [partner.id]);
    expect(rows).toEqual([]);
  });
});
