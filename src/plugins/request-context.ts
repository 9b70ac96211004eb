/**
 * What every request gets, whatever its route: an id of ours (`req_…`, src/modules/request-log/
 * request-id.ts) in the `X-Request-Id` header of every answer, errors included, and in every log line
 * of the request; a refusal of paths holding a NUL character; one log line per request at `info`.
 *
 * A caller's own `X-Request-Id` is never adopted (the id keys the request log and names the request
 * in the detail route, so it must be unique and ours); a sane one is written to the request's log line
 * as `clientRequestId`, to correlate with the caller's logs.
 *
 * Callback hooks, not async ones: no promise per request on every route. The log level is read once.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { newRequestId } from '../modules/request-log/request-id.js';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Fastify's `genReqId`: a fresh id for every request, stamped with the service clock. */
export function requestIdGenerator(clock: Clock): (req: IncomingMessage) => string {
  return () => newRequestId(clock.nowMs());
}

export const requestContextPlugin = fp(
  async (app: FastifyInstance) => {
    const logRequests = app.ctx.log.isLevelEnabled('info');
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      // A path holding a NUL character names nothing (no id or code can contain one, and PostgreSQL
      // text cannot hold it): answered like an unknown route.
      const nul = request.url.indexOf('%00');
      if (nul !== -1) {
        const query = request.url.indexOf('?');
        if (query === -1 || nul < query) {
          done(new AppError('ERR_NOT_FOUND', 'Not found'));
          return;
        }
      }
      done();
    });
    if (!logRequests) return;
    app.addHook('onResponse', (request, reply, done) => {
      const q = request.url.indexOf('?');
      const line: Record<string, unknown> = {
        method: request.method,
        url: q === -1 ? request.url : request.url.slice(0, q),
        statusCode: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      };
      const clientId = request.headers['x-request-id'];
      if (typeof clientId === 'string' && CLIENT_REQUEST_ID.test(clientId)) line.clientRequestId = clientId;
      request.log.info(line, 'request');
      done();
    });
  },
  { name: 'request-context', dependencies: ['context'] },
);
