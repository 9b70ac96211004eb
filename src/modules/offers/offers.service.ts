/**
 * Offer rules (docs/offers.md). No Fastify here: handlers pass who is asking, services throw AppError.
 * Every change runs through commitOrderChange (its outbox rows committed with it, consumers woken
 * after COMMIT; an accepted offer's assignment also announced to the read cache). The lock story is in
 * offers.repo.ts; time is the service clock's (`deps.clock`), never the database's.
 */
import type { Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { type IdempotencyScope, requestHash, runIdempotentChange } from '../../shared/idempotency.js';
import { newEventId } from '../../shared/outbox.js';
import type { ApiKeyEnvironment } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { withCurrentActsFor } from '../keys/keys.repo.js';
import { commitOrderChange, type OrderTx } from '../orders/order-change.js';
import { lockOrderForAssignment } from '../orders/order-locks.repo.js';
import { assertAssignable, assignLockedOrder, type OrdersDeps } from '../orders/orders.service.js';
import { OFFERABLE_STATUSES } from '../orders/state-machine.js';
import { partnerExists } from '../partners/partners.repo.js';
import { publicId } from '../payments/public-id.js';
import {
  closeOffer,
  expireDueOffers,
  findOffer,
  insertOffer,
  listOffers,
  lockOrderForOffer,
  type OfferOwner,
  type OfferRef,
  offerStats,
} from './offers.repo.js';
import {
  type BulkAcceptOffersResult,
  type CreateOfferDto,
  DEFAULT_OFFER_TTL_SEC,
  type DeclineOfferDto,
  type ListAdminOffersQuery,
  type ListDeveloperOffersQuery,
  type ListPartnerOffersQuery,
  type OfferStats,
  type OfferStatsQuery,
  type PageOfPartnerOffer,
  type PartnerOffer,
} from './offers.schemas.js';

export type OfferOutcome = 'accepted' | 'declined' | 'expired' | 'withdrawn';

/** What the offer services need (AppContext satisfies it). */
export interface OffersDeps extends OrdersDeps {
  /** The process's metrics (offers_total{outcome}, the decision-time histogram); null when off. */
  metrics?: { offerClosed(outcome: OfferOutcome, decisionSeconds: number | null): void } | null;
  /**
   * Whether the decisions' statements (accept, decline, withdraw) may be prepared (src/db/join-plans.ts:
   * orders and offers have grown); absent: planned on every call.
   */
  offerPlans?: { readonly prepared: boolean };
}

/** Who decides an offer: a partner's key (the keys it acts for), or a developer for a partner's sandbox offers. */
export interface OfferDecider {
  owner: OfferOwner;
  /** Idempotency keys are kept per actor (an API key, or a developer account). */
  actorId: string;
  /** Only sandbox offers (the portal's developer routes): a live offer answers 409 ERR_CONFLICT. */
  sandboxOnly: boolean;
  /**
   * Whose offers the decider sees as of now, read in the decision's transaction; null when unchanged.
   * A key's record may predate a rotation that moved its offers to the successor (see `decidable`).
   */
  reload?: (q: Queryable) => Promise<OfferOwner | null>;
}

/** The decider of a partner request: offers made to the key, or to the key it acts for in a rotation's grace. */
export function keyDecider(key: ResolvedKey): OfferDecider {
  const keyIds = key.actsForKeyId === key.id ? [key.id] : [key.id, key.actsForKeyId];
  const reload = async (q: Queryable): Promise<OfferOwner | null> => {
    const current = await withCurrentActsFor(key, q);
    return current === key ? null : { keyIds: [key.id, current.actsForKeyId] };
  };
  return { owner: { keyIds }, actorId: key.id, sandboxOnly: false, reload };
}

/**
 * The offer `id` as `by` may decide it, and the decider as of the decision's transaction. Not found
 * through the key's record, it is looked for once more after reading the key it acts for: a rotation
 * that committed while the request was on its way moved the key's open offers to its successor, which
 * a rotated-out key in its grace acts for (docs/offers.md), so the decision is judged as after the
 * rotation instead of answering 404.
 */
async function decidable(
  by: OfferDecider,
  id: string,
  now: Date,
  tx: OrderTx,
  options: { prepare?: boolean } = {},
): Promise<{ by: OfferDecider; found: NonNullable<Awaited<ReturnType<typeof findOffer>>> }> {
  const found = await findOffer(by.owner, id, now, tx, options);
  if (found) return { by, found };
  const owner = await by.reload?.(tx);
  const again = owner ? await findOffer(owner, id, now, tx, options) : null;
  if (!owner || !again) throw notFound('Offer');
  return { by: { ...by, owner }, found: again };
}

/** The decider of the portal's developer routes: the partner's sandbox offers. */
export function developerDecider(partnerId: string, userId: string): OfferDecider {
  return { owner: { partnerId }, actorId: userId, sandboxOnly: true };
}

function closed(offer: PartnerOffer): AppError {
  return new AppError(
    'ERR_OFFER_CLOSED',
    `The offer is ${offer.status}; only a PENDING offer before its expiresAt can be decided`,
    {
      status: offer.status,
    },
  );
}

const seconds = (from: string, to: string | null) => (to === null ? null : (Date.parse(to) - Date.parse(from)) / 1000);

// --- Operator ------------------------------------------------------------------------------------------

/**
 * POST /v1/admin/orders/{code}/offers. Unknown order or key: 404. 409 ERR_CONFLICT when the order is
 * assigned, already has an open offer, is not in PLACED…PACKED, or the key is revoked (rotated out
 * included), of the other environment, or lacks logistics:write. An offer of the order past its deadline
 * but not yet swept is recorded EXPIRED here first (with its event), so it never blocks a new one.
 */
export async function createOffer(deps: OffersDeps, code: string, body: CreateOfferDto): Promise<PartnerOffer> {
  let expiredNow: Awaited<ReturnType<typeof expireDueOffers>> = [];
  const offer = await commitOrderChange(deps, async (tx) => {
    const now = deps.clock.now();
    const { order, key } = await lockOrderForOffer(code, body.apiKeyId, tx);
    if (!order) throw notFound('Order');
    if (!key) throw notFound('API key');
    if (order.assignedKeyId !== null) {
      throw new AppError('ERR_CONFLICT', 'The order is already assigned to a key; only an unassigned order can be offered');
    }
    if (!OFFERABLE_STATUSES.has(order.status)) {
      throw new AppError('ERR_CONFLICT', `The order is ${order.status}; only an order in PLACED to PACKED can be offered`);
    }
    if (key.revokedAt !== null)
      throw new AppError('ERR_CONFLICT', 'This API key is revoked or rotated out; offer the order to an active key');
    if (key.environment !== order.environment) {
      throw new AppError(
        'ERR_CONFLICT',
        `The key is a ${key.environment} key but the order is a ${order.environment} order; environments must match`,
      );
    }
    if (!key.scopes.includes('logistics:write')) {
      throw new AppError('ERR_CONFLICT', 'The key lacks the scope logistics:write, which accepting or declining needs');
    }
    expiredNow = await expireDueOffers({ limit: 1, orderId: order.id }, now, tx);
    const ttl = body.ttlSec ?? DEFAULT_OFFER_TTL_SEC;
    const created = await insertOffer(
      {
        id: publicId('ofr_'),
        orderId: order.id,
        orderCode: order.code,
        apiKeyId: key.id,
        partnerId: key.partnerId,
        environment: order.environment,
        expiresAt: new Date(now.getTime() + ttl * 1000),
      },
      newEventId(),
      now,
      tx,
    );
    if (!created) throw new AppError('ERR_CONFLICT', 'The order already has an open offer; withdraw it or wait for its answer');
    return created;
  });
  for (let i = 0; i < expiredNow.length; i++) deps.metrics?.offerClosed('expired', null);
  return offer;
}

/** DELETE /v1/admin/offers/{id}: the PENDING offer WITHDRAWN; any other 409 ERR_OFFER_CLOSED. */
export async function withdrawOffer(deps: OffersDeps, id: string): Promise<PartnerOffer> {
  const offer = await commitOrderChange(
    deps,
    async (tx) => {
      const now = deps.clock.now();
      const done = await closeOffer(
        id,
        { to: 'WITHDRAWN', keyIds: null, event: { eventId: newEventId(), type: 'offer.withdrawn' } },
        now,
        tx,
        { prepare: deps.offerPlans?.prepared ?? false },
      );
      if (done) return done.offer;
      const current = await findOffer('all', id, now, tx);
      if (!current) throw notFound('Offer');
      throw closed(current.offer);
    },
    { transaction: false },
  );
  deps.metrics?.offerClosed('withdrawn', null);
  return offer;
}

export async function getAdminOffer(deps: OffersDeps, id: string): Promise<PartnerOffer> {
  const found = await findOffer('all', id, deps.clock.now(), deps.db);
  if (!found) throw notFound('Offer');
  return found.offer;
}

export async function listAdminOffers(deps: OffersDeps, query: ListAdminOffersQuery): Promise<PageOfPartnerOffer> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listOffers(
    'all',
    { status: query.status, partnerId: query.partnerId, orderCode: query.orderCode },
    { page, pageSize },
    deps.clock.now(),
    deps.db,
  );
  return { page, pageSize, ...found };
}

