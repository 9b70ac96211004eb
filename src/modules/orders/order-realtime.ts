/**
 * The orders' updates on the realtime channel (src/modules/realtime/rooms.ts): `order.updated { order }`
 * for each order event the worker fanned out, to admins (with customer) and to the partner owning the
 * order's key, as that key sees the order (orderAsSeenBy: no customer without orders:pii).
 */
import type { RealtimePublisher } from '../realtime/rooms.js';
import type { PartnerOrder } from './orders.schemas.js';
import { orderAsSeenBy } from './visibility.js';

/** Order events that describe the same change as a status_changed row emitted beside them. */
const REDUNDANT_ORDER_EVENTS = new Set(['order.delivered', 'order.cancelled']);

/** The order an order event's row carries (src/shared/outbox.ts describes the rows). */
function orderOf(data: Record<string, unknown>): PartnerOrder | null {
  const order = data.order;
  return order !== null && typeof order === 'object' ? (order as PartnerOrder) : null;
}

export const orderRealtime: RealtimePublisher = {
  async outboxRow(row, rooms) {
    if (!row.type.startsWith('order.') || REDUNDANT_ORDER_EVENTS.has(row.type)) return;
    const order = orderOf(row.data);
    if (!order) return;
    rooms.toAdmins('order.updated', { order });
    if (!row.assignedKeyId) return;
    const owner = await rooms.ownerOfKey(row.assignedKeyId);
    if (!owner || !rooms.hasPartner(owner.partnerId)) return;
    rooms.toPartner(owner.partnerId, 'order.updated', { order: orderAsSeenBy(owner, order) });
  },
};
