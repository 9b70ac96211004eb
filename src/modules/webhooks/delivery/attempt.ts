/**
 * One delivery attempt of a claimed row: sign, send, record (fenced by the lease), tell listeners.
 *
 * The signature timestamp `t` is the real wall clock (taken at the claim, `signedAtSec`), not the
 * service clock: receivers compare it with their own clock to refuse replays (Stripe's verifier allows
 * 5 minutes), and that must keep working when the test clock has been moved forward. It is at least one
 * second past the delivery's previous attempt, so a redelivery right after an attempt is still signed
 * afresh. Everything the schedule decides (next attempt, delivered at) uses the service clock.
 *
 * Our own database outage (docs/decisions-log.md, 'Dependency faults'). An attempt whose outcome cannot be written because the
 * database is unreachable is not counted against the endpoint, and the delivery is neither lost nor
 * turned DEAD by it: while the lease holds, the worker keeps trying (250 ms, doubling to 2 s) to
 *  - record the delivery as DELIVERED if the endpoint accepted it (sending it again would only make a
 *    duplicate), or
 *  - otherwise give the lease back without counting the attempt, so the delivery is attempted again as
 *    soon as the database answers.
 * If the lease runs out first, the row simply becomes due again, still uncounted; the endpoint may then
 * get the event once more (delivery is at least once; receivers de-duplicate by the envelope id).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import type { AppContext } from '../../../context.js';
import { isUnavailableError } from '../../../db/db-errors.js';
import { ended, eventLinks, type Tracing } from '../../../tracing/tracing.js';
import type { ClaimedDelivery } from '../queue/claim-due-deliveries.js';
import { toDeveloperDelivery } from '../queue/delivery-rows.js';
import { type PendingOutcome, type RecordedOutcome, recordOutcomes } from '../queue/record-outcomes.js';
import { releaseLease } from '../queue/release-leases.js';
import { emitDeliveryUpdated, emitWebhookUpdated } from '../signals.js';
import { type AttemptSignal, signalOf } from './endpoint-limits.js';
import type { OutcomeWriter } from './outcome-writer.js';
import { postWebhook, type SendResult } from './send.js';
import { SIGNATURE_HEADER, signatureHeader, standardWebhooksHeaders } from './signature.js';

export const USER_AGENT = 'PartnerAPI-Webhooks/1';

export interface AttemptDeps {
  ctx: AppContext;
  dispatcher: Dispatcher;
  timeoutMs: number;
  /** Aborted when the worker stops. */
  signal: AbortSignal;
  /** Writes outcomes in batches (see outcome-writer.ts). */
  outcomes: OutcomeWriter;
}

export function deliveryHeaders(
  claimed: ClaimedDelivery,
  secret: string,
  timestampSec: number,
  previousSecret?: string | null,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(secret, timestampSec, claimed.body, previousSecret),
    'x-partner-event': claimed.eventType,
    'x-partner-delivery': claimed.id,
    ...standardWebhooksHeaders(claimed.eventId, timestampSec, claimed.body, [secret, previousSecret]),
  };
}

/**
 * Every header of the request as the endpoint gets it (docs/webhook-signatures.md, "Headers as sent"):
 * ours, and those the HTTP client (undici) adds from the request itself: `host` (the URL's), `connection`
 * (kept alive) and `content-length` (the body's bytes). Stored with the attempt; the attempt log's
 * `requestHeaders` shows the part the contract names (loggedRequestHeaders).
 */
export function headersAsSent(url: string, body: string, headers: Record<string, string>): Record<string, string> {
  return { host: new URL(url).host, connection: 'keep-alive', ...headers, 'content-length': String(Buffer.byteLength(body)) };
}

/** The headers sent, as the attempt log shows them: Content-Type and the X-Partner-* ones (docs/decisions-log.md, 'Webhook operations'). */
export function loggedRequestHeaders(sent: Record<string, string>): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) {
    if (name === 'content-type' || name.startsWith('x-partner-')) shown[name] = value;
  }
  return shown;
}

/**
 * Attempts one claimed delivery; answers what the attempt said about its endpoint's load (for the
 * endpoint's adaptive cap, endpoint-limits.ts), or null when it was cut short by the worker stopping.
 */
export function attemptDelivery(deps: AttemptDeps, claimed: ClaimedDelivery): Promise<AttemptSignal | null> {
  const tracing = deps.ctx.tracing;
  return tracing ? tracedAttempt(tracing, deps, claimed) : attemptOnce(deps, claimed);
}

/**
 * The attempt inside a span of its own (docs/operating.md, "Traces"), linked to the transaction that
 * wrote its event (the outbox row's `trace_parent`): the event's trace is another one, often hours older.
 */
