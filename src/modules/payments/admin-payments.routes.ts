/**
 * Operator API for payments and settlements (docs/payments.md), ADMIN accounts only. Authentication runs
 * onRequest, before the body is parsed, so 401/403 precede any 400.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { environmentOf, errorResponses } from '../../shared/schemas.js';
import { IdempotencyHeaders, OrderCodeParams } from '../orders/orders.schemas.js';
import { intentAnswer, REFUND_REQUEST, refundResponses } from './payment-route-parts.js';
import {
  AdjustmentDto,
  CreateSettlementDto,
  ListAdminSettlementsQuery,
  PageOfSettlement,
  PartnerIdParams,
  PaymentIntent,
  RemittanceDto,
  Settlement,
  SettlementIdParams,
  SettlementLine,
} from './payments.schemas.js';
import { capturePayment, type PaymentActor, refundPayment } from './payments.service.js';
import { addAdjustment, addRemittance, createSettlement, listSettlements } from './settlements.service.js';

const tags = ['admin'];

function operator(request: FastifyRequest): PaymentActor {
  return { actorId: request.principal?.userId as string, scope: null };
}

export const adminPaymentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requireAdmin;

  app.post(
    '/v1/admin/orders/:code/payment/capture',
    {
      onRequest,
      schema: {
        summary: "Capture an order's card payment",
        description:
          "The CARD intent REQUIRES_CAPTURE → SUCCEEDED; the order's paymentStatus becomes PAID. Already captured: 409 ERR_PAYMENT_ALREADY_PAID; COD or CANCELED: 409 ERR_PAYMENT_INTENT_INVALID_STATE. Optional Idempotency-Key (24 h).",
        tags,
        operationId: 'capturePayment',
        params: OrderCodeParams,
        headers: IdempotencyHeaders,
        response: {
          200: PaymentIntent,
          ...errorResponses(
            'ERR_VALIDATION',
            401,
            403,
            'ERR_NOT_FOUND',
            'ERR_PAYMENT_ALREADY_PAID',
            'ERR_PAYMENT_INTENT_INVALID_STATE',
            'ERR_IDEMPOTENCY_CONFLICT',
          ),
        },
      },
    },
    async (request, reply) =>
      intentAnswer(reply, await capturePayment(deps, operator(request), request.params.code, request.headers['idempotency-key'])),
  );

  app.post(
    '/v1/admin/orders/:code/payment/refunds',
    {
      onRequest,
      schema: {
        summary: "Refund part or all of an order's card payment",
        description:
          "amountQepik ≥ 1 and at most captured − refunded (400 ERR_REFUND_AMOUNT_EXCEEDS); the order's paymentStatus becomes PARTIALLY_REFUNDED, then REFUNDED. COD: 409 ERR_REFUND_ORDER_NOT_ELIGIBLE; not SUCCEEDED: 409 ERR_REFUND_INVALID_STATE. Optional Idempotency-Key (24 h).",
        tags,
        operationId: 'refundPayment',
        ...REFUND_REQUEST,
        response: refundResponses('ERR_IDEMPOTENCY_CONFLICT'),
      },
    },
    async (request, reply) =>
      intentAnswer(
        reply,
        await refundPayment(deps, operator(request), request.params.code, request.body, request.headers['idempotency-key']),
      ),
  );

  app.post(
    '/v1/admin/partners/:id/settlements',
    {
      onRequest,
      schema: {
        summary: "Close a partner's cash-on-delivery period",
        description:
          "A settlement holding every COLLECTED COD intent of the partner in the environment captured before periodEnd and on no settlement. periodEnd in the future: 409 ERR_SETTLEMENT_PERIOD_OPEN; not after the last settlement's periodEnd: 409 ERR_SETTLEMENT_EXISTS. A period with nothing to collect is SETTLED at once.",
        tags,
        operationId: 'createSettlement',
        params: PartnerIdParams,
        body: CreateSettlementDto,
        response: {
          201: Settlement,
          ...errorResponses(
            'ERR_VALIDATION',
            'ERR_BAD_REQUEST',
            401,
            403,
            'ERR_NOT_FOUND',
            'ERR_SETTLEMENT_PERIOD_OPEN',
            'ERR_SETTLEMENT_EXISTS',
          ),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await createSettlement(deps, request.params.id, environmentOf(request.body.environment), request.body.periodEnd)),
  );

  app.get(
    '/v1/admin/settlements',
    {
      onRequest,
      schema: {
        summary: 'List settlements',
        description: "Every partner's settlements (or one partner's), newest first.",
        tags,
        operationId: 'listSettlements',
        querystring: ListAdminSettlementsQuery,
        response: { 200: PageOfSettlement, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => listSettlements(deps, null, request.query),
  );

  app.post(
    '/v1/admin/settlements/:id/adjustments',
    {
      onRequest,
      schema: {
        summary: 'Adjust a settlement',
        description:
          'A signed amount (never 0) with a note: negative lowers what the partner owes. SETTLED: 409 ERR_SETTLEMENT_INVALID_STATE. Leaving nothing outstanding settles it.',
        tags,
        operationId: 'createSettlementAdjustment',
        params: SettlementIdParams,
        body: AdjustmentDto,
        response: {
          201: SettlementLine,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_SETTLEMENT_INVALID_STATE'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await addAdjustment(deps, request.params.id, request.body)),
  );

  app.post(
    '/v1/admin/settlements/:id/remittances',
    {
      onRequest,
      schema: {
        summary: 'Record a remittance',
        description:
          'Money the partner paid in: amountQepik ≥ 1, at most outstandingQepik (400 ERR_VALIDATION), with its bank reference. SETTLED: 409 ERR_SETTLEMENT_INVALID_STATE. Leaving nothing outstanding settles it.',
        tags,
        operationId: 'createSettlementRemittance',
        params: SettlementIdParams,
        body: RemittanceDto,
        response: {
          201: SettlementLine,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_SETTLEMENT_INVALID_STATE'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await addRemittance(deps, null, request.params.id, request.body)),
  );
};
