/**
 * Offers on the partner API (docs/offers.md), both deployments: each key sees only the offers made to
 * itself (another key's or partner's: 404). Reads need orders:read, decisions logistics:write; sandbox
 * offers on demand are on the sandbox API only. Authentication runs onRequest: key (401) → environment
 * (403) → rate limit (429) → scope (403) → input (400) → resource (404) → state (409).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { IdempotencyHeaders } from '../orders/orders.schemas.js';
import {
  BulkAcceptOffersDto,
  BulkAcceptOffersResult,
  type DeclineOfferDto as DeclineBody,
  DeclineOfferDto,
  ListPartnerOffersQuery,
  OfferIdParams,
  PageOfPartnerOffer,
  PartnerOffer,
  SandboxOffers,
  SandboxOffersDto,
} from './offers.schemas.js';
import { acceptOffer, acceptOffers, declineOffer, getKeyOffer, keyDecider, listKeyOffers } from './offers.service.js';
import { createSandboxOffers } from './sandbox-offers.js';

const tags = ['partner'];

/** The errors of a decision (accept, decline), shared with the developer routes. */
export const DECISION_ERRORS = ['ERR_NOT_FOUND', 'ERR_OFFER_CLOSED', 'ERR_CONFLICT', 'ERR_IDEMPOTENCY_CONFLICT'] as const;

export const DECLINE_EXAMPLES: Record<string, { summary: string; value: DeclineBody }> = {
  noCapacity: { summary: 'No van free in that time window', value: { reason: 'NO_CAPACITY' } },
  outOfArea: { summary: 'The address is outside your coverage', value: { reason: 'OUT_OF_AREA' } },
  other: {
    summary: 'OTHER, with the note it needs',
    value: { reason: 'OTHER', note: 'Our van for that district is in repair until Monday' },
  },
};

export const offersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const read = app.partnerAuth('orders:read');
  const write = app.partnerAuth('logistics:write');

  app.get(
    '/v1/partner/offers',
    {
      onRequest: read,
      schema: {
        summary: 'List offers',
        description:
          'The offers made to this key, newest first. An offer past its expiresAt reads EXPIRED at once. An offer shows its order without the customer (no name, phone or street).',
        tags,
        operationId: 'listOffers',
        querystring: ListPartnerOffersQuery,
        response: { 200: PageOfPartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, 429) },
      },
    },
    async (request) => listKeyOffers(deps, apiKeyOf(request), request.query),
  );

  app.get(
    '/v1/partner/offers/:id',
    {
      onRequest: read,
      schema: {
        summary: 'Get an offer',
        description: 'One offer made to this key; any other id answers 404.',
        tags,
        operationId: 'getOffer',
        params: OfferIdParams,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => getKeyOffer(deps, apiKeyOf(request), request.params.id),
  );

  app.post(
    '/v1/partner/offers/accept',
    {
      onRequest: write,
      schema: {
        summary: 'Accept several offers',
        description:
          'Accepts 1 to 100 distinct offers, each on its own: one result per id, in the order given, with the accepted offer or the error that id would have answered alone (ERR_NOT_FOUND, ERR_OFFER_CLOSED, ERR_CONFLICT).',
        tags,
        operationId: 'acceptOffers',
        body: BulkAcceptOffersDto,
        response: { 200: BulkAcceptOffersResult, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 429) },
      },
    },
    async (request) => acceptOffers(deps, keyDecider(apiKeyOf(request)), request.body.ids),
  );

  app.post(
    '/v1/partner/offers/:id/accept',
    {
      onRequest: write,
      schema: {
        summary: 'Accept an offer',
        description:
          'The PENDING offer becomes ACCEPTED and, in the same transaction, its order is assigned to this key exactly as an operator assigns it (order.assigned_to_partner webhook; partnerAssignedAt = decidedAt): read it with GET /v1/partner/orders/{code}. Accepting an offer this key already accepted answers it again. Not PENDING, or past expiresAt: 409 ERR_OFFER_CLOSED with details.status. Optional Idempotency-Key (24 h).',
        tags,
        operationId: 'acceptOffer',
        params: OfferIdParams,
        headers: IdempotencyHeaders,
        response: { 200: PartnerOffer, ...errorResponses('ERR_VALIDATION', 401, 403, ...DECISION_ERRORS, 429) },
      },
    },
    async (request, reply) => {
      const result = await acceptOffer(
        deps,
        keyDecider(apiKeyOf(request)),
        request.params.id,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.offer;
    },
  );

  app.post(
    '/v1/partner/offers/:id/decline',
    {
      onRequest: write,
      schema: {
        summary: 'Decline an offer',
        description:
          'The PENDING offer becomes DECLINED with its reason (and note, up to 500 characters, required for OTHER); the order stays unassigned for the operator to offer elsewhere. Not PENDING, or past expiresAt: 409 ERR_OFFER_CLOSED with details.status. Optional Idempotency-Key (24 h).',
        tags,
        operationId: 'declineOffer',
        params: OfferIdParams,
        headers: IdempotencyHeaders,
        body: DeclineOfferDto,
        bodyExamples: DECLINE_EXAMPLES,
        response: {
          200: PartnerOffer,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, ...DECISION_ERRORS, 429),
        },
      },
    },
    async (request, reply) => {
      const result = await declineOffer(
        deps,
        keyDecider(apiKeyOf(request)),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return result.offer;
    },
  );

  app.post(
    '/v1/partner/sandbox/offers',
    {
      onRequest: app.partnerAuth('logistics:write', { onlyOn: 'SANDBOX' }),
      schema: {
        summary: 'Create sandbox offers',
        description:
          'Creates 1 to 20 realistic unassigned sandbox orders (PACKED) and offers each to this key (ttlSec 60 to 86400, default 900), with their offer.created webhooks: practise accepting and declining. Sandbox API only (SANDBOX keys with logistics:write); on the live API: 403 ERR_API_KEY_ENVIRONMENT.',
        tags,
        operationId: 'createSandboxOffers',
        body: SandboxOffersDto,
        response: { 201: SandboxOffers, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await createSandboxOffers(deps, apiKeyOf(request), request.body)),
  );
};
