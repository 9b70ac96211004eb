/**
 * Operator API for API keys (docs/decisions-log.md, 'Operator API'): change a key's rate limit or its receivesAllOrders flag.
 * The change reaches every process's key cache before the answer goes out.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas.js';
import { DeveloperKey, KeyIdParams, UpdateKeyByOperatorDto } from './keys.schemas.js';
import { updateKeyByOperator } from './keys.service.js';

export const adminKeysRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.patch(
    '/v1/admin/keys/:id',
    {
      // onRequest: authenticate before the body is validated (401/403 before 400).
      onRequest: app.requireAdmin,
      schema: {
        summary: "Change a key's rate limit or order visibility",
        description:
          'Sets `rateLimit` (requests per minute, 1 to 100000) and/or `receivesAllOrders` of any partner key. At least one field.',
        tags: ['admin'],
        operationId: 'updateKeyByOperator',
        params: KeyIdParams,
        body: UpdateKeyByOperatorDto,
        response: { 200: DeveloperKey, ...errorResponses('ERR_VALIDATION', 'ERR_BAD_REQUEST', 401, 403, 404) },
      },
    },
    async (request) => updateKeyByOperator(app.ctx, request.params.id, request.body),
  );
};
