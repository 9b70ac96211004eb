import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, orderFor } from '../orders/orders.test-helpers.js';
import { jpegBytes, pngBytes } from '../uploads/uploads.test-helpers.js';
import { allowedDistanceM, haversineM } from './proof-rules.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

/** The address of the test orders (orders.test-helpers.ts). */
const HOME = { lat: 40.3725, lng: 49.8463 };
/** A point `metres` due north of HOME (one degree of latitude is the same length everywhere). */
const north = (metres: number) => ({ lat: HOME.lat + (metres / (6_371_000 * Math.PI)) * 180, lng: HOME.lng });

async function setup(policy?: 'NONE' | 'LOCATION' | 'LOCATION_AND_PHOTO'): Promise<{ partner: TestPartner; key: TestKey }> {
  const partner = await createPartner(t.ctx);
  if (policy) {
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/partners/${partner.id}`,
      headers: admin,
      payload: { proofPolicy: policy },
    });
    expect(res.statusCode, res.body).toBe(200);
  }
  const key = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
  return { partner, key };
}
function event(k: TestKey, code: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: `/v1/partner/orders/${code}/events`,
    headers: { ...k.headers, ...headers },
    payload: body,
  });
}
async function photo(k: TestKey, bytes = jpegBytes()): Promise<string> {
  const res = await t.live.inject({
    method: 'POST',
    url: '/v1/partner/uploads',
    headers: { ...k.headers, 'content-type': 'image/jpeg' },
    payload: bytes,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}
function readProof(k: TestKey, code: string) {
  return t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}/proof`, headers: k.headers });
}
function expectFieldError(res: { statusCode: number; json(): unknown }, field: string) {
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}

describe('PATCH /v1/admin/partners/{id}', () => {
  it('sets proofPolicy and answers the partner; NONE by default on the partner read; bad values 400, unknown partner 404', async () => {
    const partner = await createPartner(t.ctx);
    const read = await t.live.inject({ method: 'GET', url: `/v1/admin/partners/${partner.id}`, headers: admin });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: partner.id, proofPolicy: 'NONE' });
    const res = await t.live.inject({
      method: 'PATCH',
      url: `/v1/admin/partners/${partner.id}`,
      headers: admin,
      payload: { proofPolicy: 'LOCATION_AND_PHOTO' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: partner.id,
      name: partner.name,
      proofPolicy: 'LOCATION_AND_PHOTO',
      users: [{ id: partner.userId, phone: partner.phone }],
    });
    expectFieldError(
      await t.live.inject({
        method: 'PATCH',
        url: `/v1/admin/partners/${partner.id}`,
        headers: admin,
        payload: { proofPolicy: 'SELFIE' },
      }),
      'proofPolicy',
    );
    const after = await t.live.inject({ method: 'GET', url: `/v1/admin/partners/${partner.id}`, headers: admin });
    expect(after.json().proofPolicy).toBe('LOCATION_AND_PHOTO');
    expectError(await t.live.inject({ method: 'GET', url: '/v1/admin/partners/nope', headers: admin }), 404, 'ERR_NOT_FOUND');
    expectError(
      await t.live.inject({
        method: 'PATCH',
        url: '/v1/admin/partners/00000000-0000-4000-8000-000000000000',
        headers: admin,
        payload: { proofPolicy: 'NONE' },
      }),
      404,
      'ERR_NOT_FOUND',
    );
  });
});

