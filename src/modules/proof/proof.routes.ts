/**
 * Proof reads (docs/tracking-and-proof.md, "Proof reads"): the proof of an order's latest event that
 * carried one, for the partner (orders:read, the visibility of orders) and the operator.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import { scopeOf } from '../orders/visibility.js';
import { findProofByCode, findVisibleProof } from './proof.repo.js';
import { OrderProof } from './proof.schemas.js';

export const proofRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;

  app.get(
    '/v1/partner/orders/:code/proof',
    {
      onRequest: app.partnerAuth('orders:read'),
      schema: {
        summary: 'Read the proof of delivery',
        description:
          "The proof of the order's latest DELIVERED or FAILED event that carried one: location, distance from " +
          'the address, photos (their bytes: GET /v1/partner/uploads/{id}), recipient. 404 when the key does ' +
          'not see the order or it has no proof.',
        tags: ['partner'],
        operationId: 'getPartnerOrderProof',
        params: OrderCodeParams,
        response: { 200: OrderProof, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => {
      const proof = await findVisibleProof(scopeOf(apiKeyOf(request), app.environment), request.params.code, ctx.db);
      if (!proof) throw notFound('Proof');
      return proof;
    },
  );

  app.get(
    '/v1/admin/orders/:code/proof',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: "Read an order's proof of delivery",
        description: 'As the partner read, for any order.',
        tags: ['admin'],
        operationId: 'getAdminOrderProof',
        params: OrderCodeParams,
        response: { 200: OrderProof, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => {
      const proof = await findProofByCode(request.params.code, ctx.db);
      if (!proof) throw notFound('Proof');
      return proof;
    },
  );
};
