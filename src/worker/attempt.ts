/**
 * One delivery attempt of a claimed row: sign, send, record (fenced by the lease), tell listeners.
 *
 * The signature timestamp `t` is the real wall clock (taken at the claim, `signedAtSec`), not the
 * service clock: receivers compare it with their own clock to refuse replays (Stripe's verifier allows
 * 5 minutes), and that must keep working when the test clock has been moved forward. It is at least one
 * second past the delivery's previous attempt, so a redelivery right after an attempt is still signed
 * afresh. Everything the schedule decides (next attempt, delivered at) uses the service clock.
 */
import type { Dispatcher } from 'undici';
import type { AppContext } from '../context.js';
import { toDeveloperDelivery } from '../modules/webhooks/deliveries.repo.js';
import { emitDeliveryUpdated } from '../modules/webhooks/signals.js';
import { SIGNATURE_HEADER, signatureHeader } from '../modules/webhooks/signature.js';
import type { ClaimedDelivery } from './claim.js';
import { type OutcomeWriter, releaseLease } from './record.js';
import { postWebhook, type SendResult } from './send.js';

export const USER_AGENT = 'PartnerAPI-Webhooks/1';

export interface AttemptDeps {
  ctx: AppContext;
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** Aborted when the worker stops. */
  signal: AbortSignal;
  /** Writes outcomes in batches (see record.ts). */
  outcomes: OutcomeWriter;
}

export function deliveryHeaders(claimed: ClaimedDelivery, secret: string, timestampSec: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(secret, timestampSec, claimed.body),
    'x-partner-event': claimed.eventType,
    'x-partner-delivery': claimed.id,
  };
}

export async function attemptDelivery(deps: AttemptDeps, claimed: ClaimedDelivery): Promise<void> {
  const { ctx } = deps;
  let result: SendResult;
  let secret: string | null = null;
  try {
    secret = ctx.secrets.decrypt(claimed.secretCiphertext);
  } catch (err) {
    // Only possible if the encryption key changed (JWT_SECRET rotated without re-encrypting).
    ctx.log.error({ err, webhookId: claimed.webhookId }, 'webhook signing secret cannot be decrypted');
  }
  if (secret === null) {
    result = { outcome: 'failed', statusCode: null, error: 'signing secret unavailable' };
  } else {
    result = await postWebhook(claimed.url, claimed.body, deliveryHeaders(claimed, secret, claimed.signedAtSec), {
      dispatcher: deps.dispatcher,
      timeoutMs: deps.timeoutMs,
      signal: deps.signal,
      production: ctx.config.isProduction,
    });
  }

  if (result.outcome === 'aborted') {
    await releaseLease(ctx.db, claimed);
    return;
  }
  const recorded = await deps.outcomes.record({
    claimed,
    statusCode: result.statusCode,
    error: result.outcome === 'delivered' ? null : result.error,
    atMs: ctx.clock.nowMs(),
  });
  if (!recorded) {
    // Our lease was taken over or the delivery was redelivered or deleted meanwhile; the new owner's
    // outcome stands.
    ctx.log.debug({ deliveryId: claimed.id }, 'attempt outcome dropped: lease no longer held');
    return;
  }
  if (recorded.webhookDisabled) {
    ctx.log.warn({ webhookId: claimed.webhookId }, 'webhook disabled after consecutive dead deliveries');
  }
  emitDeliveryUpdated(ctx.events, claimed.partnerId, toDeveloperDelivery(recorded.delivery));
}
