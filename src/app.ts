/**
 * buildApp(ctx, environment): one listener's Fastify instance (the live or the sandbox API). Registers
 * the cross-cutting plugins, then each module, one line each. It never listens; main.ts does.
 */
import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import type { AppContext } from './context.js';
import { AppError, validationError } from './errors.js';
import { lazyChildLoggerFactory } from './logger.js';
import { adminKeysRoutes } from './modules/admin/admin-keys.routes.js';
import { adminOrdersRoutes } from './modules/admin/admin-orders.routes.js';
import { adminPartnersRoutes } from './modules/admin/admin-partners.routes.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { keysRoutes } from './modules/keys/keys.routes.js';
import { openapiRoutes } from './modules/openapi/openapi.routes.js';
import { partnerOrdersRoutes } from './modules/orders/partner-orders.routes.js';
import { partnerMeRoutes } from './modules/partner-me/partner-me.routes.js';
import { portalRoutes } from './modules/portal/portal.routes.js';
import { sandboxRoutes } from './modules/sandbox/sandbox.routes.js';
import { testClockRoutes } from './modules/test-clock/test-clock.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { apiKeyAuthPlugin } from './plugins/api-key-auth.js';
import { bearerAuthPlugin } from './plugins/bearer-auth.js';
import { clientErrorHandler, errorHandlerPlugin, sendError } from './plugins/error-handler.js';
import { realtimePlugin } from './plugins/realtime.js';
import { routeCatalogPlugin } from './plugins/route-catalog.js';
import { nulCharacterPath, refuseBodiesWhereNoneIsTaken, registerSchemaCompilers } from './plugins/validation.js';
import type { ApiKeyEnvironment } from './shared/schemas.js';

export const BODY_LIMIT = 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
    /** The environment this listener serves: LIVE keys only on the live API, SANDBOX on the sandbox API. */
    environment: ApiKeyEnvironment;
  }
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(ctx: AppContext, environment: ApiKeyEnvironment): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log.child({ listener: environment.toLowerCase() }) as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // One log line per request, written by our onResponse hook, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLoggerFactory,
    requestIdHeader: 'x-request-id',
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    clientErrorHandler,
    // Errors raised by the router before any route is chosen still answer in the envelope.
    frameworkErrors: (error, _request, reply) =>
      sendError(
        reply,
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

  // JSON bodies: an empty body is "no body" (some clients send Content-Type on bodiless POSTs), and
  // prototype-poisoning keys are refused.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      done(new AppError('ERR_BAD_REQUEST', 'Request body is not valid JSON'), undefined);
      return;
    }
    const nulAt = text.includes('\\u0000') ? nulCharacterPath(parsed) : null;
    if (nulAt !== null) {
      done(validationError(nulAt === '' ? 'body' : nulAt, 'must not contain the NUL character (\\u0000)'), undefined);
      return;
    }
    done(null, parsed);
  });

  // Callback hooks, not async ones: no promise per request on every route. The level is fixed at start.
  const logRequests = ctx.log.isLevelEnabled('info');
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // A path holding a NUL character names nothing (no id or code can contain one, and PostgreSQL
    // text cannot hold it): answered like an unknown route.
    const nul = request.url.indexOf('%00');
    if (nul !== -1) {
      const query = request.url.indexOf('?');
      if (query === -1 || nul < query) {
        done(new AppError('ERR_NOT_FOUND', 'Not found'));
        return;
      }
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (logRequests) {
      const path = request.url.indexOf('?') === -1 ? request.url : request.url.slice(0, request.url.indexOf('?'));
      request.log.info(
        { method: request.method, url: path, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
        'request',
      );
    }
    done();
  });

  await app.register(routeCatalogPlugin);
  await app.register(errorHandlerPlugin);
  await app.register(bearerAuthPlugin);
  await app.register(apiKeyAuthPlugin);
  await app.register(realtimePlugin);

  await app.register(healthRoutes);
  await app.register(testClockRoutes);
  await app.register(authRoutes);
  await app.register(adminPartnersRoutes);
  await app.register(adminKeysRoutes);
  await app.register(adminOrdersRoutes);
  await app.register(keysRoutes);
  await app.register(partnerMeRoutes);
  await app.register(partnerOrdersRoutes);
  await app.register(sandboxRoutes);
  await app.register(webhooksRoutes);
  await app.register(openapiRoutes);
  await app.register(portalRoutes);

  return app;
}
