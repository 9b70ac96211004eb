/**
 * Order offers (docs/offers.md) through HTTP: the operator offers, the partner reads, accepts or
 * declines, deadlines, withdrawal, cancellation, direct assignment, bulk acceptance, bad input, scopes.
 */
import { describe, expect, it } from 'vitest';
import { expectError, expectFieldError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import {
  type Auth,
  adminStatus,
  advanceTo,
  assign,
  assignRequest,
  createOrder,
  ISO,
  partnerKey,
} from '../orders/orders.test-helpers.js';
import { sweepExpiredOffers } from './offers.service.js';
import { accept, decline, offerEventsOf, offeredOrder, offerRequest, withdraw } from './offers.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

const ID = /^ofr_[0-9A-Za-z]{24}$/;

describe('POST /v1/admin/orders/{code}/offers', () => {
  it('offers the order to the key for 900 s by default, showing no customer name, phone or street', async () => {
    const key = await partnerKey(t);
    const order = await createOrder(t, admin);
    const res = await offerRequest(t, admin, order.code, { apiKeyId: key.id });
    expect(res.statusCode, res.body).toBe(201);
    const offer = res.json();
    expect(offer).toEqual({
      id: expect.stringMatching(ID),
      orderCode: order.code,
      apiKeyId: key.id,
      status: 'PENDING',
      createdAt: expect.stringMatching(ISO),
      expiresAt: expect.stringMatching(ISO),
      decidedAt: null,
      declineReason: null,
      note: null,
      order: {
        code: order.code,
        status: 'PLACED',
        paymentMethod: 'COD',
        totalQepik: 12_500,
        codAmountQepik: 12_500,
        area: 'Nəsimi',
        zone: null,
        timeWindowStart: '2030-05-01T10:00:00.000Z',
        timeWindowEnd: '2030-05-01T12:00:00.000Z',
        items: order.items,
        dropoff: { lat: 40.37, lng: 49.85 },
      },
    });
    expect(Date.parse(offer.expiresAt) - Date.parse(offer.createdAt)).toBe(900_000);
    expect(res.body).not.toContain('Aysel');
    expect(res.body).not.toContain('+994501234567');
    expect(res.body).not.toContain('Nizami');
    const events = await offerEventsOf(t, order.code);
    expect(events.map((e) => [e.type, e.assigned_key_id])).toEqual([['offer.created', key.id]]);
    expect(events[0].data).toEqual(offer);
  });

  it('takes ttlSec from 60 to 86400 and answers 400 naming ttlSec outside it', async () => {
    const key = await partnerKey(t);
    for (const ttlSec of [59, 86_401, 1.5]) {
      const order = await createOrder(t, admin);
      expectFieldError(await offerRequest(t, admin, order.code, { apiKeyId: key.id, ttlSec }), 'ttlSec');
    }
    const offer = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    expect(Date.parse(offer.expiresAt) - Date.parse(offer.createdAt)).toBe(60_000);
  });

  it('answers an order without coordinates with dropoff null', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id, { order: { customer: { address: { street: 'Bakı' } } } });
    expect(offer.order.dropoff).toBeNull();
  });

  it('answers an unknown order or key with 404', async () => {
    const key = await partnerKey(t);
    expectError(await offerRequest(t, admin, 'ORD-NOPE', { apiKeyId: key.id }), 404, 'ERR_NOT_FOUND');
    const order = await createOrder(t, admin);
    expectError(
      await offerRequest(t, admin, order.code, { apiKeyId: '00000000-0000-4000-8000-000000000000' }),
      404,
      'ERR_NOT_FOUND',
    );
  });

  it('answers 409 ERR_CONFLICT for an assigned order, an order with an open offer, or one past PACKED', async () => {
    const key = await partnerKey(t);
    const assigned = await createOrder(t, admin);
    await assign(t, admin, assigned.code, key.id);
    expectError(await offerRequest(t, admin, assigned.code, { apiKeyId: key.id }), 409, 'ERR_CONFLICT');

    const offer = await offeredOrder(t, admin, key.id);
    const other = await partnerKey(t);
    expectError(await offerRequest(t, admin, offer.orderCode, { apiKeyId: other.id }), 409, 'ERR_CONFLICT');

    const packed = await createOrder(t, admin);
    await advanceTo(t, admin, packed.code, 'PACKED');
    expect((await offerRequest(t, admin, packed.code, { apiKeyId: key.id })).statusCode).toBe(201);
    const scanned = await createOrder(t, admin);
    await advanceTo(t, admin, scanned.code, 'SCANNED_TO_VAN');
    expectError(await offerRequest(t, admin, scanned.code, { apiKeyId: key.id }), 409, 'ERR_CONFLICT');
  });

  it('answers 409 ERR_CONFLICT for a revoked key, a key of the other environment, or one without logistics:write', async () => {
    const partner = await createPartner(t.ctx);
    const revoked = await createKey(t.ctx, partner.id);
    expect(
      (await t.live.inject({ method: 'DELETE', url: `/v1/developer/keys/${revoked.id}`, headers: partner.auth })).statusCode,
    ).toBe(200);
    const sandbox = await partnerKey(t, { environment: 'SANDBOX' });
    const readOnly = await partnerKey(t, { scopes: ['orders:read'] });
    for (const key of [revoked, sandbox, readOnly]) {
      const order = await createOrder(t, admin);
      expectError(await offerRequest(t, admin, order.code, { apiKeyId: key.id }), 409, 'ERR_CONFLICT');
    }
  });

  it('is for operators only: a partner account answers 403', async () => {
    const partner = await createPartner(t.ctx);
    const order = await createOrder(t, admin);
    const res = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/orders/${order.code}/offers`,
      headers: partner.auth,
      payload: {},
    });
    expectError(res, 403, 'ERR_FORBIDDEN');
  });
});

describe('GET /v1/partner/offers and /v1/partner/offers/{id}', () => {
  it('lists the offers made to the key, newest first, and no other key’s', async () => {
    const key = await partnerKey(t);
    const other = await partnerKey(t);
    const first = await offeredOrder(t, admin, key.id);
    t.clock.advance(1);
    const second = await offeredOrder(t, admin, key.id);
    await offeredOrder(t, admin, other.id);
    const res = await t.live.inject({ method: 'GET', url: '/v1/partner/offers', headers: key.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ page: 1, pageSize: 20, total: 2 });
    expect(res.json().items.map((o: { id: string }) => o.id)).toEqual([second.id, first.id]);
    const one = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${first.id}`, headers: key.headers });
    expect(one.json()).toEqual(first);
  });

  it('answers another key’s offer, or an unknown one, with 404', async () => {
    const key = await partnerKey(t);
    const other = await partnerKey(t);
    const offer = await offeredOrder(t, admin, other.id);
    expectError(
      await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${offer.id}`, headers: key.headers }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(
      await t.live.inject({ method: 'GET', url: '/v1/partner/offers/ofr_000000000000000000000000', headers: key.headers }),
      404,
      'ERR_NOT_FOUND',
    );
    expectError(await accept(t, key, offer.id), 404, 'ERR_NOT_FOUND');
    expectError(await decline(t, key, offer.id, { reason: 'NO_CAPACITY' }), 404, 'ERR_NOT_FOUND');
  });

  it('filters by status, an offer past its deadline counting as EXPIRED', async () => {
    const key = await partnerKey(t);
    const soon = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    const later = await offeredOrder(t, admin, key.id, { ttlSec: 3600 });
    t.clock.advance(61);
    const list = async (status: string) =>
      (await t.live.inject({ method: 'GET', url: `/v1/partner/offers?status=${status}`, headers: key.headers }))
        .json()
        .items.map((o: { id: string }) => o.id);
    expect(await list('PENDING')).toEqual([later.id]);
    expect(await list('EXPIRED')).toEqual([soon.id]);
    expectFieldError(
      await t.live.inject({ method: 'GET', url: '/v1/partner/offers?status=OPEN', headers: key.headers }),
      'status',
    );
  });

  it('needs orders:read', async () => {
    const key = await partnerKey(t, { scopes: ['logistics:write'] });
    expectError(
      await t.live.inject({ method: 'GET', url: '/v1/partner/offers', headers: key.headers }),
      403,
      'ERR_API_KEY_SCOPE',
    );
  });
});

describe('POST /v1/partner/offers/{id}/accept', () => {
  it('accepts: the order is assigned to the key in the same transaction, with its webhook event', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    t.clock.advance(30);
    const res = await accept(t, key, offer.id);
    expect(res.statusCode, res.body).toBe(200);
    const accepted = res.json();
    expect(accepted).toMatchObject({ id: offer.id, status: 'ACCEPTED', decidedAt: expect.stringMatching(ISO) });
    expect(Date.parse(accepted.decidedAt) - Date.parse(offer.createdAt)).toBeGreaterThanOrEqual(30_000);
    const order = await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${offer.orderCode}`, headers: key.headers });
    expect(order.statusCode, order.body).toBe(200);
    expect(order.json().partnerAssignedAt).toBe(accepted.decidedAt);
    expect(order.json().customer.name).toBe('Aysel Məmmədova');
    const types = await t.ctx.db.query<{ type: string; assigned_key_id: string }>(
      `SELECT x.type, x.assigned_key_id FROM outbox x JOIN orders o ON o.id = x.order_id WHERE o.code = $1 AND x.type NOT LIKE 'payment%' ORDER BY x.id`,
      [offer.orderCode],
    );
    expect(types.map((r) => r.type)).toEqual(['order.placed', 'offer.created', 'offer.accepted', 'order.assigned_to_partner']);
    expect(types[3].assigned_key_id).toBe(key.id);
  });

  it('answers an offer this key already accepted with it again', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const first = await accept(t, key, offer.id);
    const again = await accept(t, key, offer.id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual(['offer.created', 'offer.accepted']);
  });

  it('answers a declined, withdrawn or expired offer with 409 ERR_OFFER_CLOSED and its status', async () => {
    const key = await partnerKey(t);
    const declined = await offeredOrder(t, admin, key.id);
    expect((await decline(t, key, declined.id, { reason: 'NO_CAPACITY' })).statusCode).toBe(200);
    const res = await accept(t, key, declined.id);
    expectError(res, 409, 'ERR_OFFER_CLOSED');
    expect(res.json().details).toEqual({ status: 'DECLINED' });

    const withdrawn = await offeredOrder(t, admin, key.id);
    expect((await withdraw(t, admin, withdrawn.id)).statusCode).toBe(200);
    expect((await accept(t, key, withdrawn.id)).json().details).toEqual({ status: 'WITHDRAWN' });

    const expiring = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    t.clock.advance(60);
    const late = await accept(t, key, expiring.id);
    expectError(late, 409, 'ERR_OFFER_CLOSED');
    expect(late.json().details).toEqual({ status: 'EXPIRED' });
    expect(
      (await t.live.inject({ method: 'GET', url: `/v1/partner/orders/${expiring.orderCode}`, headers: key.headers })).statusCode,
    ).toBe(404);
  });

  it('honours Idempotency-Key', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const first = await accept(t, key, offer.id, { 'idempotency-key': 'acc-1' });
    const again = await accept(t, key, offer.id, { 'idempotency-key': 'acc-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
  });

  it('needs logistics:write, checked before the input (403 before 400)', async () => {
    const full = await partnerKey(t);
    const partnerId = (
      await t.ctx.db.query<{ partner_id: string }>('SELECT partner_id FROM api_keys WHERE id = $1', [full.id])
    )[0].partner_id;
    const key = await partnerKey(t, { scopes: ['orders:read'], partnerId });
    const offer = await offeredOrder(t, admin, full.id);
    expectError(await accept(t, key, offer.id), 403, 'ERR_API_KEY_SCOPE');
    expectError(await decline(t, key, offer.id, { reason: 'NOPE' }), 403, 'ERR_API_KEY_SCOPE');
    expectError(await accept(t, key, 'not-an-id'), 403, 'ERR_API_KEY_SCOPE');
  });
});

