import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../shared/schemas.js';

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

/** Liveness (the process answers) and readiness (the database answers). Not part of the public API. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { hide: true, response: { 200: Health, ...errorResponses(503) } } }, async () => {
    try {
      await app.ctx.db.query('SELECT 1');
    } catch {
      throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable');
    }
    return { status: 'ok' as const };
  });
};