/** GET /v1/admin/partners/{id}/offer-stats: one statement (offers.repo.ts `offerStats`). */
export async function getOfferStats(
  deps: OffersDeps,
  partnerId: string,
  query: OfferStatsQuery & { environment?: 'live' | 'sandbox' },
): Promise<OfferStats> {
  if (!(await partnerExists(partnerId, deps.db))) throw notFound('Partner');
  const days = query.days ?? 30;
  const now = deps.clock.now();
  const from = new Date(now.getTime() - days * 86_400_000);
  const environment: ApiKeyEnvironment = query.environment === 'sandbox' ? 'SANDBOX' : 'LIVE';
  const counts = await offerStats(partnerId, environment, from, now, deps.db);
  const closedCount = counts.accepted + counts.declined + counts.expired;
  return {
    partnerId,
    days,
    from: from.toISOString(),
    to: now.toISOString(),
    ...counts,
    acceptanceRate: closedCount === 0 ? null : Math.round((counts.accepted / closedCount) * 10_000) / 10_000,
  };
}

// --- Partner and developer reads ----------------------------------------------------------------------

export async function listKeyOffers(
  deps: OffersDeps,
  key: ResolvedKey,
  query: ListPartnerOffersQuery,
): Promise<PageOfPartnerOffer> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listOffers(keyDecider(key).owner, { status: query.status }, { page, pageSize }, deps.clock.now(), deps.db);
  return { page, pageSize, ...found };
}

