/**
 * Photo uploads (docs/tracking-and-proof.md, "Uploads"): the body is read as a stream, hashed as it
 * arrives and gathered into ONE buffer (never copied again), judged by its bytes, then stored.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import { AppError, notFound, validationError } from '../../errors.js';
import { findUploadBytes, insertUpload } from './uploads.repo.js';
import { MAX_UPLOAD_BYTES, type Upload, type UploadContentType } from './uploads.schemas.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const UPLOAD_ID = /^upl_[0-9A-Za-z]{24}$/;

function newUploadId(): string {
  let id = 'upl_';
  for (let i = 0; i < 24; i++) id += BASE62[randomInt(62)];
  return id;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The type of an image by its magic bytes, whatever the Content-Type says: a JPEG starts with FF D8 FF,
 * a PNG with its 8-byte signature. Nothing else is judged (a body cut short in transit is caught by its
 * Content-Length, not by the image's own end marker).
 */
export function imageTypeOf(data: Buffer): UploadContentType | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= PNG_SIGNATURE.length && data.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'image/png';
  return null;
}

function isReadable(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';
}

/** POST /v1/partner/uploads: `body` is the request stream (the route's content-type parser hands it over). */
export async function createUpload(
  ctx: AppContext,
  partnerId: string,
  body: unknown,
  declaredLength: string | undefined,
): Promise<Upload> {
  if (!isReadable(body)) throw validationError('body', 'must be the photo’s bytes (a JPEG or PNG of at most 5 MiB)');
  const expected = declaredLength === undefined ? null : Number(declaredLength);
  if (expected !== null && expected > MAX_UPLOAD_BYTES) {
    body.resume();
    throw validationError('body', 'must be at most 5 MiB');
  }
  const hash = createHash('sha256');
  // With a Content-Length the bytes go straight into one buffer of that size; without one (chunked)
  // the chunks are kept and joined once at the end.
  const sized = expected !== null && Number.isInteger(expected) && expected > 0 ? Buffer.allocUnsafe(expected) : null;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = chunk as Buffer;
      if (size + bytes.length > (sized ? sized.length : MAX_UPLOAD_BYTES)) {
        throw validationError('body', sized ? 'is longer than its Content-Length' : 'must be at most 5 MiB');
      }
      hash.update(bytes);
      if (sized) bytes.copy(sized, size);
      else chunks.push(bytes);
      size += bytes.length;
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    // The client went away or the connection broke mid-body: nothing is stored.
    throw validationError('body', 'was cut short (the upload did not complete)');
  }
  if (size === 0) throw validationError('body', 'must be the photo’s bytes (a JPEG or PNG of at most 5 MiB)');
  if (expected !== null && Number.isFinite(expected) && size !== expected) {
    throw validationError('body', `was cut short: ${size} of ${expected} bytes arrived`);
  }
  const data = sized ?? (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  const contentType = imageTypeOf(data);
  if (!contentType) throw validationError('body', 'must be a JPEG or PNG image (judged by its first bytes)');
  const upload: Upload = {
    id: newUploadId(),
    contentType,
    bytes: size,
    sha256: hash.digest('hex'),
    createdAt: ctx.clock.now().toISOString(),
  };
  await insertUpload(partnerId, upload, data, ctx.db);
  return upload;
}

/** GET /v1/partner/uploads/{id}: the partner's own upload with its bytes; any other id 404. */
export async function getUpload(ctx: AppContext, partnerId: string, id: string): Promise<Upload & { data: Buffer }> {
  const found = UPLOAD_ID.test(id) ? await findUploadBytes(partnerId, id, ctx.db) : null;
  if (!found) throw notFound('Upload');
  return found;
}

export { UPLOAD_ID };
