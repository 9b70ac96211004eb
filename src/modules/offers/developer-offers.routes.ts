/**
 * Offers for the partner's own users (bearer, PARTNER accounts): the portal's Offers page (docs/offers.md).
 * The list covers every key of the user's partner; accepting and declining are for SANDBOX offers only
 * (a live offer: 409 ERR_CONFLICT, it is decided by the partner's own systems with its key), with the
 * same rules and answers as the partner routes. Another partner's offer answers 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { IdempotencyHeaders } from '../orders/orders.schemas.js';
import { DECISION_ERRORS, DECLINE_EXAMPLES } from './offers.routes.js';
import { DeclineOfferDto, ListDeveloperOffersQuery, OfferIdParams, PageOfPartnerOffer, PartnerOffer } from './offers.schemas.js';
import { acceptOffer, declineOffer, developerDecider, listPartnerOffers } from './offers.service.js';

const tags = ['developer'];

const deciderOf = (request: FastifyRequest) => developerDecider(partnerIdOf(request), request.principal?.userId as string);

export const developerOffersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/offers',
    {
      onRequest,
      schema: {
        summary: 'List offers',
        description: "The offers made to your partner's keys (both environments), newest first; `apiKeyId` narrows to one key.",
        tags,
        operationId: 'listDeveloperOffers',
        querystring: ListDeveloperOffersQuery,
        response: { 200: PageOfPartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403) },
      },
    },
    async (request) => listPartnerOffers(deps, partnerIdOf(request), request.query),
  );

  app.post(
    '/v1/developer/offers/:id/accept',
    {
      onRequest,
      schema: {
        summary: 'Accept a sandbox offer',
        description:
          'As POST /v1/partner/offers/{id}/accept, for a sandbox offer made to one of your keys; a live offer: 409 ERR_CONFLICT.',
        tags,
        operationId: 'acceptDeveloperOffer',
        params: OfferIdParams,
        headers: IdempotencyHeaders,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, ...DECISION_ERRORS) },
      },
    },
    async (request, reply) => {
      const result = await acceptOffer(deps, deciderOf(request), request.params.id, request.headers['idempotency-key']);
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.offer;
    },
  );

  app.post(
    '/v1/developer/offers/:id/decline',
    {
      onRequest,
      schema: {
        summary: 'Decline a sandbox offer',
        description:
          'As POST /v1/partner/offers/{id}/decline, for a sandbox offer made to one of your keys; a live offer: 409 ERR_CONFLICT.',
        tags,
        operationId: 'declineDeveloperOffer',
        params: OfferIdParams,
        headers: IdempotencyHeaders,
        body: DeclineOfferDto,
        bodyExamples: DECLINE_EXAMPLES,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, ...DECISION_ERRORS) },
      },
    },
    async (request, reply) => {
      const result = await declineOffer(
        deps,
        deciderOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.offer;
    },
  );
};
