/**
 * Operator actions on accounts (blocking). Kept apart from sign-in, which needs an SMS gateway.
 */
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { AppError, notFound } from '../../errors.js';
import { isUuid } from '../../shared/ids.js';
import * as repo from './auth.repo.js';
import type { Role } from './tokens.js';

export interface AdminUserView {
  id: string;
  phone: string;
  role: Role;
  partnerId: string | null;
  blocked: boolean;
}

export type AccountsService = ReturnType<typeof createAccountsService>;

export function createAccountsService({ db, clock }: { db: Db; clock: Clock }) {
  /**
   * Blocks or unblocks an account. Blocking also ends every session of the account (all its refresh
   * tokens); access tokens already issued are stateless and run out within their 15 minutes.
   */
  async function setUserBlocked(actorUserId: string, userId: string, blocked: boolean): Promise<AdminUserView> {
    if (!isUuid(userId)) throw notFound('User');
    if (blocked && userId === actorUserId) {
      throw new AppError('ERR_CONFLICT', 'An operator cannot block their own account');
    }
    const now = clock.now();
    const user = await db.tx(async (q) => {
      if (!(await repo.setUserBlocked(userId, blocked, now, q))) return null;
      if (blocked) await repo.revokeUserRefreshTokens(userId, now, q);
      return repo.findUserById(userId, q);
    });
    if (!user) throw notFound('User');
    return { id: user.id, phone: user.phone, role: user.role, partnerId: user.partnerId, blocked: user.blockedAt !== null };
  }

  return { setUserBlocked };
}
