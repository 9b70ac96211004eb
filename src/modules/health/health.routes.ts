import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { AppError } from '../../errors.js';
import { errorResponses } from '../../shared/schemas.js';

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

/**
 * Liveness and readiness probes (docs/decisions-log.md, 'Dependency faults'). Not part of the public API.
 *  - GET /healthz: the process is up and its event loop turns. Always 200 while it answers at all, a
 *    dependency outage included: restarting the process would not bring a dependency back.
 *  - GET /readyz: this process can serve requests that need the database: 200 when `SELECT 1` answers
 *    within the database deadline, 503 ERR_DEPENDENCY_UNAVAILABLE otherwise. Redis is not part of it:
 *    the service runs without Redis (per-process fallbacks), so taking a process out of a load balancer
 *    for a Redis outage would only lose capacity. Also 503 once the process drains before stopping
 *    (the `draining` event, after SIGTERM: docs/operating.md, "Restarts"), while it still serves.
 */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' as const }));

  let draining = false;
  const onDraining = () => {
    draining = true;
  };
  app.ctx.events.on('draining', onDraining);
  app.addHook('onClose', async () => {
    app.ctx.events.off('draining', onDraining);
  });

  app.get('/readyz', { schema: { hide: true, response: { 200: Health, ...errorResponses(503) } } }, async () => {
    if (draining) throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The process is shutting down');
    try {
      await app.ctx.db.query('SELECT 1');
    } catch {
      throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable');
    }
    return { status: 'ok' as const };
  });
};
