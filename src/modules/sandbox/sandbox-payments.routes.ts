/**
 * The sandbox simulator's payment routes (docs/payments.md, "Sandbox"): capture and refund the key's
 * card test orders, close the partner's sandbox period now, and remit on a sandbox settlement. SANDBOX
 * keys with payments:read only; on the live API every route answers 403 ERR_API_KEY_ENVIRONMENT.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { IdempotencyHeaders, OrderCodeParams } from '../orders/orders.schemas.js';
import { intentAnswer, REFUND_REQUEST, refundResponses } from '../payments/payment-route-parts.js';
import {
  PaymentIntent,
  SandboxRemittanceDto,
  Settlement,
  SettlementIdParams,
  SettlementLine,
} from '../payments/payments.schemas.js';
import { capturePayment, type PaymentActor, refundPayment } from '../payments/payments.service.js';
import { addRemittance, createSettlement } from '../payments/settlements.service.js';
import { sandboxScopeOf } from './sandbox-key.js';
import { bodyOptional } from './sandbox-partner.routes.js';

const tags = ['partner'];
const SANDBOX_ONLY = ' Sandbox API only (SANDBOX keys with payments:read); on the live API: 403 ERR_API_KEY_ENVIRONMENT.';

/** The key moves the payment, within its own sandbox orders. */
function keyActor(request: FastifyRequest): PaymentActor {
  const key = apiKeyOf(request);
  return { actorId: key.id, scope: sandboxScopeOf(key) };
}

export const sandboxPaymentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.partnerAuth('payments:read', { onlyOn: 'SANDBOX' });

  app.post(
    '/v1/partner/sandbox/orders/:code/payment/capture',
    {
      onRequest,
      schema: {
        summary: "Capture a sandbox card order's payment",
        description: `As the marketplace's capture: REQUIRES_CAPTURE → SUCCEEDED, the order PAID, payment_intent.succeeded. Only this key's sandbox orders; others 404.${SANDBOX_ONLY}`,
        tags,
        operationId: 'captureSandboxPayment',
        params: OrderCodeParams,
        headers: IdempotencyHeaders,
        response: {
          200: PaymentIntent,
          ...errorResponses(401, 403, 'ERR_NOT_FOUND', 'ERR_PAYMENT_ALREADY_PAID', 'ERR_PAYMENT_INTENT_INVALID_STATE', 429),
        },
      },
    },
    async (request, reply) =>
      intentAnswer(reply, await capturePayment(deps, keyActor(request), request.params.code, request.headers['idempotency-key'])),
  );

  app.post(
    '/v1/partner/sandbox/orders/:code/payment/refunds',
    {
      onRequest,
      schema: {
        summary: "Refund a sandbox card order's payment",
        description: `As the marketplace's refund: amountQepik at most captured − refunded. Only this key's sandbox orders; others 404.${SANDBOX_ONLY}`,
        tags,
        operationId: 'refundSandboxPayment',
        ...REFUND_REQUEST,
        response: refundResponses(429),
      },
    },
    async (request, reply) =>
      intentAnswer(
        reply,
        await refundPayment(deps, keyActor(request), request.params.code, request.body, request.headers['idempotency-key']),
      ),
  );

  app.post(
    '/v1/partner/sandbox/settlements',
    {
      onRequest,
      preValidation: bodyOptional,
      schema: {
        summary: 'Close the sandbox period now',
        description: `A settlement of your partner's sandbox collections up to now, as the marketplace makes one (settlement.created). Twice at the same instant: 409 ERR_SETTLEMENT_EXISTS.${SANDBOX_ONLY}`,
        tags,
        operationId: 'createSandboxSettlement',
        body: Type.Object({}, { additionalProperties: false }),
        bodyOptional: true,
        response: { 201: Settlement, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_SETTLEMENT_EXISTS', 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createSettlement(deps, apiKeyOf(request).partnerId, 'SANDBOX', deps.clock.now().toISOString())),
  );

  app.post(
    '/v1/partner/sandbox/settlements/:id/remittances',
    {
      onRequest,
      schema: {
        summary: 'Remit on a sandbox settlement',
        description: `As the marketplace records a remittance: amountQepik ≥ 1, at most outstandingQepik (400 ERR_VALIDATION); SETTLED: 409 ERR_SETTLEMENT_INVALID_STATE. Only your partner's sandbox settlements; others 404.${SANDBOX_ONLY}`,
        tags,
        operationId: 'createSandboxRemittance',
        params: SettlementIdParams,
        body: SandboxRemittanceDto,
        response: {
          201: SettlementLine,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_SETTLEMENT_INVALID_STATE', 429),
        },
      },
    },
    async (request, reply) => {
      const key = apiKeyOf(request);
      const owner = { partnerId: key.partnerId, environment: 'SANDBOX' as const };
      return reply.code(201).send(await addRemittance(deps, owner, request.params.id, request.body));
    },
  );
};
