import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createPartner, createUser, randomPhone } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';
import { buildApp } from '../../app.js';
import { createLogger } from '../../logger.js';
import { authRoutes } from './auth.routes.js';
import { maskPhone, type SmsProvider } from './sms.js';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const requestCode = (phone: unknown, app = t) =>
  app.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
const verifyCode = (phone: unknown, code: unknown, app = t) =>
  app.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code } });

function expectValidation(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  const details = (res.json() as { details: Array<{ field: string; messages: string[] }> }).details;
  expect(details.map((d) => d.field)).toContain(field);
  for (const d of details) expect(d.messages.length).toBeGreaterThan(0);
}

describe('POST /v1/auth/otp/request', () => {
  it('answers 200 with the code lifetime and the resend delay', async () => {
    const res = await requestCode(randomPhone());
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ expiresInSec: 300, resendAfterSec: 60 });
  });

  it.each([
    ['a number without +994', '0501234567'],
    ['too few digits', '+99450123456'],
    ['too many digits', '+9945012345678'],
    ['another country', '+15551234567'],
    ['letters', '+994abcdefghi'],
    ['a number instead of a string', 994501234567],
    ['an empty string', ''],
  ])('refuses %s with 400 ERR_VALIDATION naming phone', async (_what, phone) => {
    expectValidation(await requestCode(phone), 'phone');
  });

  it('refuses a missing phone and unknown fields by name', async () => {
    expectValidation(await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: {} }), 'phone');
    const extra = await t.live.inject({
      method: 'POST',
      url: '/v1/auth/otp/request',
      payload: { phone: randomPhone(), channel: 'sms' },
    });
    expectValidation(extra, 'channel');
  });

  it('allows one request per phone per 60 s: 429 ERR_OTP_RATE_LIMITED with an honest retryAfterSec and Retry-After', async () => {
    const phone = randomPhone();
    expect((await requestCode(phone)).statusCode).toBe(200);

    const again = await requestCode(phone);
    expectError(again, 429, 'ERR_OTP_RATE_LIMITED');
    const { retryAfterSec } = again.json().details;
    expect(Number.isInteger(retryAfterSec)).toBe(true);
    expect(retryAfterSec).toBeGreaterThanOrEqual(59);
    expect(retryAfterSec).toBeLessThanOrEqual(60);
    expect(again.headers['retry-after']).toBe(String(retryAfterSec));

    t.clock.advance(30);
    const later = await requestCode(phone);
    expectError(later, 429, 'ERR_OTP_RATE_LIMITED');
    expect(later.json().details.retryAfterSec).toBeGreaterThanOrEqual(29);
    expect(later.json().details.retryAfterSec).toBeLessThanOrEqual(30);

    t.clock.advance(later.json().details.retryAfterSec);
    expect((await requestCode(phone)).statusCode).toBe(200);
  });

  it('does not limit other phones', async () => {
    const phone = randomPhone();
    expect((await requestCode(phone)).statusCode).toBe(200);
    expect((await requestCode(randomPhone())).statusCode).toBe(200);
  });

  it('allows 5 requests per rolling hour, then answers 429 with the wait until the oldest leaves the hour', async () => {
    const phone = randomPhone();
    for (let i = 0; i < 5; i++) {
      expect((await requestCode(phone)).statusCode).toBe(200);
      t.clock.advance(61);
    }
    const sixth = await requestCode(phone);
    expectError(sixth, 429, 'ERR_OTP_RATE_LIMITED');
    const { retryAfterSec } = sixth.json().details;
    // The first request was 5 × 61 s ago; it leaves the rolling hour in 3600 − 305 s.
    expect(retryAfterSec).toBeGreaterThanOrEqual(3293);
    expect(retryAfterSec).toBeLessThanOrEqual(3295);
    expect(sixth.headers['retry-after']).toBe(String(retryAfterSec));

    t.clock.advance(retryAfterSec - 5);
    const stillLimited = await requestCode(phone);
    expectError(stillLimited, 429, 'ERR_OTP_RATE_LIMITED');
    expect(stillLimited.json().details.retryAfterSec).toBeLessThanOrEqual(5);

    t.clock.advance(stillLimited.json().details.retryAfterSec);
    expect((await requestCode(phone)).statusCode).toBe(200);
    // The window rolls: the second request (61 s after the first) is the next to leave.
    const next = await requestCode(phone);
    expectError(next, 429, 'ERR_OTP_RATE_LIMITED');
    expect(next.json().details.retryAfterSec).toBeGreaterThanOrEqual(58);
    expect(next.json().details.retryAfterSec).toBeLessThanOrEqual(61);
  });

  it('lets exactly one of two concurrent requests for one phone through', async () => {
    const phone = randomPhone();
    const results = await Promise.all([requestCode(phone), requestCode(phone)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 429]);
  });

  it('refuses a blocked account with 403 ERR_USER_BLOCKED', async () => {
    const user = await createUser(t.ctx, 'CUSTOMER');
    await t.ctx.db.query('UPDATE users SET blocked_at = $2 WHERE id = $1', [user.userId, t.clock.now()]);
    expectError(await requestCode(user.phone), 403, 'ERR_USER_BLOCKED');
  });

  it('stores the code only as a keyed hash', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    const [row] = await t.ctx.db.query<{ code_hash: string }>('SELECT code_hash FROM otp_codes WHERE phone = $1', [phone]);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.code_hash).not.toContain(TEST_OTP);
    for (const plain of [TEST_OTP, `${phone}:${TEST_OTP}`]) {
      expect(row.code_hash).not.toBe(createHash('sha256').update(plain).digest('hex'));
    }
  });
});

