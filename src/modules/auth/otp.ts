/**
 * One-time sign-in codes (docs/decisions-log.md, 'Accounts and sign-in'): 6 digits from a CSPRNG, valid 5 minutes, stored only as a
 * keyed hash. The HMAC key is derived from the JWT secret, so a dump of the database alone cannot be
 * brute-forced through the (small) code space; the phone is part of the MAC input so equal codes of
 * two phones do not look equal at rest.
 */
import { createHmac, hkdfSync, randomInt, timingSafeEqual } from 'node:crypto';

export const OTP_TTL_SEC = 5 * 60;
/** One request per phone per this many seconds. */
export const OTP_RESEND_AFTER_SEC = 60;
/** At most this many requests per phone in any rolling hour. */
export const OTP_MAX_PER_HOUR = 5;
export const OTP_HOUR_SEC = 60 * 60;
/** The 5th wrong try burns the code. */
export const OTP_MAX_ATTEMPTS = 5;

export function generateOtpCode(fixedCode: string | null): string {
  if (fixedCode) return fixedCode;
  // randomInt is uniform over [0, 1e6) (rejection sampling), unlike Math.random or a modulo of bytes.
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

export class OtpHasher {
  private readonly key: Buffer;

  constructor(jwtKey: Uint8Array) {
    // HKDF under its own label: the OTP key is independent of the JWT and webhook-encryption keys.
    this.key = Buffer.from(hkdfSync('sha256', jwtKey, 'partner-api', 'otp-code-hash', 32));
  }

  hash(phone: string, code: string): string {
    return createHmac('sha256', this.key).update(`${phone}:${code}`, 'utf8').digest('hex');
  }

  /** Constant-time: both sides are 32-byte MACs, so the comparison never depends on where they differ. */
  matches(phone: string, code: string, storedHash: string): boolean {
    const presented = Buffer.from(this.hash(phone, code), 'hex');
    const stored = Buffer.from(storedHash, 'hex');
    return presented.length === stored.length && timingSafeEqual(presented, stored);
  }
}
