/**
 * One place turns every failure into the envelope `{ statusCode, code, message, details? }`: domain
 * errors (AppError), schema validation failures, Fastify's own request errors, unknown routes, and
 * anything unexpected (500 ERR_INTERNAL with nothing internal in the body; the stack goes to the log).
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, type ErrorDetails } from '../errors.js';
import type { ErrorEnvelope } from '../shared/schemas.js';
import { validationDetails } from './validation.js';

const MIB = 1024 * 1024;

function fromFastifyError(err: FastifyError): AppError | null {
  if (err.validation) {
    const details = validationDetails(err.validation as never, err.validationContext);
    const first = details[0];
    const message = first ? `${first.field} ${first.messages[0]}` : 'Invalid request';
    return new AppError('ERR_VALIDATION', message, details);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('ERR_BAD_REQUEST', `Request body is larger than ${MIB} bytes (1 MiB)`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('ERR_BAD_REQUEST', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('ERR_BAD_REQUEST', 'Request body is not valid JSON');
  }
  if (err instanceof SyntaxError) return new AppError('ERR_BAD_REQUEST', 'Request body is not valid JSON');
  const status = err.statusCode ?? 500;
  if (status === 404) return new AppError('ERR_NOT_FOUND', 'Not found');
  if (status >= 400 && status < 500) return new AppError('ERR_BAD_REQUEST', 'Bad request');
  return null;
}

/**
 * SQLSTATEs of a transaction PostgreSQL rolled back because of another one running at the same moment:
 * a deadlock (40P01) or a serialization failure (40001). Nothing of the request was applied and sending
 * it again is safe, so the client gets 409 ERR_CONFLICT, not a 500 (docs/decisions-log.md, 'Requests,
 * errors and input'). Paths that can retry by themselves (the event group commit, the request log, the
 * usage flush) do so before an error reaches here.
 */
const CONCURRENT_CHANGE_SQLSTATE = new Set(['40P01', '40001']);
const CONCURRENT_CHANGE_RETRY_AFTER_SEC = '1';

function isConcurrentChange(err: unknown): boolean {
  return err instanceof Error && CONCURRENT_CHANGE_SQLSTATE.has((err as { code?: unknown }).code as string);
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isConcurrentChange(err)) {
    // Retry-After tells this 409 from a business conflict (which has none): nothing was applied, and
    // the same request may be sent again after a second (the SDK does so by itself).
    return Object.assign(
      new AppError(
        'ERR_CONFLICT',
        'The request met a change of the same data made at the same moment and was not applied; send it again',
        undefined,
        { 'Retry-After': CONCURRENT_CHANGE_RETRY_AFTER_SEC },
      ),
      { cause: err },
    );
  }
  if (err && typeof err === 'object' && ('code' in err || 'validation' in err || 'statusCode' in err)) {
    const mapped = fromFastifyError(err as FastifyError);
    if (mapped) return mapped;
  }
  return new AppError('ERR_INTERNAL', 'Internal server error');
}

export function envelope(err: AppError): ErrorEnvelope {
  const body: ErrorEnvelope & { details?: ErrorDetails } = {
    statusCode: err.statusCode,
    code: err.code,
    message: err.message,
  };
  if (err.details !== undefined) body.details = err.details;
  return body;
}

/**
 * A 503 ERR_DEPENDENCY_UNAVAILABLE is a dependency outage, and requests succeed again within 2 s of its
 * end (docs/decisions-log.md, 'Dependency faults'): it tells clients to try again after a second (the SDK's retries honour it). An
 * error that names its own Retry-After keeps it.
 */
const DEPENDENCY_RETRY_AFTER_SEC = '1';

export function sendError(reply: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  if (err.code === 'ERR_DEPENDENCY_UNAVAILABLE' && !reply.hasHeader('retry-after')) {
    reply.header('retry-after', DEPENDENCY_RETRY_AFTER_SEC);
  }
  return reply.status(err.statusCode).type('application/json; charset=utf-8').send(envelope(err));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers over 16 KiB, a malformed request
 * line or header, Content-Length with Transfer-Encoding, a request that never completes) still get the
 * envelope: 400 ERR_BAD_REQUEST, then the connection is closed (the parser cannot go on with it).
 * Fastify's `clientErrorHandler` option; `this` is the Fastify instance.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const message =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'Request headers are too large (16 KiB at most)'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request did not arrive in time'
        : 'The request is not valid HTTP';
  this.log.debug({ errorCode: err.code }, `client error: ${message}`);
  if (socket.writable) {
    const body = JSON.stringify(envelope(new AppError('ERR_BAD_REQUEST', message)));
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
      const appError = toAppError(err);
      if (appError.code === 'ERR_DEPENDENCY_UNAVAILABLE') {
        // The outage itself is logged once, when it starts and when it ends (context.ts); the request
        // line still shows the 503. Per request, only at debug level.
        request.log.debug({ err }, appError.message);
      } else if (isConcurrentChange(err)) {
        // Not the client's doing, and a sign of two paths taking locks in different orders: worth a look.
        request.log.warn({ err }, 'transaction rolled back by a concurrent one; answered 409 ERR_CONFLICT');
      } else if (appError.statusCode >= 500) {
        request.log.error({ err }, appError.code === 'ERR_INTERNAL' ? 'unexpected error' : appError.message);
      } else {
        request.log.info({ errorCode: appError.code }, appError.message);
      }
      return sendError(reply, appError);
    });
    app.setNotFoundHandler((request, reply) => {
      return sendError(reply, new AppError('ERR_NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
    });
  },
  { name: 'error-handler' },
);
