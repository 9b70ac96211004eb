import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner, createUser, randomPhone } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';
import type { AppContext } from '../../context.js';
import { createLogger } from '../../logger.js';
import { bootstrapAccounts } from './bootstrap.js';

const ADMIN_PHONE = '+994500000001';
const lines: string[] = [];
let t: TestApp;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  t = await createTestApp({ env: { BOOTSTRAP_ADMIN_PHONE: ADMIN_PHONE }, log: createLogger('info', sink) });
});
afterAll(() => t.close());

/** The same context with another BOOTSTRAP_ADMIN_PHONE, as a restart with a changed variable would have. */
function withPhone(phone: string | null): AppContext {
  return { ...t.ctx, config: { ...t.ctx.config, bootstrapAdminPhone: phone } };
}

async function signIn(phone: string) {
  const requested = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
  expect(requested.statusCode).toBe(200);
  const res = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code: TEST_OTP } });
  t.clock.advance(61);
  return res;
}

const warnings = () =>
  lines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === 40 && l.msg.startsWith('bootstrap:'));

describe('BOOTSTRAP_ADMIN_PHONE', () => {
  it('creates an ADMIN account that signs in and uses the admin API; running it again changes nothing', async () => {
    await bootstrapAccounts(t.ctx);
    await bootstrapAccounts(t.ctx);
    const rows = await t.ctx.db.query<{ role: string }>('SELECT role FROM users WHERE phone = $1', [ADMIN_PHONE]);
    expect(rows).toEqual([{ role: 'ADMIN' }]);

    const res = await signIn(ADMIN_PHONE);
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toEqual({
      id: expect.any(String),
      phone: ADMIN_PHONE,
      role: 'ADMIN',
      partnerId: null,
      partnerName: null,
    });
    const list = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${res.json().accessToken}` },
    });
    expect(list.statusCode).toBe(200);
    expect(warnings()).toEqual([]);
  });

  it('makes an existing CUSTOMER account ADMIN, with a warning', async () => {
    const customer = await createUser(t.ctx, 'CUSTOMER');
    await bootstrapAccounts(withPhone(customer.phone));
    const res = await signIn(customer.phone);
    expect(res.json().user).toMatchObject({ id: customer.userId, role: 'ADMIN', partnerId: null });
    expect(warnings().some((w) => w.msg.includes('now an ADMIN account'))).toBe(true);
  });

  it('makes an existing PARTNER account ADMIN (leaving its partner), with a warning', async () => {
    const partner = await createPartner(t.ctx);
    const before = warnings().length;
    await bootstrapAccounts(withPhone(partner.phone));
    const res = await signIn(partner.phone);
    expect(res.json().user).toEqual({
      id: partner.userId,
      phone: partner.phone,
      role: 'ADMIN',
      partnerId: null,
      partnerName: null,
    });
    expect(warnings().length).toBe(before + 1);
  });

  it('unblocks a blocked bootstrap account, with a warning (it is the operator way back in)', async () => {
    const phone = randomPhone();
    await bootstrapAccounts(withPhone(phone));
    await t.ctx.db.query('UPDATE users SET blocked_at = $2 WHERE phone = $1', [phone, t.clock.now()]);
    const blocked = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json().code).toBe('ERR_USER_BLOCKED');

    await bootstrapAccounts(withPhone(phone));
    expect((await signIn(phone)).json().user).toMatchObject({ role: 'ADMIN' });
    expect(warnings().some((w) => w.msg.includes('unblocked'))).toBe(true);
  });

  it('does nothing without the variable', async () => {
    const count = async () => (await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users'))[0].n;
    const before = await count();
    await bootstrapAccounts(withPhone(null));
    expect(await count()).toBe(before);
  });

  it('writes only the last digits of the phone to its log lines', () => {
    const own = lines.filter((l) => l.includes('bootstrap:'));
    expect(own.length).toBeGreaterThan(0);
    expect(own.join('')).not.toContain(ADMIN_PHONE);
  });
});
