/**
 * Serving the developer portal under /portal: redirect, SPA fallback, caching, compressed copies, security headers, the
 * missing-build answer, and finding portal/dist from src/ or dist/src/. Runs on small fixture builds so
 * it does not depend on `npm run build:portal`; the end-to-end test drives the real build.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from '../../plugins/error-handler.js';
import { DEFAULT_PORTAL_DIST, portalRoutes, projectRoot } from './portal.routes.js';

const SCRIPT = 'console.log("portal");';
const INDEX =
  '<!doctype html><html><head><script type="module" src="/portal/assets/index-Ab12Cd34.js"></script></head><body><div id="root"></div></body></html>';

async function appServing(distDir: string): Promise<FastifyInstance> {
  // The same router option as buildApp: '/portal' and '/portal/' reach the same route.
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  await app.register(errorHandlerPlugin);
  await app.register(portalRoutes, { distDir });
  await app.ready();
  return app;
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'portal-routes-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('GET /portal with a built portal', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    const dist = join(tmp, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), INDEX);
    writeFileSync(join(dist, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
    // As the build writes them (portal/vite.config.ts): a Brotli and a gzip copy of every script.
    writeFileSync(join(dist, 'assets', 'index-Ab12Cd34.js.br'), brotliCompressSync(SCRIPT));
    writeFileSync(join(dist, 'assets', 'index-Ab12Cd34.js.gz'), gzipSync(SCRIPT));
    writeFileSync(join(dist, 'assets', 'logo-Ef56Gh78.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(tmp, 'secret.txt'), 'outside the build');
    app = await appServing(dist);
  });
  afterAll(async () => {
    await app.close();
  });

  it('redirects /portal to /portal/, keeping the query string', async () => {
    const plain = await app.inject({ method: 'GET', url: '/portal' });
    expect(plain.statusCode).toBe(302);
    expect(plain.headers.location).toBe('/portal/');
    const withQuery = await app.inject({ method: 'GET', url: '/portal?from=email' });
    expect(withQuery.statusCode).toBe(302);
    expect(withQuery.headers.location).toBe('/portal/?from=email');
  });

  it('serves the app at /portal/ as HTML that is never cached, with a same-origin-only CSP', async () => {
    const res = await app.inject({ method: 'GET', url: '/portal/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers deep links with the app (SPA fallback), so a reload of /portal/webhooks/<id> works', async () => {
    for (const url of ['/portal/keys', '/portal/webhooks/8d1f5a8e-2c1b-4a57-9a51-0a3c6f0f4b11', '/portal/usage?days=35']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body, url).toBe(INDEX);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-security-policy'], url).toContain("default-src 'self'");
    }
  });

  it('serves fingerprinted assets with a year-long immutable cache', async () => {
    const res = await app.inject({ method: 'GET', url: '/portal/assets/index-Ab12Cd34.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe(SCRIPT);
  });

  it('sends the Brotli or gzip copy the browser accepts, with Vary: Accept-Encoding', async () => {
    const url = '/portal/assets/index-Ab12Cd34.js';
    for (const [accept, coding, decode] of [
      ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
      ['gzip, deflate', 'gzip', gunzipSync],
    ] as const) {
      const res = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': accept } });
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['content-encoding'], accept).toBe(coding);
      expect(res.headers.vary, accept).toBe('accept-encoding');
      expect(res.headers['content-type'], accept).toMatch(/^(text|application)\/javascript/);
      expect(res.headers['cache-control'], accept).toBe('public, max-age=31536000, immutable');
      expect(decode(res.rawPayload).toString(), accept).toBe(SCRIPT);
    }
    const plain = await app.inject({ method: 'GET', url });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);
    // A file the build did not compress is sent as it is.
    const logo = await app.inject({
      method: 'GET',
      url: '/portal/assets/logo-Ef56Gh78.svg',
      headers: { 'accept-encoding': 'br' },
    });
    expect(logo.statusCode).toBe(200);
    expect(logo.headers['content-encoding']).toBeUndefined();
    expect(logo.body).toContain('<svg');
  });

  it('answers a missing file with 404 ERR_NOT_FOUND in the envelope, not with the app', async () => {
    const res = await app.inject({ method: 'GET', url: '/portal/assets/index-gone.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      statusCode: 404,
      code: 'ERR_NOT_FOUND',
      message: expect.stringContaining('/portal/assets/index-gone.js'),
    });
  });

  it('answers other methods under /portal with 404 ERR_NOT_FOUND', async () => {
    const res = await app.inject({ method: 'POST', url: '/portal/keys', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'ERR_NOT_FOUND' });
  });

  it('never serves files outside the build, however the path is spelled', async () => {
    for (const url of ['/portal/../secret.txt', '/portal/%2e%2e/secret.txt', '/portal/assets/%2e%2e/%2e%2e/secret.txt']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.body, url).not.toContain('outside the build');
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ code: 'ERR_NOT_FOUND' });
    }
  });
});

describe('GET /portal without a build', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    const empty = join(tmp, 'never-built');
    mkdirSync(empty, { recursive: true });
    app = await appServing(empty);
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers every /portal URL with 503 ERR_DEPENDENCY_UNAVAILABLE saying to run npm run build:portal', async () => {
    for (const url of ['/portal', '/portal/', '/portal/keys', '/portal/assets/index.js']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(503);
      const body = res.json();
      expect(body, url).toEqual({ statusCode: 503, code: 'ERR_DEPENDENCY_UNAVAILABLE', message: expect.any(String) });
      expect(body.message, url).toContain('npm run build:portal');
    }
  });
});

describe('locating portal/dist', () => {
  it('walks up to the folder holding package.json, from src/ (tsx, vitest) and from dist/src/ (compiled)', () => {
    const root = join(tmp, 'project');
    mkdirSync(join(root, 'src', 'modules', 'portal'), { recursive: true });
    mkdirSync(join(root, 'dist', 'src', 'modules', 'portal'), { recursive: true });
    writeFileSync(join(root, 'package.json'), '{}');
    expect(projectRoot(join(root, 'src', 'modules', 'portal', 'portal.routes.ts'))).toBe(root);
    expect(projectRoot(join(root, 'dist', 'src', 'modules', 'portal', 'portal.routes.js'))).toBe(root);
  });

  it('defaults to <project root>/portal/dist of this repository', () => {
    expect(DEFAULT_PORTAL_DIST).toBe(join(projectRoot(), 'portal', 'dist'));
    expect(DEFAULT_PORTAL_DIST).toBe(join(process.cwd(), 'portal', 'dist'));
  });
});
