/**
 * The reference pages rendered on the server (docs/openapi.md, "The reference page"): the first request
 * to any reference page starts one worker thread (reference-render.worker.ts) that renders every section,
 * the requested one first; until a section's render is done its page is rendered by the browser, as
 * before. A render is done once per section per process and kept; a failed one is logged and not tried
 * again (the pages stay rendered by the browser).
 */
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';

export interface RenderJob {
  path: string;
  specUrl: string;
  document: Record<string, unknown>;
  options: Record<string, unknown>;
}

export interface RenderedReference {
  path: string;
  /** What Redoc rendered, to go inside the page's #redoc element. */
  html: string;
  /** styled-components' <style> tags for that HTML. */
  styles: string;
  /** Redoc's state as JSON, '<' escaped, for a data block the browser's Redoc takes over from. */
  state: string;
}

export interface ReferenceRenderer {
  /** The page's server render, or null while there is none (the first call starts the renders). */
  rendered(path: string): RenderedReference | null;
  close(): Promise<void>;
}

/**
 * The worker's code. From the sources (tests, tsx) the worker is TypeScript too: a worker thread does not
 * inherit tsx's loader, so it registers it before importing the worker file.
 */
function workerEntry(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  const file = new URL(`./reference-render.worker.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
  if (!fromSource) return `import(${JSON.stringify(file)});`;
  // Resolved from the working directory, the project's.
  return `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(file)}); });`;
}

export function createReferenceRenderer(opts: {
  /** Every section's job, the requested page's first. */
  jobs(firstPath: string): RenderJob[];
  logoUrl: string;
  log: FastifyBaseLogger;
}): ReferenceRenderer {
  const done = new Map<string, RenderedReference>();
  let worker: Worker | null = null;
  let started = false;

  const start = (firstPath: string) => {
    started = true;
    const t0 = performance.now();
    const w = new Worker(workerEntry(), { eval: true, workerData: { jobs: opts.jobs(firstPath), logoUrl: opts.logoUrl } });
    w.unref();
    w.on('message', (page: RenderedReference) => {
      done.set(page.path, page);
      opts.log.info({ path: page.path, ms: Math.round(performance.now() - t0) }, 'reference page rendered');
    });
    w.on('error', (err) => opts.log.warn({ err }, 'reference render failed: the pages stay rendered by the browser'));
    w.on('exit', () => {
      worker = null;
    });
    worker = w;
  };

  return {
    rendered(path) {
      const page = done.get(path);
      if (page) return page;
      if (!started) start(path);
      return null;
    },
    async close() {
      await worker?.terminate();
    },
  };
}
