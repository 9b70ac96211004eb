/**
 * Partner authentication for every `/v1/partner/*` route, in the check order of docs/decisions-log.md, 'API keys':
 * key valid (401 ERR_API_KEY_INVALID / ERR_API_KEY_REVOKED) → environment of this listener (403
 * ERR_API_KEY_ENVIRONMENT) → rate limit (429 ERR_RATE_LIMITED) → scope (403 ERR_API_KEY_SCOPE) →
 * only then input (400) and the resource.
 *
 * Routes declare `onRequest: app.partnerAuth(scope)`: the checks run before the body is even parsed or
 * validated, so a caller without a valid key learns nothing about the input rules. Declared as a
 * preHandler they would run after validation (400 before 401); an onRoute check refuses that at start.
 *
 * The key check costs no database round trip for a key seen recently (KeyResolver's cache) and no
 * write: usage and last-used are counted in memory and flushed in batches. With Redis, a busy key's
 * requests are admitted from a slice of its shared window held in memory (redis-rate-limiter.ts), so most
 * cost no Redis round trip either; the calls that take a slice also tell whether the cached key record
 * is still current (see KeyResolver), and key and order changes are pushed to every process.
 *
 * Every partner answer past the environment check carries the rate-limit fields of
 * draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy: "per-key";q=<limit>;w=60` and
 * `RateLimit: "per-key";r=<remaining>;t=<seconds until the oldest request in the window leaves it>`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import Type from 'typebox';
import { AppError } from '../errors.js';
import type { ResolvedKey } from '../modules/keys/key.types.js';
import { hashKey, KEY_PATTERN } from '../modules/keys/key-format.js';
import type { KeyLookup } from '../modules/keys/key-resolver.js';
import { isStale, type RateLimitDecision, type RateLimitOutcome } from '../modules/keys/rate-limit.types.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../shared/schemas.js';
import { declareSecurity } from './route-security.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;
/** The policy name in the RateLimit-Policy and RateLimit fields. */
export const RATE_LIMIT_POLICY = 'per-key';
/** A stale cached key record is reloaded at most this many times per request (changes racing it). */
const MAX_RELOADS = 3;

/** The `headers` schema of every partner route (`X-Api-Key`, string, required: docs/decisions-log.md, 'API keys'). */
export const ApiKeyHeaders = Type.Object({
  'x-api-key': Type.String({
    description: 'The API key: `svc_live_…` on the live API, `svc_sandbox_…` on the sandbox API',
  }),
});

