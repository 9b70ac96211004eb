/**
 * Bearer authentication for the developer, admin and realtime surfaces: `Authorization: Bearer <jwt>`.
 * Missing, malformed, expired or forged tokens answer 401 ERR_UNAUTHORIZED; role guards answer 403
 * ERR_FORBIDDEN. Handlers read `request.principal`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';
import { type Principal, verifyAccessToken } from '../modules/auth/tokens.js';
import { declareSecurity } from './route-security.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** preHandler: any signed-in account. */
    requireUser: (request: FastifyRequest) => Promise<void>;
    /** preHandler: PARTNER accounts only (developer API). */
    requirePartner: (request: FastifyRequest) => Promise<void>;
    /** preHandler: ADMIN accounts only (operator API). */
    requireAdmin: (request: FastifyRequest) => Promise<void>;
  }
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer ([A-Za-z0-9\-_=]+\.[A-Za-z0-9\-_=]*\.[A-Za-z0-9\-_=]*)$/i.exec(header.trim());
  return match ? match[1] : null;
}

/** The partner id of a PARTNER principal (set by requirePartner). */
export function partnerIdOf(request: FastifyRequest): string {
  const id = request.principal?.partnerId;
  if (!id) throw new AppError('ERR_FORBIDDEN', 'This account is not a partner account');
  return id;
}

export const bearerAuthPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('principal', null);

    async function requireUser(request: FastifyRequest): Promise<void> {
      const token = bearerToken(request.headers.authorization);
      if (!token) throw new AppError('ERR_UNAUTHORIZED', 'Missing or malformed bearer token');
      request.principal = await verifyAccessToken(app.ctx.secrets.jwtKey, app.ctx.clock, token);
    }

    app.decorate('requireUser', requireUser);
    app.decorate('requirePartner', async (request: FastifyRequest) => {
      await requireUser(request);
      if (request.principal?.role !== 'PARTNER' || !request.principal.partnerId) {
        throw new AppError('ERR_FORBIDDEN', 'Only partner accounts may use the developer API');
      }
    });
    app.decorate('requireAdmin', async (request: FastifyRequest) => {
      await requireUser(request);
      if (request.principal?.role !== 'ADMIN')
        throw new AppError('ERR_FORBIDDEN', 'Only operator accounts may use the admin API');
    });
    // What each guard demands, for the route catalogue (route-security.ts).
    declareSecurity(app.requireUser, { kind: 'bearer', role: 'USER' });
    declareSecurity(app.requirePartner, { kind: 'bearer', role: 'PARTNER' });
    declareSecurity(app.requireAdmin, { kind: 'bearer', role: 'ADMIN' });
  },
  { name: 'bearer-auth', dependencies: ['context'] },
);
