/**
 * Proof SQL (docs/tracking-and-proof.md): written in the event's transaction; read through the key's
 * scope for partners. The Queryable comes last.
 */
import type { Queryable } from '../../db/db.js';
import { type PartnerOrderScope, scopeConditions } from '../orders/visibility.js';
import type { OrderProof } from './proof.schemas.js';

export interface NewProof {
  orderId: string;
  partnerId: string;
  event: 'DELIVERED' | 'FAILED';
  at: Date;
  location: { lat: number; lng: number; accuracyM: number } | null;
  distanceM: number | null;
  photoIds: string[];
  recipientName: string | null;
}

/** Writes proofs (one statement for a group of events). */
export async function insertProofs(proofs: NewProof[], q: Queryable): Promise<void> {
  if (proofs.length === 0) return;
  await q.query(
    `INSERT INTO order_proofs (order_id, partner_id, event, at, lat, lng, accuracy_m, distance_m, recipient_name, photo_ids)
     SELECT p.order_id, p.partner_id, p.event, p.at, p.lat, p.lng, p.accuracy_m, p.distance_m, p.recipient_name,
            ARRAY(SELECT jsonb_array_elements_text(p.photo_ids))
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::float8[], $6::float8[], $7::float8[],
                   $8::float8[], $9::text[], $10::jsonb[])
            AS p(order_id, partner_id, event, at, lat, lng, accuracy_m, distance_m, recipient_name, photo_ids)`,
    [
      proofs.map((p) => p.orderId),
      proofs.map((p) => p.partnerId),
      proofs.map((p) => p.event),
      proofs.map((p) => p.at),
      proofs.map((p) => p.location?.lat ?? null),
      proofs.map((p) => p.location?.lng ?? null),
      proofs.map((p) => p.location?.accuracyM ?? null),
      proofs.map((p) => p.distanceM),
      proofs.map((p) => p.recipientName),
      proofs.map((p) => JSON.stringify(p.photoIds)),
    ],
  );
}

interface ProofRow {
  code: string;
  event: 'DELIVERED' | 'FAILED';
  at: Date;
  lat: number | null;
  lng: number | null;
  accuracy_m: number | null;
  distance_m: number | null;
  recipient_name: string | null;
  photos: Array<{ id: string; contentType: string; bytes: number }>;
}

const PROOF_OF_ORDER = `
  SELECT o.code, p.event, p.at, p.lat, p.lng, p.accuracy_m, p.distance_m, p.recipient_name,
         coalesce((SELECT json_agg(json_build_object('id', u.id, 'contentType', u.content_type, 'bytes', u.bytes)
                                   ORDER BY array_position(p.photo_ids, u.id))
                     FROM uploads u WHERE u.partner_id = p.partner_id AND u.id = ANY(p.photo_ids)), '[]'::json) AS photos
    FROM orders o
    JOIN LATERAL (SELECT * FROM order_proofs p WHERE p.order_id = o.id ORDER BY p.id DESC LIMIT 1) p ON true`;

function toProof(r: ProofRow): OrderProof {
  return {
    orderCode: r.code,
    event: r.event,
    at: r.at.toISOString(),
    location: r.lat === null || r.lng === null ? null : { lat: r.lat, lng: r.lng, accuracyM: r.accuracy_m ?? 0 },
    distanceM: r.distance_m,
    photos: r.photos,
    recipientName: r.recipient_name,
  };
}

const visibleProofSql = (kind: 'key' | 'all') =>
  `${PROOF_OF_ORDER} WHERE ${['o.code = $1', ...scopeConditions(kind, { environment: '$2', keyId: '$3' }, 'probe')].join(' AND ')}`;
const VISIBLE_PROOF = { key: visibleProofSql('key'), all: visibleProofSql('all') };

/** The latest proof of the order `code` as `scope` sees it; null when there is none it sees. */
export async function findVisibleProof(scope: PartnerOrderScope, code: string, q: Queryable): Promise<OrderProof | null> {
  const rows =
    scope.keyId === null
      ? await q.query<ProofRow>(VISIBLE_PROOF.all, [code, scope.environment])
      : await q.query<ProofRow>(VISIBLE_PROOF.key, [code, scope.environment, scope.keyId]);
  return rows[0] ? toProof(rows[0]) : null;
}

/** The latest proof of the order `code` (the operator). */
export async function findProofByCode(code: string, q: Queryable): Promise<OrderProof | null> {
  const rows = await q.query<ProofRow>(`${PROOF_OF_ORDER} WHERE o.code = $1`, [code]);
  return rows[0] ? toProof(rows[0]) : null;
}

/** The latest proof of the order `code` if it is assigned to a key of `partnerId` (the developer portal). */
export async function findPartnerProof(partnerId: string, code: string, q: Queryable): Promise<OrderProof | null> {
  const rows = await q.query<ProofRow>(
    `${PROOF_OF_ORDER} WHERE o.code = $2 AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = o.assigned_key_id AND k.partner_id = $1)`,
    [partnerId, code],
  );
  return rows[0] ? toProof(rows[0]) : null;
}

/** Retention: proofs older than `cutoff` (their photos then go with the uploads' purge). Idempotent. */
export async function purgeExpiredProofs(cutoff: Date, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: string }>(
    'WITH gone AS (DELETE FROM order_proofs WHERE at < $1 RETURNING 1) SELECT count(*) AS n FROM gone',
    [cutoff],
  );
  return Number(rows[0]?.n ?? 0);
}
