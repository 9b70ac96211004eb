/**
 * Webhook operations (docs/decisions-log.md, 'Webhook operations'): a delivery's detail, recover, secret rotation and form, health (bearer
 * token of a PARTNER account), and the public event catalog. Registered by webhooks.routes.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { PrecompressedBody } from '../../shared/precompressed.js';
import { errorResponses } from '../../shared/schemas.js';
import { EventTypes, eventCatalog } from './event-catalog.js';
import {
  getDeliveryDetail,
  getDeliveryRequestHeaders,
  getSigningSecretForm,
  getWebhookHealth,
  recoverDeliveries,
  rotateSecret,
} from './webhook-operations.service.js';
import {
  DeliveryIdParams,
  DeliveryRequestHeaders,
  DeveloperDeliveryDetail,
  DeveloperWebhookRotated,
  IdParams,
  RecoverDeliveriesDto,
  RecoverQueued,
  RotateWebhookSecretDto,
  WebhookHealth,
  WebhookSigningSecret,
} from './webhooks.schemas.js';

const tags = ['developer'];

export const webhookOperationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = app.ctx;
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/deliveries/:id',
    {
      onRequest,
      schema: {
        summary: 'Get a delivery with its attempts',
        description:
          'The delivery, its body exactly as sent and signed (`payload`), and every attempt, oldest first: when, how long, ' +
          'the headers sent, and what the endpoint answered (status, headers, the first 4 KiB of the body).',
        tags,
        operationId: 'getDelivery',
        params: DeliveryIdParams,
        response: { 200: DeveloperDeliveryDetail, ...errorResponses(400, 401, 'ERR_API_KEY_SCOPE', 404) },
      },
    },
    async (request) => getDeliveryDetail(deps, partnerIdOf(request), request.params.id),
  );

  app.get(
    '/v1/developer/deliveries/:id/request-headers',
    {
      onRequest,
      schema: {
        summary: 'Get the headers each attempt sent',
        description:
          'Every header of each attempt’s request as the endpoint got it, oldest attempt first: Content-Type, User-Agent, the ' +
          'X-Partner-* and Standard Webhooks headers, Host, Connection and Content-Length (the delivery’s `requestHeaders` ' +
          'keep to Content-Type and X-Partner-*). Same rules as GET /v1/developer/deliveries/{id}.',
        tags,
        operationId: 'getDeliveryRequestHeaders',
        params: DeliveryIdParams,
        response: { 200: DeliveryRequestHeaders, ...errorResponses(400, 401, 'ERR_API_KEY_SCOPE', 404) },
      },
    },
    async (request) => getDeliveryRequestHeaders(deps, partnerIdOf(request), request.params.id),
  );

  app.post(
    '/v1/developer/webhooks/:id/recover',
    {
      onRequest,
      schema: {
        summary: 'Recover failed deliveries',
        description:
          'Queues again, as redeliver does, every FAILED or DEAD delivery of the webhook created in [since, until): ' +
          'oldest first, a batch at a time, so a large recovery neither holds up the queue nor other endpoints. ' +
          'Answers how many matched.',
        tags,
        operationId: 'recoverWebhookDeliveries',
        params: IdParams,
        body: RecoverDeliveriesDto,
        response: {
          202: RecoverQueued,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_SCOPE', 404, 'ERR_WEBHOOK_DISABLED'),
        },
      },
    },
    async (request, reply) => {
      const queued = await recoverDeliveries(deps, partnerIdOf(request), request.params.id, request.body);
      return reply.status(202).send(queued);
    },
  );

  app.post(
    '/v1/developer/webhooks/:id/rotate-secret',
    {
      onRequest,
      // graceHours is optional: no body at all rotates with the default grace.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Rotate the signing secret',
        description:
          'A new signing secret, returned only in this response. The previous one keeps signing too until ' +
          '`previousSecretExpiresAt` (graceHours, default 24): meanwhile `X-Partner-Signature` is `t=…,v1=<new>,v1=<old>`. ' +
          'At most two secrets at once: rotating again ends the older grace.',
        tags,
        operationId: 'rotateWebhookSecret',
        params: IdParams,
        body: RotateWebhookSecretDto,
        bodyOptional: true,
        response: {
          200: DeveloperWebhookRotated,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_SCOPE', 404),
        },
      },
    },
    async (request) => rotateSecret(deps, partnerIdOf(request), request.params.id, request.body),
  );

  app.get(
    '/v1/developer/webhooks/:id/health',
    {
      onRequest,
      schema: {
        summary: 'Endpoint health',
        description:
          'Attempts of the last 24 hours (delivered, failed, dead, success rate, p50/p99 duration), the latest success and failure, the dead streak.',
        tags,
        operationId: 'getWebhookHealth',
        params: IdParams,
        response: { 200: WebhookHealth, ...errorResponses(400, 401, 'ERR_API_KEY_SCOPE', 404) },
      },
    },
    async (request) => getWebhookHealth(deps, partnerIdOf(request), request.params.id),
  );

  app.get(
    '/v1/developer/webhooks/:id/signing-secret',
    {
      onRequest,
      schema: {
        summary: 'Signing secret form',
        description:
          'Which form the current signing secret was made in (never the secret itself). Secrets made earlier are base64url, ' +
          'which the Standard Webhooks libraries cannot decode as they are: `rotationSuggested` is then true, and rotating ' +
          'the secret gives one in standard base64 that every verifier accepts.',
        tags,
        operationId: 'getWebhookSigningSecret',
        params: IdParams,
        response: { 200: WebhookSigningSecret, ...errorResponses(400, 401, 'ERR_API_KEY_SCOPE', 404) },
      },
    },
    async (request) => getSigningSecretForm(deps, partnerIdOf(request), request.params.id),
  );

  const catalog = eventCatalog();
  // About 80 KB of JSON that never changes while the process runs: serialised once, compressed, ETag.
  let catalogSent: PrecompressedBody | null = null;
  app.get(
    '/v1/developer/event-types',
    {
      schema: {
        summary: 'Webhook event catalog',
        description:
          'Public: no token needed. Every event kind a delivery can carry (`ping` and every WebhookEvent kind): when it fires, ' +
          'the JSON Schema of its whole envelope, and an example. Sent compressed when the request accepts it ' +
          '(Brotli or gzip) and with an ETag: a request whose If-None-Match names it is answered 304 Not Modified.',
        tags,
        operationId: 'listEventTypes',
        response: { 200: EventTypes, ...errorResponses('ERR_BAD_REQUEST') },
      },
    },
    async (request, reply) => {
      catalogSent ??= PrecompressedBody.json(reply, catalog);
      return catalogSent.send(request, reply);
    },
  );
};