/**
 * GET /v1/partner/offers/{id}. Not found through the key's record, the offer is looked for once more
 * after reading the key it acts for, as a decision is (see `decidable`): a rotation that committed while
 * the request was on its way moved the offer to the key's successor, and the read must not answer 404
 * for an offer the key sees both before and after the rotation.
 */
export async function getKeyOffer(deps: OffersDeps, key: ResolvedKey, id: string): Promise<PartnerOffer> {
  const by = keyDecider(key);
  const now = deps.clock.now();
  let found = await findOffer(by.owner, id, now, deps.db);
  if (!found) {
    const owner = await by.reload?.(deps.db);
    if (owner) found = await findOffer(owner, id, now, deps.db);
  }
  if (!found) throw notFound('Offer');
  return found.offer;
}

/** GET /v1/developer/offers: the partner's offers (both environments), optionally of one of its keys. */
export async function listPartnerOffers(
  deps: OffersDeps,
  partnerId: string,
  query: ListDeveloperOffersQuery,
): Promise<PageOfPartnerOffer> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listOffers(
    { partnerId },
    { status: query.status, apiKeyId: query.apiKeyId },
    { page, pageSize },
    deps.clock.now(),
    deps.db,
  );
  return { page, pageSize, ...found };
}

// --- Deciding ----------------------------------------------------------------------------------------------

