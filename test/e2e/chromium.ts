/**
 * The browser of the portal's end-to-end tests: Debian's /usr/bin/chromium through playwright-core
 * (never a downloaded browser), headless, on a fresh profile, at desktop size, en-GB in UTC. Uncaught
 * page exceptions and Content-Security-Policy refusals are collected in `pageErrors` (expected 4xx
 * answers are not errors); `close()` ends the browser and removes the profile.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page, type Route } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 812 };
/**
 * The deadline of a wait on the page: every locator's (page.setDefaultTimeout below) and the one to give
 * `expect.poll`, whose own default is 1 s: a value the page reads again or receives live (a refetch after
 * an action, a realtime update) can take longer than that on a busy machine.
 */
export const PAGE_DEADLINE = { timeout: 15_000 };

export interface PortalBrowser {
  context: BrowserContext;
  page: Page;
  pageErrors: string[];
  close(): Promise<void>;
}

export async function openPortalBrowser(origin: string): Promise<PortalBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'portal-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: DESKTOP,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(PAGE_DEADLINE.timeout);
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/.test(msg.text())) pageErrors.push(msg.text());
  });
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Browser globals read inside page callbacks (this file is compiled with the Node libraries only).
declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };

/**
 * Resolves once the page's main thread has had nothing to do (requestIdleCallback), within 10 s: the
 * condition to wait for before a screenshot of a page that goes on rendering after its first paint.
 */
export async function untilIdle(page: Page): Promise<void> {
  await page.evaluate(
    () =>
      new Promise<void>((resolve) => {
        (globalThis as unknown as { requestIdleCallback(cb: () => void, o: { timeout: number }): void }).requestIdleCallback(
          () => resolve(),
          { timeout: 10_000 },
        );
      }),
  );
}

/**
 * How far the page scrolls sideways at its current size (0 or less: not at all). A layout that
 * follows a resize on its own observer (a chart) gets up to 5 s to settle first.
 */
export async function sidewaysOverflow(page: Page): Promise<number> {
  await page
    .waitForFunction(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth, null, {
      timeout: 5_000,
    })
    .catch(() => {});
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** Signs in on the portal's sign-in page with a phone number and the one-time code. */
export async function signInWithCode(page: Page, phone: string, code: string): Promise<void> {
  await page.getByLabel('Phone number').fill(phone);
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('One-time code').fill(code);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * A page read whose answer is held back: each read of `url` is answered by the server at once, but the
 * answer reaches the page only on `release()`. It reproduces the race in which a page read that started
 * before a live change lands after it and must not overwrite the live data. `held()` counts the reads
 * answered so far; `release()` lets every held answer through, stops holding, and resolves once each
 * has reached the page.
 */
export interface HeldAnswers {
  held(): number;
  release(): Promise<void>;
}

export async function holdAnswers(page: Page, url: RegExp): Promise<HeldAnswers> {
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let held = 0;
  let released = false;
  const calls: Promise<void>[] = [];
  const hold = async (route: Route) => {
    const response = await route.fetch();
    held += 1;
    await gate;
    await route.fulfill({ response });
    await route.request().response();
  };
  const handler = (route: Route) => {
    if (released) return route.fallback();
    const call = hold(route);
    calls.push(call);
    return call;
  };
  await page.route(url, handler);
  return {
    held: () => held,
    async release() {
      released = true;
      open();
      // Unrouting lets the browser answer any read still held on its own, so only once all have landed.
      await Promise.all(calls);
      await page.unroute(url, handler);
    },
  };
}

/**
 * Answers of the page's reads of `url` reach it `ms` late, as from a slow server: each is fetched at
 * once and handed to the page after the delay. Returns `stop()`, which ends the slowing down (answers
 * already delayed still land late).
 */
export async function slowAnswers(page: Page, url: RegExp, ms: number): Promise<() => Promise<void>> {
  const handler = async (route: Route) => {
    const response = await route.fetch();
    await new Promise((resolve) => setTimeout(resolve, ms));
    // A read the page has given up on meanwhile cannot be answered any more.
    await route.fulfill({ response }).catch(() => {});
  };
  await page.route(url, handler);
  return () => page.unroute(url, handler);
}
