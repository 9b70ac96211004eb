/**
 * Sign-in rules (docs/decisions-log.md, 'Accounts and sign-in'): one-time codes by SMS with per-phone limits, sign-up of unknown phones
 * as CUSTOMER accounts, access tokens and rotating refresh tokens with reuse detection, sign-out.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { Secrets } from '../../secrets.js';
import { newId } from '../../shared/ids.js';
import * as repo from './auth.repo.js';
import type { AuthTokens } from './auth.schemas.js';
import {
  generateOtpCode,
  OTP_HOUR_SEC,
  OTP_MAX_ATTEMPTS,
  OTP_MAX_PER_HOUR,
  OTP_RESEND_AFTER_SEC,
  OTP_TTL_SEC,
  OtpHasher,
} from './otp.js';
import { generateRefreshToken, hashRefreshToken, REFRESH_TOKEN_TTL_SEC } from './refresh-tokens.js';
import { otpMessage, type SmsProvider } from './sms.js';
import { ACCESS_TOKEN_TTL_SEC, signAccessToken } from './tokens.js';

export interface AuthDeps {
  db: Db;
  clock: Clock;
  secrets: Secrets;
  config: Config;
  log: Logger;
  sms: SmsProvider;
  /** Counts each send by outcome (docs/operating.md, "Metrics"); null when metrics are off. */
  metrics?: Metrics | null;
}

function blocked(): AppError {
  return new AppError('ERR_USER_BLOCKED', 'This account is blocked');
}

function unauthorized(message = 'Invalid or expired refresh token'): AppError {
  return new AppError('ERR_UNAUTHORIZED', message);
}

export type AuthService = ReturnType<typeof createAuthService>;

