/**
 * POST /v1/partner/orders/{code}/events: a partner reports PICKED_UP, EN_ROUTE, DELIVERED or FAILED
 * (docs/decisions-log.md, 'Orders'). The rules, the check order and how an event racing a rotation is
 * judged: partner-event-rules.ts.
 *
 * Events without an Idempotency-Key are written by the group-commit writer (partner-event-writer.ts).
 * Events with one keep a transaction of their own: the key is claimed and the answer stored with the
 * change, under a savepoint (idempotency.ts).
 */
import { AppError } from '../../errors.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { checkEventProof, proofOfEvent, recordProofs } from '../proof/proof-rules.js';
import {
  claimIdempotencyKey,
  type IdempotencyScope,
  isStorableError,
  requestHash,
  saveIdempotentResponse,
} from './idempotency.js';
import { commitOrderChange } from './order-change.js';
import { lockVisibleOrder, recordStatusChange } from './order-writes.repo.js';
import type { CreatePartnerOrderEventDto, PartnerOrder } from './orders.schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { checkEventBody, eventTarget, partnerEventChange } from './partner-event-rules.js';
import { partnerEventWriter } from './partner-event-writer.js';
import { type JsonText, orderTextAsSeenBy, scopeOf } from './visibility.js';

/** A successful answer (always 201); refusals, replayed ones included, are thrown. */
export interface PartnerEventResult {
  /** The JSON text of the answer, or (a replay) the stored answer. */
  order: JsonText<PartnerOrder> | PartnerOrder;
  /** True when the answer is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** POST /v1/partner/orders/{code}/events, with the optional Idempotency-Key. */
export async function recordPartnerEvent(
  deps: OrdersDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  code: string,
  body: CreatePartnerOrderEventDto,
  idempotencyKey: string | undefined,
): Promise<PartnerEventResult> {
  checkEventBody(body);
  // Proof rules (docs/tracking-and-proof.md): no query unless photos are named.
  const proofChecked = checkEventProof(key, body, deps.db);
  if (proofChecked) await proofChecked;
  if (idempotencyKey === undefined) {
    const pieces = await partnerEventWriter(deps).write({ key, environment, code, body });
    return { order: orderTextAsSeenBy(key, pieces), replayed: false };
  }
  const idem: IdempotencyScope = {
    apiKeyId: key.id,
    key: idempotencyKey,
    requestHash: requestHash(`POST /v1/partner/orders/${code}/events`, body),
  };

  type Outcome = { kind: 'ok'; result: PartnerEventResult } | { kind: 'error'; error: AppError };
  const outcome = await commitOrderChange<Outcome>(deps, async (tx) => {
    const now = deps.clock.now();
    const claim = await claimIdempotencyKey(idem, now, tx);
    if (claim.kind === 'replay') {
      if (claim.statusCode >= 400) {
        const stored = claim.response as { code: AppError['code']; message: string; details?: never };
        return {
          kind: 'error',
          error: new AppError(stored.code, stored.message, stored.details, { 'Idempotent-Replayed': 'true' }),
        };
      }
      return { kind: 'ok', result: { order: claim.response as PartnerOrder, replayed: true } };
    }
    // The change runs under a savepoint so a refused event can be undone while its answer is kept.
    await tx.query('SAVEPOINT partner_event');
    try {
      // The row lock serialises racing events on one order: the loser waits, then sees the new status.
      const locked = await lockVisibleOrder(scopeOf(key, environment), code, tx);
      const found = eventTarget(key, environment, code, locked, tx);
      const target = found instanceof Promise ? await found : found;
      const change = partnerEventChange(target, body, now);
      const proofFound = proofOfEvent(target.key, change.orderId, body, now, tx);
      const proof = proofFound ? await proofFound : null;
      const pieces = await recordStatusChange(change, tx);
      if (proof) await recordProofs([proof], tx);
      tx.changed({ environment, keyIds: [target.key.actsForKeyId] });
      const json = orderTextAsSeenBy(key, pieces);
      await saveIdempotentResponse(idem, 201, json, tx);
      return { kind: 'ok', result: { order: json, replayed: false } };
    } catch (err) {
      if (!(err instanceof AppError) || !isStorableError(err)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT partner_event');
      const envelope = { statusCode: err.statusCode, code: err.code, message: err.message, details: err.details };
      await saveIdempotentResponse(idem, err.statusCode, JSON.stringify(envelope), tx);
      return { kind: 'error', error: err };
    }
  });
  if (outcome.kind === 'error') throw outcome.error;
  return outcome.result;
}