declare module 'fastify' {
  interface FastifyRequest {
    /** The key behind this partner request, once identified (even when it is then refused). */
    apiKey: ResolvedKey | null;
    /** The key was accepted: not revoked, and of this listener's environment (it then counts as used). */
    apiKeyAccepted: boolean;
    /**
     * On routes that read orders: the version of the key's order scope as of this request (read-cache.ts),
     * or null when cached reads may not be used.
     */
    orderVersion: string | null;
  }
  interface FastifyInstance {
    /**
     * Partner-route hook; `scope` is the scope the route needs, if any; `readsOrders` asks for
     * `request.orderVersion`; `onlyOn` names the one deployment the route exists on (elsewhere a valid
     * key gets ERR_API_KEY_ENVIRONMENT, in the environment check's place). Runs at onRequest (see above).
     */
    partnerAuth: (
      scope?: ApiKeyScope,
      options?: PartnerAuthOptions,
    ) => (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;
  }
}

export interface PartnerAuthOptions {
  readsOrders?: boolean;
  onlyOn?: ApiKeyEnvironment;
}

/** The authenticated key of a partner route (set by partnerAuth). */
export function apiKeyOf(request: FastifyRequest): ResolvedKey {
  if (!request.apiKey) throw new AppError('ERR_API_KEY_INVALID', 'Missing or unknown API key');
  return request.apiKey;
}

const partnerAuthHooks = new WeakSet<object>();

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

export const apiKeyAuthPlugin = fp(
  async (app: FastifyInstance) => {
    const { keys, clock, rateLimiter, usage, orderCache } = app.ctx;
    const environment = app.environment;
    app.decorateRequest('apiKey', null);
    app.decorateRequest('apiKeyAccepted', false);
    app.decorateRequest('orderVersion', null);

    const invalid = () => new AppError('ERR_API_KEY_INVALID', 'Missing or unknown API key (X-Api-Key header)');

    /** Revoked, then environment: the refusals that do not consume the rate limit. */
    function admit(key: ResolvedKey, onlyOn: ApiKeyEnvironment | undefined): void {
      if (key.revokedAtMs !== null && key.revokedAtMs <= clock.nowMs()) {
        throw new AppError('ERR_API_KEY_REVOKED', 'This API key has been revoked');
      }
      if (key.environment !== environment) {
        throw new AppError(
          'ERR_API_KEY_ENVIRONMENT',
          `A ${key.environment} key cannot be used on the ${environment.toLowerCase()} API`,
        );
      }
      if (onlyOn !== undefined && onlyOn !== environment) {
        throw new AppError('ERR_API_KEY_ENVIRONMENT', `This operation exists only on the ${onlyOn.toLowerCase()} API`);
      }
    }

    /**
     * The checks of one request. Synchronous while everything is at hand (a cached key and the
     * in-process limiter): no promise and no microtask on the hot path; a promise only when the key
     * must be loaded or the limiter is Redis.
     */
    function authenticate(
      request: FastifyRequest,
      reply: FastifyReply,
      scope: ApiKeyScope | undefined,
      readsOrders: boolean,
      onlyOn: ApiKeyEnvironment | undefined,
    ): void | Promise<void> {
      const header = request.headers['x-api-key'];
      const presented = Array.isArray(header) ? header[0] : header;
      if (!presented || !KEY_PATTERN.test(presented)) throw invalid();
      const hash = hashKey(presented);
      return withLookup(keys.lookup(hash), 0);

      function withLookup(lookup: KeyLookup | Promise<KeyLookup>, reloads: number): void | Promise<void> {
        if (lookup instanceof Promise) return lookup.then((l) => withLookup(l, reloads));
        const key = lookup.key;
        if (!key) throw invalid();
        request.apiKey = key;
        admit(key, onlyOn);
        request.apiKeyAccepted = true;
        // After a few reloads in a row (keys changing faster than we can read them) stop checking.
        const generation = reloads < MAX_RELOADS ? lookup.generation : '';
        const outcome = rateLimiter.hit(key.id, key.rateLimit, RATE_LIMIT_WINDOW_MS, generation);
        return outcome instanceof Promise ? outcome.then((o) => withOutcome(o, reloads)) : withOutcome(outcome, reloads);
      }

      function withOutcome(outcome: RateLimitOutcome, reloads: number): void | Promise<void> {
        if (isStale(outcome)) {
          // The key changed somewhere since this record was cached: read it again and re-check it.
          keys.adoptGeneration(outcome.generation);
          return withLookup(keys.lookup(hash), reloads + 1);
        }
        decided(outcome);
      }

      function decided(decision: RateLimitDecision): void {
        reply.header('RateLimit-Policy', `"${RATE_LIMIT_POLICY}";q=${decision.limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`);
        reply.header('RateLimit', `"${RATE_LIMIT_POLICY}";r=${decision.remaining};t=${decision.resetSec}`);
        if (!decision.allowed) {
          throw new AppError(
            'ERR_RATE_LIMITED',
            `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSec} s`,
            undefined,
            { 'Retry-After': String(decision.retryAfterSec) },
          );
        }
        const key = request.apiKey;
        if (scope && !key?.scopes.includes(scope)) {
          throw new AppError('ERR_API_KEY_SCOPE', `This API key lacks the scope ${scope}`);
        }
        if (readsOrders && key) request.orderVersion = orderCache.versionFor(key, environment);
      }
    }

    app.decorate('partnerAuth', (scope?: ApiKeyScope, options: PartnerAuthOptions = {}) => {
      const readsOrders = options.readsOrders === true;
      const { onlyOn } = options;
      // A callback hook: completes in the same tick when authenticate needs no promise.
      const hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
        let pending: void | Promise<void>;
        try {
          pending = authenticate(request, reply, scope, readsOrders, onlyOn);
        } catch (err) {
          done(err as Error);
          return;
        }
        if (pending) pending.then(() => done(), done);
        else done();
      };
      partnerAuthHooks.add(hook);
      return declareSecurity(hook, { kind: 'api-key', scope: scope ?? null, onlyOn: onlyOn ?? null });
    });

    // Partner checks come before input validation and body parsing (docs/decisions-log.md, 'API keys'): a route that
    // declares them as a preHandler is a programming error, refused when the app is built.
    app.addHook('onRoute', (route: RouteOptions) => {
      if (asArray(route.preHandler).some((h) => partnerAuthHooks.has(h))) {
        throw new Error(`${route.method} ${route.url}: declare app.partnerAuth() in onRequest, not preHandler`);
      }
    });

    // Every partner request made with an identifiable key counts, whatever its outcome (429 included);
    // only the accepted ones move lastUsedAt (a revoked key's refusals leave it as it was).
    // (A callback hook, not an async one: no promise per request on the hot path.)
    app.addHook('onResponse', (request, reply, done) => {
      if (request.apiKey) usage.record(request.apiKey.id, reply.statusCode, request.apiKeyAccepted);
      done();
    });
  },
  { name: 'api-key-auth', dependencies: ['context'] },
);
