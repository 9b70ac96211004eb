/**
 * Refresh tokens: opaque `rt_` + 32 random bytes (base64url), valid 30 days, stored only as their
 * SHA-256 (the token carries 256 bits of entropy, so a plain hash cannot be reversed). Every use
 * rotates the token; each sign-in starts a family (`family_id`) that all its rotations share.
 */
import { createHash, randomBytes } from 'node:crypto';

export const REFRESH_TOKEN_TTL_SEC = 30 * 24 * 60 * 60;
const PREFIX = 'rt_';

export function generateRefreshToken(): { token: string; hash: string } {
  const token = PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashRefreshToken(token) };
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
