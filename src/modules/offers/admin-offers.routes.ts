/**
 * The operator's offers (docs/offers.md), ADMIN accounts only: offer an order to a key, withdraw, list,
 * and a partner's acceptance statistics. Authentication runs onRequest, so 401/403 precede any 400.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponses, PARTNER_ENVIRONMENTS, StringEnum, Uuid } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import {
  CreateOfferDto,
  ListAdminOffersQuery,
  OfferIdParams,
  OfferStats,
  OfferStatsQuery,
  PageOfPartnerOffer,
  PartnerOffer,
} from './offers.schemas.js';
import { createOffer, getAdminOffer, getOfferStats, listAdminOffers, withdrawOffer } from './offers.service.js';

const tags = ['admin'];

const AdminOfferStatsQuery = Type.Object(
  {
    ...OfferStatsQuery.properties,
    environment: Type.Optional(StringEnum(PARTNER_ENVIRONMENTS, { description: 'the offers of this environment; default live' })),
  },
  { additionalProperties: false },
);

export const adminOffersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requireAdmin;

  app.post(
    '/v1/admin/orders/:code/offers',
    {
      onRequest,
      schema: {
        summary: 'Offer an order to a key',
        description:
          'Offers the unassigned order to one key until now + ttlSec (60 to 86400 s, default 900): the key accepts (the order becomes assigned to it) or declines. 409 ERR_CONFLICT when the order is assigned, already has an open offer, or is not in PLACED…PACKED, or the key is revoked, of the other environment, or lacks logistics:write. Emits offer.created.',
        tags,
        operationId: 'createOffer',
        params: OrderCodeParams,
        body: CreateOfferDto,
        bodyExamples: {
          fifteenMinutes: {
            summary: 'Offer for 15 minutes (the default)',
            value: { apiKeyId: '3f1c2b9e-8d4a-4e6b-9c1f-2a7d5e8b0c13', ttlSec: 900 },
          },
        },
        response: {
          201: PartnerOffer,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createOffer(deps, request.params.code, request.body)),
  );

  app.get(
    '/v1/admin/offers',
    {
      onRequest,
      schema: {
        summary: 'List offers',
        description: 'Every offer, newest first, by status, partner or order.',
        tags,
        operationId: 'listAdminOffers',
        querystring: ListAdminOffersQuery,
        response: { 200: PageOfPartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => listAdminOffers(deps, request.query),
  );

  app.get(
    '/v1/admin/offers/:id',
    {
      onRequest,
      schema: {
        summary: 'Get an offer',
        tags,
        operationId: 'getAdminOffer',
        params: OfferIdParams,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getAdminOffer(deps, request.params.id),
  );

  app.delete(
    '/v1/admin/offers/:id',
    {
      onRequest,
      schema: {
        summary: 'Withdraw an offer',
        description:
          'The PENDING offer becomes WITHDRAWN (emits offer.withdrawn); any other: 409 ERR_OFFER_CLOSED with details.status.',
        tags,
        operationId: 'withdrawOffer',
        params: OfferIdParams,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 'ERR_OFFER_CLOSED') },
      },
    },
    async (request) => withdrawOffer(deps, request.params.id),
  );

  app.get(
    '/v1/admin/partners/:id/offer-stats',
    {
      onRequest,
      schema: {
        summary: "A partner's offer statistics",
        description:
          'How the partner answered the offers made in the last `days` (1 to 90, default 30) in one environment (default live): counts, acceptance rate (accepted ÷ accepted, declined or expired), decision time p50/p90, decline reasons.',
        tags,
        operationId: 'getOfferStats',
        params: Type.Object({ id: Uuid({ description: 'partner id' }) }),
        querystring: AdminOfferStatsQuery,
        response: { 200: OfferStats, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getOfferStats(deps, request.params.id, request.query),
  );
};
