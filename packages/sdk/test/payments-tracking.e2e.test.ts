/**
 * Payments, settlements, tracking and proof of delivery through the SDK against the real app
 * (sdk.test-helpers.ts).
 */
import { describe, expect, it } from 'vitest';
import { pngBytes } from '../../../src/modules/uploads/uploads.test-helpers.js';
import { createPartner } from '../../../test/factories.js';
import { expectOperationsExercised, partnerClient, setUpSdkApp, signedIn, t } from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

describe('payments', () => {
  it('captures and refunds a sandbox card order, closes and remits a sandbox period, reads intents, balance, settlements, lines and CSV', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Payments key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write', 'payments:read'],
    });
    const sandbox = partnerClient(key.key);
    const [card] = await sandbox.createSandboxOrders(1, { paymentMethod: 'CARD' });
    const captured = await sandbox.POST('/v1/partner/sandbox/orders/{code}/payment/capture', {
      params: { path: { code: card.code } },
    });
    expect(captured.status).toBe('SUCCEEDED');
    const refunded = await sandbox.POST('/v1/partner/sandbox/orders/{code}/payment/refunds', {
      params: { path: { code: card.code } },
      body: { amountQepik: 1 },
    });
    expect(refunded.amountRefundedQepik).toBe(1);
    const intents = await sandbox.GET('/v1/partner/payment-intents', { params: { query: { orderCode: card.code } } });
    expect(intents.items[0].id).toBe(captured.id);
    expect((await sandbox.GET('/v1/partner/payment-intents/{id}', { params: { path: { id: captured.id } } })).orderCode).toBe(
      card.code,
    );
    const [cod] = await sandbox.createSandboxOrders(1, { paymentMethod: 'COD' });
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED'] as const) {
      await sandbox.POST('/v1/partner/orders/{code}/events', { params: { path: { code: cod.code } }, body: { type } });
    }
    expect((await sandbox.GET('/v1/partner/balance')).codOnHandQepik).toBe(cod.codAmountQepik);
    t.clock.advance(1);
    const settlement = await sandbox.POST('/v1/partner/sandbox/settlements', {});
    expect(settlement.collectionsCount).toBe(1);
    expect((await sandbox.GET('/v1/partner/settlements')).items[0].id).toBe(settlement.id);
    expect((await sandbox.GET('/v1/partner/settlements/{id}', { params: { path: { id: settlement.id } } })).id).toBe(
      settlement.id,
    );
    const lines = await sandbox.GET('/v1/partner/settlements/{id}/lines', { params: { path: { id: settlement.id } } });
    expect(lines.items[0].orderCode).toBe(cod.code);
    const csv = await sandbox.GET('/v1/partner/settlements/{id}/lines.csv', {
      params: { path: { id: settlement.id } },
      parseAs: 'text',
    });
    expect(String(csv).split('\r\n')[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    // One qəpik through the portal's route (with a note), the rest through the partner API's.
    const fromPortal = await dev.POST('/v1/developer/sandbox/settlements/{id}/remittances', {
      params: { path: { id: settlement.id } },
      body: { amountQepik: 1, reference: 'SDK-0', note: 'from the portal' },
    });
    expect(fromPortal.note).toBe('from the portal');
    const remitted = await sandbox.POST('/v1/partner/sandbox/settlements/{id}/remittances', {
      params: { path: { id: settlement.id } },
      body: { amountQepik: settlement.outstandingQepik - 1, reference: 'SDK-1' },
    });
    expect(remitted.type).toBe('REMITTANCE');

    // The same money as the partner's user reads it (the portal's Payments page).
    const balance = await dev.GET('/v1/developer/payments/balance', { params: { query: { environment: 'SANDBOX' } } });
    expect(balance.codOnHandQepik).toBe(0);
    const settlements = await dev.GET('/v1/developer/settlements', { params: { query: { environment: 'SANDBOX' } } });
    expect(settlements.items[0].id).toBe(settlement.id);
    const path = { params: { path: { id: settlement.id } } };
    expect((await dev.GET('/v1/developer/settlements/{id}', path)).status).toBe('SETTLED');
    expect((await dev.GET('/v1/developer/settlements/{id}/lines', path)).items[0].orderCode).toBe(cod.code);
    const devCsv = await dev.GET('/v1/developer/settlements/{id}/lines.csv', { ...path, parseAs: 'text' });
    expect(String(devCsv)).toBe(
      String(await sandbox.GET('/v1/partner/settlements/{id}/lines.csv', { ...path, parseAs: 'text' })),
    );
    const intent = await dev.GET('/v1/developer/orders/{code}/payment-intent', { params: { path: { code: card.code } } });
    expect(intent.id).toBe(captured.id);
    const devIntents = await dev.GET('/v1/developer/payment-intents', {
      params: { query: { environment: 'SANDBOX', method: 'CARD' } },
    });
    expect(devIntents.items.map((i) => i.id)).toContain(captured.id);
    const closed = await dev.POST('/v1/developer/sandbox/settlements', { body: {} });
    expect(closed).toMatchObject({ environment: 'sandbox', collectionsCount: 0 });
  });
});

