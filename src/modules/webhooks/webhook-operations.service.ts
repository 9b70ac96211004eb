/**
 * Webhook operations (docs/decisions-log.md, 'Webhook operations'): a delivery with its attempts, recovering a time window, rotating
 * the signing secret with a grace, endpoint health. Same rules as the rest of the webhooks module
 * (webhooks.service.ts): the webhook's own key must carry webhooks:manage, anything of another partner
 * and any id that is not a UUID is not found (404).
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { isUuid, newId } from '../../shared/ids.js';
import { parseInstantMs } from '../../shared/instants.js';
import { generateSigningSecret, signingSecretForm } from './delivery/signature.js';
import { toDeveloperDelivery } from './queue/delivery-rows.js';
import { findDeliveryBody, listAttemptHeaders, listAttempts } from './queue/read-attempts.js';
import { findDeliveryWithKey } from './queue/read-deliveries.js';
import { countRecoverable, feedRecovery, insertRecovery, RECOVERY_BATCH } from './queue/recover-deliveries.js';
import { emitDeliveryUpdated, emitWebhookUpdated, notifyDeliveriesDue, signalDeliveriesDue } from './signals.js';
import { findWebhookWithKey, rotateWebhookSecret, webhookAttemptStats } from './webhooks.repo.js';
import {
  type DeliveryRequestHeaders,
  type DeveloperDeliveryDetail,
  type DeveloperWebhookRotated,
  RECOVER_MAX_AGE_DAYS,
  type RecoverDeliveriesDto,
  type RecoverQueued,
  type RotateWebhookSecretDto,
  type WebhookHealth,
  type WebhookSigningSecret,
} from './webhooks.schemas.js';
import { requireManageScope, type WebhooksDeps } from './webhooks.service.js';

const DAY_MS = 86_400_000;
const DEFAULT_GRACE_HOURS = 24;

/** GET /v1/developer/deliveries/{id}: the delivery, its body as signed, every attempt. */
export async function getDeliveryDetail(
  deps: WebhooksDeps,
  partnerId: string,
  deliveryId: string,
): Promise<DeveloperDeliveryDetail> {
  return readDelivery(deps, partnerId, deliveryId, async (found, q) => {
    const [payload, attempts] = [await findDeliveryBody(partnerId, deliveryId, q), await listAttempts(partnerId, deliveryId, q)];
    if (payload === null) throw notFound('Delivery');
    return { ...toDeveloperDelivery(found.delivery), payload, attempts };
  });
}

/** GET /v1/developer/deliveries/{id}/request-headers: every header each attempt sent (same rules as the detail). */
export async function getDeliveryRequestHeaders(
  deps: WebhooksDeps,
  partnerId: string,
  deliveryId: string,
): Promise<DeliveryRequestHeaders> {
  return readDelivery(deps, partnerId, deliveryId, async (_found, q) => ({
    deliveryId,
    attempts: await listAttemptHeaders(partnerId, deliveryId, q),
  }));
}

/**
 * Reads a delivery of the partner in one snapshot: 404 for an id that is not a uuid or not the partner's,
 * 403 unless the delivery's key may manage webhooks; then `read` runs in the same transaction.
 */
async function readDelivery<T>(
  deps: WebhooksDeps,
  partnerId: string,
  deliveryId: string,
  read: (found: NonNullable<Awaited<ReturnType<typeof findDeliveryWithKey>>>, q: Queryable) => Promise<T>,
): Promise<T> {
  if (!isUuid(deliveryId)) throw notFound('Delivery');
  return deps.db.tx(
    async (q) => {
      const found = await findDeliveryWithKey(partnerId, deliveryId, q);
      if (!found) throw notFound('Delivery');
      requireManageScope(found.keyScopes);
      return read(found, q);
    },
    { isolation: 'repeatable read', readOnly: true },
  );
}

