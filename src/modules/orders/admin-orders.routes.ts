/**
 * Operator API for zones, orders and van batches (docs/decisions-log.md, 'Operator API'), ADMIN accounts only. Authentication
 * runs onRequest, before the body is parsed, so 401/403 precede any 400.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas.js';
import { changeBatchStatus, createBatch } from './batches.service.js';
import {
  AdminOrder,
  AssignOrderDto,
  Batch,
  BatchCodeParams,
  ChangeBatchStatusDto,
  ChangeOrderStatusDto,
  CreateBatchDto,
  CreateOrderDto,
  CreateZoneDto,
  OrderCodeParams,
  Zone,
} from './orders.schemas.js';
import { assignOrder, changeOrderStatus, createOrder, getAdminOrder } from './orders.service.js';
import { createZone } from './zones.service.js';

export const adminOrdersRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requireAdmin;

  app.post(
    '/v1/admin/zones',
    {
      onRequest,
      schema: {
        summary: 'Create a delivery zone',
        description: 'A zone orders can refer to (zoneId).',
        tags: ['admin'],
        operationId: 'createZone',
        body: CreateZoneDto,
        response: { 201: Zone, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403) },
      },
    },
    async (request, reply) => reply.code(201).send(await createZone(deps, request.body.name)),
  );

  app.post(
    '/v1/admin/orders',
    {
      onRequest,
      schema: {
        summary: 'Create an order',
        description:
          'A new order in PLACED, in the live or sandbox environment. codAmountQepik must be 0 for CARD and at most totalQepik; a COD order starts (and stays) UNPAID; an unknown zoneId answers 404.',
        tags: ['admin'],
        operationId: 'createOrder',
        body: CreateOrderDto,
        response: { 201: AdminOrder, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request, reply) => reply.code(201).send(await createOrder(deps, request.body)),
  );

  app.get(
    '/v1/admin/orders/:code',
    {
      onRequest,
      schema: {
        summary: 'Get an order',
        description:
          'The operator view of an order: every PartnerOrder field plus environment and assignedKeyId, customer always filled.',
        tags: ['admin'],
        operationId: 'getOrder',
        params: OrderCodeParams,
        response: { 200: AdminOrder, ...errorResponses(401, 403, 'ERR_NOT_FOUND') },
      },
    },
    async (request) => getAdminOrder(deps, request.params.code),
  );

  app.post(
    '/v1/admin/orders/:code/assign',
    {
      onRequest,
      schema: {
        summary: 'Assign an order to a partner key',
        description:
          'Sets the order’s key and partnerAssignedAt. Unknown key 404; a key of the other environment, a revoked or rotated-out key, or a finished order 409 ERR_CONFLICT.',
        tags: ['admin'],
        operationId: 'assignOrder',
        params: OrderCodeParams,
        body: AssignOrderDto,
        response: {
          200: AdminOrder,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT'),
        },
      },
    },
    async (request) => assignOrder(deps, request.params.code, request.body.apiKeyId),
  );

  app.post(
    '/v1/admin/orders/:code/status',
    {
      onRequest,
      schema: {
        summary: 'Move an order to another status',
        description: 'Platform transitions of the order state machine; any other move answers 409 ERR_INVALID_TRANSITION.',
        tags: ['admin'],
        operationId: 'changeOrderStatus',
        params: OrderCodeParams,
        body: ChangeOrderStatusDto,
        response: {
          200: AdminOrder,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_INVALID_TRANSITION'),
        },
      },
    },
    async (request) => changeOrderStatus(deps, request.params.code, request.body),
  );

  app.post(
    '/v1/admin/batches',
    {
      onRequest,
      schema: {
        summary: 'Create a van batch',
        description:
          'Groups orders of one environment into an OPEN batch. Unknown codes 404; an order already on an open or dispatched batch, or mixed environments, 409 ERR_CONFLICT.',
        tags: ['admin'],
        operationId: 'createBatch',
        body: CreateBatchDto,
        response: {
          201: Batch,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await createBatch(deps, request.body.orderCodes)),
  );

  app.post(
    '/v1/admin/batches/:code/status',
    {
      onRequest,
      schema: {
        summary: 'Move a batch to its next status',
        description:
          'OPEN → DISPATCHED → COMPLETED only, else 409 ERR_BATCH_INVALID_TRANSITION. Completing emits batch.completed.',
        tags: ['admin'],
        operationId: 'changeBatchStatus',
        params: BatchCodeParams,
        body: ChangeBatchStatusDto,
        response: {
          200: Batch,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_BATCH_INVALID_TRANSITION'),
        },
      },
    },
    async (request) => changeBatchStatus(deps, request.params.code, request.body.status),
  );
};
