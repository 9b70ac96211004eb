/**
 * POST /v1/partner/orders/{code}/events: a partner reports PICKED_UP, EN_ROUTE, DELIVERED or FAILED
 * (docs/decisions-log.md, 'Orders'). The rules, the check order and how an event racing a rotation is
 * judged: partner-event-rules.ts.
 *
 * Events without an Idempotency-Key are written by the group-commit writer (partner-event-writer.ts).
 * Events with one keep a transaction of their own: the key is claimed and the answer stored with the
 * change, under a savepoint (src/shared/idempotency.ts). Both write through the one write path,
 * `applyPartnerEvents` (partner-event-writer.ts): the rules, the proof and the statement are the same.
 */

import { type IdempotencyScope, requestHash, runIdempotentChange } from '../../shared/idempotency.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { holdCollectionPeriods } from '../payments/collection-period-lock.js';
import { checkEventProof } from '../proof/proof-rules.js';
import { commitOrderChange } from './order-change.js';
import { lockVisibleOrder } from './order-locks.repo.js';
import type { CreatePartnerOrderEventDto, PartnerOrder } from './orders.schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { checkEventBody } from './partner-event-rules.js';
import { applyPartnerEvents, type PartnerEventWriter } from './partner-event-writer.js';
import { type JsonText, orderTextAsSeenBy, scopeOf } from './visibility.js';

/** What the partner event path needs (AppContext satisfies it). */
export interface PartnerEventDeps extends OrdersDeps {
  /** The group-commit writer (partner-event-writer.ts), one per process. */
  partnerEvents: Pick<PartnerEventWriter, 'write'>;
}

/** A successful answer (always 201); refusals, replayed ones included, are thrown. */
export interface PartnerEventResult {
  /** The JSON text of the answer, or (a replay) the stored answer. */
  order: JsonText<PartnerOrder> | PartnerOrder;
  /** True when the answer is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** POST /v1/partner/orders/{code}/events, with the optional Idempotency-Key. */
export async function recordPartnerEvent(
  deps: PartnerEventDeps,
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
    const pieces = await deps.partnerEvents.write({ key, environment, code, body });
    return { order: orderTextAsSeenBy(key, pieces), replayed: false };
  }
  const idem: IdempotencyScope = {
    apiKeyId: key.id,
    key: idempotencyKey,
    requestHash: requestHash(`POST /v1/partner/orders/${code}/events`, body),
  };

  // Its write is the group's statement, prepared under the same rule (partner-event-writer.ts).
  const prepare = deps.joinPlans?.prepared ?? false;
  const outcome = await commitOrderChange(
    deps,
    async (tx) => {
      // A DELIVERED may collect cash: its instant is read once no settlement of its partner is being
      // made (src/modules/payments/collection-period-lock.ts).
      if (body.type === 'DELIVERED') await holdCollectionPeriods([{ partnerId: key.partnerId, environment }], tx);
      const now = deps.clock.now();
      return runIdempotentChange<PartnerEventResult['order']>(
        idem,
        now,
        'partner_event',
        201,
        async () => {
          // The row lock serialises racing events on one order: the loser waits, then sees the new status.
          const locked = await lockVisibleOrder(scopeOf(key, environment), code, tx);
          // The same write path as the group-commit writer's, for one event.
          const { outcomes, written } = await applyPartnerEvents(
            [{ key, environment, code, body }],
            locked ? new Map([[code, locked]]) : new Map(),
            now,
            tx,
            { prepare },
          );
          const [outcome] = outcomes;
          if ('error' in outcome) throw outcome.error;
          const pieces = written.get(outcome.change.orderId);
          if (!pieces) throw new Error(`order ${outcome.change.orderId} vanished inside its own transaction`);
          const json = orderTextAsSeenBy(key, pieces);
          return { answer: json, json };
        },
        tx,
      );
    },
    { tx: { genericPlans: prepare } },
  );
  if (outcome.kind === 'error') throw outcome.error;
  return { order: outcome.answer, replayed: outcome.replayed };
}
