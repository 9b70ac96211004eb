/**
 * The go-live checklist's offer items (docs/offers.md, "Sandbox, portal, SDK, CLI"): when the lineage
 * first accepted an offer, and first declined one (a decline always carries its reason). One statement
 * for all lineages at once, over the offers made to any key of them (offers.repo.ts reads them).
 */
import type { Queryable } from '../../db/db.js';
import { firstOfferDecisions } from '../offers/offers.repo.js';
import type { LineageMember } from './checklist.repo.js';

export interface OfferEvidence {
  accepted: Date | null;
  declined: Date | null;
}

export const NO_OFFER_EVIDENCE: OfferEvidence = { accepted: null, declined: null };

/** By lineage (the key the lineage acts for). */
export async function offerEvidence(members: LineageMember[], q: Queryable): Promise<Map<string, OfferEvidence>> {
  if (members.length === 0) return new Map();
  const lineageOf = new Map(members.map((m) => [m.keyId, m.actsForKeyId]));
  const out = new Map<string, OfferEvidence>();
  for (const row of await firstOfferDecisions(
    members.map((m) => m.keyId),
    q,
  )) {
    const lineage = lineageOf.get(row.keyId) ?? row.keyId;
    const seen = out.get(lineage) ?? { ...NO_OFFER_EVIDENCE };
    const earliest = (a: Date | null, b: Date | null) => (a === null ? b : b === null ? a : a < b ? a : b);
    out.set(lineage, { accepted: earliest(seen.accepted, row.accepted), declined: earliest(seen.declined, row.declined) });
  }
  return out;
}
