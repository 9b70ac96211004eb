/**
 * POST /v1/partner/orders/{code}/events: a partner reports PICKED_UP, EN_ROUTE, DELIVERED or FAILED
 * (docs/decisions-log.md, 'Orders'). The rules, the check order and how an event racing a rotation is
 * judged: partner-event-rules.ts.
 *
 * Every event, with an Idempotency-Key or without, is written by the group-commit writer
 * (partner-event-writer.ts), which also claims the key and stores the answer with the change
 * (src/shared/idempotency.ts).
 */

import { type IdempotencyScope, requestHash } from '../../shared/idempotency.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { checkEventProof } from '../proof/proof-rules.js';
import type { CreatePartnerOrderEventDto } from './orders.schemas.js';
import type { OrdersDeps } from './orders.service.js';
import { checkEventBody } from './partner-event-rules.js';
import type { PartnerEventResult, PartnerEventWriter } from './partner-event-writer.js';

export type { PartnerEventResult } from './partner-event-writer.js';

/** What the partner event path needs (AppContext satisfies it). */
export interface PartnerEventDeps extends OrdersDeps {
  /** The group-commit writer (partner-event-writer.ts), one per process. */
  partnerEvents: Pick<PartnerEventWriter, 'write'>;
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
  const idempotency: IdempotencyScope | undefined =
    idempotencyKey === undefined
      ? undefined
      : { apiKeyId: key.id, key: idempotencyKey, requestHash: requestHash(`POST /v1/partner/orders/${code}/events`, body) };
  return deps.partnerEvents.write({ key, environment, code, body, idempotency });
}
