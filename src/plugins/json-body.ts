/**
 * JSON request bodies (docs/decisions-log.md, 'Requests, errors and input'): only `application/json` is accepted (anything else is 400
 * ERR_BAD_REQUEST through the error handler); an empty body is "no body" (some clients send
 * Content-Type on bodiless POSTs); prototype-poisoning keys are refused; a string holding a NUL
 * character is 400 ERR_VALIDATION naming it (PostgreSQL text cannot store U+0000).
 *
 * The body as received is kept on the request for the request log (`receivedBody`): its text, or a
 * short note when it is not valid UTF-8 or not JSON (docs/decisions-log.md, 'Request log': such bodies are logged as a note).
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { AppError, validationError } from '../errors.js';
import { nulCharacterPath } from './validation.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The JSON body's text as received, or a note in brackets (`[not JSON: 12 bytes]`); '' for an empty
     * body; null when no body was read.
     */
    receivedBody: string | null;
  }
}

export const jsonBodyPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('receivedBody', null);
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const bytes = body as Buffer;
      const utf8 = isUtf8(bytes);
      const text = bytes.toString('utf8');
      if (text.trim() === '') {
        request.receivedBody = '';
        return done(null, undefined);
      }
      let parsed: unknown;
      try {
        parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
      } catch {
        // Valid JSON that holds a prototype-poisoning key is refused as such, not called invalid.
        const poisoned = isJson(text);
        request.receivedBody = poisoned && utf8 ? text : `[not JSON: ${bytes.length} bytes]`;
        done(
          new AppError(
            'ERR_BAD_REQUEST',
            poisoned ? 'Request body must not hold a "__proto__" or "constructor" key' : 'Request body is not valid JSON',
          ),
          undefined,
        );
        return;
      }
      request.receivedBody = utf8 ? text : `[not valid UTF-8: ${bytes.length} bytes]`;
      const nulAt = text.includes('\\u0000') ? nulCharacterPath(parsed) : null;
      if (nulAt !== null) {
        done(validationError(nulAt === '' ? 'body' : nulAt, 'must not contain the NUL character (\\u0000)'), undefined);
        return;
      }
      done(null, parsed);
    });
  },
  { name: 'json-body' },
);

function isJson(text: string): boolean {
  try {
    // JSON.parse makes "__proto__" an own property: reading the text this way pollutes nothing.
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
