/**
 * The API reference's first screen (docs/openapi.md, "The reference page"), in real headless Chromium at
 * 1366×900 and 390×844 with the page's own Content-Security-Policy: how long the first heading of the
 * reference takes to show, and how much the page builds for it.
 *
 * Speed is never asserted as a time (the machine is shared and its load varies): the test records the
 * time to the first heading in artifacts/docs-speed.json, with the load average, and asserts what makes
 * the first screen fast, a page of a bounded size. docs/performance.md keeps the figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../wait.js';
import { seriousFindings } from './axe.js';
import { CHROMIUM, hasChromium } from './chromium.js';
import { AXE_WIDTHS, type PortalRun, SHOTS, startPortalRun } from './portal-run.js';

const TIMEOUT = 120_000;

if (!hasChromium) console.warn(`reference speed end-to-end test skipped: ${CHROMIUM} is absent`);

// Browser globals read inside page callbacks (this file is compiled with the Node libraries only).
declare const document: { querySelectorAll(selector: string): { length: number } };
declare const performance: { now(): number };
declare const window: { headingShownAt?: number };

/**
 * Each document the page opens notes, frame by frame, the first frame its reference heading is laid out
 * in: the time the reader sees it, even while the browser's Redoc then keeps the main thread busy taking
 * over the page.
 */
const NOTE_HEADING = `(() => {
  const tick = () => {
    const h = document.querySelector('#redoc h1');
    if (h && h.getBoundingClientRect().height > 0) window.headingShownAt = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();`;

/**
 * From navigation to the reference's first heading on screen (`shown`), and to the first moment after it
 * that the page's main thread was free to answer (`free`), in ms (the browser's own clock).
 */
async function timeToFirstHeading(page: Page, url: string): Promise<{ shown: number; free: number }> {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator('#redoc h1').first().waitFor({ state: 'visible', timeout: 60_000 });
  const [shown, free] = await page.evaluate(() => [window.headingShownAt ?? Number.NaN, performance.now()]);
  return { shown: Math.round(shown), free: Math.round(free) };
}

describe.skipIf(!hasChromium)('the API reference at /docs', { timeout: TIMEOUT }, () => {
  let run: PortalRun;
  const measured: Record<string, unknown> = {};

  beforeAll(async () => {
    run = await startPortalRun({ env: { REFERENCE_SERVER_RENDER: 'on' } });
    // The service renders a section's page once, after its first request, off its event loop; until then
    // the browser renders it. Measured here is a reader's first visit to the page the server rendered.
    await waitFor(async () => (await (await fetch(run.url('/docs'))).text()).includes('id="redoc-state"'), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: '/docs rendered by the server',
    });
  }, 360_000);

  afterAll(async () => {
    mkdirSync(join(process.cwd(), 'artifacts'), { recursive: true });
    writeFileSync(
      join(process.cwd(), 'artifacts', 'docs-speed.json'),
      `${JSON.stringify({ ...measured, loadAverage: loadavg() }, null, 2)}\n`,
    );
    await run?.close();
  });

  it('shows its first heading after a bounded first render, at both widths, with no serious axe finding', async () => {
    const { page } = run;
    await page.addInitScript(NOTE_HEADING);
    // Redoc in the browser takes over the rendered page; a mismatch would make it render it again. Its
    // React build is a production one: a mismatch is reported as "Minified React error #418" (or #423,
    // #425), an uncaught error (pageErrors, below) or a console error (here).
    const takeovers: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /take over|hydrat|Minified React error/i.test(msg.text())) takeovers.push(msg.text());
    });
    for (const [width, size] of Object.entries(AXE_WIDTHS)) {
      await page.setViewportSize(size);
      // The first visit fetches and compiles Redoc; the second is a returning reader's.
      const first = await timeToFirstHeading(page, run.url('/docs'));
      const again = await timeToFirstHeading(page, run.url('/docs'));
      const nodes = await page.evaluate(() => document.querySelectorAll('*').length);
      measured[width] = {
        firstVisitMs: first.shown,
        againMs: again.shown,
        firstVisitFreeMs: first.free,
        againFreeMs: again.free,
        domNodes: nodes,
      };
      console.log(
        `/docs at ${width}: first heading after ${first.shown} ms (again ${again.shown} ms); main thread free at ${first.free} ms (again ${again.free} ms); ${nodes} DOM nodes`,
      );
      await page.screenshot({ path: join(SHOTS, `docs-first-screen-${width}.png`) });
      // The partner section (orders, offers, payments, tracking, sandbox) builds ~14,400 elements; the
      // whole reference on one page built well over twice that.
      expect(nodes, 'the first screen builds a bounded page').toBeLessThan(16_000);
      expect(await seriousFindings(page), `axe on /docs at ${width} width`).toEqual([]);
    }
    expect(run.browser.pageErrors).toEqual([]);
    expect(takeovers).toEqual([]);
  });
});
