/**
 * Partner order API (docs/decisions-log.md, 'Orders'): reads and logistics events. The sandbox simulator's partner routes are
 * in ../sandbox/.
 *
 * Authentication runs as an onRequest hook, before the body is even parsed, so the check order
 * (docs/decisions-log.md, 'API keys') holds for every input: key (401) → environment (403) → rate limit (429) → scope (403)
 * → input (400, malformed JSON included) → resource (404 / 403 / 409).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import {
  CreatePartnerOrderEventDto,
  IdempotencyHeaders,
  ListPartnerOrdersQuery,
  OrderCodeParams,
  PARTNER_ORDER_EVENT_EXAMPLES,
  PageOfPartnerOrder,
  PartnerOrder,
} from './orders.schemas.js';
import { getPartnerOrder, listPartnerOrders } from './orders.service.js';
import { recordPartnerEvent } from './partner-events.js';

export const partnerOrdersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;

  app.get(
    '/v1/partner/orders',
    {
      onRequest: app.partnerAuth('orders:read', { readsOrders: true }),
      schema: {
        summary: 'List orders',
        description:
          'Orders visible to the key (assigned to it, or all orders for a receivesAllOrders key), newest first. `customer` is filled only with scope orders:pii.',
        tags: ['partner'],
        operationId: 'listPartnerOrders',
        querystring: ListPartnerOrdersQuery,
        response: { 200: PageOfPartnerOrder, ...errorResponses('ERR_VALIDATION', 401, 403, 429) },
      },
    },
    async (request, reply) =>
      sendJson(reply, await listPartnerOrders(deps, apiKeyOf(request), app.environment, request.query, request.orderVersion)),
  );

  app.get(
    '/v1/partner/orders/:code',
    {
      onRequest: app.partnerAuth('orders:read', { readsOrders: true }),
      schema: {
        summary: 'Get an order',
        description: 'One order by code; 404 also when the key may not see it.',
        tags: ['partner'],
        operationId: 'getPartnerOrder',
        params: OrderCodeParams,
        response: { 200: PartnerOrder, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request, reply) =>
      sendJson(reply, await getPartnerOrder(deps, apiKeyOf(request), app.environment, request.params.code, request.orderVersion)),
  );

  app.post(
    '/v1/partner/orders/:code/events',
    {
      onRequest: app.partnerAuth('logistics:write'),
      schema: {
        summary: 'Report a logistics event',
        description:
          'PICKED_UP, EN_ROUTE, DELIVERED or FAILED on an order assigned to this key; answers the updated order. Optional Idempotency-Key header (24 h).',
        tags: ['partner'],
        operationId: 'createPartnerOrderEvent',
        params: OrderCodeParams,
        headers: IdempotencyHeaders,
        body: CreatePartnerOrderEventDto,
        bodyExamples: PARTNER_ORDER_EVENT_EXAMPLES,
        response: {
          201: PartnerOrder,
          ...errorResponses(
            'ERR_VALIDATION',
            'ERR_BAD_REQUEST',
            'ERR_COD_VARIANCE_NOTE_REQUIRED',
            401,
            'ERR_PARTNER_ORDER_NOT_ASSIGNED',
            'ERR_NOT_FOUND',
            'ERR_INVALID_TRANSITION',
            'ERR_DELIVERY_RETRY_LIMIT',
            'ERR_IDEMPOTENCY_CONFLICT',
            'ERR_CONFLICT',
            429,
          ),
        },
      },
    },
    async (request, reply) => {
      const result = await recordPartnerEvent(
        deps,
        apiKeyOf(request),
        app.environment,
        request.params.code,
        request.body,
        request.headers['idempotency-key'],
      );
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      reply.code(201);
      // A replay answers the stored answer (an object, serialised by the schema as usual).
      return typeof result.order === 'string' ? sendJson(reply, result.order) : reply.send(result.order);
    },
  );

  /**
   * Sends JSON rendered by PostgreSQL (migration 0006: keys in the schema's order, customer already
   * removed for keys without orders:pii) as the body: its text, or its UTF-8 bytes from the read cache.
   * A string or Buffer body with a JSON content type skips Fastify's serialiser, so the answer is not
   * parsed and printed again in Node; the response schemas stay declared for the OpenAPI document and
   * the contract test checks the real answers.
   */
  function sendJson(reply: FastifyReply, json: string | Buffer): FastifyReply {
    return reply.type('application/json; charset=utf-8').send(json);
  }
};