describe('POST /v1/partner/offers/{id}/decline', () => {
  it('declines with a reason; the order stays unassigned and can be offered again', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const res = await decline(t, key, offer.id, { reason: 'OUT_OF_AREA' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'DECLINED',
      declineReason: 'OUT_OF_AREA',
      note: null,
      decidedAt: expect.stringMatching(ISO),
    });
    const other = await partnerKey(t);
    expect((await offerRequest(t, admin, offer.orderCode, { apiKeyId: other.id })).statusCode).toBe(201);
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual([
      'offer.created',
      'offer.declined',
      'offer.created',
    ]);
  });

  it('keeps the note, and needs one for OTHER', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    expectFieldError(await decline(t, key, offer.id, { reason: 'OTHER' }), 'note');
    expectFieldError(await decline(t, key, offer.id, { reason: 'OTHER', note: '   ' }), 'note');
    const res = await decline(t, key, offer.id, { reason: 'OTHER', note: 'Van in repair' });
    expect(res.json()).toMatchObject({ status: 'DECLINED', declineReason: 'OTHER', note: 'Van in repair' });
  });

  it('answers 400 naming the field for a reason outside the enum or a note over 500 characters', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    expectFieldError(await decline(t, key, offer.id, { reason: 'BUSY' }), 'reason');
    expectFieldError(await decline(t, key, offer.id, {}), 'reason');
    expectFieldError(await decline(t, key, offer.id, { reason: 'NO_CAPACITY', note: 'x'.repeat(501) }), 'note');
    expect((await decline(t, key, offer.id, { reason: 'NO_CAPACITY', note: 'x'.repeat(500) })).statusCode).toBe(200);
  });

  it('answers a closed offer with 409 ERR_OFFER_CLOSED, and a repeat under its Idempotency-Key with the first answer', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const first = await decline(t, key, offer.id, { reason: 'TIME_WINDOW' }, { 'idempotency-key': 'dec-1' });
    const again = await decline(t, key, offer.id, { reason: 'TIME_WINDOW' }, { 'idempotency-key': 'dec-1' });
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    const closed = await decline(t, key, offer.id, { reason: 'TIME_WINDOW' });
    expectError(closed, 409, 'ERR_OFFER_CLOSED');
    expect(closed.json().details).toEqual({ status: 'DECLINED' });
  });
});

