/**
 * The tracking's updates on the realtime channel (src/modules/realtime/rooms.ts): after each flush of
 * the location buffer (`tracking.updated`), `order.tracking { tracking }` to admins and to the partner
 * owning the order's key.
 */
import type { RealtimePublisher } from '../realtime/rooms.js';
import type { TrackingUpdate } from './tracking-buffer.js';

export const trackingRealtime: RealtimePublisher = {
  subscribe(events, rooms) {
    const publish = async (updates: TrackingUpdate[]) => {
      if (rooms.isEmpty()) return;
      for (const { assignedKeyId, tracking } of updates) {
        rooms.toAdmins('order.tracking', { tracking });
        if (!assignedKeyId) continue;
        const owner = await rooms.ownerOfKey(assignedKeyId);
        if (owner) rooms.toPartner(owner.partnerId, 'order.tracking', { tracking });
      }
    };
    const onTracking = (updates: TrackingUpdate[]) => void publish(updates).catch((err) => rooms.failed('tracking', err));
    events.on('tracking.updated', onTracking);
    return () => events.off('tracking.updated', onTracking);
  },
};
