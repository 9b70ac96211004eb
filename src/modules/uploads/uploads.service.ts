/**
 * Photo uploads (docs/tracking-and-proof.md, "Uploads" and "Upload limits"): admitted by the upload
 * limits, the body read as a stream under a deadline, hashed as it arrives, judged by its first bytes,
 * then stored as the chunks it came in.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { UploadLimits } from '../../config.js';
import type { Db } from '../../db/db.js';
import { AppError, notFound, validationError } from '../../errors.js';
import type { BytePacer, UploadPacing } from './byte-pacer.js';
import { isRefusal, type Refusal, type UploadLimiter } from './upload-limiter.js';
import { findUploadBytes, insertUpload } from './uploads.repo.js';
import { MAX_UPLOAD_BYTES, type Upload, type UploadContentType } from './uploads.schemas.js';

/** What the upload services need (AppContext satisfies it). */
export interface UploadsDeps {
  /** Uploads are stored through its bulk lane (`withTimeout(…, { bulk: true })`). */
  db: Db;
  clock: { now(): Date };
  /** This process's upload limits (upload-limiter.ts). */
  uploads: Pick<UploadLimiter, 'admit'>;
  /** How fast bodies are read, admitted and refused (byte-pacer.ts). */
  uploadPacing: Pick<UploadPacing, 'bodies' | 'drains'>;
  /** The body deadline (UPLOAD_BODY_TIMEOUT_MS). */
  config: { uploads: Pick<UploadLimits, 'bodyTimeoutMs'> };
}

/** How long storing one upload's bytes may take (the bulk lane's deadline). */
const UPLOAD_WRITE_TIMEOUT_MS = 15_000;

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

/** The first `n` bytes of `chunks` (fewer if there are fewer), without joining the rest. */
function firstBytes(chunks: readonly Buffer[], n: number): Buffer {
  const first = chunks[0];
  if (first === undefined) return Buffer.alloc(0);
  if (first.length >= n || chunks.length === 1) return first;
  return Buffer.concat(chunks, n).subarray(0, n);
}

function isReadable(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function';
}

function refused(refusal: Refusal): AppError {
  return new AppError('ERR_RATE_LIMITED', refusal.message, undefined, { 'Retry-After': String(refusal.retryAfterSec) });
}

/** A body past its deadline: the answer closes the connection (the route destroys it once sent). */
function tooSlow(deadlineMs: number): AppError {
  const err = validationError('body', `did not arrive within ${Math.round(deadlineMs / 1000)} s (the connection is closed)`);
  return new AppError(err.code, err.message, err.details, { Connection: 'close' });
}

/**
 * The body's bytes as they arrive, in the chunks they came in (nothing is allocated ahead of them,
 * whatever length was announced), each passed to `onChunk` first (hashing, the byte budget). Ends with
 * the body, or fails: at `deadlineMs` (the connection is then closed by the caller), past `max` bytes,
 * when `onChunk` throws, or when the client goes away. On failure the chunks are dropped at once.
 */
function readChunks(
  body: Readable,
  max: number,
  deadlineMs: number,
  pacer: BytePacer,
  onChunk: (chunk: Buffer) => void,
): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    const finish = (err: unknown) => {
      clearTimeout(timer);
      unpace();
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onBroken);
      body.off('close', onBroken);
      if (err === null) return resolve(chunks);
      body.pause();
      chunks = [];
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > max) return finish(validationError('body', 'must be at most 5 MiB'));
      try {
        onChunk(chunk);
      } catch (err) {
        return finish(err);
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => finish(null);
    // The client went away or the connection broke mid-body: nothing is stored.
    const onBroken = () => finish(validationError('body', 'was cut short (the upload did not complete)'));
    const timer = setTimeout(() => finish(tooSlow(deadlineMs)), deadlineMs);
    // Paced before onData sees a chunk, so that a chunk that ends the read (over the size, refused) is
    // forgotten by the pacer rather than left waiting for a turn.
    const unpace = pacer.pace(body);
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onBroken);
    body.on('close', onBroken);
  });
}

/**
 * POST /v1/partner/uploads: `body` is the request stream (the route's content-type parser hands it
 * over). Admitted by the process's upload limits before a byte is read; the bytes are kept from the
 * moment they arrive until stored, and the admission is given back however the upload ends.
 */
export async function createUpload(
  deps: UploadsDeps,
  partnerId: string,
  body: unknown,
  declaredLength: string | undefined,
): Promise<Upload> {
  if (!isReadable(body)) throw validationError('body', 'must be the photo’s bytes (a JPEG or PNG of at most 5 MiB)');
  const expected = declaredLength === undefined ? null : Number(declaredLength);
  if (expected !== null && expected > MAX_UPLOAD_BYTES) throw validationError('body', 'must be at most 5 MiB');
  const sized = expected !== null && Number.isInteger(expected) && expected >= 0 ? expected : null;
  const pass = deps.uploads.admit(partnerId, sized);
  if (isRefusal(pass)) throw refused(pass);
  let received = 0;
  try {
    const hash = createHash('sha256');
    const chunks = await readChunks(
      body,
      sized ?? MAX_UPLOAD_BYTES,
      deps.config.uploads.bodyTimeoutMs,
      deps.uploadPacing.bodies,
      (chunk) => {
        if (sized !== null && received + chunk.length > sized) throw validationError('body', 'is longer than its Content-Length');
        received += chunk.length;
        const over = pass.charge(chunk.length);
        if (over) throw refused(over);
        hash.update(chunk);
      },
    );
    if (received === 0) throw validationError('body', 'must be the photo’s bytes (a JPEG or PNG of at most 5 MiB)');
    if (sized !== null && received !== sized) {
      throw validationError('body', `was cut short: ${received} of ${sized} bytes arrived`);
    }
    // The type is judged by the first bytes; the chunks are stored as they came (uploads.repo.ts).
    const contentType = imageTypeOf(firstBytes(chunks, PNG_SIGNATURE.length));
    if (!contentType) throw validationError('body', 'must be a JPEG or PNG image (judged by its first bytes)');
    const upload: Upload = {
      id: newUploadId(),
      contentType,
      bytes: received,
      sha256: hash.digest('hex'),
      createdAt: deps.clock.now().toISOString(),
    };
    // The bytes go in through the bulk lane: connections of its own and a deadline of its own, so a
    // burst of uploads neither holds the connections other requests wait on nor looks like an outage.
    await insertUpload(partnerId, upload, chunks, deps.db.withTimeout(UPLOAD_WRITE_TIMEOUT_MS, { bulk: true }));
    return upload;
  } finally {
    pass.release(received);
  }
}

/** GET /v1/partner/uploads/{id}: the partner's own upload with its bytes; any other id 404. */
export async function getUpload(
  deps: Pick<UploadsDeps, 'db'>,
  partnerId: string,
  id: string,
): Promise<Upload & { data: Buffer }> {
  const found = UPLOAD_ID.test(id) ? await findUploadBytes(partnerId, id, deps.db) : null;
  if (!found) throw notFound('Upload');
  return found;
}

export { UPLOAD_ID };
