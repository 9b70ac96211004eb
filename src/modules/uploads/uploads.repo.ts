/**
 * Upload SQL: partner id first, the Queryable last. The bytes are read only by `findUploadBytes`.
 */
import type { Db, Queryable } from '../../db/db.js';
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

/**
 * Stores an upload whose bytes are `chunks` (as they arrived; `upload.bytes` in all). On a PostgreSQL
 * server: one binary `COPY … FROM STDIN` that writes the chunks to the connection as they are, a
 * chunk at a time as the socket takes them, so the bytes are never joined into one buffer nor copied
 * into a statement's parameters (docs/performance.md, "Uploads beside other partners"). The embedded
 * database cannot COPY from a client (db.ts): one INSERT with the bytes joined.
 */
export async function insertUpload(partnerId: string, upload: Upload, chunks: readonly Buffer[], db: Db): Promise<void> {
  if (db.kind === 'server') {
    await db.copyFrom(
      'COPY uploads (id, partner_id, content_type, bytes, sha256, created_at, data) FROM STDIN (FORMAT binary)',
      binaryCopyRow(partnerId, upload, chunks),
    );
    return;
  }
  const data = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, upload.bytes);
  await db.query(
    `INSERT INTO uploads (id, partner_id, content_type, bytes, sha256, data, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [upload.id, partnerId, upload.contentType, upload.bytes, upload.sha256, data, new Date(upload.createdAt)],
  );
}

/** COPY's binary file header: its signature, no flags, no header extension. */
const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
/** timestamptz in binary: microseconds since 2000-01-01 00:00 UTC. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);

/**
 * One row of `COPY uploads (id, partner_id, content_type, bytes, sha256, created_at, data)` in COPY's
 * binary format: the header and every field before the bytes in one small buffer, the chunks as they
 * are, then the end-of-data marker.
 */
function binaryCopyRow(partnerId: string, upload: Upload, chunks: readonly Buffer[]): Buffer[] {
  const text = (value: string) => Buffer.from(value, 'utf8');
  const int4 = Buffer.alloc(4);
  int4.writeInt32BE(upload.bytes);
  const createdAt = Buffer.alloc(8);
  createdAt.writeBigInt64BE(BigInt(Date.parse(upload.createdAt) - PG_EPOCH_MS) * 1000n);
  const fields = [
    text(upload.id),
    Buffer.from(partnerId.replace(/-/g, ''), 'hex'),
    text(upload.contentType),
    int4,
    text(upload.sha256),
    createdAt,
  ];
  const parts: Buffer[] = [COPY_HEADER, u16(fields.length + 1)];
  for (const field of fields) parts.push(u32(field.length), field);
  parts.push(u32(upload.bytes));
  return [Buffer.concat(parts), ...chunks, u16(0xffff)];
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
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