/**
 * Accepts one offer on `tx`: the order is locked first (as a direct assignment locks it), then the
 * offer leaves PENDING by a conditional update, then the order is assigned to the offered key by the
 * direct assignment's own path (its checks, its `order.assigned_to_partner` event, the read cache
 * told), `partnerAssignedAt` = `decidedAt`. An offer this decider already accepted answers again.
 */
async function acceptOn(
  deps: OffersDeps,
  decider: OfferDecider,
  id: string,
  tx: OrderTx,
): Promise<{ offer: PartnerOffer; fresh: boolean }> {
  const now = deps.clock.now();
  // Its four statements are planned once per session once orders and offers have grown.
  const options = { prepare: deps.offerPlans?.prepared ?? false };
  const { by, found } = await decidable(decider, id, now, tx, options);
  assertDecidable(by, found.ref);
  let { order, key } = await lockOrderForAssignment(found.ref.orderCode, found.ref.apiKeyId, tx, options);
  if (!order || !key) throw notFound('Offer');
  const done = await closeOffer(
    id,
    { to: 'ACCEPTED', keyIds: null, event: { eventId: newEventId(), type: 'offer.accepted' } },
    now,
    tx,
    options,
  );
  if (!done) {
    const current = await findOffer(by.owner, id, now, tx);
    if (current?.offer.status === 'ACCEPTED') return { offer: current.offer, fresh: false };
    throw closed(current?.offer ?? found.offer);
  }
  // A key rotation that committed since the offer was read moved it to the successor (the row as
  // updated says so): the order goes to that key.
  if (done.ref.apiKeyId !== key.id) {
    ({ order, key } = await lockOrderForAssignment(found.ref.orderCode, done.ref.apiKeyId, tx, options));
    if (!order || !key) throw new Error(`offer ${id} moved to a key that is gone`);
  }
  assertAssignable(order, key);
  if (order.assignedKeyId !== null) {
    throw new AppError('ERR_CONFLICT', 'The order was assigned to a key in the meantime; the offer cannot be accepted');
  }
  // The offer left PENDING above, in this transaction: nothing open blocks the assignment.
  if (!(await assignLockedOrder(order, key.id, now, tx, options))) throw new Error(`offer ${id} still open after its acceptance`);
  return { offer: done.offer, fresh: true };
}

function assertDecidable(by: OfferDecider, offer: OfferRef): void {
  if (by.sandboxOnly && offer.environment !== 'SANDBOX') {
    throw new AppError(
      'ERR_CONFLICT',
      'A live offer is decided by your own systems with its key (POST /v1/partner/offers/{id}/accept or …/decline); the portal decides sandbox offers only',
    );
  }
}

/** Runs `change` under the Idempotency-Key, if any, in one order change. */
async function idempotent(
  deps: OffersDeps,
  by: OfferDecider,
  idempotencyKey: string | undefined,
  target: string,
  body: unknown,
  fn: (tx: OrderTx) => Promise<PartnerOffer>,
): Promise<{ offer: PartnerOffer; replayed: boolean }> {
  if (idempotencyKey === undefined) return { offer: await commitOrderChange(deps, fn), replayed: false };
  const scope: IdempotencyScope = { apiKeyId: by.actorId, key: idempotencyKey, requestHash: requestHash(target, body) };
  const outcome = await commitOrderChange(deps, (tx) =>
    runIdempotentChange(
      scope,
      deps.clock.now(),
      'offer_decision',
      200,
      async () => {
        const offer = await fn(tx);
        return { answer: offer, json: JSON.stringify(offer) };
      },
      tx,
    ),
  );
  if (outcome.kind === 'error') throw outcome.error;
  return { offer: outcome.answer, replayed: outcome.replayed };
}

