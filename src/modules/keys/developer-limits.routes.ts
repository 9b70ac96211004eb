/**
 * Developer API: the limits the API enforces on what a partner creates, read from the constants the
 * services check, so a client (the portal) shows them without restating them. Bearer token of a PARTNER
 * account.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas.js';
import { MAX_WEBHOOKS_PER_KEY } from '../webhooks/webhooks.schemas.js';
import { DeveloperLimits } from './keys.schemas.js';
import { MAX_ACTIVE_KEYS } from './keys.service.js';

const limits: DeveloperLimits = { activeKeysPerPartner: MAX_ACTIVE_KEYS, webhooksPerKey: MAX_WEBHOOKS_PER_KEY };

export const developerLimitsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/developer/limits',
    {
      onRequest: app.requirePartner,
      schema: {
        summary: 'Limits on keys and webhooks',
        description:
          'How many keys a partner may have active at once and how many webhooks one key may have: the numbers the create ' +
          'routes enforce (`ERR_API_KEY_LIMIT`, `ERR_WEBHOOK_LIMIT`).',
        tags: ['developer'],
        operationId: 'getDeveloperLimits',
        response: { 200: DeveloperLimits, ...errorResponses(401, 403) },
      },
    },
    async () => limits,
  );
};