describe('deadlines', () => {
  it('an offer past expiresAt reads EXPIRED at once; the sweep records it with offer.expired', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    t.clock.advance(60);
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${offer.id}`, headers: key.headers });
    expect(read.json()).toMatchObject({ status: 'EXPIRED', decidedAt: offer.expiresAt });
    await sweepExpiredOffers(t.ctx);
    const rows = await t.ctx.db.query<{ status: string }>('SELECT status FROM offers WHERE id = $1', [offer.id]);
    expect(rows[0].status).toBe('EXPIRED');
    const events = await offerEventsOf(t, offer.orderCode);
    expect(events.map((e) => e.type)).toEqual(['offer.created', 'offer.expired']);
    expect(events[1].data).toEqual(read.json());
  });

  it('an expired order can be offered again at once, and assigned directly', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id, { ttlSec: 60 });
    t.clock.advance(61);
    const again = await offerRequest(t, admin, offer.orderCode, { apiKeyId: key.id, ttlSec: 60 });
    expect(again.statusCode, again.body).toBe(201);
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual([
      'offer.created',
      'offer.expired',
      'offer.created',
    ]);
    t.clock.advance(61);
    expect((await assignRequest(t, admin, offer.orderCode, key.id)).statusCode).toBe(200);
  });
});

describe('the operator: withdraw, cancel, assign', () => {
  it('DELETE /v1/admin/offers/{id} withdraws a PENDING offer; a closed one answers 409 ERR_OFFER_CLOSED', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    const res = await withdraw(t, admin, offer.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'WITHDRAWN', decidedAt: expect.stringMatching(ISO) });
    const again = await withdraw(t, admin, offer.id);
    expectError(again, 409, 'ERR_OFFER_CLOSED');
    expect(again.json().details).toEqual({ status: 'WITHDRAWN' });
    expectError(await withdraw(t, admin, 'ofr_000000000000000000000000'), 404, 'ERR_NOT_FOUND');
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual(['offer.created', 'offer.withdrawn']);
  });

  it('cancelling the order withdraws its open offer', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    expect((await adminStatus(t, admin, offer.orderCode, 'CANCELLED')).statusCode).toBe(200);
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${offer.id}`, headers: key.headers });
    expect(read.json()).toMatchObject({ status: 'WITHDRAWN', order: { status: 'CANCELLED' } });
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual(['offer.created', 'offer.withdrawn']);
    expectError(await accept(t, key, offer.id), 409, 'ERR_OFFER_CLOSED');
  });

  it('moving the order on past PACKED withdraws its open offer, as cancelling it does', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    await advanceTo(t, admin, offer.orderCode, 'PACKED');
    const moved = await adminStatus(t, admin, offer.orderCode, 'SCANNED_TO_VAN');
    expect(moved.statusCode, moved.body).toBe(200);
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${offer.id}`, headers: key.headers });
    expect(read.json()).toMatchObject({
      status: 'WITHDRAWN',
      decidedAt: expect.stringMatching(ISO),
      order: { status: 'SCANNED_TO_VAN' },
    });
    expect((await offerEventsOf(t, offer.orderCode)).map((e) => e.type)).toEqual(['offer.created', 'offer.withdrawn']);
    const refused = await accept(t, key, offer.id);
    expectError(refused, 409, 'ERR_OFFER_CLOSED');
    expect(refused.json().details).toEqual({ status: 'WITHDRAWN' });
    // Within PLACED…PACKED the offer stays open.
    const other = await offeredOrder(t, admin, key.id);
    expect((await adminStatus(t, admin, other.orderCode, 'VENDOR_ACCEPTED')).statusCode).toBe(200);
    expect((await accept(t, key, other.id)).json()).toMatchObject({ status: 'ACCEPTED' });
  });

  it('a key rotation moves its open offers to the successor, which decides them; the old key in its grace too', async () => {
    const partner = await createPartner(t.ctx);
    const old = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
    const [first, second, decided] = [
      await offeredOrder(t, admin, old.id),
      await offeredOrder(t, admin, old.id),
      await offeredOrder(t, admin, old.id),
    ];
    expect((await decline(t, old, decided.id, { reason: 'NO_CAPACITY' })).statusCode).toBe(200);
    const rotated = await t.live.inject({ method: 'POST', url: `/v1/developer/keys/${old.id}/rotate`, headers: partner.auth });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const successor = { id: rotated.json().id as string, headers: { 'x-api-key': rotated.json().key as string } };
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${first.id}`, headers: successor.headers });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ status: 'PENDING', apiKeyId: successor.id });
    // A decided offer stays with the key it was made to.
    const history = await t.live.inject({ method: 'GET', url: `/v1/partner/offers/${decided.id}`, headers: old.headers });
    expect(history.json()).toMatchObject({ status: 'DECLINED', apiKeyId: old.id });

    const byNew = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/offers/${first.id}/accept`,
      headers: successor.headers,
    });
    expect(byNew.statusCode, byNew.body).toBe(200);
    const byOld = await accept(t, old, second.id);
    expect(byOld.statusCode, byOld.body).toBe(200);
    for (const o of [first, second]) {
      const order = await t.live.inject({ method: 'GET', url: `/v1/admin/orders/${o.orderCode}`, headers: admin });
      expect(order.json().assignedKeyId).toBe(successor.id);
    }
  });

  it('a direct assignment of an order with an open offer answers 409 ERR_CONFLICT', async () => {
    const key = await partnerKey(t);
    const offer = await offeredOrder(t, admin, key.id);
    expectError(await assignRequest(t, admin, offer.orderCode, key.id), 409, 'ERR_CONFLICT');
    expect((await withdraw(t, admin, offer.id)).statusCode).toBe(200);
    expect((await assignRequest(t, admin, offer.orderCode, key.id)).statusCode).toBe(200);
  });

  it('GET /v1/admin/offers lists every offer newest first, by status, partner and order', async () => {
    const key = await partnerKey(t);
    const a = await offeredOrder(t, admin, key.id);
    t.clock.advance(1);
    const b = await offeredOrder(t, admin, key.id);
    await decline(t, key, a.id, { reason: 'NO_CAPACITY' });
    const partnerId = (await t.ctx.db.query<{ partner_id: string }>('SELECT partner_id FROM api_keys WHERE id = $1', [key.id]))[0]
      .partner_id;
    const list = async (query: string) => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/admin/offers?${query}`, headers: admin });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items.map((o: { id: string }) => o.id);
    };
    expect(await list(`partnerId=${partnerId}`)).toEqual([b.id, a.id]);
    expect(await list(`partnerId=${partnerId}&status=DECLINED`)).toEqual([a.id]);
    expect(await list(`orderCode=${b.orderCode}`)).toEqual([b.id]);
    const one = await t.live.inject({ method: 'GET', url: `/v1/admin/offers/${b.id}`, headers: admin });
    expect(one.json()).toEqual(b);
  });
});

