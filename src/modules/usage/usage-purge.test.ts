import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { signAccessToken } from '../auth/tokens.js';
import { purgeExpiredUsage } from './usage-purge.js';

const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function storedDays(keyId: string): Promise<string[]> {
  const rows = await t.ctx.db.query<{ day: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM api_key_usage WHERE api_key_id = $1 ORDER BY day`,
    [keyId],
  );
  return rows.map((r) => r.day);
}

describe('purgeExpiredUsage', () => {
  it('keeps today and the 34 days before it, deletes older days, and is idempotent', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const now = t.clock.nowMs();
    for (const ago of [0, 1, 34, 35, 36, 400]) {
      await t.ctx.db.query('INSERT INTO api_key_usage (api_key_id, day, requests) VALUES ($1, $2, 1)', [
        key.id,
        utcDay(now - ago * DAY_MS),
      ]);
    }
    expect(await purgeExpiredUsage(t.clock.now(), t.ctx.db)).toBe(3);
    expect(await storedDays(key.id)).toEqual([34, 1, 0].map((ago) => utcDay(now - ago * DAY_MS)));
    expect(await purgeExpiredUsage(t.clock.now(), t.ctx.db)).toBe(0);
  });

  it('lets a day of counted requests go once it is 35 days old (test clock), the series shows it until then', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const firstDay = utcDay(t.clock.nowMs());
    expect((await t.live.inject({ method: 'GET', url: '/v1/partner/me', headers: key.headers })).statusCode).toBe(200);
    await t.ctx.usage.flush();

    const usage35 = async () => {
      const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, {
        userId: partner.userId,
        role: 'PARTNER',
        partnerId: partner.id,
      });
      const res = await t.live.inject({
        method: 'GET',
        url: `/v1/developer/keys/${key.id}/usage?days=35`,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode).toBe(200);
      return res.json();
    };

    t.clock.advance(34 * 86400);
    await purgeExpiredUsage(t.clock.now(), t.ctx.db);
    expect(await storedDays(key.id)).toEqual([firstDay]);
    const oldest = await usage35();
    expect(oldest.items[0]).toEqual({ day: firstDay, requests: 1, clientErrors: 0, serverErrors: 0 });
    expect(oldest.totalRequests).toBe(1);

    t.clock.advance(86400);
    expect(await purgeExpiredUsage(t.clock.now(), t.ctx.db)).toBeGreaterThanOrEqual(1);
    expect(await storedDays(key.id)).toEqual([]);
    const gone = await usage35();
    expect(gone.items[0].day).toBe(utcDay(t.clock.nowMs() - 34 * DAY_MS));
    expect(gone.totalRequests).toBe(0);
  });
});
