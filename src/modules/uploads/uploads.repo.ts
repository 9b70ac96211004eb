/**
 * Upload SQL: partner id first, the Queryable last. The bytes are read only by `findUploadBytes`.
 */
import type { Queryable } from '../../db/db.js';
import type { Upload, UploadContentType } from './uploads.schemas.js';

interface UploadRow {
  id: string;
  content_type: UploadContentType;
  bytes: number;
  sha256: string;
  created_at: Date;
}

const toUpload = (r: UploadRow): Upload => ({
  id: r.id,
  contentType: r.content_type,
  bytes: r.bytes,
  sha256: r.sha256,
  createdAt: r.created_at.toISOString(),
});

export async function insertUpload(partnerId: string, upload: Upload, data: Buffer, q: Queryable): Promise<void> {
  await q.query(
    `INSERT INTO uploads (id, partner_id, content_type, bytes, sha256, data, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [upload.id, partnerId, upload.contentType, upload.bytes, upload.sha256, data, new Date(upload.createdAt)],
  );
}

/** The partner's upload `id` with its bytes; null when the partner has none of that id. */
export async function findUploadBytes(partnerId: string, id: string, q: Queryable): Promise<(Upload & { data: Buffer }) | null> {
  const rows = await q.query<UploadRow & { data: Uint8Array }>(
    'SELECT id, content_type, bytes, sha256, created_at, data FROM uploads WHERE partner_id = $1 AND id = $2',
    [partnerId, id],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    ...toUpload(r),
    data: Buffer.isBuffer(r.data) ? r.data : Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength),
  };
}

/** The partner's uploads among `ids` (without their bytes), in no particular order. */
export async function findUploads(partnerId: string, ids: readonly string[], q: Queryable): Promise<Upload[]> {
  if (ids.length === 0) return [];
  const rows = await q.query<UploadRow>(
    'SELECT id, content_type, bytes, sha256, created_at FROM uploads WHERE partner_id = $1 AND id = ANY($2::text[])',
    [partnerId, ids],
  );
  return rows.map(toUpload);
}

/**
 * Retention: uploads older than `cutoff` that no kept proof names (a proof's photos go with the proof,
 * which is kept as long; see proof.repo.ts). Idempotent.
 */
export async function purgeExpiredUploads(cutoff: Date, q: Queryable): Promise<number> {
  const rows = await q.query<{ n: string }>(
    `WITH gone AS (
       DELETE FROM uploads u
        WHERE u.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM order_proofs p WHERE p.partner_id = u.partner_id AND u.id = ANY(p.photo_ids))
       RETURNING 1
     ) SELECT count(*) AS n FROM gone`,
    [cutoff],
  );
  return Number(rows[0]?.n ?? 0);
}
