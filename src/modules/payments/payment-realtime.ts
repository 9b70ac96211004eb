/**
 * The payments' updates on the realtime channel (src/modules/realtime/rooms.ts; docs/payments.md):
 * `payment_intent.updated { paymentIntent }` to the partner owning the order's key, and
 * `settlement.updated { settlement }` to the settlement's partner; both to admins.
 */
import type { RealtimePublisher } from '../realtime/rooms.js';

export const paymentRealtime: RealtimePublisher = {
  async outboxRow(row, rooms) {
    if (row.type.startsWith('payment_intent.')) {
      const { paymentIntent } = row.data;
      if (!paymentIntent) return;
      rooms.toAdmins('payment_intent.updated', { paymentIntent });
      const owner = row.assignedKeyId ? await rooms.ownerOfKey(row.assignedKeyId) : null;
      if (owner) rooms.toPartner(owner.partnerId, 'payment_intent.updated', { paymentIntent });
    } else if (row.type.startsWith('settlement.')) {
      const { settlement } = row.data;
      if (!settlement) return;
      rooms.toAdmins('settlement.updated', { settlement });
      if (row.partnerId) rooms.toPartner(row.partnerId, 'settlement.updated', { settlement });
    }
  },
};
