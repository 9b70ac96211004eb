/**
 * Payments for the partner's own users (bearer, PARTNER accounts): what the developer portal's Payments
 * page shows (docs/payments.md, "Developer portal reads"). The same reads as the partner API, for the
 * user's partner only: the balance, the payment intents and the settlement list of the environment asked
 * for, a settlement and its lines in either environment, and the payment intent of an order assigned to
 * any of its keys.
 * Another partner's settlement or order answers 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { ApiKeyEnvironment, errorResponses } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import { sendStatementCsv } from './partner-payments.routes.js';
import {
  LinesQuery,
  ListPaymentIntentsQuery,
  ListSettlementsQuery,
  PageOfPaymentIntent,
  PageOfSettlement,
  PageOfSettlementLine,
  PartnerBalance,
  PaymentIntent,
  Settlement,
  SettlementIdParams,
} from './payments.schemas.js';
import { getPartnerBalance, getPartnerOrderIntent, listPartnerPaymentIntents } from './payments.service.js';
import { getSettlement, getSettlementLines, listSettlements, settlementLinesCsv } from './settlements.service.js';

const tags = ['developer'];

const EnvironmentQuery = Type.Object({ environment: ApiKeyEnvironment }, { additionalProperties: false });
const DeveloperPaymentIntentsQuery = Type.Object(
  { environment: ApiKeyEnvironment, ...ListPaymentIntentsQuery.properties },
  { additionalProperties: false },
);
const DeveloperSettlementsQuery = Type.Object(
  { environment: ApiKeyEnvironment, ...ListSettlementsQuery.properties },
  { additionalProperties: false },
);

export const developerPaymentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requirePartner;
  // The user's partner, in either environment: a settlement id names its own.
  const ownerOf = (partnerId: string) => ({ partnerId, environment: null });

  app.get(
    '/v1/developer/payments/balance',
    {
      onRequest,
      schema: {
        summary: 'Get the cash balance',
        description:
          "Your partner's cash on hand (collected, on no settlement yet) and what its settlements await, in the environment asked for.",
        tags,
        operationId: 'getDeveloperBalance',
        querystring: EnvironmentQuery,
        response: { 200: PartnerBalance, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => getPartnerBalance(deps, partnerIdOf(request), request.query.environment),
  );

  app.get(
    '/v1/developer/payment-intents',
    {
      onRequest,
      schema: {
        summary: 'List payment intents',
        description:
          'The payment intents of the orders assigned to any key of your partner in the environment asked for, newest first; ' +
          'the filters of GET /v1/partner/payment-intents.',
        tags,
        operationId: 'listDeveloperPaymentIntents',
        querystring: DeveloperPaymentIntentsQuery,
        response: { 200: PageOfPaymentIntent, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => {
      const { environment, ...filters } = request.query;
      return listPartnerPaymentIntents(deps, partnerIdOf(request), environment, filters);
    },
  );

  app.get(
    '/v1/developer/settlements',
    {
      onRequest,
      schema: {
        summary: 'List settlements',
        description: "Your partner's settlements in the environment asked for, newest first.",
        tags,
        operationId: 'listDeveloperSettlements',
        querystring: DeveloperSettlementsQuery,
        response: { 200: PageOfSettlement, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => {
      const { environment, ...filters } = request.query;
      return listSettlements(deps, { partnerId: partnerIdOf(request), environment }, filters);
    },
  );

  app.get(
    '/v1/developer/settlements/:id',
    {
      onRequest,
      schema: {
        summary: 'Get a settlement',
        description: "One of your partner's settlements (either environment); any other id answers 404.",
        tags,
        operationId: 'getDeveloperSettlement',
        params: SettlementIdParams,
        response: { 200: Settlement, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getSettlement(deps, ownerOf(partnerIdOf(request)), request.params.id),
  );

  app.get(
    '/v1/developer/settlements/:id/lines',
    {
      onRequest,
      schema: {
        summary: "List a settlement's lines",
        description: 'Collections, adjustments and remittances, oldest first.',
        tags,
        operationId: 'listDeveloperSettlementLines',
        params: SettlementIdParams,
        querystring: LinesQuery,
        response: { 200: PageOfSettlementLine, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getSettlementLines(deps, ownerOf(partnerIdOf(request)), request.params.id, request.query),
  );

  app.get(
    '/v1/developer/settlements/:id/lines.csv',
    {
      onRequest,
      schema: {
        summary: "Download a settlement's lines as CSV",
        description:
          'The same file as the partner API answers: text/csv (RFC 4180), a header row, then one row per line, oldest first; amounts are integer qəpik.',
        tags,
        operationId: 'downloadDeveloperSettlementLinesCsv',
        params: SettlementIdParams,
        response: {
          200: Type.String({ description: 'The CSV text', 'x-content-type': 'text/csv' }),
          ...errorResponses(401, 403, 'ERR_NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const csv = await settlementLinesCsv(deps, ownerOf(partnerIdOf(request)), request.params.id);
      return sendStatementCsv(reply, request.params.id, csv);
    },
  );

  app.get(
    '/v1/developer/orders/:code/payment-intent',
    {
      onRequest,
      schema: {
        summary: "Read an order's payment intent",
        description: 'The payment intent of an order assigned to any key of your partner (either environment); 404 otherwise.',
        tags,
        operationId: 'getDeveloperOrderPaymentIntent',
        params: OrderCodeParams,
        response: { 200: PaymentIntent, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getPartnerOrderIntent(deps, partnerIdOf(request), request.params.code),
  );
};
