/**
 * The offers' updates on the realtime channel (src/modules/realtime/rooms.ts; docs/offers.md):
 * `offer.created`, `offer.expired`, `offer.withdrawn` `{ offer }` to the partner owning the offered key;
 * `offer.accepted`, `offer.declined`, `offer.expired` `{ offer }` to admins. The outbox row's `data` is
 * the PartnerOffer itself (the webhook's `data`); the realtime payload wraps it.
 */
import type { RealtimePublisher } from '../realtime/rooms.js';
import type { PartnerOffer } from './offers.schemas.js';

const TO_PARTNER: ReadonlySet<string> = new Set(['offer.created', 'offer.expired', 'offer.withdrawn']);
const TO_ADMINS: ReadonlySet<string> = new Set(['offer.accepted', 'offer.declined', 'offer.expired']);

export const offerRealtime: RealtimePublisher = {
  async outboxRow(row, rooms) {
    if (!row.type.startsWith('offer.')) return;
    const offer = row.data as PartnerOffer;
    if (TO_ADMINS.has(row.type)) rooms.toAdmins(row.type, { offer });
    if (!TO_PARTNER.has(row.type) || !row.assignedKeyId) return;
    const owner = await rooms.ownerOfKey(row.assignedKeyId);
    if (owner) rooms.toPartner(owner.partnerId, row.type, { offer });
  },
};
