/**
 * The sandbox simulator and the go-live checklist on the developer API (bearer token of a PARTNER
 * account): what the portal drives. The simulator routes act for one sandbox key of the partner, with
 * the same service functions as the partner routes (sandbox-partner.routes.ts), so a move made in the
 * portal is the move a partner's own call makes, webhooks and realtime events included. The sandbox's
 * money moves of the marketplace (closing a period, recording a remittance) act for the partner: a
 * settlement is the partner's, not a key's.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { Batch, ChangeBatchStatusDto, CreateBatchDto, PartnerOrder } from '../orders/orders.schemas.js';
import { SandboxRemittanceDto, Settlement, SettlementIdParams, SettlementLine } from '../payments/payments.schemas.js';
import { addRemittance, createSettlement } from '../payments/settlements.service.js';
import { keyChecklist } from './checklist.service.js';
import {
  CreateSandboxOrderDto,
  GoLiveChecklist,
  SandboxKeyBatchParams,
  SandboxKeyOrderParams,
  SandboxKeyParams,
  SandboxOrders,
  SandboxOverview,
  SandboxPlatformStatusDto,
} from './sandbox.schemas.js';
import { sandboxKeyOfPartner } from './sandbox-key.js';
import { bodyOptional } from './sandbox-partner.routes.js';
import { createSandboxBatch, movePlatformStatus, moveSandboxBatch, sandboxOverview } from './simulator.service.js';
import { createTestOrders } from './test-orders.js';

const tags = ['developer'];
const KEY_RULES =
  ' Acts for the sandbox key `id` of your partner: another partner’s key 404, a live key 409 ERR_CONFLICT, a revoked key 401 ERR_API_KEY_REVOKED, a key without logistics:write 403 ERR_API_KEY_SCOPE.';
/** The error answers every simulator route can give for its key. */
const KEY_ERRORS = [
  'ERR_VALIDATION',
  401,
  'ERR_API_KEY_REVOKED',
  403,
  'ERR_API_KEY_SCOPE',
  'ERR_NOT_FOUND',
  'ERR_CONFLICT',
] as const;

