/**
 * The go-live checklist's tracking and proof items (docs/tracking-and-proof.md, "Sandbox"): shown to
 * the sandbox keys of a partner whose proof policy asks for proof, judged on what the key's lineage
 * really did on its sandbox orders. Two statements for all lineages at once (the policy, the evidence).
 */
import type { Queryable } from '../../db/db.js';
import type { ProofPolicy } from '../partners/partners.schemas.js';

export interface ProofEvidence {
  /** When a location of one of the lineage's sandbox orders was first stored. */
  sentLocations: Date | null;
  /** When a DELIVERED first carried the proof the policy asks for. */
  deliveredWithProof: Date | null;
}

export const NO_PROOF_EVIDENCE: ProofEvidence = { sentLocations: null, deliveredWithProof: null };

export async function partnerProofPolicy(partnerId: string, q: Queryable): Promise<ProofPolicy> {
  const rows = await q.query<{ proof_policy: ProofPolicy }>('SELECT proof_policy FROM partners WHERE id = $1', [partnerId]);
  return rows[0]?.proof_policy ?? 'NONE';
}

/** By lineage (the key the lineage acts for): the evidence of its sandbox orders. */
export async function proofEvidence(
  partnerId: string,
  lineages: string[],
  policy: ProofPolicy,
  q: Queryable,
): Promise<Map<string, ProofEvidence>> {
  if (lineages.length === 0 || policy === 'NONE') return new Map();
  const rows = await q.query<{ acts_for: string; sent_locations: Date | null; delivered_with_proof: Date | null }>(
    `SELECT o.assigned_key_id AS acts_for,
            (SELECT min(p.at) FROM order_track_points p WHERE p.order_id = ANY(array_agg(o.id))) AS sent_locations,
            (SELECT min(pr.at) FROM order_proofs pr
              WHERE pr.partner_id = $1 AND pr.order_id = ANY(array_agg(o.id)) AND pr.event = 'DELIVERED'
                AND pr.lat IS NOT NULL AND ($3 <> 'LOCATION_AND_PHOTO' OR cardinality(pr.photo_ids) > 0)) AS delivered_with_proof
       FROM orders o
      WHERE o.assigned_key_id = ANY($2::uuid[]) AND o.environment = 'SANDBOX'
      GROUP BY o.assigned_key_id`,
    [partnerId, lineages, policy],
  );
  return new Map(rows.map((r) => [r.acts_for, { sentLocations: r.sent_locations, deliveredWithProof: r.delivered_with_proof }]));
}
