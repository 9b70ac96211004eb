/**
 * A span per HTTP request (docs/operating.md, "Traces"), registered only when tracing is on. Named by
 * method and route pattern (`POST /v1/partner/orders/:code/events`), never by the URL asked for; a
 * caller's `traceparent` header is continued. The rest of the request runs inside the span's context,
 * so the database and Redis spans it causes are its children.
 */
import type { Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Tracing } from '../tracing/tracing.js';

declare module 'fastify' {
  interface FastifyRequest {
    traceSpan: Span | null;
  }
}

export const httpTracingPlugin = fp(
  async (app: FastifyInstance, options: { tracing: Tracing }) => {
    const { tracer, api } = options.tracing;
    const listener = app.environment.toLowerCase();
    app.decorateRequest('traceSpan', null);
    app.addHook('onRequest', (request, _reply, done) => {
      const route = request.routeOptions.url ?? '(unmatched)';
      const parent = options.tracing.extract(request.headers);
      const span = tracer.startSpan(
        `${request.method} ${route}`,
        {
          kind: api.SpanKind.SERVER,
          attributes: { 'http.request.method': request.method, 'http.route': route, 'partner_api.listener': listener },
        },
        parent,
      );
      request.traceSpan = span;
      api.context.with(api.trace.setSpan(parent, span), done);
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = request.traceSpan;
      if (span) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
      }
      done();
    });
  },
  { name: 'http-tracing', dependencies: ['context'] },
);
