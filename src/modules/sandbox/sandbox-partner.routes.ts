/**
 * The sandbox simulator on the partner API (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'): test orders, and the marketplace's moves on
 * the key's sandbox orders. SANDBOX keys with logistics:write only; on the live API every route answers
 * 403 ERR_API_KEY_ENVIRONMENT where the environment check stands (`onlyOn`), before anything else.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import {
  Batch,
  BatchCodeParams,
  ChangeBatchStatusDto,
  CreateBatchDto,
  OrderCodeParams,
  PartnerOrder,
} from '../orders/orders.schemas.js';
import { CreateSandboxOrderDto, SandboxOrders, SandboxPlatformStatusDto } from './sandbox.schemas.js';
import { createSandboxBatch, movePlatformStatus, moveSandboxBatch } from './simulator.service.js';
import { createTestOrders } from './test-orders.js';

const tags = ['partner'];

/** preValidation of a route whose body is optional: a bodiless POST means "all defaults". */
export async function bodyOptional(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
const SANDBOX_ONLY = ' Sandbox API only (SANDBOX keys with logistics:write); on the live API: 403 ERR_API_KEY_ENVIRONMENT.';
const OWN_ORDERS = ' Only orders assigned to this key; any other code answers 404.';

export const sandboxPartnerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.partnerAuth('logistics:write', { onlyOn: 'SANDBOX' });

  app.post(
    '/v1/partner/sandbox/orders',
    {
      onRequest,
      preValidation: bodyOptional,
      schema: {
        summary: 'Create a sandbox test order',
        description: `Creates realistic test orders assigned to this key, in status PACKED unless \`status\` says otherwise, with the timeline a real order has on reaching it. Emits order.placed and order.assigned_to_partner. Answers the order, or \`{ items }\` when \`count\` is above 1.${SANDBOX_ONLY}`,
        tags,
        operationId: 'createSandboxOrder',
        body: CreateSandboxOrderDto,
        bodyOptional: true,
        response: {
          201: Type.Union([PartnerOrder, SandboxOrders], { description: 'the order, or { items } when count > 1' }),
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      const orders = await createTestOrders(deps, apiKeyOf(request), request.body);
      return reply.code(201).send((request.body.count ?? 1) > 1 ? { items: orders } : orders[0]);
    },
  );

  app.post(
    '/v1/partner/sandbox/orders/:code/platform-status',
    {
      onRequest,
      schema: {
        summary: 'Move a sandbox order as the marketplace',
        description: `The marketplace's own transition of the order state machine (vendor accepts, runner pickup, hub, packing, van, delivery outcome, return after a failure, cancellation), with the webhooks and realtime events the real move emits (order.status_changed, plus order.delivered or order.cancelled). A transition the state machine forbids: 409 ERR_INVALID_TRANSITION.${OWN_ORDERS}${SANDBOX_ONLY}`,
        tags,
        operationId: 'moveSandboxOrder',
        params: OrderCodeParams,
        body: SandboxPlatformStatusDto,
        response: {
          200: PartnerOrder,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_INVALID_TRANSITION', 429),
        },
      },
    },
    async (request) => movePlatformStatus(deps, apiKeyOf(request), request.params.code, request.body.status),
  );

  app.post(
    '/v1/partner/sandbox/batches',
    {
      onRequest,
      schema: {
        summary: 'Put sandbox orders on a van batch',
        description: `A new OPEN van batch of this key's sandbox orders. Codes that are not this key's sandbox orders: 404 (details.orderCodes lists them); an order already on an OPEN or DISPATCHED batch: 409 ERR_CONFLICT.${SANDBOX_ONLY}`,
        tags,
        operationId: 'createSandboxBatch',
        body: CreateBatchDto,
        response: {
          201: Batch,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT', 429),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createSandboxBatch(deps, apiKeyOf(request), request.body.orderCodes)),
  );

  app.post(
    '/v1/partner/sandbox/batches/:code/status',
    {
      onRequest,
      schema: {
        summary: 'Move a sandbox van batch',
        description: `OPEN → DISPATCHED → COMPLETED, else 409 ERR_BATCH_INVALID_TRANSITION. Completing emits batch.completed. Only batches whose orders are all this key's sandbox orders; any other code answers 404.${SANDBOX_ONLY}`,
        tags,
        operationId: 'moveSandboxBatch',
        params: BatchCodeParams,
        body: ChangeBatchStatusDto,
        response: {
          200: Batch,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_BATCH_INVALID_TRANSITION', 429),
        },
      },
    },
    async (request) => moveSandboxBatch(deps, apiKeyOf(request), request.params.code, request.body.status),
  );
};
