/**
 * What a route's authentication hook demands, declared by the hook itself (api-key-auth.ts, bearer-auth.ts)
 * and read from the route's onRequest hooks when it is registered (route-catalog.ts). The route catalogue
 * thus knows, for every route, which credential it takes and which scope or role it needs, from the very
 * hook that enforces it: test/auth-contract.test.ts runs the authentication contract against each.
 */
import type { RouteOptions } from 'fastify';
import type { ApiKeyEnvironment, ApiKeyScope } from '../shared/schemas.js';

export type RouteSecurity =
  /** X-Api-Key: the scope the route needs (null: any valid key); `onlyOn` the one deployment serving it. */
  | { kind: 'api-key'; scope: ApiKeyScope | null; onlyOn: ApiKeyEnvironment | null }
  /** Authorization: Bearer: the role the account must have (USER: any signed-in account). */
  | { kind: 'bearer'; role: 'PARTNER' | 'ADMIN' | 'USER' };

const declared = new WeakMap<object, RouteSecurity>();

/** Marks `hook` as an authentication hook demanding `security`; returns the hook. */
export function declareSecurity<Hook extends object>(hook: Hook, security: RouteSecurity): Hook {
  declared.set(hook, security);
  return hook;
}

/** The security a route's onRequest hooks declare; null when none does (a public route). */
export function securityOf(route: Pick<RouteOptions, 'onRequest'>): RouteSecurity | null {
  const hooks = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
  for (const hook of hooks) {
    const security = declared.get(hook as object);
    if (security) return security;
  }
  return null;
}
