/**
 * SQL of partner organisations. Partner-scoped reads take the partner id first.
 */
import type { Queryable } from '../../db/db.js';
import type { ProofPolicy } from './partners.schemas.js';

export interface PartnerWithUsers {
  id: string;
  name: string;
  users: Array<{ id: string; phone: string }>;
}

interface PartnerRow {
  id: string;
  name: string;
  proof_policy: ProofPolicy;
  users: Array<{ id: string; phone: string }>;
}

// One round trip per read: the users are aggregated beside their partner, in the order they joined
// (accounts created before the partner-join column existed fall back to their creation time).
const PARTNER_WITH_USERS = `
  SELECT p.id, p.name, p.proof_policy,
         COALESCE(json_agg(json_build_object('id', u.id, 'phone', u.phone)
                           ORDER BY COALESCE(u.partner_joined_at, u.created_at), u.id)
                  FILTER (WHERE u.id IS NOT NULL), '[]'::json) AS users
    FROM partners p LEFT JOIN users u ON u.partner_id = p.id`;

function toPartner(row: PartnerRow): PartnerWithUsers {
  return {
    id: row.id,
    name: row.name,
    users: row.users.map((u) => ({ id: u.id, phone: u.phone })),
  };
}

export async function insertPartner(partner: { id: string; name: string }, now: Date, q: Queryable): Promise<void> {
  await q.query('INSERT INTO partners (id, name, created_at) VALUES ($1, $2, $3)', [partner.id, partner.name, now]);
}

/** Sets the partner's proof policy; false when there is no such partner. */
export async function updateProofPolicy(partnerId: string, proofPolicy: ProofPolicy, q: Queryable): Promise<boolean> {
  const rows = await q.query('UPDATE partners SET proof_policy = $2 WHERE id = $1 RETURNING id', [partnerId, proofPolicy]);
  return rows.length === 1;
}

export async function partnerExists(partnerId: string, q: Queryable): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM partners WHERE id = $1', [partnerId]);
  return rows.length === 1;
}

/** The partner with its users and settings (the operator's partner read). */
export async function findPartnerDetail(
  partnerId: string,
  q: Queryable,
): Promise<(PartnerWithUsers & { proofPolicy: ProofPolicy }) | null> {
  const rows = await q.query<PartnerRow>(`${PARTNER_WITH_USERS} WHERE p.id = $1 GROUP BY p.id`, [partnerId]);
  return rows[0] ? { ...toPartner(rows[0]), proofPolicy: rows[0].proof_policy } : null;
}

export async function findPartnerWithUsers(partnerId: string, q: Queryable): Promise<PartnerWithUsers | null> {
  const rows = await q.query<PartnerRow>(`${PARTNER_WITH_USERS} WHERE p.id = $1 GROUP BY p.id`, [partnerId]);
  return rows[0] ? toPartner(rows[0]) : null;
}

/** Every partner with its users, newest partner first. */
export async function listPartnersWithUsers(q: Queryable): Promise<PartnerWithUsers[]> {
  const rows = await q.query<PartnerRow>(`${PARTNER_WITH_USERS} GROUP BY p.id ORDER BY p.created_at DESC, p.id DESC`);
  return rows.map(toPartner);
}
