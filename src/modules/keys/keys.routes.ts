/**
 * Developer API: the partner's own API keys (docs/decisions-log.md, 'API keys'). Bearer token of a PARTNER account; the keys
 * belong to the account's partner.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import {
  CreateDeveloperKeyDto,
  DeveloperKey,
  DeveloperKeyCreated,
  DeveloperKeyRotated,
  DeveloperKeys,
  DeveloperKeyUsageSeries,
  KeyIdParams,
  UsageQuery,
} from './keys.schemas.js';
import {
  createDeveloperKey,
  type KeysDeps,
  keyUsageSeries,
  listDeveloperKeys,
  revokeDeveloperKey,
  rotateDeveloperKey,
} from './keys.service.js';

const tags = ['developer'];

export const keysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps: KeysDeps = app.ctx;
  // onRequest, not preHandler: the caller is authenticated before the body is parsed or validated, so
  // a request without a valid token answers 401, never 400.
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/keys',
    {
      onRequest,
      schema: {
        summary: 'List API keys',
        description: "The partner's keys, newest first, revoked ones included. Shows the prefix only, never the key.",
        tags,
        operationId: 'listDeveloperKeys',
        response: { 200: DeveloperKeys, ...errorResponses(401, 403) },
      },
    },
    async (request) => listDeveloperKeys(deps, partnerIdOf(request)),
  );

  app.post(
    '/v1/developer/keys',
    {
      onRequest,
      schema: {
        summary: 'Create an API key',
        description:
          'Creates a key for one environment with the given scopes (rate limit 600 per minute). The full key is in this answer only. At most 10 active keys per partner.',
        tags,
        operationId: 'createDeveloperKey',
        body: CreateDeveloperKeyDto,
        response: {
          201: DeveloperKeyCreated,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 'ERR_API_KEY_LIMIT'),
        },
      },
    },
    async (request, reply) => {
      const created = await createDeveloperKey(deps, partnerIdOf(request), request.body);
      return reply.status(201).send(created);
    },
  );

  app.delete(
    '/v1/developer/keys/:id',
    {
      onRequest,
      schema: {
        summary: 'Revoke an API key',
        description:
          'The key stops working at once (revokedAt = now), in every process. Revoking a revoked key answers it unchanged; a rotated-out key in its grace period stops now.',
        tags,
        operationId: 'revokeDeveloperKey',
        params: KeyIdParams,
        response: { 200: DeveloperKey, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 404) },
      },
    },
    async (request) => revokeDeveloperKey(deps, partnerIdOf(request), request.params.id),
  );

  app.post(
    '/v1/developer/keys/:id/rotate',
    {
      onRequest,
      schema: {
        summary: 'Rotate an API key',
        description:
          'Creates a new key with the same name, environment, scopes, rate limit and flags, and moves the orders and webhooks of the old key to it in one transaction. The old key keeps working for 24 h, acting for the new one. A key whose revokedAt is set (revoked or already rotated) answers 401 ERR_API_KEY_REVOKED.',
        tags,
        operationId: 'rotateDeveloperKey',
        params: KeyIdParams,
        response: {
          200: DeveloperKeyRotated,
          ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 'ERR_API_KEY_REVOKED', 403, 404),
        },
      },
    },
    async (request) => rotateDeveloperKey(deps, partnerIdOf(request), request.params.id),
  );

  app.get(
    '/v1/developer/keys/:id/usage',
    {
      onRequest,
      schema: {
        summary: 'Read the usage of an API key',
        description:
          'Daily request counters (requests, 4xx, 5xx) for the last `days` UTC days, zero-filled, oldest first, ending today. Counters are kept 35 days.',
        tags,
        operationId: 'getDeveloperKeyUsage',
        params: KeyIdParams,
        querystring: UsageQuery,
        response: { 200: DeveloperKeyUsageSeries, ...errorResponses('ERR_VALIDATION', 401, 403, 404) },
      },
    },
    async (request) => keyUsageSeries(deps, partnerIdOf(request), request.params.id, request.query.days ?? 7),
  );
};
