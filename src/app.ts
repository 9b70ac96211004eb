/**
 * buildApp(ctx, environment): one listener's Fastify instance (the live or the sandbox API). Registers
 * the cross-cutting plugins, then each module, one line each. It never listens; main.ts does.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import fp from 'fastify-plugin';
import type { AppContext } from './context.js';
import { AppError } from './errors.js';
import { lazyChildLoggerFactory } from './logger.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { adminKeysRoutes } from './modules/keys/admin-keys.routes.js';
import { developerLimitsRoutes } from './modules/keys/developer-limits.routes.js';
import { keysRoutes } from './modules/keys/keys.routes.js';
import { adminOffersRoutes } from './modules/offers/admin-offers.routes.js';
import { developerOffersRoutes } from './modules/offers/developer-offers.routes.js';
import { offersRoutes } from './modules/offers/offers.routes.js';
import { openapiRoutes } from './modules/openapi/openapi.routes.js';
import { orderViewRoutes } from './modules/order-view/order-view.routes.js';
import { adminOrdersRoutes } from './modules/orders/admin-orders.routes.js';
import { partnerOrdersRoutes } from './modules/orders/partner-orders.routes.js';
import { adminPartnersRoutes } from './modules/partners/admin-partners.routes.js';
import { partnerMeRoutes } from './modules/partners/partner-me.routes.js';
import { adminPaymentsRoutes } from './modules/payments/admin-payments.routes.js';
import { developerPaymentsRoutes } from './modules/payments/developer-payments.routes.js';
import { partnerPaymentsRoutes } from './modules/payments/partner-payments.routes.js';
import { portalRoutes } from './modules/portal/portal.routes.js';
import { proofRoutes } from './modules/proof/proof.routes.js';
import { proofDeveloperRoutes } from './modules/proof/proof-developer.routes.js';
import { requestLogRoutes } from './modules/request-log/request-log.routes.js';
import { sandboxRoutes } from './modules/sandbox/sandbox.routes.js';
import { testClockRoutes } from './modules/test-clock/test-clock.routes.js';
import { trackingRoutes } from './modules/tracking/tracking.routes.js';
import { uploadsRoutes } from './modules/uploads/uploads.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { apiKeyAuthPlugin } from './plugins/api-key-auth.js';
import { bearerAuthPlugin } from './plugins/bearer-auth.js';
import { clientErrorHandler, errorHandlerPlugin, sendError } from './plugins/error-handler.js';
import { httpMetricsPlugin } from './plugins/http-metrics.js';
import { httpTracingPlugin } from './plugins/http-tracing.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { realtimePlugin } from './plugins/realtime.js';
import { requestContextPlugin, requestIdGenerator } from './plugins/request-context.js';
import { requestLogPlugin } from './plugins/request-log.js';
import { routeCatalogPlugin } from './plugins/route-catalog.js';
import { refuseBodiesWhereNoneIsTaken, registerSchemaCompilers } from './plugins/validation.js';
import type { ApiKeyEnvironment } from './shared/schemas.js';

export const BODY_LIMIT = 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /** The environment this listener serves: LIVE keys only on the live API, SANDBOX on the sandbox API. */
    environment: ApiKeyEnvironment;
  }
}

export async function buildApp(ctx: AppContext, environment: ApiKeyEnvironment): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({ listener: environment.toLowerCase() }) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // One log line per request, written by request-context.ts, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory,
    // Every request gets an id of ours, never the caller's (request-context.ts).
    requestIdHeader: false,
    genReqId: requestIdGenerator(ctx.clock),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    clientErrorHandler,
    // Errors raised by the router before any route is chosen still answer in the envelope, with the id.
    frameworkErrors: (error, request, reply) =>
      sendError(
        reply.header('x-request-id', request.id),
        error.code === 'FST_ERR_BAD_URL'
          ? new AppError('ERR_BAD_REQUEST', 'The URL is malformed (invalid percent-encoding)')
          : new AppError('ERR_NOT_FOUND', 'Not found'),
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerSchemaCompilers(app);
  refuseBodiesWhereNoneIsTaken(app);
  app.decorate('ctx', ctx);
  app.decorate('environment', environment);
  await app.register(fp(async () => {}, { name: 'context' }));

  // First, so that everything a request causes runs inside its span.
  if (ctx.tracing) await app.register(httpTracingPlugin, { tracing: ctx.tracing });
  await app.register(jsonBodyPlugin);
  await app.register(requestContextPlugin);
  await app.register(routeCatalogPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(bearerAuthPlugin);
  await app.register(apiKeyAuthPlugin);
  await app.register(requestLogPlugin);
  if (ctx.metrics) await app.register(httpMetricsPlugin, { metrics: ctx.metrics });
  await app.register(realtimePlugin);

  await app.register(healthRoutes);
  await app.register(testClockRoutes);
  await app.register(authRoutes);
  await app.register(adminPartnersRoutes);
  await app.register(adminKeysRoutes);
  await app.register(adminOrdersRoutes);
  await app.register(adminPaymentsRoutes);
  await app.register(adminOffersRoutes);
  await app.register(keysRoutes);
  await app.register(developerLimitsRoutes);
  await app.register(partnerMeRoutes);
  await app.register(partnerOrdersRoutes);
  await app.register(partnerPaymentsRoutes);
  await app.register(developerPaymentsRoutes);
  await app.register(offersRoutes);
  await app.register(developerOffersRoutes);
  await app.register(trackingRoutes);
  await app.register(uploadsRoutes);
  await app.register(proofRoutes);
  await app.register(proofDeveloperRoutes);
  await app.register(orderViewRoutes);
  await app.register(sandboxRoutes);
  await app.register(webhooksRoutes);
  await app.register(requestLogRoutes);
  await app.register(openapiRoutes);
  await app.register(portalRoutes);

  return app;
}