describe('tracking and proof', () => {
  it('sends locations, reads the tracking, uploads a photo and reads it back, delivers with proof and reads the proof', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({
      name: 'Courier key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write'],
    });
    const sandbox = partnerClient(key.key);
    const [order] = await sandbox.createSandboxOrders(1, {});
    for (const type of ['PICKED_UP', 'EN_ROUTE'] as const) {
      await sandbox.POST('/v1/partner/orders/{code}/events', { params: { path: { code: order.code } }, body: { type } });
    }
    const at = new Date(t.clock.nowMs()).toISOString();
    const sent = await sandbox.POST('/v1/partner/orders/{code}/locations', {
      params: { path: { code: order.code } },
      body: { points: [{ lat: 40.41, lng: 49.86, accuracyM: 8, at }] },
    });
    expect(sent.accepted).toBe(1);
    const tracking = await sandbox.GET('/v1/partner/orders/{code}/tracking', { params: { path: { code: order.code } } });
    expect(tracking.orderCode).toBe(order.code);
    const bytes = pngBytes();
    const upload = await sandbox.POST('/v1/partner/uploads', {
      body: bytes as never,
      bodySerializer: (b: unknown) => b as never,
      headers: { 'content-type': 'image/png' },
    });
    expect(upload).toMatchObject({ contentType: 'image/png', bytes: bytes.length });
    const back = await sandbox.GET('/v1/partner/uploads/{id}', { params: { path: { id: upload.id } }, parseAs: 'arrayBuffer' });
    expect(Buffer.from(back as unknown as ArrayBuffer).equals(bytes)).toBe(true);
    await sandbox.POST('/v1/partner/orders/{code}/events', {
      params: { path: { code: order.code } },
      body: { type: 'DELIVERED', proof: { photoIds: [upload.id], recipientName: 'Leyla' } },
    });
    const proof = await sandbox.GET('/v1/partner/orders/{code}/proof', { params: { path: { code: order.code } } });
    expect(proof).toMatchObject({ orderCode: order.code, event: 'DELIVERED', recipientName: 'Leyla' });
    expect((await dev.GET('/v1/developer/orders/{code}/proof', { params: { path: { code: order.code } } })).event).toBe(
      'DELIVERED',
    );
    const view = await dev.GET('/v1/developer/orders/{code}', { params: { path: { code: order.code } } });
    expect(view).toMatchObject({ order: { status: 'DELIVERED' }, proof: { recipientName: 'Leyla' } });
    expect(view.tracking.location).not.toBeNull();
    const devBack = await dev.GET('/v1/developer/uploads/{id}', { params: { path: { id: upload.id } }, parseAs: 'arrayBuffer' });
    expect(Buffer.from(devBack as unknown as ArrayBuffer).equals(bytes)).toBe(true);
  });
});

expectOperationsExercised(SDK_COVERAGE.paymentsTracking);
