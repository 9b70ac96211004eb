/**
 * The browser of the portal's end-to-end tests: Debian's /usr/bin/chromium through playwright-core
 * (never a downloaded browser), headless, on a fresh profile, at desktop size, en-GB in UTC. Uncaught
 * page exceptions and Content-Security-Policy refusals are collected in `pageErrors` (expected 4xx
 * answers are not errors); `close()` ends the browser and removes the profile.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 375, height: 812 };

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
  page.setDefaultTimeout(15_000);
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
