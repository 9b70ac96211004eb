/**
 * Photo uploads (docs/tracking-and-proof.md, "Uploads"): raw bytes in, raw bytes out.
 *
 * This plugin is encapsulated (registered without fastify-plugin): its content-type parser, which hands
 * the request stream to the handler unread whatever the Content-Type says (or without one), applies to
 * its own routes only. The type is judged by the bytes, so the header decides nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../errors.js';
import { apiKeyOf } from '../../plugins/api-key-auth.js';
import { errorResponses } from '../../shared/schemas.js';
import type { BytePacer } from './byte-pacer.js';
import { sendUpload } from './upload-reply.js';
import { PhotoBytes, Upload, UploadIdParams } from './uploads.schemas.js';
import { createUpload, getUpload, type UploadsDeps } from './uploads.service.js';

/**
 * A body answered before its end (refused, or past its deadline). Past its deadline, the connection goes
 * with the answer. Refused (429, too long), the rest of the body is read and dropped as it comes (nothing
 * is kept), at the pace of refused bodies (byte-pacer.ts), so the client reads its answer rather than a
 * reset connection; the connection goes when the body has not ended by the body deadline.
 */
function settleUnreadBody(request: IncomingMessage, response: ServerResponse, bodyTimeoutMs: number, pacer: BytePacer): void {
  if (request.complete) return;
  const socket = request.socket as Socket | undefined;
  if (!socket || typeof socket.destroy !== 'function') return;
  if (String(response.getHeader('connection') ?? '').toLowerCase() === 'close') {
    socket.destroy();
    return;
  }
  const timer = setTimeout(() => {
    if (!request.complete) socket.destroy();
  }, bodyTimeoutMs);
  timer.unref();
  const unpace = pacer.pace(request);
  const done = () => {
    clearTimeout(timer);
    unpace();
  };
  request.once('end', done);
  socket.once('close', done);
  request.resume();
}

/** The upload limits as the OpenAPI document and the route's description state them. */
const UPLOAD_LIMITS_TEXT =
  'Limits (429 ERR_RATE_LIMITED with Retry-After, before the body is read): at most 4 uploads of a partner ' +
  '(all its keys) in flight at once and 16 of all partners per API process, and 100 MiB of upload bytes per ' +
  'partner in any 60 s. The whole body must arrive within 30 s; past it the answer is 400 ERR_VALIDATION and ' +
  'the connection is closed. Each API process reads upload bodies at a bounded rate (16 MiB/s of all partners’ ' +
  'uploads together), so a burst arrives more slowly rather than being refused. (The figures are the defaults; ' +
  'an operator may set others.)';

export const uploadsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps: UploadsDeps = app.ctx;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  // Fastify refuses a malformed Content-Type (`undefined`, `image/`) before any parser runs; here the
  // header decides nothing, so whatever it says, the body is read as bytes.
  app.addHook('onRequest', async (request) => {
    request.raw.headers['content-type'] = 'application/octet-stream';
  });

  app.post(
    '/v1/partner/uploads',
    {
      onRequest: app.partnerAuth('logistics:write'),
      // The body is a stream, checked by the service: no schema validation of it.
      validatorCompiler: () => () => true,
      schema: {
        summary: 'Upload a photo',
        description:
          'The raw bytes of a JPEG or PNG (at most 5 MiB) as the body, `Content-Type: image/jpeg` or ' +
          '`image/png`. The type is judged by the first bytes (the magic numbers), whatever the header says; ' +
          'anything else, a body over 5 MiB or one shorter than its Content-Length answers 400 ' +
          'ERR_VALIDATION and nothing is stored. Name the id in a proof’s photoIds. ' +
          UPLOAD_LIMITS_TEXT,
        tags: ['partner'],
        operationId: 'createPartnerUpload',
        body: PhotoBytes,
        response: {
          201: Upload,
          ...errorResponses('ERR_VALIDATION', 401, 403),
          429: {
            ...errorResponses(429)[429],
            'x-response-description':
              'Too many requests: ERR_RATE_LIMITED: the key’s request rate, or an upload limit: 4 uploads of the ' +
              'partner in flight, 16 in the API process, or 100 MiB of the partner’s uploads in the last 60 s',
          },
        },
      },
    },
    async (request, reply) => {
      // The request log keeps a note of the body, never its bytes (refused uploads included).
      const declared = request.headers['content-length'];
      request.receivedBody = `[photo upload: ${declared === undefined ? 'chunked' : `${declared} bytes`}]`;
      reply.raw.once('finish', () =>
        settleUnreadBody(request.raw, reply.raw, deps.config.uploads.bodyTimeoutMs, deps.uploadPacing.drains),
      );
      const upload = await createUpload(deps, apiKeyOf(request).partnerId, request.body, declared);
      request.receivedBody = `[${upload.contentType}: ${upload.bytes} bytes]`;
      return reply.code(201).send(upload);
    },
  );

  app.get(
    '/v1/partner/uploads/:id',
    {
      onRequest: app.partnerAuth(),
      schema: {
        summary: 'Download a photo',
        description:
          'The bytes of an upload of the key’s partner, to any of its keys holding orders:read or ' +
          'logistics:write (else 403 ERR_API_KEY_SCOPE); another partner’s upload answers 404.',
        tags: ['partner'],
        operationId: 'getPartnerUpload',
        params: UploadIdParams,
        response: { 200: PhotoBytes, ...errorResponses(401, 403, 'ERR_NOT_FOUND', 429) },
      },
    },
    async (request, reply) => {
      const key = apiKeyOf(request);
      if (!key.scopes.includes('orders:read') && !key.scopes.includes('logistics:write')) {
        throw new AppError('ERR_API_KEY_SCOPE', 'This API key lacks the scope orders:read or logistics:write');
      }
      return sendUpload(reply, await getUpload(deps, key.partnerId, request.params.id));
    },
  );
};
