/**
 * Counts every answered request in this process's metrics (docs/operating.md, "Metrics"), registered
 * only when metrics are on: by listener, route pattern (never the URL asked for), method and status
 * class, and the partner requests the rate limiter refused. Two in-memory updates per request, in a
 * callback hook (no promise per request).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../metrics/metrics.js';

export const httpMetricsPlugin = fp(
  async (app: FastifyInstance, options: { metrics: Metrics }) => {
    const { metrics } = options;
    const listener = app.environment.toLowerCase();
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      metrics.observeRequest(listener, request.routeOptions.url, request.method, status, reply.elapsedTime);
      // 429 on a request whose key was accepted is the rate limiter's refusal (a sign-in code's own
      // limits answer 429 too, but on routes without a key).
      if (status === 429 && request.apiKey) metrics.rateLimitedRequest(listener);
      done();
    });
  },
  { name: 'http-metrics', dependencies: ['context', 'api-key-auth'] },
);
