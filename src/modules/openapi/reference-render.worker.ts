/**
 * Renders the reference sections to HTML, off the service's event loop (docs/openapi.md, "The reference
 * page"): Redoc's library build reads each section's document into a store and React renders it inside
 * styled-components' style collector, as Redocly's own build-docs does. Loading Redoc and rendering a
 * section take seconds of CPU; here they hold no request. Posts one RenderedReference per section, in the
 * order given, then ends.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { RenderedReference, RenderJob } from './reference-render.js';

// Redoc's library build is a CommonJS bundle whose exports Node's ES module loader cannot name. The
// types are the few this file uses: React's and Redoc's own would bring the browser's into the service.
const require = createRequire(import.meta.url);
const { createElement } = require('react') as { createElement(type: unknown, props: unknown): unknown };
const { renderToString } = require('react-dom/server') as { renderToString(element: unknown): string };
const { ServerStyleSheet } = require('styled-components') as {
  ServerStyleSheet: new () => { collectStyles(element: unknown): unknown; getStyleTags(): string; seal(): void };
};
const { createStore, Redoc } = require('redoc') as {
  createStore(spec: object, specUrl: string, options: object): Promise<{ toJS(): Promise<unknown> }>;
  Redoc: unknown;
};

const { jobs, logoUrl } = workerData as { jobs: RenderJob[]; logoUrl: string };

for (const job of jobs) {
  const store = await createStore(job.document, job.specUrl, job.options);
  const sheet = new ServerStyleSheet();
  try {
    // Redoc's sidebar credit points at a logo on Redocly's CDN; the page's policy refuses it, and the
    // bundle the browser runs has it replaced by an empty image: so has the rendered page.
    // Every code block can take focus from the first paint, so one wider than the screen scrolls with the
    // keyboard before the browser's Redoc (whose script does the same) has taken the page over; an
    // attribute React did not render is no mismatch for the takeover.
    const html = renderToString(sheet.collectStyles(createElement(Redoc, { store })))
      .replaceAll(logoUrl, 'data:,')
      .replace(/<pre(?=[\s>])(?![^>]*\stabindex=)/g, '<pre tabindex="0"');
    const styles = sheet.getStyleTags();
    // The state goes into the page as a data block: no '<' in it can close the block or open a comment.
    const state = JSON.stringify(await store.toJS()).replaceAll('<', '\\u003c');
    parentPort?.postMessage({ path: job.path, html, styles, state } satisfies RenderedReference);
  } finally {
    sheet.seal();
  }
}
