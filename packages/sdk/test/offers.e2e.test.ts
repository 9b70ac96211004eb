/**
 * Order offers through the SDK against the real app (sdk.test-helpers.ts): sandbox offers, reading,
 * accepting one and several, declining, a closed offer's typed error, and the portal's sandbox decisions.
 */
import { describe, expect, it } from 'vitest';
import { createPartner } from '../../../test/factories.js';
import { expectApiError, expectOperationsExercised, partnerClient, setUpSdkApp, signedIn, t } from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

describe('offers', () => {
  it('makes sandbox offers, accepts one and several, declines one, and reads the accepted order', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    const key = await dev.keys.create({ name: 'Offers key', environment: 'SANDBOX', scopes: ['orders:read', 'logistics:write'] });
    const sandbox = partnerClient(key.key);
    const offers = await sandbox.offers.createSandbox(5, { ttlSec: 600 });
    expect(offers.map((o) => o.status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'PENDING', 'PENDING']);
    const [one, two, three, four, five] = offers;

    expect((await sandbox.offers.get(one.id)).order).not.toHaveProperty('customer');
    const pending = await sandbox.offers.list({ status: 'PENDING' });
    expect(pending.total).toBe(5);
    const seen: string[] = [];
    for await (const offer of sandbox.offers.all({ pageSize: 2 })) seen.push(offer.id);
    expect(seen.sort()).toEqual(offers.map((o) => o.id).sort());

    const accepted = await sandbox.offers.accept(one.id, { idempotencyKey: 'sdk-accept-1' });
    expect(accepted.status).toBe('ACCEPTED');
    expect((await sandbox.getOrder(one.orderCode)).partnerAssignedAt).toBe(accepted.decidedAt);

    const declined = await sandbox.offers.decline(two.id, { reason: 'OTHER', note: 'No van on Sunday' });
    expect(declined).toMatchObject({ status: 'DECLINED', declineReason: 'OTHER', note: 'No van on Sunday' });
    const closed = await expectApiError(sandbox.offers.accept(two.id), 409, 'ERR_OFFER_CLOSED');
    expect(closed.details).toEqual({ status: 'DECLINED' });

    const bulk = await sandbox.offers.acceptMany([three.id, two.id]);
    expect(bulk.results.map((r) => [r.id, r.offer?.status ?? null, r.error?.code ?? null])).toEqual([
      [three.id, 'ACCEPTED', null],
      [two.id, null, 'ERR_OFFER_CLOSED'],
    ]);

    // The portal's routes decide sandbox offers for the partner's users.
    expect((await dev.offers.list({ apiKeyId: key.id })).total).toBe(5);
    expect((await dev.offers.accept(four.id)).status).toBe('ACCEPTED');
    expect((await dev.offers.decline(five.id, { reason: 'OUT_OF_AREA' })).declineReason).toBe('OUT_OF_AREA');
  });
});

expectOperationsExercised(SDK_COVERAGE.offers);
