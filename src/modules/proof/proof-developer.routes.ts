/**
 * The proof of delivery for the partner's own users (bearer, PARTNER accounts): what the developer
 * portal shows (docs/tracking-and-proof.md, "Proof reads"). Orders assigned to any key of the user's
 * partner, in either environment; photos of the partner.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../../errors.js';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import { sendUpload } from '../uploads/upload-reply.js';
import { PhotoBytes, UploadIdParams } from '../uploads/uploads.schemas.js';
import { getUpload } from '../uploads/uploads.service.js';
import { findPartnerProof } from './proof.repo.js';
import { OrderProof } from './proof.schemas.js';

export const proofDeveloperRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;
  app.get(
    '/v1/developer/orders/:code/proof',
    {
      onRequest: app.requirePartner,
      schema: {
        summary: "Read an order's proof of delivery",
        description:
          'The proof of the latest DELIVERED or FAILED that carried one, for an order assigned to any key of your partner; 404 otherwise or when it has none.',
        tags: ['developer'],
        operationId: 'getDeveloperOrderProof',
        params: OrderCodeParams,
        response: { 200: OrderProof, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => {
      const proof = await findPartnerProof(partnerIdOf(request), request.params.code, ctx.db);
      if (!proof) throw notFound('Proof');
      return proof;
    },
  );

  app.get(
    '/v1/developer/uploads/:id',
    {
      onRequest: app.requirePartner,
      schema: {
        summary: 'Download a photo',
        description: 'The bytes of an upload of your partner (a proof photo); another partner’s answers 404.',
        tags: ['developer'],
        operationId: 'getDeveloperUpload',
        params: UploadIdParams,
        response: { 200: PhotoBytes, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request, reply) => {
      return sendUpload(reply, await getUpload(ctx, partnerIdOf(request), request.params.id));
    },
  );
};
