/**
 * Payment intent rules (docs/payments.md): the operator's (and the sandbox's) capture and refunds, and
 * the partner's reads. No Fastify here. Captures and refunds run through commitOrderChange: they change
 * the order's paymentStatus, so the read cache is told and the outbox consumers are woken after COMMIT.
 */
import { AppError, notFound } from '../../errors.js';
import { type IdempotencyScope, requestHash, runIdempotentChange } from '../../shared/idempotency.js';
import { parseInstant } from '../../shared/instants.js';
import { newEventId } from '../../shared/outbox.js';
import { type ApiKeyEnvironment, environmentName } from '../../shared/schemas.js';
import type { ResolvedKey } from '../keys/key.types.js';
import { commitOrderChange, type OrderChangeDeps, type OrderTx } from '../orders/order-change.js';
import { type PartnerOrderScope, scopeOf } from '../orders/visibility.js';
import {
  captureIntent,
  findPartnerIntentByOrderCode,
  findVisibleIntent,
  type LockedIntent,
  listPartnerIntents,
  listVisibleIntents,
  lockIntentByOrderCode,
  partnerBalance,
  refundIntent,
} from './payments.repo.js';
import type {
  ListPaymentIntentsQuery,
  PageOfPaymentIntent,
  PartnerBalance,
  PaymentIntent,
  RefundDto,
} from './payments.schemas.js';
import { publicId } from './public-id.js';

/**
 * What the payment services need (AppContext satisfies it): captures and refunds change the order's
 * paymentStatus, so they run as order changes (commitOrderChange) and are announced to the read cache.
 */
export interface PaymentsDeps extends OrderChangeDeps {
  clock: { now(): Date };
}

/** Who captures or refunds: the operator (every order), or a sandbox key (its own sandbox orders). */
export interface PaymentActor {
  /** Idempotency keys are kept per actor (an operator account or an API key). */
  actorId: string;
  /** The orders it reaches; null: every order. */
  scope: PartnerOrderScope | null;
}

async function lockedIntent(code: string, actor: PaymentActor, tx: OrderTx): Promise<LockedIntent> {
  const intent = await lockIntentByOrderCode(code, actor.scope, tx);
  if (!intent) throw notFound('Order');
  return intent;
}

/** POST …/orders/{code}/payment/capture. */
export function capturePayment(deps: PaymentsDeps, actor: PaymentActor, code: string, idempotencyKey?: string) {
  return idempotent(deps, actor, idempotencyKey, `POST /orders/${code}/payment/capture`, {}, async (tx) => {
    const intent = await lockedIntent(code, actor, tx);
    if (intent.method === 'COD') {
      throw new AppError(
        'ERR_PAYMENT_INTENT_INVALID_STATE',
        'A COD order is paid in cash at the door; there is nothing to capture',
      );
    }
    if (intent.status === 'SUCCEEDED') throw new AppError('ERR_PAYMENT_ALREADY_PAID', 'This payment was already captured');
    if (intent.status !== 'REQUIRES_CAPTURE') {
      throw new AppError(
        'ERR_PAYMENT_INTENT_INVALID_STATE',
        `The payment intent is ${intent.status}; only REQUIRES_CAPTURE can be captured`,
      );
    }
    const captured = await captureIntent(intent, newEventId(), deps.clock.now(), tx);
    tx.changed({ environment: intent.environment, keyIds: [intent.assignedKeyId] });
    return captured;
  });
}

/** POST …/orders/{code}/payment/refunds. */
export function refundPayment(deps: PaymentsDeps, actor: PaymentActor, code: string, body: RefundDto, idempotencyKey?: string) {
  return idempotent(deps, actor, idempotencyKey, `POST /orders/${code}/payment/refunds`, body, async (tx) => {
    const intent = await lockedIntent(code, actor, tx);
    if (intent.method === 'COD') {
      throw new AppError('ERR_REFUND_ORDER_NOT_ELIGIBLE', 'A COD order has no card payment to refund');
    }
    if (intent.status !== 'SUCCEEDED') {
      throw new AppError(
        'ERR_REFUND_INVALID_STATE',
        `The payment intent is ${intent.status}; only a captured (SUCCEEDED) payment can be refunded`,
      );
    }
    const refundable = intent.receivedQepik - intent.refundedQepik;
    if (body.amountQepik > refundable) {
      throw new AppError('ERR_REFUND_AMOUNT_EXCEEDS', `amountQepik is above what is left to refund (${refundable})`, [
        { field: 'amountQepik', messages: [`must be at most ${refundable}`] },
      ]);
    }
    const refunded = await refundIntent(
      intent,
      { id: publicId('re_'), amountQepik: body.amountQepik, reason: body.reason ?? null },
      newEventId(),
      deps.clock.now(),
      tx,
    );
    tx.changed({ environment: intent.environment, keyIds: [intent.assignedKeyId] });
    return refunded;
  });
}

