/**
 * Capture for the request log (docs/decisions-log.md, 'Request log'): every partner-API request made with an identifiable key
 * (the key check identified it, whether or not it then accepted it) becomes one entry, handed to the
 * process's recorder when the answer is sent (src/modules/request-log/request-recorder.ts: an array
 * push; the database is written in batches, off the request path).
 *
 * What an entry holds: the fields listed in docs/decisions-log.md, 'Request log', with the id every answer carries as `X-Request-Id`
 * (request-context.ts). Bodies only for POSTs and for 4xx/5xx answers (a successful read's answer holds
 * customer data, and reading it would cost the hot path), cut at 8 KiB; no header but User-Agent and
 * Idempotency-Key is read, and credentials are masked wherever they appear (capture.ts).
 *
 * Off with REQUEST_LOG=off: no hook is added at all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ResolvedKey } from '../modules/keys/key.types.js';
import { bodyText, errorCodeOf, field, unreadBodyNote } from '../modules/request-log/capture.js';
import { requestIdTime } from '../modules/request-log/request-id.js';
import type { RequestLogEntry } from '../modules/request-log/request-log.types.js';
import type { ApiKeyEnvironment } from '../shared/schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The answer's body as sent, kept by onSend for the log (POSTs and errors of identified keys). */
    loggedResponse: string | null;
  }
}

function firstHeader(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function requestBodyOf(request: FastifyRequest, presented: string | null): string | null {
  const received = request.receivedBody;
  if (received === '') return null;
  if (received !== null) return bodyText(received, presented);
  return unreadBodyNote(firstHeader(request.headers['content-type']) ?? undefined, request.headers['content-length']);
}

function entryOf(
  request: FastifyRequest,
  reply: FastifyReply,
  key: ResolvedKey,
  environment: ApiKeyEnvironment,
  nowMs: number,
): RequestLogEntry {
  const presented = firstHeader(request.headers['x-api-key']);
  const url = request.url;
  const q = url.indexOf('?');
  const statusCode = reply.statusCode;
  const withBodies = request.method === 'POST' || statusCode >= 400;
  const response = withBodies ? request.loggedResponse : null;
  const durationMs = Math.round(reply.elapsedTime * 100) / 100;
  return {
    id: request.id,
    createdMs: requestIdTime(request.id) ?? Math.round(nowMs - durationMs),
    partnerId: key.partnerId,
    apiKeyId: key.id,
    environment,
    method: request.method,
    path: field(q === -1 ? url : url.slice(0, q), presented) ?? '/',
    query: q === -1 ? null : field(url.slice(q + 1), presented),
    statusCode,
    errorCode: statusCode >= 400 && response !== null ? errorCodeOf(response) : null,
    durationMs,
    ip: request.ip,
    userAgent: field(firstHeader(request.headers['user-agent']), presented),
    idempotencyKey: field(firstHeader(request.headers['idempotency-key']), presented),
    requestBody: withBodies ? requestBodyOf(request, presented) : null,
    responseBody: response === null ? null : bodyText(response, presented),
  };
}

export const requestLogPlugin = fp(
  async (app: FastifyInstance) => {
    if (!app.ctx.config.requestLog) return;
    const { requestLog, clock } = app.ctx;
    const environment = app.environment;
    app.decorateRequest('loggedResponse', null);

    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.apiKey !== null && (request.method === 'POST' || reply.statusCode >= 400)) {
        request.loggedResponse =
          typeof payload === 'string'
            ? payload
            : Buffer.isBuffer(payload)
              ? payload.toString('utf8')
              : payload === null || payload === undefined
                ? null
                : '[streamed body, not kept]';
      }
      done(null, payload);
    });

    app.addHook('onResponse', (request, reply, done) => {
      const key = request.apiKey;
      if (key !== null) {
        try {
          requestLog.add(entryOf(request, reply, key, environment, clock.nowMs()));
        } catch (err) {
          request.log.error({ err }, 'request log capture failed');
        }
      }
      done();
    });
  },
  { name: 'request-log', dependencies: ['context', 'api-key-auth', 'json-body'] },
);
