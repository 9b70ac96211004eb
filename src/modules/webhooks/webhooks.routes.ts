/**
 * Developer webhook routes (docs/decisions-log.md, 'Webhooks'): bearer token of a PARTNER account. Thin handlers: the signed-in
 * partner, one service call, its result.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { webhookOperationsRoutes } from './webhook-operations.routes.js';
import {
  CreateDeveloperWebhookDto,
  DeliveriesQuery,
  DeliveryIdParams,
  DeveloperDelivery,
  DeveloperWebhook,
  DeveloperWebhookCreated,
  DeveloperWebhooks,
  IdParams,
  PageOfDeveloperDelivery,
  TestWebhookDto,
  UpdateDeveloperWebhookDto,
} from './webhooks.schemas.js';
import {
  createWebhook,
  deletePartnerWebhook,
  listPartnerWebhooks,
  listWebhookDeliveries,
  redeliver,
  sendTestEvent,
  updatePartnerWebhook,
} from './webhooks.service.js';

const tags = ['developer'];

export const webhooksRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  // onRequest, not preHandler: the caller is authenticated before the body is parsed or validated,
  // so an anonymous or non-partner request gets 401/403 whatever it sends.
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/webhooks',
    {
      onRequest,
      schema: {
        summary: 'List webhooks',
        description: "The webhooks of all the partner's keys.",
        tags,
        operationId: 'listWebhooks',
        response: { 200: DeveloperWebhooks, ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ items: await listPartnerWebhooks(deps, partnerIdOf(request)) }),
  );

  app.post(
    '/v1/developer/webhooks',
    {
      onRequest,
      schema: {
        summary: 'Create a webhook',
        description:
          'Registers an endpoint for one of your keys (the key must carry webhooks:manage; at most 5 per key). ' +
          'The signing secret is returned only in this response.',
        tags,
        operationId: 'createWebhook',
        body: CreateDeveloperWebhookDto,
        response: {
          201: DeveloperWebhookCreated,
          ...errorResponses(
            'ERR_VALIDATION',
            'ERR_BAD_REQUEST',
            'ERR_WEBHOOK_URL_INVALID',
            401,
            'ERR_API_KEY_SCOPE',
            404,
            'ERR_WEBHOOK_LIMIT',
          ),
        },
      },
    },
    async (request, reply) => {
      const created = await createWebhook(deps, partnerIdOf(request), request.body);
      return reply.status(201).send(created);
    },
  );

  app.patch(
    '/v1/developer/webhooks/:id',
    {
      onRequest,
      // Every field is optional, so a PATCH without any body is an empty change, not a malformed one.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Update a webhook',
        description: 'Changes the URL, the events, or switches the endpoint on or off (on also clears its failure streak).',
        tags,
        operationId: 'updateWebhook',
        params: IdParams,
        body: UpdateDeveloperWebhookDto,
        response: {
          200: DeveloperWebhook,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 'ERR_WEBHOOK_URL_INVALID', 401, 'ERR_API_KEY_SCOPE', 404),
        },
      },
    },
    async (request) => updatePartnerWebhook(deps, partnerIdOf(request), request.params.id, request.body),
  );

  app.delete(
    '/v1/developer/webhooks/:id',
    {
      onRequest,
      schema: {
        summary: 'Delete a webhook',
        description: 'Removes the webhook and its delivery history.',
        tags,
        operationId: 'deleteWebhook',
        params: IdParams,
        response: {
          204: Type.Null({ description: 'No body' }),
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_SCOPE', 404),
        },
      },
    },
    async (request, reply) => {
      await deletePartnerWebhook(deps, partnerIdOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/developer/webhooks/:id/deliveries',
    {
      onRequest,
      schema: {
        summary: 'List deliveries',
        description: "The webhook's delivery log, newest first, optionally by status.",
        tags,
        operationId: 'listWebhookDeliveries',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: { 200: PageOfDeveloperDelivery, ...errorResponses(400, 401, 'ERR_API_KEY_SCOPE', 404) },
      },
    },
    async (request) => listWebhookDeliveries(deps, partnerIdOf(request), request.params.id, request.query),
  );

  app.post(
    '/v1/developer/webhooks/:id/test',
    {
      onRequest,
      // The body is optional: none sends a ping.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Send a test event',
        description:
          'Queues a really signed sample event through the normal delivery path: a `ping` (the default) or a realistic sample of ' +
          'any WebhookEvent (`event`), its envelope id starting with `evt_test_`. Poll the deliveries list for the outcome.',
        tags,
        operationId: 'testWebhook',
        params: IdParams,
        body: TestWebhookDto,
        bodyOptional: true,
        response: {
          200: DeveloperDelivery,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_SCOPE', 404, 'ERR_WEBHOOK_DISABLED'),
        },
      },
    },
    async (request) => sendTestEvent(deps, partnerIdOf(request), request.params.id, request.body.event),
  );

  app.post(
    '/v1/developer/deliveries/:id/redeliver',
    {
      onRequest,
      schema: {
        summary: 'Redeliver',
        description:
          'Queues a delivery again: PENDING, attempts reset to 0, sent at once with the same event id and a fresh signature.',
        tags,
        operationId: 'redeliverDelivery',
        params: DeliveryIdParams,
        response: {
          200: DeveloperDelivery,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_SCOPE', 404),
        },
      },
    },
    async (request) => redeliver(deps, partnerIdOf(request), request.params.id),
  );

  await app.register(webhookOperationsRoutes);
};
