/**
 * The developer portal end to end, in real headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core; never a downloaded browser) against the real app on a real port, with the webhook
 * worker running and a local webhook receiver. The steps build on each other, in order, like a
 * developer's first session: sign in, create a key, call the partner API with it, add a webhook, watch
 * a ping arrive live, watch a failure and redeliver it, read usage, rotate and revoke, survive an
 * expired access token, lose the session, sign out.
 *
 * Screenshots of every page, at desktop and phone width, go to artifacts/screenshots/.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../portal/snippets/verify-signature.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { createKey, createPartner, createUser, type TestPartner } from '../factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../harness.js';
import { CHROMIUM, DESKTOP, hasChromium, openPortalBrowser, PHONE, type PortalBrowser } from './chromium.js';
import { ensurePortalBuilt } from './portal-build.js';

// Browser globals used inside page.evaluate callbacks, typed just enough: this file is compiled with
// the Node libraries only, and the callbacks run in the page.
interface PageElement {
  id: string;
  textContent: string | null;
  width?: number;
  getAttribute(name: string): string | null;
}
declare const document: {
  activeElement: PageElement | null;
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
};
declare const window: Record<string, unknown>;
declare const localStorage: { getItem(key: string): string | null };
declare const navigator: { clipboard: { readText(): Promise<string> } };

const SHOTS = join(process.cwd(), 'artifacts', 'screenshots');

if (!hasChromium) {
  console.warn(
    `portal end-to-end tests skipped: ${CHROMIUM} is absent (CI installs Debian's chromium; locally: apt-get install chromium)`,
  );
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A tiny webhook endpoint: records every request and answers with the status it is told. */
async function startReceiver() {
  const received: Received[] = [];
  let status = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answerWith(next: number) {
      status = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Each step drives a real browser (and takes screenshots at two widths): more time than a unit test. */
const STEP_TIMEOUT = 90_000;

describe.skipIf(!hasChromium)('developer portal in headless Chromium', { timeout: STEP_TIMEOUT }, () => {
  let t: TestApp;
  let worker: Worker;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let context: BrowserContext;
  let page: Page;
  let browser: PortalBrowser | undefined;
  let origin: string;
  let partner: TestPartner;
  let pageErrors: string[] = [];

  // What the steps hand to each other.
  let liveKey = '';
  let liveKeyId = '';
  let rotatedKey = '';
  let signingSecret = '';
  let webhookId = '';

  const url = (path: string) => `${origin}${path}`;
  const partnerApi = (path: string, key: string) => fetch(url(path), { headers: { 'x-api-key': key } });

  async function shot(name: string) {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** Desktop and phone screenshots of the page as it is now; at phone width nothing may scroll sideways. */
  async function shotBoth(name: string) {
    await shot(`${name}-desktop`);
    await page.setViewportSize(PHONE);
    // The chart redraws for the new width on its own resize observer, later on a loaded machine: give
    // the layout up to 5 s to settle, then measure (a page that really overflows still fails).
    await page
      .waitForFunction(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth, null, {
        timeout: 5_000,
      })
      .catch(() => {});
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
    await shot(`${name}-phone`);
    await page.setViewportSize(DESKTOP);
  }

  async function heading(): Promise<string> {
    return (await page.locator('h1').first().textContent())?.trim() ?? '';
  }

  async function signIn(phone: string) {
    await page.goto(url('/portal'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('One-time code').fill(TEST_OTP);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function nav(name: string) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
  }

  beforeAll(async () => {
    ensurePortalBuilt();
    mkdirSync(SHOTS, { recursive: true });
    t = await createTestApp();
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}`;
    worker = startWorker(t.ctx);
    receiver = await startReceiver();
    partner = await createPartner(t.ctx, 'Caspian Couriers');
    browser = await openPortalBrowser(origin);
    ({ context, page, pageErrors } = browser);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    await t?.close();
  });

  it('shows a customer account the "not a partner" page, with a way to sign out', async () => {
    const customer = await createUser(t.ctx, 'CUSTOMER');
    await signIn(customer.phone);
    await page.getByRole('heading', { name: 'This account is not a partner' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(customer.phone);
    await shotBoth('not-a-partner');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  it('signs a partner in with phone and one-time code, showing the API answer to a wrong code first', async () => {
    await page.goto(url('/portal/'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shotBoth('sign-in');
    // A wrong code is answered by the API's envelope, shown as it is.
    await page.getByLabel('Phone number').fill(partner.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('One-time code').fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const error = page.locator('[data-error-code="ERR_OTP_INVALID"]');
    await error.waitFor();
    await shot('sign-in-wrong-code-desktop');
    await page.getByLabel('One-time code').fill(TEST_OTP);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/portal/keys');
    expect(await page.getByTestId('partner-name').textContent()).toBe('Caspian Couriers');
    // Signing in moves focus to the new page's heading (announced by screen readers).
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('API keys');
    await page.getByText('You have no active keys yet.').waitFor();
    await shotBoth('keys-empty');
  });

  it('creates a key, shows the API validation errors, then the full key exactly once; the key works on the partner API', async () => {
    const createButton = page.getByRole('button', { name: 'Create key', exact: true });
    await createButton.click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.waitFor();
    // Focus moves into the dialog; Escape closes it and focus returns to the button that opened it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe(
      await dialog.getByLabel('Name', { exact: true }).getAttribute('id'),
    );
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await createButton.evaluate((el) => el === document.activeElement)).toBe(true);

    await createButton.click();
    await dialog.waitFor();
    // Too short a name and no scope: the form says so in plain words, beside each field, before sending.
    await dialog.getByLabel('Name', { exact: true }).fill('x');
    await dialog.getByRole('checkbox', { name: /orders:read/ }).uncheck();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    await dialog.locator('.field-error').nth(1).waitFor();
    expect(await dialog.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    const fieldErrors = await dialog.locator('.field-error').allTextContents();
    expect(fieldErrors).toEqual(['Give the key a name of at least 2 characters.', 'Choose at least one scope.']);
    await shotBoth('key-create-validation');

    await dialog.getByLabel('Name', { exact: true }).fill('Dispatch system');
    await dialog.getByRole('radio', { name: /^Live/ }).check();
    for (const scope of ['orders:read', 'webhooks:manage'])
      await dialog.getByRole('checkbox', { name: new RegExp(scope) }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const reveal = page.getByRole('dialog', { name: 'Your new API key' });
    await reveal.waitFor();
    liveKey = await reveal.getByTestId('new-key').inputValue();
    expect(liveKey).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(await reveal.textContent()).toContain('You will not see this key again');
    await reveal.getByRole('button', { name: 'Copy API key' }).click();
    await reveal.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(liveKey);
    await shotBoth('key-created');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await reveal.waitFor({ state: 'hidden' });

    // The list shows the prefix only, never the key, with its badge, scopes and status.
    const row = page.locator('tr[data-key-name="Dispatch system"]');
    await row.waitFor();
    liveKeyId = (await row.getAttribute('data-key-id')) ?? '';
    const rowText = (await row.textContent()) ?? '';
    expect(rowText).toContain(liveKey.slice(0, 'svc_live_'.length + 6));
    expect(rowText).not.toContain(liveKey);
    expect(rowText).toContain('Live');
    expect(rowText).toContain('orders:read');
    expect(rowText).toContain('webhooks:manage');
    expect(rowText).toContain('600/min');
    expect(await row.getByTestId('key-status').textContent()).toBe('Active');
    expect(await page.locator('body').textContent()).not.toContain(liveKey);

    // The key read from the one-time dialog works on the partner API.
    const me = await partnerApi('/v1/partner/me', liveKey);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      partnerName: 'Caspian Couriers',
      keyName: 'Dispatch system',
      environment: 'live',
      scopes: ['orders:read', 'webhooks:manage'],
    });
    // And one 4xx, for the usage chart later.
    const missing = await partnerApi('/v1/partner/orders/NO-SUCH-ORDER', liveKey);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('ERR_NOT_FOUND');
    await shotBoth('keys');
  });

  it('adds a webhook for the key and shows its signing secret once', async () => {
    await nav('Webhooks');
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    const group = page.locator(`section[data-key-id="${liveKeyId}"]`);
    await group.getByText('No webhooks for this key yet.').waitFor();
    await group.getByRole('button', { name: /Add webhook/ }).click();
    const dialog = page.getByRole('dialog', { name: /Add a webhook/ });
    await dialog.waitFor();
    // An ftp URL is refused by the API (ERR_VALIDATION or ERR_WEBHOOK_URL_INVALID), shown at the field.
    await dialog.getByLabel('Endpoint URL').fill('ftp://example.com/hook');
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    await dialog.locator('[role="alert"]').waitFor();
    expect(await dialog.locator('[role="alert"]').getAttribute('data-error-code')).toMatch(
      /ERR_VALIDATION|ERR_WEBHOOK_URL_INVALID/,
    );

    await dialog.getByLabel('Endpoint URL').fill(receiver.url);
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const reveal = page.getByRole('dialog', { name: 'Webhook created' });
    await reveal.waitFor();
    signingSecret = await reveal.getByTestId('webhook-secret').inputValue();
    expect(signingSecret).toMatch(/^whsec_/);
    expect(await reveal.textContent()).toContain('You will not see this signing secret again');
    await shotBoth('webhook-created');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();

    const card = group.locator('li[data-webhook-id]');
    await card.waitFor();
    webhookId = (await card.getAttribute('data-webhook-id')) ?? '';
    expect(await card.textContent()).toContain(receiver.url);
    expect(await card.textContent()).toContain('Active');
    expect(await page.locator('body').textContent()).not.toContain(signingSecret);
    await shotBoth('webhooks');
  });

  it('edits the webhook events and disables and re-enables it', async () => {
    const card = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await card.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Endpoint URL').inputValue()).toBe(receiver.url);
    await dialog.getByRole('checkbox', { name: /order\.delivered/ }).check();
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await card.getByText('order.delivered', { exact: true }).waitFor();

    await card.getByRole('button', { name: 'Disable' }).click();
    await card.getByText('Disabled', { exact: true }).waitFor();
    expect(await card.getByRole('button', { name: 'Send test ping' }).isDisabled()).toBe(true);
    await card.getByRole('button', { name: 'Enable' }).click();
    await card.getByText('Active', { exact: true }).waitFor();
    const listed = await fetch(url('/v1/developer/webhooks'), { headers: partner.auth });
    const hook = ((await listed.json()) as { items: Array<{ id: string }> }).items.find((w) => w.id === webhookId);
    expect(hook).toMatchObject({ isActive: true, events: expect.arrayContaining(['order.delivered']) });
  });

  it('sends a test ping and the delivery row turns DELIVERED live, without reloading; the signature verifies with the docs snippet', async () => {
    await page.locator(`li[data-webhook-id="${webhookId}"]`).getByRole('link', { name: 'Delivery log' }).click();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/portal/webhooks/${webhookId}`);
    await page.getByText('No deliveries yet.').waitFor();
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await page.evaluate(() => {
      window.__sameDocument = true;
    });

    const before = receiver.received.length;
    const [answer] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().endsWith(`/v1/developer/webhooks/${webhookId}/test`) && r.request().method() === 'POST',
      ),
      page.getByRole('button', { name: 'Send test ping' }).click(),
    ]);
    expect(answer.status()).toBe(200);
    const queued = await answer.json();
    // The HTTP answer is the queued delivery; DELIVERED can only come from the realtime channel.
    const row = page.locator(`tr[data-delivery-id="${queued.id}"]`);
    await page.locator(`tr[data-delivery-id="${queued.id}"][data-status="DELIVERED"]`).waitFor();
    expect(await row.getByTestId('delivery-http').textContent()).toBe('200');
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    expect(await row.locator('th').textContent()).toBe('ping');
    expect(await page.evaluate(() => window.__sameDocument)).toBe(true);

    const ping = receiver.received[before];
    expect(ping).toBeDefined();
    expect(ping.headers['x-partner-event']).toBe('ping');
    expect(ping.headers['x-partner-delivery']).toBe(queued.id);
    expect(verifySignature(ping.body, String(ping.headers['x-partner-signature']), signingSecret)).toBe(true);
    expect(verifySignature(ping.body, String(ping.headers['x-partner-signature']), 'whsec_wrong')).toBe(false);
    expect(verifySignature(`${ping.body} `, String(ping.headers['x-partner-signature']), signingSecret)).toBe(false);
    await shotBoth('deliveries');
  });

  it('shows a failing attempt as FAILED with the HTTP status, then redelivers it live', async () => {
    receiver.answerWith(500);
    const [answer] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().endsWith(`/v1/developer/webhooks/${webhookId}/test`) && r.request().method() === 'POST',
      ),
      page.getByRole('button', { name: 'Send test ping' }).click(),
    ]);
    const failedId = (await answer.json()).id as string;
    const row = page.locator(`tr[data-delivery-id="${failedId}"]`);
    await page.locator(`tr[data-delivery-id="${failedId}"][data-status="FAILED"]`).waitFor();
    expect(await row.getByTestId('delivery-http').textContent()).toBe('500');
    expect(await row.getByTestId('delivery-error').textContent()).toContain('500');
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    expect(await row.locator('td[data-label="Next attempt"]').textContent()).not.toBe('—');
    // Newest first: the failed ping is above the delivered one.
    expect(await page.locator('tbody tr').first().getAttribute('data-delivery-id')).toBe(failedId);

    // The status filter asks the API for FAILED rows only.
    await page.getByLabel('Status', { exact: true }).selectOption('FAILED');
    await page.waitForFunction((id) => {
      const rows = [...document.querySelectorAll('tbody tr')];
      return rows.length === 1 && rows[0].getAttribute('data-delivery-id') === id;
    }, failedId);
    await shotBoth('deliveries-failed');
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.locator('tbody tr').nth(1).waitFor();

    receiver.answerWith(200);
    await row.getByRole('button', { name: /Redeliver/ }).click();
    await page.locator(`tr[data-delivery-id="${failedId}"][data-status="DELIVERED"]`).waitFor();
    expect(await row.getByTestId('delivery-http').textContent()).toBe('200');
    // The attempt counter was reset by the redeliver, so this is attempt 1 again.
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    expect(await page.locator('nav[aria-label="Pages"]').textContent()).toContain('2 deliveries');

    // A reload of this deep link lands on the same page (SPA fallback) with both rows from the API.
    await page.reload();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    // The heading renders before the rows arrive from the API: wait for them, then count.
    await page.locator('tbody tr[data-status="DELIVERED"]').nth(1).waitFor();
    expect(await page.locator('tbody tr[data-status="DELIVERED"]').count()).toBe(2);
    // Keyboard users meet the skip link first; it takes them past the header to the content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  });

  it('shows the requests made in the key usage chart and totals, and in the overview', async () => {
    await nav('API keys');
    await page.locator(`tr[data-key-id="${liveKeyId}"]`).getByRole('link', { name: 'Dispatch system', exact: true }).click();
    await page.getByRole('heading', { name: 'Dispatch system' }).waitFor();
    // Usage is counted in batches and shows within seconds: reload until it does.
    for (let i = 0; i < 20; i++) {
      const text = await page.getByTestId('total-requests').textContent({ timeout: 15_000 });
      if (text === '2') break;
      await page.waitForTimeout(500);
      await page.reload();
    }
    expect(await page.getByTestId('total-requests').textContent()).toBe('2');
    expect(await page.getByTestId('total-4xx').textContent()).toBe('1');
    expect(await page.getByTestId('total-5xx').textContent()).toBe('0');
    expect(await page.locator('canvas[role="img"]').getAttribute('aria-label')).toContain('2 requests, 1 client errors');
    // The day-by-day table behind the chart: today (UTC) holds both requests, 7 days in all.
    const today = new Date(t.ctx.clock.nowMs()).toISOString().slice(0, 10);
    await page.getByText('Show the numbers as a table').click();
    expect(await page.locator('tr[data-day]').count()).toBe(7);
    expect(await page.locator(`tr[data-day="${today}"] td`).allTextContents()).toEqual(['2', '1', '0']);
    expect(await page.evaluate(() => document.querySelector('canvas')?.width ?? 0)).toBeGreaterThan(0);
    await shotBoth('key-usage');

    await page.getByRole('radio', { name: 'Last 35 days' }).check();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-day]').length === 35);
    expect(await page.getByTestId('total-requests').textContent()).toBe('2');

    await nav('Usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.getByTestId('overview-total').waitFor();
    expect(await page.getByTestId('overview-total').textContent()).toContain('2 requests');
    expect(await page.locator(`tr[data-key-id="${liveKeyId}"] [data-testid="row-requests"]`).textContent()).toBe('2');
    await shotBoth('usage-overview');
  });

  it('rotates the key: the new key is shown once with the old key’s grace end, and both keys work', async () => {
    await nav('API keys');
    const row = page.locator(`tr[data-key-id="${liveKeyId}"]`);
    await row.getByRole('button', { name: /Rotate/ }).click();
    const confirm = page.getByRole('dialog', { name: /Rotate “Dispatch system”/ });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('24');
    await shot('key-rotate-confirm-desktop');
    await confirm.getByRole('button', { name: 'Rotate key' }).click();
    const reveal = page.getByRole('dialog', { name: 'Your rotated API key' });
    await reveal.waitFor();
    rotatedKey = await reveal.getByTestId('rotated-key').inputValue();
    expect(rotatedKey).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(rotatedKey).not.toBe(liveKey);
    const grace = (await reveal.getByTestId('grace-end').textContent()) ?? '';
    expect(grace).toContain('keeps working until');
    expect(await reveal.textContent()).toContain('1 webhook');
    await shotBoth('key-rotated');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();

    // The old key is "rotated, expires T" (beside its name and in its status); the new one is active; both answer.
    await row
      .getByTestId('key-status')
      .getByText(/Rotated/)
      .waitFor();
    expect(await row.getByTestId('key-rotated').textContent()).toMatch(/\(rotated, expires .+\)/);
    expect(await row.getByRole('button', { name: /Rotate/ }).count()).toBe(0);
    expect(await page.locator('tr[data-key-name="Dispatch system"]').count()).toBe(2);
    expect((await partnerApi('/v1/partner/me', liveKey)).status).toBe(200);
    expect((await partnerApi('/v1/partner/me', rotatedKey)).status).toBe(200);
    // The webhook moved to the new key.
    await nav('Webhooks');
    const moved = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await moved.waitFor();
    expect(await moved.evaluate((el) => el.closest('section')?.getAttribute('data-key-id'))).not.toBe(liveKeyId);
  });

  it('revokes the rotated-out key at once: it answers ERR_API_KEY_REVOKED, the new key keeps working', async () => {
    await nav('API keys');
    const row = page.locator(`tr[data-key-id="${liveKeyId}"]`);
    await row.getByRole('button', { name: /Revoke/ }).click();
    const confirm = page.getByRole('dialog', { name: /Revoke “Dispatch system”/ });
    await confirm.waitFor();
    // The safe choice has the focus.
    expect(await confirm.getByRole('button', { name: 'Cancel' }).evaluate((el) => el === document.activeElement)).toBe(true);
    await shotBoth('key-revoke-confirm');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByText('Revoked keys (1)').click();
    await row
      .getByTestId('key-status')
      .getByText(/Revoked/)
      .waitFor();

    const revoked = await partnerApi('/v1/partner/me', liveKey);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as { code: string }).code).toBe('ERR_API_KEY_REVOKED');
    expect((await partnerApi('/v1/partner/me', rotatedKey)).status).toBe(200);
    await shotBoth('keys-after-revoke');
  });

  it('refreshes an expired access token silently, for API calls and for the realtime channel', async () => {
    const before = await page.evaluate(() => JSON.parse(localStorage.getItem('partner-portal.session') ?? '{}').refreshToken);
    // Access tokens live 15 minutes on the server's clock.
    t.clock.advance(16 * 60);
    await nav('Webhooks');
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
    t.clock.advance(16 * 60);
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
    await signIn(partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav('Docs');
    await page.getByRole('heading', { name: 'Docs', level: 1 }).waitFor();
    expect(await page.getByTestId('api-reference-link').getAttribute('href')).toBe('/docs');
    const docsText = (await page.locator('main').textContent()) ?? '';
    expect(docsText).toContain('X-Partner-Signature');
    expect(docsText).toContain("createHmac('sha256', secret)");
    await shotBoth('docs');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => localStorage.getItem('partner-portal.session'))).toBeNull();
    await page.reload();
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
      await docs.goto(url('/docs'));
      // Redoc rendered the reduced document: operations of both families are there.
      await docs.getByRole('heading', { name: 'Create a sandbox test order' }).waitFor({ timeout: 30_000 });
      await docs.getByRole('heading', { name: 'Rotate an API key' }).waitFor();
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
    const busy = await createPartner(t.ctx, 'Busy Logistics');
    for (let i = 0; i < 10; i++) await createKey(t.ctx, busy.id, { name: `Key ${i + 1}` });
    await signIn(busy.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByTestId('active-key-count').textContent()).toBe(
      '10 of 10 active keys used. Revoke a key you no longer use to create another.',
    );
    expect(await page.getByRole('button', { name: 'Create key', exact: true }).isDisabled()).toBe(true);
    await shotBoth('key-limit');
    expect(await page.locator('tbody tr').count()).toBe(10);
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