export const sandboxDeveloperRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  // onRequest: the caller is authenticated before the body is parsed or validated (401 before 400).
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/keys/:id/checklist',
    {
      onRequest,
      schema: {
        summary: 'Read the go-live checklist of a sandbox key',
        description:
          'What the key has proven in the sandbox, computed from what it really did: its requests (request log), its partner events (its orders’ timelines) and its webhooks’ deliveries. Each item carries when it was first met and a hint. A key’s rotation chain shares one checklist. A live key answers 409 ERR_CONFLICT.',
        tags,
        operationId: 'getDeveloperKeyChecklist',
        params: SandboxKeyParams,
        response: { 200: GoLiveChecklist, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_NOT_FOUND', 'ERR_CONFLICT') },
      },
    },
    async (request) => keyChecklist(deps, partnerIdOf(request), request.params.id),
  );

  app.get(
    '/v1/developer/keys/:id/sandbox',
    {
      onRequest,
      schema: {
        summary: 'Read the sandbox simulator of a key',
        description: `The key’s newest sandbox orders (50 at most) with the marketplace moves and partner events each allows now, and their van batches with the moves each allows.${KEY_RULES}`,
        tags,
        operationId: 'getSandboxOverview',
        params: SandboxKeyParams,
        response: { 200: SandboxOverview, ...errorResponses(...KEY_ERRORS) },
      },
    },
    async (request) => sandboxOverview(deps, await sandboxKeyOfPartner(deps, partnerIdOf(request), request.params.id)),
  );

  app.post(
    '/v1/developer/keys/:id/sandbox/orders',
    {
      onRequest,
      schema: {
        summary: 'Create sandbox test orders for a key',
        description: `As POST /v1/partner/sandbox/orders for the key, always answering \`{ items }\`.${KEY_RULES}`,
        tags,
        operationId: 'createDeveloperSandboxOrders',
        params: SandboxKeyParams,
        body: CreateSandboxOrderDto,
        response: { 201: SandboxOrders, ...errorResponses(...KEY_ERRORS, 'ERR_BAD_REQUEST') },
      },
    },
    async (request, reply) => {
      const key = await sandboxKeyOfPartner(deps, partnerIdOf(request), request.params.id);
      return reply.code(201).send({ items: await createTestOrders(deps, key, request.body) });
    },
  );

  app.post(
    '/v1/developer/keys/:id/sandbox/orders/:code/platform-status',
    {
      onRequest,
      schema: {
        summary: 'Move a key’s sandbox order as the marketplace',
        description: `As POST /v1/partner/sandbox/orders/{code}/platform-status for the key: a platform transition, else 409 ERR_INVALID_TRANSITION; only the key’s own sandbox orders (others 404).${KEY_RULES}`,
        tags,
        operationId: 'moveDeveloperSandboxOrder',
        params: SandboxKeyOrderParams,
        body: SandboxPlatformStatusDto,
        response: { 200: PartnerOrder, ...errorResponses(...KEY_ERRORS, 'ERR_BAD_REQUEST', 'ERR_INVALID_TRANSITION') },
      },
    },
    async (request) => {
      const key = await sandboxKeyOfPartner(deps, partnerIdOf(request), request.params.id);
      return movePlatformStatus(deps, key, request.params.code, request.body.status);
    },
  );

  app.post(
    '/v1/developer/keys/:id/sandbox/batches',
    {
      onRequest,
      schema: {
        summary: 'Put a key’s sandbox orders on a van batch',
        description: `As POST /v1/partner/sandbox/batches for the key.${KEY_RULES}`,
        tags,
        operationId: 'createDeveloperSandboxBatch',
        params: SandboxKeyParams,
        body: CreateBatchDto,
        response: { 201: Batch, ...errorResponses(...KEY_ERRORS, 'ERR_BAD_REQUEST') },
      },
    },
    async (request, reply) => {
      const key = await sandboxKeyOfPartner(deps, partnerIdOf(request), request.params.id);
      return reply.code(201).send(await createSandboxBatch(deps, key, request.body.orderCodes));
    },
  );

  app.post(
    '/v1/developer/keys/:id/sandbox/batches/:code/status',
    {
      onRequest,
      schema: {
        summary: 'Move a key’s sandbox van batch',
        description: `As POST /v1/partner/sandbox/batches/{code}/status for the key: OPEN → DISPATCHED → COMPLETED (batch.completed).${KEY_RULES}`,
        tags,
        operationId: 'moveDeveloperSandboxBatch',
        params: SandboxKeyBatchParams,
        body: ChangeBatchStatusDto,
        response: { 200: Batch, ...errorResponses(...KEY_ERRORS, 'ERR_BAD_REQUEST', 'ERR_BATCH_INVALID_TRANSITION') },
      },
    },
    async (request) => {
      const key = await sandboxKeyOfPartner(deps, partnerIdOf(request), request.params.id);
      return moveSandboxBatch(deps, key, request.params.code, request.body.status);
    },
  );
  app.post(
    '/v1/developer/sandbox/settlements',
    {
      onRequest,
      preValidation: bodyOptional,
      schema: {
        summary: 'Close the sandbox period now',
        description:
          "A settlement of your partner's sandbox collections up to now, as the marketplace makes one on the live side " +
          '(settlement.created). The same move as POST /v1/partner/sandbox/settlements, without a key. Twice at the same instant: 409 ERR_SETTLEMENT_EXISTS.',
        tags,
        operationId: 'createDeveloperSandboxSettlement',
        body: Type.Object({}, { additionalProperties: false }),
        bodyOptional: true,
        response: { 201: Settlement, ...errorResponses('ERR_VALIDATION', 401, 403, 'ERR_SETTLEMENT_EXISTS') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createSettlement(deps, partnerIdOf(request), 'SANDBOX', deps.clock.now().toISOString())),
  );

  app.post(
    '/v1/developer/sandbox/settlements/:id/remittances',
    {
      onRequest,
      schema: {
        summary: 'Remit on a sandbox settlement',
        description:
          'As the marketplace records a remittance: amountQepik ≥ 1, at most outstandingQepik (400 ERR_VALIDATION); SETTLED: 409 ' +
          "ERR_SETTLEMENT_INVALID_STATE. Only your partner's sandbox settlements; others 404.",
        tags,
        operationId: 'createDeveloperSandboxRemittance',
        params: SettlementIdParams,
        body: SandboxRemittanceDto,
        response: {
          201: SettlementLine,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_NOT_FOUND', 'ERR_SETTLEMENT_INVALID_STATE'),
        },
      },
    },
    async (request, reply) => {
      const owner = { partnerId: partnerIdOf(request), environment: 'SANDBOX' as const };
      return reply.code(201).send(await addRemittance(deps, owner, request.params.id, request.body));
    },
  );
};
