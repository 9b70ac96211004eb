/**
 * Photo uploads (docs/tracking-and-proof.md, "Uploads").
 */
import Type, { type Static } from 'typebox';
import { DateTime } from '../../shared/schemas.js';

/** The largest upload: 5 MiB. */
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
export const UPLOAD_CONTENT_TYPES = ['image/jpeg', 'image/png'] as const;
export type UploadContentType = (typeof UPLOAD_CONTENT_TYPES)[number];

export const Upload = Type.Object(
  {
    id: Type.String({ pattern: '^upl_', description: 'upl_…; name it in a proof’s photoIds' }),
    contentType: Type.Unsafe<UploadContentType>({
      type: 'string',
      enum: [...UPLOAD_CONTENT_TYPES],
      description: 'from the bytes themselves (their magic number), whatever the request said',
    }),
    bytes: Type.Integer({ minimum: 1, maximum: MAX_UPLOAD_BYTES }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the bytes, hex' }),
    createdAt: DateTime(),
  },
  { $id: 'Upload', additionalProperties: false },
);
export type Upload = Static<typeof Upload>;

/** The raw bytes of a photo (a request body or an answer), not JSON. */
export const PhotoBytes = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description: 'the photo’s bytes: a JPEG or PNG of at most 5 MiB',
  'x-media-types': [...UPLOAD_CONTENT_TYPES],
});

export const UploadIdParams = Type.Object({ id: Type.String({ description: 'upl_…; anything else answers 404' }) });
