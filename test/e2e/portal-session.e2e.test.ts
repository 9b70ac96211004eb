/**
 * The portal's session rules end to end (docs/portal.md, 'Rules', Sessions), in real headless Chromium
 * against the real app on a real port, with the webhook worker and a local webhook receiver: an expired
 * access token refreshed silently for API calls and the realtime channel, a session whose refresh token
 * was used elsewhere ended, signing out from the header, an account that is not a partner, the API
 * reference served from this origin alone, and the key limit. The steps build on each other, in order.
 *
 * Screenshots at desktop and phone width go to artifacts/screenshots/.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser, type TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium } from './chromium.js';
import { addWebhook, atBothWidths, nav, type PortalRun, signIn, startPortalRun } from './portal-run.js';

// Browser globals used inside page.evaluate callbacks (this file is compiled with the Node libraries only).
declare const localStorage: { getItem(key: string): string | null };

if (!hasChromium) console.warn(`portal session end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

const STEP_TIMEOUT = 90_000;

describe.skipIf(!hasChromium)('the portal session in headless Chromium', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let context: BrowserContext;
  let origin: string;
  let partner: TestPartner;
  let webhookId = '';

  const url = (path: string) => `${origin}${path}`;

  async function heading(): Promise<string> {
    return (await page.locator('h1').first().textContent())?.trim() ?? '';
  }

  beforeAll(async () => {
    run = await startPortalRun({ worker: {} });
    ({ page, origin } = run);
    context = run.browser.context;
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
    const key = await createKey(run.t.ctx, partner.id, { name: 'Dispatch system' });
    webhookId = (await addWebhook(run, partner, key.id)).id;
    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }, 240_000);

  afterAll(() => run?.close());

  it('refreshes an expired access token silently, for API calls and for the realtime channel', async () => {
    const before = await page.evaluate(() => JSON.parse(localStorage.getItem('partner-portal.session') ?? '{}').refreshToken);
    // Access tokens live 15 minutes on the server's clock.
    run.t.clock.advance(16 * 60);
    await nav(page, 'Webhooks');
    const card = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await card.waitFor();
    expect(await heading()).toBe('Webhooks');
    const after = await page.evaluate(() => JSON.parse(localStorage.getItem('partner-portal.session') ?? '{}').refreshToken);
    expect(after).toBeTruthy();
    expect(after).not.toBe(before);

    // The server closed the socket whose token expired; the portal reconnected with the new token.
    await card.getByRole('link', { name: 'Delivery log' }).click();
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    const [answer] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().endsWith(`/v1/developer/webhooks/${webhookId}/test`) && r.request().method() === 'POST',
      ),
      page.getByRole('button', { name: 'Send test ping' }).click(),
    ]);
    await page.locator(`tr[data-delivery-id="${(await answer.json()).id}"][data-status="DELIVERED"]`).waitFor();
  });

  it('signs out when the session cannot be refreshed (its refresh token was used elsewhere)', async () => {
    // Someone else uses this browser's refresh token first: the portal's next refresh is a reuse,
    // which revokes the family, so the portal must end the session.
    const stolen = await page.evaluate(() => JSON.parse(localStorage.getItem('partner-portal.session') ?? '{}').refreshToken);
    const rotated = await fetch(url('/v1/auth/refresh'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: stolen }),
    });
    expect(rotated.status).toBe(200);
    run.t.clock.advance(16 * 60);
    // Whichever notices the expired token first, the realtime channel (the server closes its socket) or
    // the next API call, tries the refresh, is refused, and ends the session.
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'API keys' })
      .click({ timeout: 2_000 })
      .catch(() => {});
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    expect(await page.evaluate(() => localStorage.getItem('partner-portal.session'))).toBeNull();
  });

  it('signs out from the header, and stays signed out after a reload', async () => {
    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav(page, 'Docs');
    await page.getByRole('heading', { name: 'Docs', level: 1 }).waitFor();
    expect(await page.getByTestId('api-reference-link').getAttribute('href')).toBe('/docs');
    const docsText = (await page.locator('main').textContent()) ?? '';
    expect(docsText).toContain('X-Partner-Signature');
    expect(docsText).toContain("createHmac('sha256', secret)");
    await atBothWidths(page, 'docs');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem('partner-portal.session'))).toBeNull();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('shows a customer account the "not a partner" page, with a way to sign out', async () => {
    const customer = await createUser(run.t.ctx, 'CUSTOMER');
    await signIn(page, origin, customer.phone);
    await page.getByRole('heading', { name: 'This account is not a partner' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(customer.phone);
    await atBothWidths(page, 'not-a-partner');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('renders the API reference at /docs from this origin alone', async () => {
    const docs = await context.newPage();
    // Every request to another origin, with how it ended.
    const foreign = new Map<string, string>();
    const isForeign = (u: string) => !u.startsWith(origin) && !/^(data|blob):/.test(u);
    const errors: string[] = [];
    docs.on('request', (request) => {
      if (isForeign(request.url())) foreign.set(request.url(), 'pending');
    });
    docs.on('requestfailed', (request) => {
      if (isForeign(request.url())) foreign.set(request.url(), request.failure()?.errorText ?? 'failed');
    });
    docs.on('response', (response) => {
      if (isForeign(response.url())) foreign.set(response.url(), `answered ${response.status()}`);
    });
    docs.on('pageerror', (err) => errors.push(err.message));
    try {
      // Redoc rendered each page's section of the document: the partner API at /docs, the developer API
      // at /docs/developer.
      await docs.goto(url('/docs'));
      await docs.getByRole('heading', { name: 'Create a sandbox test order' }).waitFor({ timeout: 30_000 });
      await docs.waitForLoadState('networkidle');
      await docs.goto(url('/docs/developer'));
      await docs.getByRole('heading', { name: 'Rotate an API key' }).waitFor({ timeout: 30_000 });
      // Nothing is asked of another origin: Redoc's sidebar logo, which its bundle fetches from a CDN, is
      // not requested at all, and the page has its own icon.
      await docs.waitForLoadState('networkidle');
      expect([...foreign.entries()]).toEqual([]);
      expect(await docs.locator('link[rel="icon"]').getAttribute('href')).toBe('/docs/favicon.svg');
      expect(errors).toEqual([]);
    } finally {
      await docs.close();
    }
  });

  it('disables Create key at 10 of 10 active keys, saying why', async () => {
    const busy = await createPartner(run.t.ctx, 'Busy Logistics');
    for (let i = 0; i < 10; i++) await createKey(run.t.ctx, busy.id, { name: `Key ${i + 1}` });
    await signIn(page, origin, busy.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // The count needs both the keys and the service's limits (two queries): wait for it, then read it whole.
    const count = page.getByTestId('active-key-count');
    await count.filter({ hasText: '10 of 10 active keys used.' }).waitFor();
    expect(await count.textContent()).toBe('10 of 10 active keys used. Revoke a key you no longer use to create another.');
    expect(await page.getByRole('button', { name: 'Create key', exact: true }).isDisabled()).toBe(true);
    await atBothWidths(page, 'key-limit');
    expect(await page.locator('tbody tr').count()).toBe(10);
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(run.browser.pageErrors).toEqual([]);
  });
});
