/**
 * Developer API: the partner's request log (docs/decisions-log.md, 'Request log'). Bearer token of a PARTNER account; the
 * requests of the partner's own keys only.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { partnerIdOf } from '../../plugins/bearer-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import {
  DeveloperRequestDetail,
  PageOfDeveloperRequest,
  RequestIdParams,
  RequestLogDrops,
  RequestLogDropsQuery,
  RequestsQuery,
} from './request-log.schemas.js';
import { getPartnerRequest, listPartnerRequests, type RequestLogDeps, readRequestLogDrops } from './request-log.service.js';

const tags = ['developer'];

/** The schema of a read of the partner's log shaped by a query string (400 ERR_VALIDATION on a bad one). */
function readByQuery<Q extends TSchema, A extends TSchema>(
  doc: { summary: string; description: string; operationId: string },
  querystring: Q,
  answer: A,
) {
  return { ...doc, tags, querystring, response: { 200: answer, ...errorResponses('ERR_VALIDATION', 401, 403) } };
}

export const requestLogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps: RequestLogDeps = app.ctx;
  const onRequest = app.requirePartner;

  app.get(
    '/v1/developer/requests',
    {
      onRequest,
      schema: readByQuery(
        {
          summary: 'List logged requests',
          description:
            "Partner-API requests made with the partner's keys (both environments), newest first, kept 35 days. A request shows here within 5 seconds of its answer. Under overload successful reads may be left out; `GET /v1/developer/requests/drops` counts them.",
          operationId: 'listDeveloperRequests',
        },
        RequestsQuery,
        PageOfDeveloperRequest,
      ),
    },
    async (request) => listPartnerRequests(deps, partnerIdOf(request), request.query),
  );

  app.get(
    '/v1/developer/requests/drops',
    {
      onRequest,
      schema: readByQuery(
        {
          summary: 'Count what the request log left out',
          description:
            'Per minute: requests left out of the log (successful reads under overload) and logged requests not sent on the realtime channel (over 50 a second). Default period: the last 24 hours; at most 35 days.',
          operationId: 'getRequestLogDrops',
        },
        RequestLogDropsQuery,
        RequestLogDrops,
      ),
    },
    async (request) => readRequestLogDrops(deps, partnerIdOf(request), request.query),
  );

  app.get(
    '/v1/developer/requests/:id',
    {
      onRequest,
      schema: {
        summary: 'Read a logged request',
        description: 'One request with its bodies (POSTs and error answers only). Another partner’s request answers 404.',
        tags,
        operationId: 'getDeveloperRequest',
        params: RequestIdParams,
        response: { 200: DeveloperRequestDetail, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => getPartnerRequest(deps, partnerIdOf(request), request.params.id),
  );
};