export function createAuthService(deps: AuthDeps) {
  const { db, clock, secrets, config, log, sms, metrics } = deps;
  const hasher = new OtpHasher(secrets.jwtKey);

  /** Writes a refresh token of `familyId` (a new family on sign-in, the same one on rotation). */
  async function issueRefreshToken(userId: string, familyId: string, now: Date, q: Queryable): Promise<string> {
    const { token, hash } = generateRefreshToken();
    const expiresAt = new Date(now.getTime() + REFRESH_TOKEN_TTL_SEC * 1000);
    await repo.insertRefreshToken({ id: newId(), userId, familyId, hash, expiresAt }, now, q);
    return token;
  }

  async function tokensFor(user: repo.UserRecord, refreshToken: string): Promise<AuthTokens> {
    const accessToken = await signAccessToken(secrets.jwtKey, clock, {
      userId: user.id,
      role: user.role,
      partnerId: user.partnerId,
    });
    return {
      accessToken,
      refreshToken,
      tokenType: 'Bearer',
      expiresInSec: ACCESS_TOKEN_TTL_SEC,
      user: {
        id: user.id,
        phone: user.phone,
        role: user.role,
        partnerId: user.partnerId,
        partnerName: user.partnerName,
      },
    };
  }

  /**
   * Seconds until this phone may request another code (0: now). Both limits count only codes that
   * were issued: a refused request does not push the wait further out.
   */
  function retryAfterSec(requestTimes: Date[], nowMs: number): number {
    let waitMs = 0;
    const last = requestTimes[requestTimes.length - 1];
    if (last) waitMs = Math.max(waitMs, last.getTime() + OTP_RESEND_AFTER_SEC * 1000 - nowMs);
    if (requestTimes.length >= OTP_MAX_PER_HOUR) {
      // The request that has to leave the rolling hour before a new one fits.
      const oldestCounted = requestTimes[requestTimes.length - OTP_MAX_PER_HOUR];
      waitMs = Math.max(waitMs, oldestCounted.getTime() + OTP_HOUR_SEC * 1000 - nowMs);
    }
    return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
  }

  async function requestOtp(phone: string): Promise<{ expiresInSec: number; resendAfterSec: number }> {
    const now = clock.now();
    const nowMs = now.getTime();
    const hourAgo = new Date(nowMs - OTP_HOUR_SEC * 1000);
    const code = generateOtpCode(config.otpFixedCode);

    await db.tx(async (q) => {
      await repo.lockPhoneForOtp(phone, q);
      const user = await repo.findUserByPhone(phone, q);
      if (user?.blockedAt) throw blocked();
      const wait = retryAfterSec(await repo.otpRequestTimes(phone, hourAgo, q), nowMs);
      if (wait > 0) {
        throw new AppError(
          'ERR_OTP_RATE_LIMITED',
          `Too many code requests for this phone; retry after ${wait} s`,
          { retryAfterSec: wait },
          { 'Retry-After': String(wait) },
        );
      }
      await repo.purgeOtpRequests(phone, hourAgo, q);
      await repo.recordOtpRequest(phone, now, q);
      await repo.replaceOtpCode(phone, hasher.hash(phone, code), new Date(nowMs + OTP_TTL_SEC * 1000), now, q);
    });

    // Sent after commit: no transaction stays open over a network call. If the provider fails, the
    // code and its request are taken back, so the caller is not told to wait for a code that never came.
    try {
      await sms.send(phone, otpMessage(code, OTP_TTL_SEC));
      metrics?.observeSmsSend(sms.name, 'sent');
    } catch (err) {
      metrics?.observeSmsSend(sms.name, 'failed');
      log.error({ err, provider: sms.name }, 'SMS provider failed to send a one-time code');
      await db.tx(async (q) => {
        await repo.deleteOtpCodeCreatedAt(phone, now, q);
        await repo.deleteOtpRequest(phone, now, q);
      });
      throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The code could not be sent; try again shortly');
    }
    return { expiresInSec: OTP_TTL_SEC, resendAfterSec: OTP_RESEND_AFTER_SEC };
  }

  type VerifyOutcome =
    | { kind: 'ok'; user: repo.UserRecord; refreshToken: string }
    | { kind: 'blocked' }
    | { kind: 'expired' }
    | { kind: 'burned' }
    | { kind: 'invalid'; attemptsLeft: number };

  async function verifyOtp(phone: string, code: string): Promise<AuthTokens> {
    const now = clock.now();
    // The transaction returns its outcome instead of throwing, so a wrong try's count is committed.
    const outcome = await db.tx<VerifyOutcome>(async (q) => {
      const existing = await repo.findUserByPhone(phone, q);
      if (existing?.blockedAt) return { kind: 'blocked' };
      const otp = await repo.lockOtpCode(phone, q);
      if (!otp) return { kind: 'expired' };
      if (otp.expiresAt.getTime() <= now.getTime()) {
        await repo.deleteOtpCode(phone, q);
        return { kind: 'expired' };
      }
      if (otp.failedAttempts >= OTP_MAX_ATTEMPTS) return { kind: 'burned' };
      if (!hasher.matches(phone, code, otp.codeHash)) {
        const failures = await repo.recordOtpFailure(phone, q);
        return failures >= OTP_MAX_ATTEMPTS ? { kind: 'burned' } : { kind: 'invalid', attemptsLeft: OTP_MAX_ATTEMPTS - failures };
      }
      await repo.deleteOtpCode(phone, q);
      let user = existing;
      if (!user) {
        // Marketplace sign-up: an unknown phone becomes a CUSTOMER account. A concurrent operator
        // action may have created the account meanwhile; then that one is signed in.
        await repo.insertUserIfAbsent({ id: newId(), phone, role: 'CUSTOMER', partnerId: null }, now, q);
        user = await repo.findUserByPhone(phone, q);
        if (!user) throw new Error('account vanished during sign-in');
      }
      return { kind: 'ok', user, refreshToken: await issueRefreshToken(user.id, newId(), now, q) };
    });

    switch (outcome.kind) {
      case 'ok':
        return tokensFor(outcome.user, outcome.refreshToken);
      case 'blocked':
        throw blocked();
      case 'expired':
        throw new AppError(
          'ERR_OTP_EXPIRED',
          'No valid code for this phone (expired, used or never requested); request a new one',
        );
      case 'burned':
        throw new AppError('ERR_OTP_TOO_MANY_ATTEMPTS', 'Too many wrong codes; request a new code');
      case 'invalid':
        throw new AppError(
          'ERR_OTP_INVALID',
          `Wrong code; ${outcome.attemptsLeft} attempt${outcome.attemptsLeft === 1 ? '' : 's'} left`,
        );
    }
  }

  type RefreshOutcome =
    | { kind: 'ok'; user: repo.UserRecord; refreshToken: string }
    | { kind: 'reused' }
    | { kind: 'invalid' }
    | { kind: 'blocked' };

  async function refresh(refreshToken: string): Promise<AuthTokens> {
    const now = clock.now();
    const hash = hashRefreshToken(refreshToken);
    const outcome = await db.tx<RefreshOutcome>(async (q) => {
      const consumed = await repo.consumeRefreshToken(hash, now, q);
      if (!consumed) {
        const known = await repo.findRefreshToken(hash, q);
        if (known?.usedAt && !known.revokedAt) {
          // A rotated token came back: either it was stolen or its holder kept a copy. Whoever holds
          // the newest token of the chain cannot be told apart from the thief, so the chain ends.
          await repo.revokeRefreshFamily(known.familyId, now, q);
          return { kind: 'reused' };
        }
        return { kind: 'invalid' };
      }
      const user = await repo.findUserById(consumed.userId, q);
      if (!user) return { kind: 'invalid' };
      if (user.blockedAt) {
        await repo.revokeRefreshFamily(consumed.familyId, now, q);
        return { kind: 'blocked' };
      }
      return { kind: 'ok', user, refreshToken: await issueRefreshToken(user.id, consumed.familyId, now, q) };
    });

    switch (outcome.kind) {
      case 'ok':
        // The access token carries the account's current role and partner (an operator may have
        // changed them since the last sign-in).
        return tokensFor(outcome.user, outcome.refreshToken);
      case 'reused':
        log.warn('a rotated refresh token was presented again; its session was revoked');
        throw unauthorized('Refresh token was already used; the session has been revoked, sign in again');
      case 'blocked':
        throw blocked();
      case 'invalid':
        throw unauthorized();
    }
  }

  /** Ends the session (token family) of a refresh token. Unknown or already revoked tokens are ignored. */
  async function logout(refreshToken: string): Promise<void> {
    const now = clock.now();
    await db.tx(async (q) => {
      const known = await repo.findRefreshToken(hashRefreshToken(refreshToken), q);
      if (known) await repo.revokeRefreshFamily(known.familyId, now, q);
    });
  }

  return { requestOtp, verifyOtp, refresh, logout };
}
