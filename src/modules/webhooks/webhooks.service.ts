/**
 * The webhook rules (docs/decisions-log.md, 'Webhooks'). No Fastify here: route handlers pass the
 * partner id of the signed-in account and the validated input.
 *
 * Every route but the list acts for the webhook's own key, which must carry `webhooks:manage`.
 * Anything of another partner, and any id that is not a UUID, is simply not found (404).
 *
 * Races with a DELETE of the same webhook answer as if the two had run one after the other, never 500:
 * update and delete lock the webhook row; a ping locks it against deletion before
 * queueing its delivery (FOR KEY SHARE), so it either finishes first or finds the webhook gone (404),
 * never inserts a delivery for a deleted webhook; a redelivery updates the delivery row, which the
 * delete's cascade either waits for or has removed (404); the deliveries list reads the webhook and its
 * deliveries in one snapshot, so it shows the webhook as it was before the delete or not at all.
 */
import type { AppContext } from '../../context.js';
import { AppError, notFound } from '../../errors.js';
import { isUuid, newId } from '../../shared/ids.js';
import {
  type ApiKeyScope,
  OFFER_WEBHOOK_EVENTS,
  PAYMENT_WEBHOOK_EVENTS,
  type WebhookDeliveryStatus,
} from '../../shared/schemas.js';
import { lockKeyForWebhooks } from '../keys/keys.repo.js';
import { orderAsSeenBy } from '../orders/visibility.js';
import { generateSigningSecret } from './delivery/signature.js';
import { newTestEventId, serializeEnvelope } from './envelope.js';
import type { EventType } from './event-catalog.js';
import { sampleEventData } from './event-samples.js';
import { toDeveloperDelivery } from './queue/delivery-rows.js';
import { insertDeliveries } from './queue/insert-deliveries.js';
import { findDeliveryWithKey, listDeliveries } from './queue/read-deliveries.js';
import { requeueDelivery } from './queue/requeue-delivery.js';
import { emitDeliveryUpdated, emitWebhookUpdated, notifyDeliveriesDue, signalDeliveriesDue } from './signals.js';
import { assertWebhookUrlAllowed } from './url-policy.js';
import {
  countWebhooksOfKey,
  deleteWebhook,
  findWebhookWithKey,
  insertWebhook,
  listWebhooks,
  updateWebhook,
} from './webhooks.repo.js';
import {
  type CreateDeveloperWebhookDto,
  type DeveloperDelivery,
  type DeveloperWebhook,
  type DeveloperWebhookCreated,
  MAX_WEBHOOKS_PER_KEY,
  type PageOfDeveloperDelivery,
  type UpdateDeveloperWebhookDto,
} from './webhooks.schemas.js';

export type WebhooksDeps = Pick<AppContext, 'db' | 'clock' | 'secrets' | 'config' | 'events'>;

const MANAGE: ApiKeyScope = 'webhooks:manage';

export function requireManageScope(scopes: ApiKeyScope[]): void {
  if (!scopes.includes(MANAGE)) {
    throw new AppError('ERR_API_KEY_SCOPE', `The webhook's API key lacks the scope ${MANAGE}`);
  }
}

/**
 * Payment and settlement kinds need the scope payments:read on the webhook's key (docs/payments.md,
 * "Webhooks and realtime"): subscribing to them, or asking for their sample, without it is 403.
 */
export function requirePaymentsScopeFor(events: readonly string[] | undefined, scopes: readonly ApiKeyScope[]): void {
  if (events === undefined || scopes.includes('payments:read')) return;
  const needing = events.filter((e) => PAYMENT_WEBHOOK_EVENTS.has(e));
  if (needing.length > 0) {
    throw new AppError(
      'ERR_API_KEY_SCOPE',
      `The webhook's API key lacks the scope payments:read, which ${needing.join(', ')} need`,
    );
  }
}

function webhookNotFound(): AppError {
  return notFound('Webhook');
}

export function listPartnerWebhooks(deps: WebhooksDeps, partnerId: string): Promise<DeveloperWebhook[]> {
  return listWebhooks(partnerId, deps.db);
}

export async function createWebhook(
  deps: WebhooksDeps,
  partnerId: string,
  dto: CreateDeveloperWebhookDto,
): Promise<DeveloperWebhookCreated> {
  if (!isUuid(dto.apiKeyId)) throw notFound('API key');
  const secret = generateSigningSecret();
  return deps.db.tx(async (q) => {
    const key = await lockKeyForWebhooks(partnerId, dto.apiKeyId, q);
    // A revoked key, and a rotated-out key in its grace period, take no new webhooks: the rotation
    // already moved its webhooks to the successor, and a new one would be orphaned within 24 h.
    if (!key || key.revokedAt !== null) throw notFound('API key');
    requireManageScope(key.scopes);
    requirePaymentsScopeFor(dto.events, key.scopes);
    assertWebhookUrlAllowed(dto.url, { production: deps.config.isProduction });
    if ((await countWebhooksOfKey(partnerId, key.id, q)) >= MAX_WEBHOOKS_PER_KEY) {
      throw new AppError('ERR_WEBHOOK_LIMIT', `An API key may have at most ${MAX_WEBHOOKS_PER_KEY} webhooks`);
    }
    const webhook = await insertWebhook(
      partnerId,
      {
        id: newId(),
        apiKeyId: key.id,
        url: dto.url,
        events: dto.events,
        secretCiphertext: deps.secrets.encrypt(secret),
        now: deps.clock.now(),
      },
      q,
    );
    return { ...webhook, secret };
  });
}