/** POST …/offers/{id}/accept. */
export async function acceptOffer(
  deps: OffersDeps,
  by: OfferDecider,
  id: string,
  idempotencyKey?: string,
): Promise<{ offer: PartnerOffer; replayed: boolean }> {
  let fresh = false;
  const result = await idempotent(deps, by, idempotencyKey, `accept ${id}`, null, async (tx) => {
    const accepted = await acceptOn(deps, by, id, tx);
    fresh = accepted.fresh;
    return accepted.offer;
  });
  if (fresh) deps.metrics?.offerClosed('accepted', seconds(result.offer.createdAt, result.offer.decidedAt));
  return result;
}

/** POST …/offers/accept: each id on its own (its own transaction), in the order given. */
export async function acceptOffers(deps: OffersDeps, by: OfferDecider, ids: string[]): Promise<BulkAcceptOffersResult> {
  const results: BulkAcceptOffersResult['results'] = [];
  for (const id of ids) {
    try {
      const { offer } = await acceptOffer(deps, by, id);
      results.push({ id, offer, error: null });
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode >= 500) throw err;
      results.push({ id, offer: null, error: { code: err.code, message: err.message } });
    }
  }
  return { results };
}

/** POST …/offers/{id}/decline: `note` required for OTHER. One statement (a conditional update). */
export async function declineOffer(
  deps: OffersDeps,
  by: OfferDecider,
  id: string,
  body: DeclineOfferDto,
  idempotencyKey?: string,
): Promise<{ offer: PartnerOffer; replayed: boolean }> {
  if (body.reason === 'OTHER' && (body.note === undefined || body.note.trim() === '')) {
    throw validationError('note', 'is required when reason is OTHER');
  }
  let fresh = false;
  // An acceptance's statements, prepared under the same rule (see acceptOn).
  const options = { prepare: deps.offerPlans?.prepared ?? false };
  const result = await idempotent(deps, by, idempotencyKey, `decline ${id}`, body, async (tx) => {
    const now = deps.clock.now();
    const { by: decider, found } = await decidable(by, id, now, tx, options);
    assertDecidable(decider, found.ref);
    const done = await closeOffer(
      id,
      {
        to: 'DECLINED',
        reason: body.reason,
        note: body.note ?? null,
        keyIds: null,
        event: { eventId: newEventId(), type: 'offer.declined' },
      },
      now,
      tx,
      options,
    );
    if (!done) throw closed((await findOffer(decider.owner, id, now, tx))?.offer ?? found.offer);
    fresh = true;
    return done.offer;
  });
  if (fresh) deps.metrics?.offerClosed('declined', seconds(result.offer.createdAt, result.offer.decidedAt));
  return result;
}

// --- Expiry -----------------------------------------------------------------------------------------------

/** Offers recorded EXPIRED per sweep statement at most (a backlog drains over a few statements). */
export const SWEEP_BATCH = 500;

/**
 * One tick of the expiry sweep (the worker runs it every second): due offers recorded EXPIRED with
 * their `offer.expired` events, in one statement per batch. Returns how many.
 */
export async function sweepExpiredOffers(deps: OffersDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await commitOrderChange(deps, (tx) => expireDueOffers({ limit: SWEEP_BATCH }, deps.clock.now(), tx), {
      transaction: false,
    });
    for (let i = 0; i < expired.length; i++) deps.metrics?.offerClosed('expired', null);
    total += expired.length;
    if (expired.length < SWEEP_BATCH) return total;
  }
}
