/**
 * The one way an upload's bytes are answered (every route that returns one uses it). The bytes are the
 * partner's, judged only by their first bytes: a PNG signature followed by HTML is a valid upload. So
 * the answer tells a browser never to treat them as anything but the declared image:
 *  - `X-Content-Type-Options: nosniff`: no guessing a type from the bytes;
 *  - `Content-Disposition: inline; filename="<id>.<ext>"`: a file of its own name, never a page;
 *  - `Content-Security-Policy: sandbox; default-src 'none'`: opened directly, it runs no script, loads
 *    nothing and gets an origin of its own.
 */
import type { FastifyReply } from 'fastify';
import type { Upload, UploadContentType } from './uploads.schemas.js';

const EXTENSION: Record<UploadContentType, string> = { 'image/jpeg': 'jpg', 'image/png': 'png' };

export const UPLOAD_CSP = "sandbox; default-src 'none'";

export function sendUpload(reply: FastifyReply, upload: Upload & { data: Buffer }): FastifyReply {
  return reply
    .type(upload.contentType)
    .header('content-length', String(upload.bytes))
    .header('cache-control', 'private, max-age=86400, immutable')
    .header('etag', `"${upload.sha256}"`)
    .header('x-content-type-options', 'nosniff')
    .header('content-disposition', `inline; filename="${upload.id}.${EXTENSION[upload.contentType]}"`)
    .header('content-security-policy', UPLOAD_CSP)
    .send(upload.data);
}
