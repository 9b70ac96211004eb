/**
 * Sandbox offers on demand (docs/offers.md, "Sandbox"): `POST /v1/partner/sandbox/offers` makes `count`
 * realistic unassigned sandbox orders (PACKED, as the sandbox's test orders) and offers each to the
 * calling key, in one transaction, with their order.placed and offer.created events. The route is on the
 * sandbox API only (its onRequest), so the key is a SANDBOX key.
 */
import type { ResolvedKey } from '../keys/key.types.js';
import { commitOrderChange } from '../orders/order-change.js';
import { newEventId } from '../orders/outbox.js';
import { someZoneIds } from '../orders/zones.repo.js';
import { publicId } from '../payments/public-id.js';
import { insertUnassignedTestOrder } from '../sandbox/test-orders.js';
import { insertOffer } from './offers.repo.js';
import { DEFAULT_OFFER_TTL_SEC, type SandboxOffers, type SandboxOffersDto } from './offers.schemas.js';
import type { OffersDeps } from './offers.service.js';

export async function createSandboxOffers(deps: OffersDeps, key: ResolvedKey, body: SandboxOffersDto): Promise<SandboxOffers> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (body.ttlSec ?? DEFAULT_OFFER_TTL_SEC) * 1000);
  // A rotated-out key in its grace period acts for its successor: the offer goes where it can be seen.
  const keyId = key.actsForKeyId;
  const items = await commitOrderChange(deps, async (tx) => {
    const zones = await someZoneIds(5, tx);
    const offers = [];
    for (let i = 0; i < body.count; i++) {
      const order = await insertUnassignedTestOrder(now, zones, tx);
      const rows = await tx.query<{ id: string }>('SELECT id FROM orders WHERE code = $1', [order.code]);
      const offer = await insertOffer(
        {
          id: publicId('ofr_'),
          orderId: rows[0].id,
          orderCode: order.code,
          apiKeyId: keyId,
          partnerId: key.partnerId,
          environment: 'SANDBOX',
          expiresAt,
        },
        newEventId(),
        now,
        tx,
      );
      if (!offer) throw new Error(`a new sandbox order ${order.code} already had an open offer`);
      offers.push(offer);
    }
    tx.changed({ environment: 'SANDBOX', keyIds: [] });
    return offers;
  });
  return { items };
}
