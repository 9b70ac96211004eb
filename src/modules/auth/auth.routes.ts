import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { errorResponses } from '../../shared/schemas.js';
import { AuthTokens, OtpRequestDto, OtpRequested, OtpVerifyDto, RefreshTokenDto } from './auth.schemas.js';
import { createAuthService } from './auth.service.js';
import { createSmsProvider, type SmsProvider } from './sms.js';

export interface AuthRoutesOptions {
  /** The SMS gateway; by default chosen from the configuration (see sms.ts). */
  sms?: SmsProvider;
}

/** Sign-in (docs/decisions-log.md, 'Accounts and sign-in'): public routes, no bearer token. */
export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesOptions> = async (app, options) => {
  const auth = createAuthService({ ...app.ctx, sms: options.sms ?? createSmsProvider(app.ctx.config, app.ctx.log) });

  app.post(
    '/v1/auth/otp/request',
    {
      schema: {
        summary: 'Request a one-time code',
        description:
          'Sends a 6-digit code by SMS, valid 5 minutes; a new request replaces the previous code. ' +
          'One request per phone per 60 s and 5 per rolling hour, else 429 ERR_OTP_RATE_LIMITED with ' +
          '`details.retryAfterSec` and a Retry-After header. A blocked account gets 403 ERR_USER_BLOCKED.',
        tags: ['auth'],
        operationId: 'requestOtp',
        body: OtpRequestDto,
        response: {
          200: OtpRequested,
          ...errorResponses('ERR_VALIDATION', 'ERR_USER_BLOCKED', 'ERR_OTP_RATE_LIMITED', 'ERR_DEPENDENCY_UNAVAILABLE'),
        },
      },
    },
    async (request) => auth.requestOtp(request.body.phone),
  );

  app.post(
    '/v1/auth/otp/verify',
    {
      schema: {
        summary: 'Sign in with a one-time code',
        description:
          'Exchanges the code for an access token and a refresh token. An unknown phone becomes a new ' +
          'CUSTOMER account. Wrong code 400 ERR_OTP_INVALID; no live code (expired, used or never requested) ' +
          '400 ERR_OTP_EXPIRED; the 5th wrong try burns the code: 429 ERR_OTP_TOO_MANY_ATTEMPTS until a new ' +
          'code is requested; blocked account 403 ERR_USER_BLOCKED.',
        tags: ['auth'],
        operationId: 'verifyOtp',
        body: OtpVerifyDto,
        response: {
          200: AuthTokens,
          ...errorResponses(
            'ERR_VALIDATION',
            'ERR_OTP_INVALID',
            'ERR_OTP_EXPIRED',
            'ERR_USER_BLOCKED',
            'ERR_OTP_TOO_MANY_ATTEMPTS',
          ),
        },
      },
    },
    async (request) => auth.verifyOtp(request.body.phone, request.body.code),
  );

  app.post(
    '/v1/auth/refresh',
    {
      schema: {
        summary: 'Refresh the session',
        description:
          'Exchanges a refresh token for a new access token and a new refresh token; the presented one ' +
          'is used up. Presenting a used refresh token again revokes the whole session (401). Unknown, ' +
          'expired or revoked tokens answer 401 ERR_UNAUTHORIZED; a blocked account 403 ERR_USER_BLOCKED.',
        tags: ['auth'],
        operationId: 'refreshSession',
        body: RefreshTokenDto,
        response: { 200: AuthTokens, ...errorResponses('ERR_VALIDATION', 'ERR_UNAUTHORIZED', 'ERR_USER_BLOCKED') },
      },
    },
    async (request) => auth.refresh(request.body.refreshToken),
  );

  app.post(
    '/v1/auth/logout',
    {
      schema: {
        summary: 'Sign out',
        description:
          'Revokes the session of the refresh token: it and every token rotated from the same sign-in ' +
          'stop working. Answers 204 whether or not the token was still valid.',
        tags: ['auth'],
        operationId: 'logout',
        body: RefreshTokenDto,
        response: { 204: Type.Null({ description: 'Signed out; no body' }), ...errorResponses('ERR_VALIDATION') },
      },
    },
    async (request, reply) => {
      await auth.logout(request.body.refreshToken);
      return reply.status(204).send(null);
    },
  );
};