describe('POST /v1/partner/offers/accept (bulk)', () => {
  it('decides each id on its own and answers one result per id, in the order given', async () => {
    const key = await partnerKey(t);
    const other = await partnerKey(t);
    const a = await offeredOrder(t, admin, key.id);
    const b = await offeredOrder(t, admin, key.id);
    const theirs = await offeredOrder(t, admin, other.id);
    await decline(t, key, b.id, { reason: 'NO_CAPACITY' });
    const res = await t.live.inject({
      method: 'POST',
      url: '/v1/partner/offers/accept',
      headers: key.headers,
      payload: { ids: [b.id, a.id, theirs.id] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { results } = res.json();
    expect(results.map((r: { id: string }) => r.id)).toEqual([b.id, a.id, theirs.id]);
    expect(results[0]).toMatchObject({ offer: null, error: { code: 'ERR_OFFER_CLOSED' } });
    expect(results[1]).toMatchObject({ offer: { id: a.id, status: 'ACCEPTED' }, error: null });
    expect(results[2]).toMatchObject({ offer: null, error: { code: 'ERR_NOT_FOUND' } });
  });

  it('answers 400 naming ids when they are empty, over 100 or repeated', async () => {
    const key = await partnerKey(t);
    const id = (n: number) => `ofr_${String(n).padStart(24, '0')}`;
    const bulk = (ids: string[]) =>
      t.live.inject({ method: 'POST', url: '/v1/partner/offers/accept', headers: key.headers, payload: { ids } });
    expectFieldError(await bulk([]), 'ids');
    expectFieldError(await bulk(Array.from({ length: 101 }, (_, i) => id(i))), 'ids');
    expectFieldError(await bulk([id(1), id(1)]), 'ids');
    const hundred = await bulk(Array.from({ length: 100 }, (_, i) => id(i)));
    expect(hundred.statusCode).toBe(200);
    expect(hundred.json().results).toHaveLength(100);
  });
});