async function tracedAttempt(tracing: Tracing, deps: AttemptDeps, claimed: ClaimedDelivery): Promise<AttemptSignal | null> {
  const rows = await deps.ctx.db
    .query<{ trace_parent: string | null }>('SELECT trace_parent FROM outbox WHERE event_id = $1', [claimed.eventId])
    .catch(() => []);
  return tracing.tracer.startActiveSpan(
    'webhook attempt',
    {
      kind: tracing.api.SpanKind.CLIENT,
      // A root of its own: a worker woken by a request's commit would otherwise continue its trace.
      root: true,
      links: eventLinks(tracing, rows[0]?.trace_parent ?? null),
      attributes: {
        'partner_api.delivery_id': claimed.id,
        'partner_api.webhook_id': claimed.webhookId,
        'partner_api.event_id': claimed.eventId,
        'partner_api.event_type': claimed.eventType,
      },
    },
    (span) => ended(span, attemptOnce(deps, claimed), tracing.api),
  );
}

async function attemptOnce(deps: AttemptDeps, claimed: ClaimedDelivery): Promise<AttemptSignal | null> {
  const { ctx } = deps;
  const startedAtMs = ctx.clock.nowMs();
  let result: SendResult;
  let headers: Record<string, string> = {};
  try {
    const secret = ctx.secrets.decrypt(claimed.secretCiphertext);
    const previous = claimed.previousSecretCiphertext ? ctx.secrets.decrypt(claimed.previousSecretCiphertext) : null;
    headers = deliveryHeaders(claimed, secret, claimed.signedAtSec, previous);
  } catch (err) {
    // Only possible if the encryption key changed (JWT_SECRET rotated without re-encrypting).
    ctx.log.error({ err, webhookId: claimed.webhookId }, 'webhook signing secret cannot be decrypted');
  }
  if (!headers[SIGNATURE_HEADER.toLowerCase()]) {
    result = { outcome: 'failed', statusCode: null, error: 'signing secret unavailable', durationMs: 0, response: null };
  } else {
    result = await postWebhook(claimed.url, claimed.body, headers, {
      dispatcher: deps.dispatcher,
      timeoutMs: deps.timeoutMs,
      signal: deps.signal,
      production: ctx.config.isProduction,
    });
  }

  if (result.outcome === 'aborted') {
    await releaseLease(claimed, ctx.db);
    return null;
  }
  const outcome: PendingOutcome = {
    claimed,
    statusCode: result.statusCode,
    error: result.outcome === 'delivered' ? null : result.error,
    atMs: ctx.clock.nowMs(),
    attempt: {
      startedAtMs,
      durationMs: result.durationMs,
      requestHeaders: headersAsSent(claimed.url, claimed.body, headers),
      responseHeaders: result.response?.headers ?? null,
      responseBody: result.response?.body ?? null,
    },
  };
  const signal = signalOf({ statusCode: outcome.statusCode, error: outcome.error, durationMs: result.durationMs });
  let recorded: RecordedOutcome | null;
  try {
    recorded = await deps.outcomes.record(outcome);
  } catch (err) {
    if (!isUnavailableError(err)) throw err;
    recorded = await settleAfterOutage(deps, outcome);
  }
  ctx.metrics?.observeAttempt(
    result.statusCode,
    result.durationMs,
    !recorded
      ? 'superseded'
      : recorded.delivery.status === 'DELIVERED'
        ? 'delivered'
        : recorded.delivery.status === 'DEAD'
          ? 'dead'
          : 'failed',
  );
  if (!recorded) {
    // Our lease was taken over or the delivery was redelivered or deleted meanwhile; the new owner's
    // outcome stands.
    ctx.log.debug({ deliveryId: claimed.id }, 'attempt outcome dropped: lease no longer held');
    return signal;
  }
  if (recorded.webhookDisabled) {
    ctx.log.warn({ webhookId: claimed.webhookId }, 'webhook disabled after consecutive dead deliveries');
  }
  emitDeliveryUpdated(ctx.events, claimed.partnerId, toDeveloperDelivery(recorded.delivery));
  if (recorded.webhook) emitWebhookUpdated(ctx.events, claimed.partnerId, recorded.webhook);
  return signal;
}

/** Margin kept before the lease ends: past it, the row is left to become due again by itself. */
const LEASE_MARGIN_MS = 1_000;

/**
 * The outcome of `outcome`'s attempt could not be written: our database is out (see the top of the
 * file). Returns the recorded delivery if a DELIVERED outcome could be written, null otherwise.
 */
async function settleAfterOutage(deps: AttemptDeps, outcome: PendingOutcome): Promise<RecordedOutcome | null> {
  const { ctx, signal } = deps;
  const { claimed } = outcome;
  const delivered = outcome.error === null;
  ctx.log.debug({ deliveryId: claimed.id, delivered }, 'attempt outcome not written (database unavailable); retrying');
  let waitMs = 250;
  while (!signal.aborted && Date.now() + waitMs < claimed.leaseEndsAtWallMs - LEASE_MARGIN_MS) {
    await sleep(waitMs, undefined, { signal }).catch(() => {});
    if (signal.aborted) break;
    try {
      if (delivered) {
        const row = (await recordOutcomes([outcome], ctx.db)).get(claimed.id);
        return row ? { delivery: row.delivery, webhookDisabled: false, webhook: row.webhook } : null;
      }
      await releaseLease(claimed, ctx.db);
      return null;
    } catch (err) {
      if (!isUnavailableError(err)) throw err;
    }
    waitMs = Math.min(waitMs * 2, 2_000);
  }
  return null;
}
