/**
 * What the operator's capture and refund routes (admin-payments.routes.ts) share with the sandbox
 * simulator's (../sandbox/sandbox-payments.routes.ts): the same moves of a card payment, made by
 * another actor.
 */
import type { FastifyReply } from 'fastify';
import { errorResponses } from '../../shared/schemas.js';
import { IdempotencyHeaders, OrderCodeParams } from '../orders/orders.schemas.js';
import { PaymentIntent, RefundDto } from './payments.schemas.js';

/** A refund's request: the order, an optional Idempotency-Key, the amount. */
export const REFUND_REQUEST = { params: OrderCodeParams, headers: IdempotencyHeaders, body: RefundDto };

/** A refund's answers; `more`, the route's own errors, come last. */
export function refundResponses(...more: Parameters<typeof errorResponses>) {
  return {
    200: PaymentIntent,
    ...errorResponses(
      'ERR_VALIDATION',
      'ERR_BAD_REQUEST',
      'ERR_REFUND_AMOUNT_EXCEEDS',
      401,
      403,
      'ERR_NOT_FOUND',
      'ERR_REFUND_ORDER_NOT_ELIGIBLE',
      'ERR_REFUND_INVALID_STATE',
      ...more,
    ),
  };
}

/** A capture's or refund's answer: the intent, marked when it is the stored answer of a repeat. */
export function intentAnswer(reply: FastifyReply, result: { intent: PaymentIntent; replayed: boolean }): PaymentIntent {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return result.intent;
}
