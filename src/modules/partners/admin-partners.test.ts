import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createPartner, createUser, randomPhone } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let t: TestApp;
let admin: Awaited<ReturnType<typeof createUser>>;
beforeAll(async () => {
  t = await createTestApp();
  admin = await createUser(t.ctx, 'ADMIN');
});
afterAll(() => t.close());

const createPartnerReq = (payload: unknown, headers: Record<string, string> = admin.auth) =>
  t.live.inject({ method: 'POST', url: '/v1/admin/partners', headers, payload: payload as never });
const addUser = (partnerId: string, payload: unknown) =>
  t.live.inject({ method: 'POST', url: `/v1/admin/partners/${partnerId}/users`, headers: admin.auth, payload: payload as never });
const listPartners = () => t.live.inject({ method: 'GET', url: '/v1/admin/partners', headers: admin.auth });
const patchUser = (userId: string, payload: unknown, headers: Record<string, string> = admin.auth) =>
  t.live.inject({ method: 'PATCH', url: `/v1/admin/users/${userId}`, headers, payload: payload as never });

async function signIn(phone: string) {
  await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
  return t.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code: TEST_OTP } });
}

function expectValidation(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}

describe('POST /v1/admin/partners', () => {
  it('creates a partner whose phone becomes a new PARTNER account', async () => {
    const phone = randomPhone();
    const res = await createPartnerReq({ name: 'Kargo Ekspress', phone });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Kargo Ekspress',
      users: [{ id: expect.stringMatching(UUID), phone }],
    });

    // That account signs in as a PARTNER of this partner.
    const signedIn = await signIn(phone);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json().user).toEqual({
      id: body.users[0].id,
      phone,
      role: 'PARTNER',
      partnerId: body.id,
      partnerName: 'Kargo Ekspress',
    });
  });

  it('trims the name', async () => {
    const res = await createPartnerReq({ name: '  Bakı Logistics  ', phone: randomPhone() });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Bakı Logistics');
  });

  it('accepts a name of 120 characters', async () => {
    const res = await createPartnerReq({ name: 'x'.repeat(120), phone: randomPhone() });
    expect(res.statusCode).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['blank', '    '],
    ['longer than 120 characters', 'x'.repeat(121)],
    ['not a string', 42],
  ])('refuses a name that is %s with 400 ERR_VALIDATION naming name', async (_what, name) => {
    expectValidation(await createPartnerReq({ name, phone: randomPhone() }), 'name');
  });

  it('refuses a bad phone, missing fields and unknown fields by name', async () => {
    expectValidation(await createPartnerReq({ name: 'Acme', phone: '0501234567' }), 'phone');
    const empty = await createPartnerReq({});
    expectValidation(empty, 'name');
    expectValidation(empty, 'phone');
    expectValidation(await createPartnerReq({ name: 'Acme', phone: randomPhone(), rateLimit: 5 }), 'rateLimit');
  });

  it('turns an existing CUSTOMER account into the partner user (same account)', async () => {
    const customer = await signIn(randomPhone());
    const { id: userId, phone } = customer.json().user;
    const res = await createPartnerReq({ name: 'From Customer', phone });
    expect(res.statusCode).toBe(201);
    expect(res.json().users).toEqual([{ id: userId, phone }]);
    t.clock.advance(61);
    expect((await signIn(phone)).json().user).toMatchObject({ id: userId, role: 'PARTNER', partnerId: res.json().id });
  });

  it('refuses the phone of a PARTNER or ADMIN account with 409 ERR_CONFLICT and creates nothing', async () => {
    const other = await createPartner(t.ctx);
    const operator = await createUser(t.ctx, 'ADMIN');
    for (const phone of [other.phone, operator.phone]) {
      const name = `Taken ${phone}`;
      expectError(await createPartnerReq({ name, phone }), 409, 'ERR_CONFLICT');
      const names = (await listPartners()).json().items.map((p: { name: string }) => p.name);
      expect(names).not.toContain(name);
    }
  });
});

