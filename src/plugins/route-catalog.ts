/**
 * Records every route's method, path and schema as it is registered, so the OpenAPI document can be
 * generated from the very schemas that validate requests and serialise responses, and what each route's
 * authentication demands (route-security.ts).
 */
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { type RouteSecurity, securityOf } from './route-security.js';

export interface CatalogRoute {
  method: string;
  url: string;
  schema: FastifySchema & Record<string, unknown>;
  /** What the route's authentication hook demands (route-security.ts); null for a public route. */
  security: RouteSecurity | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeCatalog: CatalogRoute[];
  }
  /** Documentation fields of a route schema, read by the OpenAPI generator. */
  interface FastifySchema {
    /** Leave the route out of every OpenAPI document (health checks, test hooks, static files). */
    hide?: boolean;
    summary?: string;
    description?: string;
    tags?: string[];
    operationId?: string;
    deprecated?: boolean;
    /** The body may be left out (it has defaults for everything): `requestBody.required: false`. */
    bodyOptional?: boolean;
    /** Named, valid request bodies (OpenAPI media-type `examples`), e.g. one per event type. */
    bodyExamples?: Record<string, { summary: string; value: unknown }>;
  }
}

export const routeCatalogPlugin = fp(
  async (app: FastifyInstance) => {
    const catalog: CatalogRoute[] = [];
    app.decorate('routeCatalog', catalog);
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || !route.schema) continue;
        catalog.push({ method, url: route.url, schema: route.schema as CatalogRoute['schema'], security: securityOf(route) });
      }
    });
  },
  { name: 'route-catalog' },
);
