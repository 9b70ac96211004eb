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

/** From navigation to the reference's first heading on screen, in ms (the browser's own clock). */
async function timeToFirstHeading(page: Page, url: string): Promise<number> {
  await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator('#redoc h1').first().waitFor({ state: 'visible', timeout: 60_000 });
  return page.evaluate(() => performance.now());
}

describe.skipIf(!hasChromium)('the API reference at /docs', { timeout: TIMEOUT }, () => {
  let run: PortalRun;
  const measured: Record<string, unknown> = {};

  beforeAll(async () => {
    run = await startPortalRun();
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
    // Redoc in the browser takes over the rendered page; a mismatch would make it render it again.
    const takeovers: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /take over|hydrat/i.test(msg.text())) takeovers.push(msg.text());
    });
    for (const [width, size] of Object.entries(AXE_WIDTHS)) {
      await page.setViewportSize(size);
      // The first visit fetches and compiles Redoc; the second is a returning reader's.
      const first = await timeToFirstHeading(page, run.url('/docs'));
      const again = await timeToFirstHeading(page, run.url('/docs'));
      const nodes = await page.evaluate(() => document.querySelectorAll('*').length);
      measured[width] = { firstVisitMs: Math.round(first), againMs: Math.round(again), domNodes: nodes };
      console.log(
        `/docs at ${width}: first heading after ${Math.round(first)} ms (again ${Math.round(again)} ms), ${nodes} DOM nodes`,
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
