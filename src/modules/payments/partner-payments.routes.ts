/**
 * Partner API for payments (docs/payments.md): payment intents, the balance, settlements and their
 * lines, all behind the scope payments:read. Authentication runs onRequest: key (401) → environment
 * (403) → rate limit (429) → scope (403) → input (400) → resource (404).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import {
  LinesQuery,
  ListPaymentIntentsQuery,
  ListSettlementsQuery,
  PageOfPaymentIntent,
  PageOfSettlement,
  PageOfSettlementLine,
  PartnerBalance,
  PaymentIntent,
  PaymentIntentIdParams,
  Settlement,
  SettlementIdParams,
} from './payments.schemas.js';
import { getBalance, getPaymentIntent, listPaymentIntents } from './payments.service.js';
import { getSettlement, getSettlementLines, listSettlements, settlementLinesCsv } from './settlements.service.js';

const tags = ['partner'];

/** The CSV statement as an attachment named after the settlement (docs/payments.md, "The CSV statement"). */
export function sendStatementCsv(reply: FastifyReply, settlementId: string, csv: string) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${settlementId.replace(/[^A-Za-z0-9_]/g, '')}-lines.csv"`)
    .send(csv);
}

export const partnerPaymentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.partnerAuth('payments:read');
  const ownerOf = (key: { partnerId: string }) => ({ partnerId: key.partnerId, environment: app.environment });

  app.get(
    '/v1/partner/payment-intents',
    {
      onRequest,
      schema: {
        summary: 'List payment intents',
        description: 'The payment intents of the orders the key may see, newest first.',
        tags,
        operationId: 'listPaymentIntents',
        querystring: ListPaymentIntentsQuery,
        response: { 200: PageOfPaymentIntent, ...errorResponses('ERR_VALIDATION', 401, 403, 429) },
      },
    },
    async (request) => listPaymentIntents(deps, apiKeyOf(request), app.environment, request.query),
  );

  app.get(
    '/v1/partner/payment-intents/:id',
    {
      onRequest,
      schema: {
        summary: 'Get a payment intent',
        description: 'One payment intent; 404 also when the key may not see its order.',
        tags,
        operationId: 'getPaymentIntent',
        params: PaymentIntentIdParams,
        response: { 200: PaymentIntent, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => getPaymentIntent(deps, apiKeyOf(request), app.environment, request.params.id),
  );

  app.get(
    '/v1/partner/balance',
    {
      onRequest,
      schema: {
        summary: 'Get the cash balance',
        description:
          "Your partner's cash on hand (collected, on no settlement yet) and what its settlements await, in this environment.",
        tags,
        operationId: 'getBalance',
        response: { 200: PartnerBalance, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => getBalance(deps, apiKeyOf(request), app.environment),
  );

  app.get(
    '/v1/partner/settlements',
    {
      onRequest,
      schema: {
        summary: 'List settlements',
        description: "Your partner's settlements in this environment, newest first.",
        tags,
        operationId: 'listPartnerSettlements',
        querystring: ListSettlementsQuery,
        response: { 200: PageOfSettlement, ...errorResponses('ERR_VALIDATION', 401, 403, 429) },
      },
    },
    async (request) => listSettlements(deps, ownerOf(apiKeyOf(request)), request.query),
  );

  app.get(
    '/v1/partner/settlements/:id',
    {
      onRequest,
      schema: {
        summary: 'Get a settlement',
        description: "One of your partner's settlements in this environment; any other id answers 404.",
        tags,
        operationId: 'getPartnerSettlement',
        params: SettlementIdParams,
        response: { 200: Settlement, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => getSettlement(deps, ownerOf(apiKeyOf(request)), request.params.id),
  );

  app.get(
    '/v1/partner/settlements/:id/lines',
    {
      onRequest,
      schema: {
        summary: "List a settlement's lines",
        description: 'Collections, adjustments and remittances, oldest first.',
        tags,
        operationId: 'listSettlementLines',
        params: SettlementIdParams,
        querystring: LinesQuery,
        response: { 200: PageOfSettlementLine, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => getSettlementLines(deps, ownerOf(apiKeyOf(request)), request.params.id, request.query),
  );

  app.get(
    '/v1/partner/settlements/:id/lines.csv',
    {
      onRequest,
      schema: {
        summary: "Download a settlement's lines as CSV",
        description:
          'text/csv (RFC 4180): a header row `id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at`, then one row per line, oldest first; amounts are integer qəpik, empty fields are null.',
        tags,
        operationId: 'downloadSettlementLinesCsv',
        params: SettlementIdParams,
        response: {
          200: Type.String({ description: 'The CSV text', 'x-content-type': 'text/csv' }),
          ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429),
        },
      },
    },
    async (request, reply) => {
      const csv = await settlementLinesCsv(deps, ownerOf(apiKeyOf(request)), request.params.id);
      return sendStatementCsv(reply, request.params.id, csv);
    },
  );
};