describe('proof on DELIVERED and FAILED', () => {
  it('is optional under NONE, and is stored and read back with the distance from the address', async () => {
    const { key } = await setup();
    const bare = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await event(key, bare, { type: 'DELIVERED' })).statusCode).toBe(201);
    expectError(await readProof(key, bare), 404, 'ERR_NOT_FOUND');

    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const photos = [await photo(key), await photo(key, pngBytes())];
    const at = north(120);
    const res = await event(key, code, {
      type: 'DELIVERED',
      codCollectedQepik: 12_500,
      proof: { location: { ...at, accuracyM: 10 }, photoIds: photos, recipientName: 'Aysel' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const proof = await readProof(key, code);
    expect(proof.statusCode, proof.body).toBe(200);
    expect(proof.json()).toEqual({
      orderCode: code,
      event: 'DELIVERED',
      at: expect.stringMatching(/Z$/),
      location: { ...at, accuracyM: 10 },
      distanceM: 120,
      photos: [
        { id: photos[0], contentType: 'image/jpeg', bytes: jpegBytes().length },
        { id: photos[1], contentType: 'image/png', bytes: pngBytes().length },
      ],
      recipientName: 'Aysel',
    });
    const byAdmin = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${code}/proof`, headers: admin });
    expect(byAdmin.statusCode).toBe(200);
    expect(byAdmin.json()).toEqual(proof.json());
  });

  it('LOCATION: DELIVERED and FAILED without a location answer 400 ERR_LOCATION_REQUIRED', async () => {
    const { key } = await setup('LOCATION');
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expectError(await event(key, code, { type: 'DELIVERED' }), 400, 'ERR_LOCATION_REQUIRED');
    expectError(
      await event(key, code, { type: 'FAILED', failReason: 'NOT_HOME', proof: { recipientName: 'x' } }),
      400,
      'ERR_LOCATION_REQUIRED',
    );
    // Far away is fine for FAILED (the geofence is DELIVERED's), and the distance is kept.
    const failed = await event(key, code, {
      type: 'FAILED',
      failReason: 'NOT_HOME',
      proof: { location: { ...north(2_000), accuracyM: 5 } },
    });
    expect(failed.statusCode, failed.body).toBe(201);
    expect((await readProof(key, code)).json()).toMatchObject({
      event: 'FAILED',
      distanceM: 2_000,
      photos: [],
      recipientName: null,
    });
    expect((await event(key, code, { type: 'EN_ROUTE' })).statusCode).toBe(201);
    expect((await event(key, code, { type: 'DELIVERED', proof: { location: { ...HOME, accuracyM: 5 } } })).statusCode).toBe(201);
    expect((await readProof(key, code)).json()).toMatchObject({ event: 'DELIVERED', distanceM: 0 });
  });

  it('LOCATION_AND_PHOTO: without photos 400 ERR_VALIDATION naming proof.photoIds', async () => {
    const { key } = await setup('LOCATION_AND_PHOTO');
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const location = { ...HOME, accuracyM: 5 };
    expectError(
      await event(key, code, { type: 'DELIVERED', proof: { photoIds: [await photo(key)] } }),
      400,
      'ERR_LOCATION_REQUIRED',
    );
    expectFieldError(await event(key, code, { type: 'DELIVERED', proof: { location } }), 'proof.photoIds');
    expect((await event(key, code, { type: 'DELIVERED', proof: { location, photoIds: [await photo(key)] } })).statusCode).toBe(
      201,
    );
  });

  it('an unknown upload id, another partner’s, or more than 5 answer 400 ERR_VALIDATION naming proof.photoIds', async () => {
    const { key } = await setup();
    const stranger = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const location = { ...HOME, accuracyM: 5 };
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { location, photoIds: ['upl_000000000000000000000000'] } }),
      'proof.photoIds',
    );
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { location, photoIds: [await photo(stranger.key)] } }),
      'proof.photoIds',
    );
    const mine = await photo(key);
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { photoIds: Array.from({ length: 6 }, () => mine) } }),
      'proof.photoIds',
    );
    expectFieldError(await event(key, code, { type: 'DELIVERED', proof: { photoIds: [] } }), 'proof.photoIds');
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { recipientName: 'x'.repeat(121) } }),
      'proof.recipientName',
    );
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { location: { ...HOME, accuracyM: -1 } } }),
      'proof.location.accuracyM',
    );
    expectFieldError(
      await event(key, code, { type: 'DELIVERED', proof: { location: { lat: 91, lng: 0, accuracyM: 1 } } }),
      'proof.location.lat',
    );
    expectError(await event(key, code, { type: 'EN_ROUTE', proof: { location } }), 400, 'ERR_BAD_REQUEST');
    // Nothing was applied: the order is still EN_ROUTE and has no proof.
    expectError(await readProof(key, code), 404, 'ERR_NOT_FOUND');
  });

  it('geofence: DELIVERED up to min(300 + accuracyM, 500) m from the address is taken, farther is 409 ERR_OUTSIDE_GEOFENCE with { distanceM, allowedM }', async () => {
    expect(allowedDistanceM(0)).toBe(300);
    expect(allowedDistanceM(150)).toBe(450);
    expect(allowedDistanceM(900)).toBe(500);
    expect(haversineM(HOME, north(300))).toBeCloseTo(300, 6);
    const { key } = await setup('LOCATION');
    for (const [metres, accuracyM, allowedM] of [
      [300.5, 0, 300],
      [451, 150, 450],
      [501, 9_000, 500],
    ] as const) {
      const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
      const refused = await event(key, code, { type: 'DELIVERED', proof: { location: { ...north(metres), accuracyM } } });
      expectError(refused, 409, 'ERR_OUTSIDE_GEOFENCE');
      expect(refused.json().details).toEqual({ distanceM: metres, allowedM });
      const taken = await event(key, code, { type: 'DELIVERED', proof: { location: { ...north(allowedM - 0.5), accuracyM } } });
      expect(taken.statusCode, taken.body).toBe(201);
      expect((await readProof(key, code)).json().distanceM).toBe(allowedM - 0.5);
    }
  });

  it('no geofence when the address has no coordinates; the distance is then null', async () => {
    const { key } = await setup('LOCATION');
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE', {
      customer: { name: 'A', phone: '+994501234567', address: { street: 'Nizami 1' } },
    });
    expect(
      (await event(key, code, { type: 'DELIVERED', proof: { location: { ...north(5_000), accuracyM: 5 } } })).statusCode,
    ).toBe(201);
    expect((await readProof(key, code)).json()).toMatchObject({ distanceM: null, location: { ...north(5_000), accuracyM: 5 } });
  });

  it('is kept with the answer of an Idempotency-Key: a repeat answers the same, a refusal is replayed', async () => {
    const { key } = await setup('LOCATION');
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const far = { type: 'DELIVERED', proof: { location: { ...north(900), accuracyM: 5 } } };
    expectError(await event(key, code, far, { 'idempotency-key': 'far-1' }), 409, 'ERR_OUTSIDE_GEOFENCE');
    expectError(await event(key, code, far, { 'idempotency-key': 'far-1' }), 409, 'ERR_OUTSIDE_GEOFENCE');
    const near = { type: 'DELIVERED', proof: { location: { ...north(50), accuracyM: 5 }, recipientName: 'Aysel' } };
    expect((await event(key, code, near, { 'idempotency-key': 'near-1' })).statusCode).toBe(201);
    expect((await event(key, code, near, { 'idempotency-key': 'near-1' })).statusCode).toBe(201);
    expect((await readProof(key, code)).json()).toMatchObject({ distanceM: 50, recipientName: 'Aysel' });
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM order_proofs p JOIN orders o ON o.id = p.order_id WHERE o.code = $1',
      [code],
    );
    expect(n).toBe(1);
  });
});

describe('GET /v1/partner/orders/{code}/proof', () => {
  // Another partner's order: test/auth-contract.test.ts, "another partner's resources".
  it('answers a proof given without a location; the operator 404 when there is none', async () => {
    const { key } = await setup();
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expect((await event(key, code, { type: 'DELIVERED', proof: { recipientName: 'Aysel' } })).statusCode).toBe(201);
    expect((await readProof(key, code)).json()).toMatchObject({ location: null, distanceM: null, recipientName: 'Aysel' });
    const none = await orderFor(t, admin, key.id, 'EN_ROUTE');
    expectError(
      await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${none}/proof`, headers: admin }),
      404,
      'ERR_NOT_FOUND',
    );
  });
});