/** POST …/webhooks/{id}/recover: the first batch now, the rest fed by the worker. */
export async function recoverDeliveries(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
  dto: RecoverDeliveriesDto,
): Promise<RecoverQueued> {
  if (!isUuid(webhookId)) throw notFound('Webhook');
  const now = deps.clock.now();
  const since = new Date(parseInstantMs('since', dto.since));
  const untilMs = dto.until === undefined ? null : parseInstantMs('until', dto.until);
  // A window that ends in the future ends now: deliveries created later are not this recovery's.
  const until = new Date(Math.min(untilMs ?? now.getTime(), now.getTime()));
  if (since.getTime() < now.getTime() - RECOVER_MAX_AGE_DAYS * DAY_MS) {
    throw validationError('since', `must be within the last ${RECOVER_MAX_AGE_DAYS} days (deliveries are kept that long)`);
  }
  if (untilMs !== null && since.getTime() >= untilMs) throw validationError('since', 'must be before until');
  const outcome = await deps.db.tx(async (q) => {
    const found = await findWebhookWithKey(partnerId, webhookId, q, { lock: 'share' });
    if (!found) throw notFound('Webhook');
    requireManageScope(found.keyScopes);
    if (!found.webhook.isActive) {
      throw new AppError(
        'ERR_WEBHOOK_DISABLED',
        'This webhook is disabled; switch it on (isActive true) before recovering its deliveries',
      );
    }
    const window = { since, until };
    const queued = since < until ? await countRecoverable(partnerId, webhookId, window, q) : 0;
    if (queued === 0) return { queued, requeued: [] };
    const id = newId();
    await insertRecovery({ id, partnerId, webhookId, window, now }, q);
    const first = await feedRecovery(id, RECOVERY_BATCH, now, q);
    const requeued = first?.requeued ?? [];
    if (requeued.length > 0) await notifyDeliveriesDue(deps.db, q);
    return { queued, requeued };
  });
  for (const row of outcome.requeued) emitDeliveryUpdated(deps.events, partnerId, toDeveloperDelivery(row));
  if (outcome.requeued.length > 0) signalDeliveriesDue(deps.events);
  // Workers of this process feed the rest at once; those of others find it within their poll.
  if (outcome.queued > outcome.requeued.length) deps.events.emit('webhooks.recover');
  return { queued: outcome.queued };
}

/** POST …/webhooks/{id}/rotate-secret: a new secret (shown once); the old one signs too until the grace ends. */
export async function rotateSecret(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
  dto: RotateWebhookSecretDto,
): Promise<DeveloperWebhookRotated> {
  if (!isUuid(webhookId)) throw notFound('Webhook');
  const secret = generateSigningSecret();
  const now = deps.clock.now();
  const previousExpiresAt = new Date(now.getTime() + (dto.graceHours ?? DEFAULT_GRACE_HOURS) * 3_600_000);
  const webhook = await deps.db.tx(async (q) => {
    const found = await findWebhookWithKey(partnerId, webhookId, q, { lock: true });
    if (!found) throw notFound('Webhook');
    requireManageScope(found.keyScopes);
    const rotated = await rotateWebhookSecret(
      partnerId,
      webhookId,
      { secretCiphertext: deps.secrets.encrypt(secret), previousExpiresAt, now },
      q,
    );
    if (!rotated) throw notFound('Webhook');
    return rotated;
  });
  emitWebhookUpdated(deps.events, partnerId, webhook);
  return { ...webhook, secret, previousSecretExpiresAt: previousExpiresAt.toISOString() };
}

/** GET …/webhooks/{id}/signing-secret: the current secret's form, never the secret. */
export async function getSigningSecretForm(
  deps: WebhooksDeps,
  partnerId: string,
  webhookId: string,
): Promise<WebhookSigningSecret> {
  if (!isUuid(webhookId)) throw notFound('Webhook');
  const found = await findWebhookWithKey(partnerId, webhookId, deps.db);
  if (!found) throw notFound('Webhook');
  requireManageScope(found.keyScopes);
  const form = signingSecretForm(deps.secrets.decrypt(found.secretCiphertext));
  return { webhookId, form, rotationSuggested: form === 'base64url' };
}

/** GET …/webhooks/{id}/health: the last 24 h of attempts, and the streak. */
export async function getWebhookHealth(deps: WebhooksDeps, partnerId: string, webhookId: string): Promise<WebhookHealth> {
  if (!isUuid(webhookId)) throw notFound('Webhook');
  const since = new Date(deps.clock.nowMs() - DAY_MS);
  return deps.db.tx(
    async (q) => {
      const found = await findWebhookWithKey(partnerId, webhookId, q);
      if (!found) throw notFound('Webhook');
      requireManageScope(found.keyScopes);
      const stats = await webhookAttemptStats(webhookId, since, q);
      const attempts = stats.delivered + stats.failedAttempts;
      return {
        webhookId,
        since: since.toISOString(),
        delivered: stats.delivered,
        failedAttempts: stats.failedAttempts,
        dead: stats.dead,
        successRate: attempts === 0 ? null : stats.delivered / attempts,
        p50Ms: stats.p50Ms,
        p99Ms: stats.p99Ms,
        lastSuccessAt: stats.lastSuccessAt?.toISOString() ?? null,
        lastFailureAt: stats.lastFailureAt?.toISOString() ?? null,
        consecutiveFailures: found.webhook.consecutiveFailures,
        isActive: found.webhook.isActive,
      };
    },
    { isolation: 'repeatable read', readOnly: true },
  );
}
