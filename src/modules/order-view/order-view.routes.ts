/**
 * GET /v1/developer/orders/{code}: the portal's order page (bearer, PARTNER accounts). Orders assigned to
 * any key of the user's partner, in either environment; any other code answers 404.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import { DeveloperOrderView } from './order-view.schemas.js';
import { getDeveloperOrderView } from './order-view.service.js';

export const orderViewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/developer/orders/:code',
    {
      onRequest: app.requirePartner,
      schema: {
        summary: 'Read an order with its tracking, payment and proof',
        description:
          'An order assigned to any key of your partner (either environment), as that key sees it, with where its courier is, ' +
          'its payment intent and every refund, and its proof of delivery. 404 when the order is not one of your keys’ (or does not exist); ' +
          'a part that has nothing yet is null or empty.',
        tags: ['developer'],
        operationId: 'getDeveloperOrder',
        params: OrderCodeParams,
        response: { 200: DeveloperOrderView, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getDeveloperOrderView(app.ctx, partnerIdOf(request), request.params.code),
  );
};
