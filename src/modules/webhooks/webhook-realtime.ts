/**
 * The webhooks' updates on the realtime channel (src/modules/realtime/rooms.ts), to the partner owning
 * the webhook: `delivery.updated { delivery }` after every committed change of a delivery, and
 * `webhook.updated { webhook }` after every committed change of a webhook (signals.ts emits both).
 */
import type { RealtimePublisher } from '../realtime/rooms.js';
import type { DeliveryUpdated, WebhookUpdated } from './signals.js';

export const webhookRealtime: RealtimePublisher = {
  subscribe(events, rooms) {
    const onDelivery = (event: DeliveryUpdated) =>
      rooms.toPartner(event.partnerId, 'delivery.updated', { delivery: event.delivery });
    const onWebhook = (event: WebhookUpdated) => rooms.toPartner(event.partnerId, 'webhook.updated', { webhook: event.webhook });
    events.on('delivery.updated', onDelivery);
    events.on('webhook.updated', onWebhook);
    return () => {
      events.off('delivery.updated', onDelivery);
      events.off('webhook.updated', onWebhook);
    };
  },
};