describe('POST /v1/admin/partners/{id}/users', () => {
  it('adds a new PARTNER account and answers the partner with its users in the order they joined', async () => {
    const first = randomPhone();
    const partner = (await createPartnerReq({ name: 'Two Users', phone: first })).json();
    const second = randomPhone();
    const res = await addUser(partner.id, { phone: second });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: partner.id,
      name: 'Two Users',
      users: [partner.users[0], { id: expect.stringMatching(UUID), phone: second }],
    });
    expect((await signIn(second)).json().user).toMatchObject({
      role: 'PARTNER',
      partnerId: partner.id,
      partnerName: 'Two Users',
    });
  });

  it('adds an existing CUSTOMER account after the users who joined before it', async () => {
    const customer = (await signIn(randomPhone())).json().user;
    const partner = (await createPartnerReq({ name: 'Later Customer', phone: randomPhone() })).json();
    const res = await addUser(partner.id, { phone: customer.phone });
    expect(res.statusCode).toBe(201);
    expect(res.json().users).toEqual([partner.users[0], { id: customer.id, phone: customer.phone }]);
  });

  it('refuses a phone that is already a partner user (of this or another partner) or an ADMIN with 409 ERR_CONFLICT', async () => {
    const partner = (await createPartnerReq({ name: 'Conflicts', phone: randomPhone() })).json();
    const other = await createPartner(t.ctx);
    const operator = await createUser(t.ctx, 'ADMIN');
    for (const phone of [partner.users[0].phone, other.phone, operator.phone]) {
      expectError(await addUser(partner.id, { phone }), 409, 'ERR_CONFLICT');
    }
    const rows = await t.ctx.db.query<{ role: string; partner_id: string | null }>(
      'SELECT role, partner_id FROM users WHERE phone = $1',
      [other.phone],
    );
    expect(rows).toEqual([{ role: 'PARTNER', partner_id: other.id }]);
  });

  it('answers 404 ERR_NOT_FOUND for an unknown or non-uuid partner id', async () => {
    expectError(await addUser(UNKNOWN_ID, { phone: randomPhone() }), 404, 'ERR_NOT_FOUND');
    expectError(await addUser('not-a-uuid', { phone: randomPhone() }), 404, 'ERR_NOT_FOUND');
  });

  it('refuses a bad phone and unknown fields by name', async () => {
    const partner = await createPartner(t.ctx);
    expectValidation(await addUser(partner.id, { phone: '+99412' }), 'phone');
    expectValidation(await addUser(partner.id, {}), 'phone');
    expectValidation(await addUser(partner.id, { phone: randomPhone(), role: 'ADMIN' }), 'role');
  });
});

describe('GET /v1/admin/partners', () => {
  it('lists every partner with its users, newest first', async () => {
    const older = (await createPartnerReq({ name: 'Older', phone: randomPhone() })).json();
    t.clock.advance(1);
    const newer = (await createPartnerReq({ name: 'Newer', phone: randomPhone() })).json();
    await addUser(newer.id, { phone: randomPhone() });
    const res = await listPartners();
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(Object.keys(res.json())).toEqual(['items']);
    const ids = items.map((p: { id: string }) => p.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    expect(items[0].id).toBe(newer.id);
    expect(items[0]).toEqual({ id: newer.id, name: 'Newer', users: [newer.users[0], expect.any(Object)] });
    expect(items.find((p: { id: string }) => p.id === older.id)).toEqual(older);
    for (const p of items) {
      expect(Object.keys(p).sort()).toEqual(['id', 'name', 'users']);
      for (const u of p.users) expect(Object.keys(u).sort()).toEqual(['id', 'phone']);
    }
  });
});

describe('PATCH /v1/admin/users/{id}', () => {
  it('blocks an account: 200 with the account, and it can no longer request codes, sign in or refresh', async () => {
    const phone = randomPhone();
    const signedIn = (await signIn(phone)).json();
    t.clock.advance(61);
    await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } }); // a live code

    const res = await patchUser(signedIn.user.id, { blocked: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: signedIn.user.id, phone, role: 'CUSTOMER', partnerId: null, blocked: true });

    const verify = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code: TEST_OTP } });
    expectError(verify, 403, 'ERR_USER_BLOCKED');
    t.clock.advance(61);
    const request = await t.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
    expectError(request, 403, 'ERR_USER_BLOCKED');
    // Blocking revoked the account's refresh tokens.
    const refresh = await t.live.inject({
      method: 'POST',
      url: '/v1/auth/refresh',
      payload: { refreshToken: signedIn.refreshToken },
    });
    expectError(refresh, 401, 'ERR_UNAUTHORIZED');
  });

  it('unblocks an account: it can sign in again', async () => {
    const partner = await createPartner(t.ctx);
    expect((await patchUser(partner.userId, { blocked: true })).json().blocked).toBe(true);
    const again = await patchUser(partner.userId, { blocked: true });
    expect(again.statusCode).toBe(200);
    const res = await patchUser(partner.userId, { blocked: false });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: partner.userId,
      phone: partner.phone,
      role: 'PARTNER',
      partnerId: partner.id,
      blocked: false,
    });
    expect((await signIn(partner.phone)).statusCode).toBe(200);
  });

  it('refuses to block the calling operator (409 ERR_CONFLICT)', async () => {
    expectError(await patchUser(admin.userId, { blocked: true }), 409, 'ERR_CONFLICT');
  });

  it('answers 404 ERR_NOT_FOUND for an unknown or non-uuid user id', async () => {
    expectError(await patchUser(UNKNOWN_ID, { blocked: true }), 404, 'ERR_NOT_FOUND');
    expectError(await patchUser('12345', { blocked: true }), 404, 'ERR_NOT_FOUND');
  });

  it('refuses bad input with 400 ERR_VALIDATION naming the field', async () => {
    const user = await createUser(t.ctx, 'CUSTOMER');
    expectValidation(await patchUser(user.userId, {}), 'blocked');
    expectValidation(await patchUser(user.userId, { blocked: 'yes' }), 'blocked');
    expectValidation(await patchUser(user.userId, { blocked: true, role: 'ADMIN' }), 'role');
  });
});