describe('POST /v1/auth/otp/verify', () => {
  it('signs an unknown phone up as a CUSTOMER and answers the token pair', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    const res = await verifyCode(phone, TEST_OTP);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      accessToken: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refreshToken: expect.stringMatching(/^rt_[\w-]{43}$/),
      tokenType: 'Bearer',
      expiresInSec: 900,
      user: { id: expect.stringMatching(UUID), phone, role: 'CUSTOMER', partnerId: null, partnerName: null },
    });
    const rows = await t.ctx.db.query<{ id: string; role: string }>('SELECT id, role FROM users WHERE phone = $1', [phone]);
    expect(rows).toEqual([{ id: body.user.id, role: 'CUSTOMER' }]);

    // The access token is a real bearer token of that account: a CUSTOMER may not use the admin API.
    const admin = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${body.accessToken}` },
    });
    expectError(admin, 403, 'ERR_FORBIDDEN');
  });

  it('signs an existing account in again as the same account', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    const first = (await verifyCode(phone, TEST_OTP)).json();
    t.clock.advance(61);
    await requestCode(phone);
    const second = (await verifyCode(phone, TEST_OTP)).json();
    expect(second.user.id).toBe(first.user.id);
    expect(second.refreshToken).not.toBe(first.refreshToken);
  });

  it('signs a partner user in as PARTNER with its partnerId and partnerName', async () => {
    const partner = await createPartner(t.ctx, 'Kargo Ekspress');
    await requestCode(partner.phone);
    const res = await verifyCode(partner.phone, TEST_OTP);
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toEqual({
      id: partner.userId,
      phone: partner.phone,
      role: 'PARTNER',
      partnerId: partner.id,
      partnerName: 'Kargo Ekspress',
    });
    // A PARTNER account is not an operator.
    const admin = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${res.json().accessToken}` },
    });
    expectError(admin, 403, 'ERR_FORBIDDEN');
  });

  it('signs an ADMIN in with a token the admin API accepts', async () => {
    const admin = await createUser(t.ctx, 'ADMIN');
    await requestCode(admin.phone);
    const res = await verifyCode(admin.phone, TEST_OTP);
    expect(res.json().user).toMatchObject({ id: admin.userId, role: 'ADMIN', partnerId: null, partnerName: null });
    const list = await t.live.inject({
      method: 'GET',
      url: '/v1/admin/partners',
      headers: { authorization: `Bearer ${res.json().accessToken}` },
    });
    expect(list.statusCode).toBe(200);
  });

  it.each([
    ['five digits', '12345'],
    ['seven digits', '1234567'],
    ['letters', 'abcdef'],
    ['a number instead of a string', 123456],
    ['an empty string', ''],
  ])('refuses a code of %s with 400 ERR_VALIDATION naming code', async (_what, code) => {
    expectValidation(await verifyCode(randomPhone(), code), 'code');
  });

  it('refuses a bad phone, missing fields and unknown fields by name', async () => {
    expectValidation(await verifyCode('+99450', TEST_OTP), 'phone');
    const empty = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: {} });
    expectValidation(empty, 'phone');
    expectValidation(empty, 'code');
    const extra = await t.live.inject({
      method: 'POST',
      url: '/v1/auth/otp/verify',
      payload: { phone: randomPhone(), code: TEST_OTP, role: 'ADMIN' },
    });
    expectValidation(extra, 'role');
  });

  it('answers a wrong code with 400 ERR_OTP_INVALID and still accepts the right one', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    expectError(await verifyCode(phone, '000000'), 400, 'ERR_OTP_INVALID');
    expect((await verifyCode(phone, TEST_OTP)).statusCode).toBe(200);
  });

  it('answers 400 ERR_OTP_EXPIRED when no code was requested', async () => {
    expectError(await verifyCode(randomPhone(), TEST_OTP), 400, 'ERR_OTP_EXPIRED');
  });

  it('answers 400 ERR_OTP_EXPIRED once the code is older than 5 minutes', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    t.clock.advance(301);
    expectError(await verifyCode(phone, TEST_OTP), 400, 'ERR_OTP_EXPIRED');
  });

  it('accepts a code just before its 5 minutes are over', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    t.clock.advance(295);
    expect((await verifyCode(phone, TEST_OTP)).statusCode).toBe(200);
  });

  it('consumes the code: a second verify with it answers 400 ERR_OTP_EXPIRED', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    expect((await verifyCode(phone, TEST_OTP)).statusCode).toBe(200);
    expectError(await verifyCode(phone, TEST_OTP), 400, 'ERR_OTP_EXPIRED');
  });

  it('burns the code on the 5th wrong try (429 ERR_OTP_TOO_MANY_ATTEMPTS) until a new code is requested', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    for (let i = 1; i <= 4; i++) expectError(await verifyCode(phone, '000000'), 400, 'ERR_OTP_INVALID');
    expectError(await verifyCode(phone, '000000'), 429, 'ERR_OTP_TOO_MANY_ATTEMPTS');
    // Burned: even the right code is refused now.
    expectError(await verifyCode(phone, TEST_OTP), 429, 'ERR_OTP_TOO_MANY_ATTEMPTS');
    expectError(await verifyCode(phone, '111111'), 429, 'ERR_OTP_TOO_MANY_ATTEMPTS');

    t.clock.advance(61);
    expect((await requestCode(phone)).statusCode).toBe(200);
    expect((await verifyCode(phone, TEST_OTP)).statusCode).toBe(200);
  });

  it('signs in exactly once when the right code is verified twice at the same time', async () => {
    const phone = randomPhone();
    await requestCode(phone);
    const results = await Promise.all([verifyCode(phone, TEST_OTP), verifyCode(phone, TEST_OTP)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.statusCode === 400)?.json().code).toBe('ERR_OTP_EXPIRED');
    const users = await t.ctx.db.query('SELECT id FROM users WHERE phone = $1', [phone]);
    expect(users).toHaveLength(1);
  });

  it('refuses a blocked account with 403 ERR_USER_BLOCKED even with the right code', async () => {
    const user = await createUser(t.ctx, 'CUSTOMER');
    await requestCode(user.phone);
    await t.ctx.db.query('UPDATE users SET blocked_at = $2 WHERE id = $1', [user.userId, t.clock.now()]);
    expectError(await verifyCode(user.phone, TEST_OTP), 403, 'ERR_USER_BLOCKED');
  });
});