export async function updatePartnerWebhook(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
  dto: UpdateDeveloperWebhookDto,
): Promise<DeveloperWebhook> {
  if (!isUuid(webhookId)) throw webhookNotFound();
  const { webhook, reenabled } = await deps.db.tx(async (q) => {
    const found = await findWebhookWithKey(partnerId, webhookId, q, { lock: true });
    if (!found) throw webhookNotFound();
    requireManageScope(found.keyScopes);
    requirePaymentsScopeFor(dto.events, found.keyScopes);
    if (dto.url !== undefined) assertWebhookUrlAllowed(dto.url, { production: deps.config.isProduction });
    const updated = await updateWebhook(partnerId, webhookId, { ...dto, now: deps.clock.now() }, q);
    if (!updated) throw webhookNotFound();
    const reenabled = dto.isActive === true && !found.webhook.isActive;
    // Retries that waited while the endpoint was off are due now: wake workers elsewhere on commit.
    if (reenabled) await notifyDeliveriesDue(deps.db, q);
    return { webhook: updated, reenabled };
  });
  if (reenabled) signalDeliveriesDue(deps.events);
  emitWebhookUpdated(deps.events, partnerId, webhook);
  return webhook;
}

export async function deletePartnerWebhook(deps: WebhooksDeps, partnerId: string, webhookId: string): Promise<void> {
  if (!isUuid(webhookId)) throw webhookNotFound();
  await deps.db.tx(async (q) => {
    const found = await findWebhookWithKey(partnerId, webhookId, q, { lock: true });
    if (!found) throw webhookNotFound();
    requireManageScope(found.keyScopes);
    await deleteWebhook(partnerId, webhookId, q);
  });
}

export async function listWebhookDeliveries(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
  query: { status?: WebhookDeliveryStatus; page?: number; pageSize?: number },
): Promise<PageOfDeveloperDelivery> {
  if (!isUuid(webhookId)) throw webhookNotFound();
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  // One snapshot for the webhook, the count and the page (see the top of the file).
  return deps.db.tx(
    async (q) => {
      const found = await findWebhookWithKey(partnerId, webhookId, q);
      if (!found) throw webhookNotFound();
      requireManageScope(found.keyScopes);
      const { total, items } = await listDeliveries(partnerId, webhookId, { status: query.status, page, pageSize }, q);
      return { page, pageSize, total, items };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
}

/**
 * Queues a really signed sample event through the normal delivery path (docs/decisions-log.md, 'Webhooks' and 'Webhook operations'):
 * `ping` by default, or a realistic sample of any WebhookEvent (event-catalog.ts), its order shown as
 * the webhook's key sees orders. The envelope id starts with `evt_test_`, so receivers can tell it from
 * a real event.
 */
export async function sendTestEvent(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
  kind: EventType = 'ping',
): Promise<DeveloperDelivery> {
  if (!isUuid(webhookId)) throw webhookNotFound();
  const delivery = await deps.db.tx(async (q) => {
    const found = await findWebhookWithKey(partnerId, webhookId, q, { lock: 'share' });
    if (!found) throw webhookNotFound();
    requireManageScope(found.keyScopes);
    requirePaymentsScopeFor([kind], found.keyScopes);
    if (!found.webhook.isActive) {
      throw new AppError('ERR_WEBHOOK_DISABLED', 'This webhook is disabled; switch it on (isActive true) before testing it');
    }
    const now = deps.clock.now();
    const eventId = newTestEventId();
    const sample = sampleEventData(kind, webhookId, now.toISOString());
    // An offer kind's data is the PartnerOffer itself: its `order` never has a customer to hide.
    const data =
      'order' in sample && !OFFER_WEBHOOK_EVENTS.has(kind)
        ? { ...sample, order: orderAsSeenBy({ scopes: found.keyScopes }, sample.order as object) }
        : sample;
    const [row] = await insertDeliveries(
      [
        {
          id: newId(),
          webhookId,
          partnerId,
          eventId,
          eventType: kind,
          body: serializeEnvelope({ id: eventId, type: kind, createdAt: now, environment: found.keyEnvironment, data }),
        },
      ],
      now,
      q,
    );
    await notifyDeliveriesDue(deps.db, q);
    return toDeveloperDelivery(row);
  });
  emitDeliveryUpdated(deps.events, partnerId, delivery);
  signalDeliveriesDue(deps.events);
  return delivery;
}

/** Queues any of the partner's deliveries again (docs/decisions-log.md, 'Webhooks'): PENDING, attempts 0, due now. */
export async function redeliver(deps: WebhooksDeps, partnerId: string, deliveryId: string): Promise<DeveloperDelivery> {
  if (!isUuid(deliveryId)) throw notFound('Delivery');
  const delivery = await deps.db.tx(async (q) => {
    const found = await findDeliveryWithKey(partnerId, deliveryId, q);
    if (!found) throw notFound('Delivery');
    requireManageScope(found.keyScopes);
    const row = await requeueDelivery(partnerId, deliveryId, deps.clock.now(), q);
    if (!row) throw notFound('Delivery');
    await notifyDeliveriesDue(deps.db, q);
    return toDeveloperDelivery(row);
  });
  emitDeliveryUpdated(deps.events, partnerId, delivery);
  signalDeliveriesDue(deps.events);
  return delivery;
}
