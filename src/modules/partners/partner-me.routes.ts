import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiKeyHeaders, apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import { PartnerMe } from './partner-me.schemas.js';
import { describeCallingKey } from './partner-me.service.js';

/** GET /v1/partner/me: who the calling key is (docs/decisions-log.md, 'API keys' and 'Orders'). No scope needed. */
export const partnerMeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/partner/me',
    {
      onRequest: app.partnerAuth(),
      schema: {
        summary: 'Describe the calling key',
        description:
          'The partner, the key name, environment, scopes, rate limit and flag of the calling key, and its daily usage for the last 7 UTC days. Needs no scope.',
        tags: ['partner'],
        operationId: 'getPartnerMe',
        headers: ApiKeyHeaders,
        response: { 200: PartnerMe, ...errorResponses(401, 403, 429) },
      },
    },
    (request) => describeCallingKey(app.ctx.usage, apiKeyOf(request)),
  );
};
