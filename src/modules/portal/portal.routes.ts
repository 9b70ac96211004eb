/**
 * The developer portal: the single-page app built by Vite into portal/dist, served under /portal/.
 * - /portal redirects to /portal/ (relative asset URLs and the client router both assume the slash);
 * - files under portal/dist are served as they are; hashed assets are cached for a year, index.html never;
 * - any other /portal/... path that does not look like a file answers index.html (deep links such as
 *   /portal/webhooks/<id> survive a reload); a missing file (has an extension) is a plain 404 envelope;
 * - when portal/dist was never built, every /portal URL answers 503 saying how to build it.
 * The portal talks only to the public API (/v1/auth, /v1/developer, the realtime channel).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';

/**
 * The folder holding package.json, found by walking up from this file: src/modules/portal when run
 * through tsx or vitest, dist/src/modules/portal when compiled.
 */
export function projectRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
}

export const DEFAULT_PORTAL_DIST = join(projectRoot(), 'portal', 'dist');

export interface PortalOptions {
  /** The built portal (default: <project root>/portal/dist). */
  distDir?: string;
}

/**
 * The portal's page may load only itself: no CDN, no external fonts, API calls and the realtime
 * WebSocket to the same origin ('self' covers same-origin ws:/wss: in CSP 3). Chart.js draws on canvas;
 * React sets style properties through the DOM, which style-src does not restrict.
 */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
  reply.header('x-frame-options', 'DENY');
}

const looksLikeFile = (path: string) => /\.[A-Za-z0-9]+$/.test(path.split('/').pop() ?? '');

export const portalRoutes: FastifyPluginAsyncTypebox<PortalOptions> = async (app, options) => {
  const distDir = options.distDir ?? DEFAULT_PORTAL_DIST;
  const built = existsSync(join(distDir, 'index.html'));

  await app.register(
    async (portal) => {
      if (!built) {
        const notBuilt = async () => {
          throw new AppError(
            'ERR_DEPENDENCY_UNAVAILABLE',
            'The developer portal is not built: run `npm run build:portal` (or `npm run build`) and restart the server',
          );
        };
        portal.get('/', { schema: { hide: true } }, notBuilt);
        portal.get('/*', { schema: { hide: true } }, notBuilt);
        return;
      }

      await portal.register(fastifyStatic, {
        root: distDir,
        prefix: '/',
        index: false,
        redirect: false,
        wildcard: true,
        // The build writes a Brotli and a gzip copy of every script and style sheet (portal/vite.config.ts):
        // a browser that accepts one gets it, with Vary: Accept-Encoding.
        preCompressed: true,
        cacheControl: false,
        setHeaders(res, path) {
          // Vite fingerprints everything under assets/: safe to keep forever. Anything else is revalidated.
          const immutable = /[\\/]assets[\\/]/.test(path);
          res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
          res.setHeader('x-content-type-options', 'nosniff');
          // A script or style sheet may be sent as its compressed copy (the path is then the copy's): caches
          // must key on the coding.
          if (/\.(js|css)(\.br|\.gz)?$/.test(path)) res.setHeader('vary', 'accept-encoding');
          if (path.endsWith('.html')) res.setHeader('content-security-policy', CSP);
        },
      });

      const sendIndex = (reply: FastifyReply) => {
        securityHeaders(reply);
        return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').sendFile('index.html');
      };

      // The router ignores trailing slashes, so '/portal' and '/portal/' both land here; only the
      // slash-less form is redirected (keeping the query string).
      portal.get('/', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
        const [path, query] = splitUrl(request.url);
        if (!path.endsWith('/')) return reply.redirect(`${path}/${query}`, 302);
        return sendIndex(reply);
      });

      // Reached when no file matched: a client-side route gets the app, a missing asset a 404.
      portal.setNotFoundHandler(async (request, reply) => {
        const [path] = splitUrl(request.url);
        if ((request.method !== 'GET' && request.method !== 'HEAD') || looksLikeFile(path)) {
          throw new AppError('ERR_NOT_FOUND', `Route ${request.method} ${path} not found`);
        }
        return sendIndex(reply);
      });
    },
    { prefix: '/portal' },
  );
};

function splitUrl(url: string): [string, string] {
  const i = url.indexOf('?');
  return i < 0 ? [url, ''] : [url.slice(0, i), url.slice(i)];
}
