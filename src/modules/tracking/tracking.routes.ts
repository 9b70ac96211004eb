/**
 * Courier tracking routes (docs/tracking-and-proof.md): location pings and the partner and operator
 * tracking reads.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { OrderCodeParams } from '../orders/orders.schemas.js';
import { CreateLocationsDto, LocationsAccepted, OrderTracking } from './tracking.schemas.js';
import { getAdminTracking, getPartnerTracking, recordLocations } from './tracking.service.js';

export const trackingRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const ctx = app.ctx;

  app.post(
    '/v1/partner/orders/:code/locations',
    {
      onRequest: app.partnerAuth('logistics:write', { readsOrders: true }),
      schema: {
        summary: "Send the courier's locations",
        description:
          'Courier positions of an order assigned to this key while it is SCANNED_TO_VAN, EN_ROUTE or FAILED ' +
          '(else 409 ERR_INVALID_TRANSITION): 1 to 100 points, oldest first, and optionally the ETA. Points ' +
          'older than the latest one are ignored (counted in the X-Points-Ignored header). Stored in ' +
          'batches: at most one trail point per order per 5 s of the points’ times.',
        tags: ['partner'],
        operationId: 'createPartnerOrderLocations',
        params: OrderCodeParams,
        body: CreateLocationsDto,
        response: {
          202: LocationsAccepted,
          ...errorResponses(
            'ERR_VALIDATION',
            'ERR_BAD_REQUEST',
            401,
            'ERR_PARTNER_ORDER_NOT_ASSIGNED',
            'ERR_NOT_FOUND',
            'ERR_INVALID_TRANSITION',
            429,
          ),
        },
      },
    },
    async (request, reply) => {
      const { accepted, ignored } = await recordLocations(
        ctx,
        apiKeyOf(request),
        app.environment,
        request.params.code,
        request.body,
        request.orderVersion,
      );
      return reply.code(202).header('X-Points-Ignored', String(ignored)).send({ accepted });
    },
  );

  app.get(
    '/v1/partner/orders/:code/tracking',
    {
      onRequest: app.partnerAuth('orders:read'),
      schema: {
        summary: "Read the courier's position",
        description: 'The latest position, the ETA and the last 50 trail points of an order the key sees (404 otherwise).',
        tags: ['partner'],
        operationId: 'getPartnerOrderTracking',
        params: OrderCodeParams,
        response: { 200: OrderTracking, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request) => getPartnerTracking(ctx, apiKeyOf(request), app.environment, request.params.code),
  );

  app.get(
    '/v1/admin/orders/:code/tracking',
    {
      onRequest: app.requireAdmin,
      schema: {
        summary: "Read an order's courier position",
        description: 'As the partner read, for any order.',
        tags: ['admin'],
        operationId: 'getAdminOrderTracking',
        params: OrderCodeParams,
        response: { 200: OrderTracking, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getAdminTracking(ctx, request.params.code),
  );
};
