/**
 * Request and response shapes of sign-in (docs/decisions-log.md, 'Accounts and sign-in'): one-time codes by SMS, then an access token
 * (JWT, 15 min) and a rotating refresh token (opaque, 30 days).
 */
import Type, { type Static } from 'typebox';
import { PHONE_PATTERN } from '../../config.js';
import { Nullable, StringEnum, Uuid } from '../../shared/schemas.js';

export const Phone = (options: Record<string, unknown> = {}) =>
  Type.String({
    pattern: PHONE_PATTERN.source,
    maxLength: 13,
    description: 'E.164 phone number: +994 and 9 digits',
    examples: ['+994501234567'],
    ...options,
  });

export const ROLES = ['CUSTOMER', 'PARTNER', 'ADMIN'] as const;
export const Role = StringEnum(ROLES, { $id: 'Role', description: 'Account role' });

export const OtpRequestDto = Type.Object(
  { phone: Phone() },
  { $id: 'OtpRequestDto', additionalProperties: false, description: 'Ask for a one-time code by SMS' },
);

export const OtpRequested = Type.Object(
  {
    expiresInSec: Type.Integer({ description: 'the code is valid for this many seconds (300)' }),
    resendAfterSec: Type.Integer({ description: 'another code may be requested after this many seconds (60)' }),
  },
  { $id: 'OtpRequested', additionalProperties: false },
);

export const OtpVerifyDto = Type.Object(
  {
    phone: Phone(),
    code: Type.String({
      pattern: '^[0-9]{6}$',
      maxLength: 6,
      description: 'the 6-digit code received by SMS',
      examples: ['123456'],
    }),
  },
  { $id: 'OtpVerifyDto', additionalProperties: false },
);

export const RefreshTokenDto = Type.Object(
  {
    refreshToken: Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'a refresh token from /v1/auth/otp/verify or /v1/auth/refresh',
    }),
  },
  { $id: 'RefreshTokenDto', additionalProperties: false },
);

export const AuthUser = Type.Object(
  {
    id: Uuid(),
    phone: Phone(),
    role: Role,
    partnerId: Nullable(Uuid(), { description: 'the partner of a PARTNER account; null otherwise' }),
    partnerName: Nullable(Type.String(), { description: 'the partner name of a PARTNER account; null otherwise' }),
  },
  { $id: 'AuthUser', additionalProperties: false },
);
export type AuthUser = Static<typeof AuthUser>;

export const AuthTokens = Type.Object(
  {
    accessToken: Type.String({ description: 'JWT (HS256) for `Authorization: Bearer …`; valid 15 minutes' }),
    refreshToken: Type.String({
      description:
        'opaque, valid 30 days, single use: /v1/auth/refresh returns a new one; presenting a used one again signs the whole session out',
    }),
    tokenType: Type.Literal('Bearer'),
    expiresInSec: Type.Integer({ description: 'lifetime of the access token in seconds (900)' }),
    user: AuthUser,
  },
  { $id: 'AuthTokens', additionalProperties: false },
);
export type AuthTokens = Static<typeof AuthTokens>;

export const AdminUser = Type.Object(
  {
    id: Uuid(),
    phone: Phone(),
    role: Role,
    partnerId: Nullable(Uuid(), { description: 'the partner of a PARTNER account; null otherwise' }),
    blocked: Type.Boolean({ description: 'a blocked account cannot sign in or refresh its session' }),
  },
  { $id: 'AdminUser', additionalProperties: false },
);

export const UpdateAdminUserDto = Type.Object(
  {
    blocked: Type.Boolean({
      description: 'true blocks the account and revokes all its refresh tokens; false unblocks it',
    }),
  },
  { $id: 'UpdateAdminUserDto', additionalProperties: false },
);
