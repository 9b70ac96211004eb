/**
 * SQL of the accounts domain: users, one-time codes and their request log, refresh tokens.
 * The Queryable (a transaction or the pool) is always the last argument.
 */
import type { Queryable } from '../../db/db.js';
import type { Role } from './tokens.js';

export interface UserRecord {
  id: string;
  phone: string;
  role: Role;
  partnerId: string | null;
  partnerName: string | null;
  blockedAt: Date | null;
}

interface UserRow {
  id: string;
  phone: string;
  role: Role;
  partner_id: string | null;
  partner_name: string | null;
  blocked_at: Date | null;
}

function toUser(row: UserRow): UserRecord {
  return {
    id: row.id,
    phone: row.phone,
    role: row.role,
    partnerId: row.partner_id,
    partnerName: row.partner_name,
    blockedAt: row.blocked_at,
  };
}

const USER_COLUMNS = `u.id, u.phone, u.role, u.partner_id, p.name AS partner_name, u.blocked_at
  FROM users u LEFT JOIN partners p ON p.id = u.partner_id`;

// Users ----------------------------------------------------------------------------------------------

export async function findUserByPhone(phone: string, q: Queryable): Promise<UserRecord | null> {
  const rows = await q.query<UserRow>(`SELECT ${USER_COLUMNS} WHERE u.phone = $1`, [phone]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function findUserById(userId: string, q: Queryable): Promise<UserRecord | null> {
  const rows = await q.query<UserRow>(`SELECT ${USER_COLUMNS} WHERE u.id = $1`, [userId]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** The user with this phone, row-locked until the transaction ends (role changes are decided on it). */
export async function lockUserByPhone(phone: string, q: Queryable): Promise<UserRecord | null> {
  const rows = await q.query<UserRow>(
    `SELECT u.id, u.phone, u.role, u.partner_id, NULL::text AS partner_name, u.blocked_at
       FROM users u WHERE u.phone = $1 FOR UPDATE`,
    [phone],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

/**
 * Inserts an account unless the phone already has one (a concurrent sign-up or operator action may
 * have just created it); returns whether this call created it.
 */
export async function insertUserIfAbsent(
  user: { id: string; phone: string; role: Role; partnerId: string | null },
  now: Date,
  q: Queryable,
): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO users (id, phone, role, partner_id, partner_joined_at, created_at)
     VALUES ($1, $2, $3, $4, CASE WHEN $4::uuid IS NULL THEN NULL ELSE $5::timestamptz END, $5)
     ON CONFLICT (phone) DO NOTHING RETURNING id`,
    [user.id, user.phone, user.role, user.partnerId, now],
  );
  return rows.length === 1;
}

/** Changes an account's role; a PARTNER role records when the account joined its partner. */
export async function setUserRole(userId: string, role: Role, partnerId: string | null, now: Date, q: Queryable): Promise<void> {
  await q.query(
    `UPDATE users SET role = $2, partner_id = $3,
       partner_joined_at = CASE WHEN $3::uuid IS NULL THEN NULL ELSE $4::timestamptz END
     WHERE id = $1`,
    [userId, role, partnerId, now],
  );
}

/** Blocks (keeping the first blocked_at of an already blocked account) or unblocks; null if unknown. */
export async function setUserBlocked(userId: string, blocked: boolean, now: Date, q: Queryable): Promise<boolean> {
  const rows = await q.query(
    blocked
      ? 'UPDATE users SET blocked_at = COALESCE(blocked_at, $2) WHERE id = $1 RETURNING id'
      : 'UPDATE users SET blocked_at = NULL WHERE id = $1 RETURNING id',
    blocked ? [userId, now] : [userId],
  );
  return rows.length === 1;
}

// One-time codes -------------------------------------------------------------------------------------

/**
 * Serialises code requests of one phone until the transaction ends, so two concurrent requests cannot
 * both pass the per-minute check. A transaction-scoped advisory lock, because the phone may have no
 * row to lock yet; a hash collision between two phones only makes them wait for each other briefly.
 */
export async function lockPhoneForOtp(phone: string, q: Queryable): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(hashtextextended('otp:' || $1, 0))`, [phone]);
}

/** Times of this phone's code requests since `since`, oldest first. */
export async function otpRequestTimes(phone: string, since: Date, q: Queryable): Promise<Date[]> {
  const rows = await q.query<{ requested_at: Date }>(
    'SELECT requested_at FROM otp_requests WHERE phone = $1 AND requested_at > $2 ORDER BY requested_at',
    [phone, since],
  );
  return rows.map((r) => r.requested_at);
}

export async function recordOtpRequest(phone: string, at: Date, q: Queryable): Promise<void> {
  await q.query('INSERT INTO otp_requests (phone, requested_at) VALUES ($1, $2)', [phone, at]);
}

/** Drops this phone's request log entries that no longer count toward any limit. */
export async function purgeOtpRequests(phone: string, before: Date, q: Queryable): Promise<void> {
  await q.query('DELETE FROM otp_requests WHERE phone = $1 AND requested_at <= $2', [phone, before]);
}

/** Removes the request log entry written at `at` (the SMS could not be sent, so it should not count). */
export async function deleteOtpRequest(phone: string, at: Date, q: Queryable): Promise<void> {
  await q.query('DELETE FROM otp_requests WHERE phone = $1 AND requested_at = $2', [phone, at]);
}

/** Stores the phone's live code, replacing any previous one (and its failed-attempt count). */
export async function replaceOtpCode(phone: string, codeHash: string, expiresAt: Date, now: Date, q: Queryable): Promise<void> {
  await q.query(
    `INSERT INTO otp_codes (phone, code_hash, expires_at, failed_attempts, created_at) VALUES ($1, $2, $3, 0, $4)
     ON CONFLICT (phone) DO UPDATE SET code_hash = EXCLUDED.code_hash, expires_at = EXCLUDED.expires_at,
       failed_attempts = 0, created_at = EXCLUDED.created_at`,
    [phone, codeHash, expiresAt, now],
  );
}

export interface OtpCodeRecord {
  codeHash: string;
  expiresAt: Date;
  failedAttempts: number;
}

/** The phone's code, row-locked: concurrent verifications of one phone are decided one at a time. */
export async function lockOtpCode(phone: string, q: Queryable): Promise<OtpCodeRecord | null> {
  const rows = await q.query<{ code_hash: string; expires_at: Date; failed_attempts: number }>(
    'SELECT code_hash, expires_at, failed_attempts FROM otp_codes WHERE phone = $1 FOR UPDATE',
    [phone],
  );
  const row = rows[0];
  return row ? { codeHash: row.code_hash, expiresAt: row.expires_at, failedAttempts: row.failed_attempts } : null;
}

/** Counts one wrong try; returns the new count. */
export async function recordOtpFailure(phone: string, q: Queryable): Promise<number> {
  const rows = await q.query<{ failed_attempts: number }>(
    'UPDATE otp_codes SET failed_attempts = failed_attempts + 1 WHERE phone = $1 RETURNING failed_attempts',
    [phone],
  );
  return rows[0]?.failed_attempts ?? 0;
}

export async function deleteOtpCode(phone: string, q: Queryable): Promise<void> {
  await q.query('DELETE FROM otp_codes WHERE phone = $1', [phone]);
}

/** Only if it still holds the code written at `createdAt` (a newer request may have replaced it). */
export async function deleteOtpCodeCreatedAt(phone: string, createdAt: Date, q: Queryable): Promise<void> {
  await q.query('DELETE FROM otp_codes WHERE phone = $1 AND created_at = $2', [phone, createdAt]);
}

// Refresh tokens -------------------------------------------------------------------------------------

export async function insertRefreshToken(
  token: { id: string; userId: string; familyId: string; hash: string; expiresAt: Date },
  now: Date,
  q: Queryable,
): Promise<void> {
  await q.query(
    `INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [token.id, token.userId, token.familyId, token.hash, token.expiresAt, now],
  );
}

/**
 * Marks a usable token as used and returns it; null when it is unknown, already used, revoked or
 * expired. The conditional UPDATE is the race guard: of two concurrent refreshes of one token, the
 * second waits for the first's row lock, then finds `used_at` set and matches nothing.
 */
export async function consumeRefreshToken(
  hash: string,
  now: Date,
  q: Queryable,
): Promise<{ id: string; userId: string; familyId: string } | null> {
  const rows = await q.query<{ id: string; user_id: string; family_id: string }>(
    `UPDATE refresh_tokens SET used_at = $2
      WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > $2
      RETURNING id, user_id, family_id`,
    [hash, now],
  );
  const row = rows[0];
  return row ? { id: row.id, userId: row.user_id, familyId: row.family_id } : null;
}

export async function findRefreshToken(
  hash: string,
  q: Queryable,
): Promise<{ familyId: string; usedAt: Date | null; revokedAt: Date | null; expiresAt: Date } | null> {
  const rows = await q.query<{ family_id: string; used_at: Date | null; revoked_at: Date | null; expires_at: Date }>(
    'SELECT family_id, used_at, revoked_at, expires_at FROM refresh_tokens WHERE token_hash = $1',
    [hash],
  );
  const row = rows[0];
  return row ? { familyId: row.family_id, usedAt: row.used_at, revokedAt: row.revoked_at, expiresAt: row.expires_at } : null;
}

/** Revokes every token of a sign-in chain; returns how many were still unrevoked. */
export async function revokeRefreshFamily(familyId: string, now: Date, q: Queryable): Promise<number> {
  const rows = await q.query(
    'UPDATE refresh_tokens SET revoked_at = $2 WHERE family_id = $1 AND revoked_at IS NULL RETURNING id',
    [familyId, now],
  );
  return rows.length;
}

export async function revokeUserRefreshTokens(userId: string, now: Date, q: Queryable): Promise<number> {
  const rows = await q.query('UPDATE refresh_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL RETURNING id', [
    userId,
    now,
  ]);
  return rows.length;
}

/**
 * Housekeeping for a periodic job: request-log entries past the hourly window, codes that expired,
 * refresh tokens past their expiry (an expired token is refused whatever its row says).
 */
export async function purgeExpiredAuthRows(now: Date, q: Queryable): Promise<void> {
  await q.query(`DELETE FROM otp_requests WHERE requested_at <= $1::timestamptz - interval '1 hour'`, [now]);
  await q.query('DELETE FROM otp_codes WHERE expires_at <= $1', [now]);
  await q.query('DELETE FROM refresh_tokens WHERE expires_at <= $1', [now]);
}
