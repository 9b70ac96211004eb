/**
 * Access tokens: HS256 JWTs, 15 minutes, verified on every bearer route against the injectable clock.
 * Only HS256 is accepted (so `alg: none` and algorithm confusion fail verification).
 */
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';

export const ACCESS_TOKEN_TTL_SEC = 15 * 60;
const ISSUER = 'partner-api';
const AUDIENCE = 'partner-api';

export type Role = 'CUSTOMER' | 'PARTNER' | 'ADMIN';

export interface Principal {
  userId: string;
  role: Role;
  partnerId: string | null;
}

export async function signAccessToken(key: Uint8Array, clock: Clock, principal: Principal): Promise<string> {
  const iat = Math.floor(clock.nowMs() / 1000);
  return new SignJWT({ role: principal.role, pid: principal.partnerId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(principal.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SEC)
    .sign(key);
}

/** The principal behind a valid access token; throws 401 ERR_UNAUTHORIZED otherwise. */
export async function verifyAccessToken(key: Uint8Array, clock: Clock, token: string): Promise<Principal & { exp: number }> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: clock.now(),
    });
    const role = payload.role;
    if (typeof payload.sub !== 'string' || (role !== 'CUSTOMER' && role !== 'PARTNER' && role !== 'ADMIN')) {
      throw new AppError('ERR_UNAUTHORIZED', 'Invalid access token');
    }
    return {
      userId: payload.sub,
      role,
      partnerId: typeof payload.pid === 'string' ? payload.pid : null,
      exp: payload.exp ?? 0,
    };
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof joseErrors.JWTExpired) throw new AppError('ERR_UNAUTHORIZED', 'Access token expired');
    throw new AppError('ERR_UNAUTHORIZED', 'Invalid access token');
  }
}
