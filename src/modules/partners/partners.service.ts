/**
 * Operator partner management (docs/decisions-log.md, 'Operator API'): create a partner with its first PARTNER account, add
 * more accounts, list partners. A phone that has no account gets a new PARTNER account; an existing
 * CUSTOMER account is turned into a PARTNER account of the partner; a PARTNER or ADMIN account is
 * never taken over (409 ERR_CONFLICT).
 */
import type { Clock } from '../../clock.js';
import type { Db, Queryable } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { isUuid, newId } from '../../shared/ids.js';
import { insertUserIfAbsent, lockUserByPhone, setUserRole } from '../auth/auth.repo.js';
import * as repo from './partners.repo.js';
import type { ProofPolicy } from './partners.schemas.js';

export interface PartnersDeps {
  db: Db;
  clock: Clock;
  /** Key records carry the partner's proof policy: a change is announced like a key change. */
  keys: { invalidateAll(): Promise<void> };
}

type PartnerDetail = repo.PartnerWithUsers & { proofPolicy: ProofPolicy };

export type PartnersService = ReturnType<typeof createPartnersService>;

export function createPartnersService({ db, clock, keys }: PartnersDeps) {
  /** Makes the phone's account a PARTNER account of `partnerId`, inside the caller's transaction. */
  async function attachUser(partnerId: string, phone: string, now: Date, q: Queryable): Promise<void> {
    let user = await lockUserByPhone(phone, q);
    if (!user) {
      if (await insertUserIfAbsent({ id: newId(), phone, role: 'PARTNER', partnerId }, now, q)) return;
      // Someone signed this phone up between the lookup and the insert: decide on that account.
      user = await lockUserByPhone(phone, q);
      if (!user) throw new Error('account vanished while attaching it to a partner');
    }
    if (user.role !== 'CUSTOMER') {
      const which =
        user.role === 'PARTNER' && user.partnerId === partnerId
          ? 'a user of this partner'
          : `${user.role === 'ADMIN' ? 'an' : 'a'} ${user.role} account`;
      throw new AppError('ERR_CONFLICT', `The phone ${phone} is already ${which}`);
    }
    await setUserRole(user.id, 'PARTNER', partnerId, now, q);
  }

  async function createPartner(input: { name: string; phone: string }): Promise<repo.PartnerWithUsers> {
    const name = input.name.trim();
    if (name === '') throw validationError('name', 'must not be blank');
    const now = clock.now();
    const id = newId();
    return db.tx(async (q) => {
      await repo.insertPartner({ id, name }, now, q);
      await attachUser(id, input.phone, now, q);
      const partner = await repo.findPartnerWithUsers(id, q);
      if (!partner) throw new Error('partner vanished after insert');
      return partner;
    });
  }

  async function addPartnerUser(partnerId: string, phone: string): Promise<repo.PartnerWithUsers> {
    if (!isUuid(partnerId)) throw notFound('Partner');
    const now = clock.now();
    return db.tx(async (q) => {
      if (!(await repo.partnerExists(partnerId, q))) throw notFound('Partner');
      await attachUser(partnerId, phone, now, q);
      const partner = await repo.findPartnerWithUsers(partnerId, q);
      if (!partner) throw notFound('Partner');
      return partner;
    });
  }

  async function listPartners(): Promise<{ items: repo.PartnerWithUsers[] }> {
    return { items: await repo.listPartnersWithUsers(db) };
  }

  /** PATCH /v1/admin/partners/{id}: the proof policy (docs/tracking-and-proof.md). */
  async function updatePartner(partnerId: string, patch: { proofPolicy?: ProofPolicy }): Promise<PartnerDetail> {
    if (!isUuid(partnerId)) throw notFound('Partner');
    if (patch.proofPolicy !== undefined) {
      if (!(await repo.updateProofPolicy(partnerId, patch.proofPolicy, db))) throw notFound('Partner');
      // Every process reads the new policy on the partner's next request (key-resolver.ts).
      await keys.invalidateAll();
    }
    return getPartner(partnerId);
  }

  /** GET /v1/admin/partners/{id}. */
  async function getPartner(partnerId: string): Promise<PartnerDetail> {
    const partner = isUuid(partnerId) ? await repo.findPartnerDetail(partnerId, db) : null;
    if (!partner) throw notFound('Partner');
    return partner;
  }

  return { createPartner, addPartnerUser, listPartners, updatePartner, getPartner };
}