describe('one-time codes without OTP_FIXED_CODE', () => {
  let random: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    random = await createTestApp({ env: { OTP_FIXED_CODE: undefined }, log: createLogger('info', sink) });
  });
  afterAll(() => random.close());

  function codeSentTo(phone: string): string {
    const found = lines
      .map((l) => JSON.parse(l) as { msg?: string })
      .map((l) => new RegExp(`^SMS to ${escapeRegExp(maskPhone(phone))}: Your sign-in code is (\\d{6})\\.`).exec(l.msg ?? ''))
      .filter((m) => m !== null);
    expect(found.length).toBeGreaterThan(0);
    return found[found.length - 1]![1];
  }

  it('sends a random 6-digit code through the development SMS provider (the log) and accepts it', async () => {
    const phone = randomPhone();
    expect((await requestCode(phone, random)).statusCode).toBe(200);
    const code = codeSentTo(phone);
    expect((await verifyCode(phone, code, random)).statusCode).toBe(200);
  });

  it('writes the code but only the last four digits of the phone number to the log', async () => {
    const phone = randomPhone();
    expect((await requestCode(phone, random)).statusCode).toBe(200);
    codeSentTo(phone);
    expect(lines.join('')).not.toContain(phone.slice(1));
    expect(maskPhone('+994501234567')).toBe('+********4567');
  });

  it('replaces the previous code with a new request', async () => {
    const phone = randomPhone();
    await requestCode(phone, random);
    const first = codeSentTo(phone);
    random.clock.advance(61);
    await requestCode(phone, random);
    const second = codeSentTo(phone);
    if (first !== second) expectError(await verifyCode(phone, first, random), 400, 'ERR_OTP_INVALID');
    expect((await verifyCode(phone, second, random)).statusCode).toBe(200);
  });

  it('resets the wrong-try count with a new code', async () => {
    const phone = randomPhone();
    await requestCode(phone, random);
    const wrong = (c: string) => String((Number(c) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 4; i++) expectError(await verifyCode(phone, wrong(codeSentTo(phone)), random), 400, 'ERR_OTP_INVALID');
    random.clock.advance(61);
    await requestCode(phone, random);
    const code = codeSentTo(phone);
    expectError(await verifyCode(phone, wrong(code), random), 400, 'ERR_OTP_INVALID');
    expect((await verifyCode(phone, code, random)).statusCode).toBe(200);
  });
});

describe('SMS providers', () => {
  it('answers 503 ERR_DEPENDENCY_UNAVAILABLE when the provider fails, and takes the code and its request back', async () => {
    const failing: SmsProvider = {
      name: 'failing',
      send: async () => {
        throw new Error('gateway down');
      },
    };
    const app = await buildApp(t.ctx, 'LIVE');
    await app.register(authRoutes, { prefix: '/probe', sms: failing });
    await app.ready();
    try {
      const phone = randomPhone();
      const res = await app.inject({ method: 'POST', url: '/probe/v1/auth/otp/request', payload: { phone } });
      expectError(res, 503, 'ERR_DEPENDENCY_UNAVAILABLE');
      expect(await t.ctx.db.query('SELECT 1 FROM otp_codes WHERE phone = $1', [phone])).toEqual([]);
      // The failed attempt does not count toward the resend limit.
      expect((await requestCode(phone)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