/**
 * Runs `fn` as one order change, honouring an Idempotency-Key as partner events do (docs/payments.md):
 * the key is claimed in the change's transaction; a repeat replays the stored answer (errors included,
 * except 5xx and 429), the same key with another request is 409 ERR_IDEMPOTENCY_CONFLICT.
 */
async function idempotent(
  deps: PaymentsDeps,
  actor: PaymentActor,
  idempotencyKey: string | undefined,
  target: string,
  body: unknown,
  fn: (tx: OrderTx) => Promise<PaymentIntent>,
): Promise<{ intent: PaymentIntent; replayed: boolean }> {
  if (idempotencyKey === undefined) return { intent: await commitOrderChange(deps, fn), replayed: false };
  const idem: IdempotencyScope = { apiKeyId: actor.actorId, key: idempotencyKey, requestHash: requestHash(target, body) };
  const outcome = await commitOrderChange(deps, (tx) =>
    runIdempotentChange(
      idem,
      deps.clock.now(),
      'payment_change',
      200,
      async () => {
        const intent = await fn(tx);
        return { answer: intent, json: JSON.stringify(intent) };
      },
      tx,
    ),
  );
  if (outcome.kind === 'error') throw outcome.error;
  return { intent: outcome.answer, replayed: outcome.replayed };
}

// --- Partner reads -----------------------------------------------------------------------------------

/** A payment-intent list's filters, the same for the partner's and the portal's list. */
function intentFilters(query: ListPaymentIntentsQuery) {
  return {
    status: query.status,
    method: query.method,
    orderCode: query.orderCode,
    updatedSince: query.updatedSince === undefined ? undefined : parseInstant('updatedSince', query.updatedSince),
  };
}

export async function listPaymentIntents(
  deps: PaymentsDeps,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  query: ListPaymentIntentsQuery,
): Promise<PageOfPaymentIntent> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listVisibleIntents(scopeOf(key, environment), intentFilters(query), { page, pageSize }, deps.db);
  return { page, pageSize, total: found.total, items: found.items };
}

export async function getPaymentIntent(deps: PaymentsDeps, key: ResolvedKey, environment: ApiKeyEnvironment, id: string) {
  const intent = await findVisibleIntent(scopeOf(key, environment), id, deps.db);
  if (!intent) throw notFound('Payment intent');
  return intent;
}

/** The portal's list: the intents of every key of the partner in one environment (docs/payments.md, "Developer portal reads"). */
export async function listPartnerPaymentIntents(
  deps: PaymentsDeps,
  partnerId: string,
  environment: ApiKeyEnvironment,
  query: ListPaymentIntentsQuery,
): Promise<PageOfPaymentIntent> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  const found = await listPartnerIntents(partnerId, environment, intentFilters(query), { page, pageSize }, deps.db);
  return { page, pageSize, total: found.total, items: found.items };
}

export async function getPartnerOrderIntent(deps: PaymentsDeps, partnerId: string, code: string): Promise<PaymentIntent> {
  const intent = await findPartnerIntentByOrderCode(partnerId, code, deps.db);
  if (!intent) throw notFound('Payment intent');
  return intent;
}

export function getBalance(deps: PaymentsDeps, key: ResolvedKey, environment: ApiKeyEnvironment): Promise<PartnerBalance> {
  return getPartnerBalance(deps, key.partnerId, environment);
}

/** The partner's balance in one environment (the key's, or the one the portal asks for). */
export async function getPartnerBalance(
  deps: PaymentsDeps,
  partnerId: string,
  environment: ApiKeyEnvironment,
): Promise<PartnerBalance> {
  const b = await partnerBalance(partnerId, environment, deps.db);
  return {
    environment: environmentName(environment),
    codOnHandQepik: b.onHand,
    collectionsOnHand: b.count,
    awaitingRemittanceQepik: b.awaiting,
    creditQepik: b.credit,
    oldestCollectionOnHandAt: b.oldest,
  };
}
