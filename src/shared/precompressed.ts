/**
 * A large answer that does not change while the process runs (the OpenAPI documents, the reference
 * pages and their script, the webhook event catalog), sent as bytes made once: never serialised again
 * per request, compressed once (gzip and Brotli, on libuv's thread pool, the first time a client asks
 * for that coding) and revalidated by ETag. docs/decisions-log.md, 'OpenAPI documents', states what
 * clients get.
 *
 * - The coding follows the request's Accept-Encoding (Brotli, then gzip, else none), with
 *   `Vary: Accept-Encoding`.
 * - Each coding has its own strong ETag (a representation's bytes differ per coding); an
 *   If-None-Match holding it, or `*`, is answered 304 with no body.
 * - A compression that fails (it should not) sends the identity bytes.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

type Coding = 'br' | 'gzip';
const CODINGS: Coding[] = ['br', 'gzip'];

interface Variant {
  body: Buffer;
  etag: string;
}

function etagOf(body: Buffer, coding: Coding | null): string {
  const digest = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  return `"${digest}${coding ? `-${coding}` : ''}"`;
}

export class PrecompressedBody {
  private readonly identity: Variant;
  private readonly coded = new Map<Coding, Promise<Variant | null>>();

  constructor(
    body: Buffer | string,
    private readonly contentType: string,
    private readonly cacheControl = 'no-cache',
  ) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    this.identity = { body: bytes, etag: etagOf(bytes, null) };
  }

  /** `value` as its route answers it with 200 (the route's response serializer), as JSON bytes made once. */
  static json(reply: FastifyReply, value: unknown): PrecompressedBody {
    const serialized = reply.serialize(value);
    const bytes = typeof serialized === 'string' || Buffer.isBuffer(serialized) ? serialized : Buffer.from(serialized);
    return new PrecompressedBody(bytes, 'application/json; charset=utf-8');
  }

  /** Sends the variant the request accepts, or 304 when the client holds it already. */
  async send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const accepted = request.headers['accept-encoding'];
    const coding = typeof accepted === 'string' ? (negotiate(accepted, CODINGS) as Coding | null) : null;
    const variant = (coding && (await this.variant(coding))) || this.identity;
    reply
      .header('vary', 'accept-encoding')
      .header('cache-control', this.cacheControl)
      .header('etag', variant.etag)
      .type(this.contentType);
    if (variant !== this.identity) reply.header('content-encoding', coding);
    if (holds(request.headers['if-none-match'], variant.etag)) return reply.code(304).send();
    return reply.send(variant.body);
  }

  private variant(coding: Coding): Promise<Variant | null> {
    let made = this.coded.get(coding);
    if (!made) {
      const source = this.identity.body;
      const compressed =
        coding === 'br'
          ? brotli(source, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 9,
                [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              },
            })
          : gzipped(source, { level: 9 });
      made = compressed.then(
        (body) => ({ body, etag: etagOf(source, coding) }),
        () => null,
      );
      this.coded.set(coding, made);
    }
    return made;
  }
}

/** Whether an If-None-Match header names `etag` (weak comparison: a `W/` prefix is ignored) or is `*`. */
function holds(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return tags.includes('*') || tags.includes(etag);
}
