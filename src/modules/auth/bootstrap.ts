import type { AppContext } from '../../context.js';
import { newId } from '../../shared/ids.js';
import { findUserByPhone, insertUserIfAbsent, lockUserByPhone, setUserBlocked, setUserRole } from './auth.repo.js';

/**
 * Start-up tasks of the accounts domain: BOOTSTRAP_ADMIN_PHONE makes sure an ADMIN account with that
 * phone exists and can sign in. Idempotent, and safe when several processes start at once (the insert
 * skips an existing phone; the role change runs on a locked row). The variable is the operator's way
 * back in, so an existing account with that phone is made ADMIN (and unblocked), with a warning.
 */
export async function bootstrapAccounts(ctx: AppContext): Promise<void> {
  const phone = ctx.config.bootstrapAdminPhone;
  if (!phone) return;
  const now = ctx.clock.now();
  await ctx.db.tx(async (q) => {
    if (await insertUserIfAbsent({ id: newId(), phone, role: 'ADMIN', partnerId: null }, now, q)) {
      ctx.log.info({ phoneSuffix: phone.slice(-4) }, 'bootstrap: created the ADMIN account of BOOTSTRAP_ADMIN_PHONE');
      return;
    }
    const user = await lockUserByPhone(phone, q);
    if (!user) throw new Error('bootstrap admin account vanished');
    if (user.role !== 'ADMIN') {
      const previous = await findUserByPhone(phone, q);
      ctx.log.warn(
        { userId: user.id, previousRole: user.role, previousPartner: previous?.partnerName ?? null },
        'bootstrap: BOOTSTRAP_ADMIN_PHONE belonged to a non-ADMIN account; it is now an ADMIN account',
      );
      await setUserRole(user.id, 'ADMIN', null, now, q);
    }
    if (user.blockedAt) {
      ctx.log.warn({ userId: user.id }, 'bootstrap: the BOOTSTRAP_ADMIN_PHONE account was blocked; it is unblocked');
      await setUserBlocked(user.id, false, now, q);
    }
  });
}
