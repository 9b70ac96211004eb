/** The delivery log's page model: how a delivery arriving on the realtime channel changes the page shown. */
import type { DeveloperDelivery, WebhookDeliveryStatus } from '@partner-logistics/sdk/types';
import type { Page } from './types';

/** Puts `d` into the page: replaces its row, or adds it on top of page 1 when it is new and matches. */
export function upsert(
  page: Page<DeveloperDelivery>,
  d: DeveloperDelivery,
  filter: WebhookDeliveryStatus | '',
): Page<DeveloperDelivery> {
  const i = page.items.findIndex((x) => x.id === d.id);
  if (i >= 0) {
    const items = page.items.slice();
    items[i] = d;
    return { ...page, items };
  }
  if (page.page !== 1 || (filter && d.status !== filter)) return page;
  return { ...page, total: page.total + 1, items: [d, ...page.items].slice(0, page.pageSize) };
}

/** The badge tone of each delivery status, wherever a delivery is listed or shown. */
export const DELIVERY_STATUS_TONE: Record<WebhookDeliveryStatus, 'ok' | 'warn' | 'bad' | 'muted'> = {
  PENDING: 'muted',
  DELIVERED: 'ok',
  FAILED: 'warn',
  DEAD: 'bad',
};
