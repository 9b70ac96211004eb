/**
 * The developer portal end to end, in real headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core; never a downloaded browser) against the real app on a real port, with the webhook
 * worker running and a local webhook run.receiver. The steps build on each other, in order, like a
 * developer's first session: sign in, create a key, call the partner API with it, add a webhook, watch
 * a ping arrive live, watch a failure and redeliver it, read usage, rotate and revoke. The session's
 * own rules (an expired access token, a lost session, signing out, an account that is not a partner)
 * are portal-session.e2e.test.ts.
 *
 * Screenshots of every page, at desktop and phone width, go to artifacts/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../portal/snippets/verify-signature.js';
import { createPartner, type TestPartner } from '../factories.js';
import { TEST_OTP } from '../harness.js';
import { CHROMIUM, hasChromium, PAGE_DEADLINE } from './chromium.js';
import { atBothWidths, nav, type PortalRun, screenshot, startPortalRun } from './portal-run.js';

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
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
};
declare const window: Record<string, unknown>;
declare const navigator: { clipboard: { readText(): Promise<string> } };

if (!hasChromium) {
  console.warn(
    `portal end-to-end tests skipped: ${CHROMIUM} is absent (CI installs Debian's chromium; locally: apt-get install chromium)`,
  );
}

/** Each step drives a real browser (and takes screenshots at two widths): more time than a unit test. */
const STEP_TIMEOUT = 90_000;

describe.skipIf(!hasChromium)('developer portal in headless Chromium', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let origin: string;
  let partner: TestPartner;

  // What the steps hand to each other.
  let liveKey = '';
  let liveKeyId = '';
  let rotatedKey = '';
  let signingSecret = '';
  let webhookId = '';

  const url = (path: string) => `${origin}${path}`;
  const partnerApi = (path: string, key: string) => fetch(url(path), { headers: { 'x-api-key': key } });

  beforeAll(async () => {
    run = await startPortalRun({ worker: {} });
    ({ page, origin } = run);
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
  }, 240_000);

  afterAll(() => run?.close());

  it('signs a partner in with phone and one-time code, showing the API answer to a wrong code first', async () => {
    await page.goto(url('/portal/'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await atBothWidths(page, 'sign-in');
    // A wrong code is answered by the API's envelope, shown as it is.
    await page.getByLabel('Phone number').fill(partner.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('One-time code').fill('000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const error = page.locator('[data-error-code="ERR_OTP_INVALID"]');
    await error.waitFor();
    await screenshot(page, 'sign-in-wrong-code-desktop');
    await page.getByLabel('One-time code').fill(TEST_OTP);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/portal/keys');
    expect(await page.getByTestId('partner-name').textContent()).toBe('Caspian Couriers');
    // Signing in moves focus to the new page's heading (announced by screen readers), once it has rendered.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), PAGE_DEADLINE).toBe('API keys');
    await page.getByText('You have no active keys yet.').waitFor();
    await atBothWidths(page, 'keys-empty');
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
    await atBothWidths(page, 'key-create-validation');

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
    await atBothWidths(page, 'key-created');
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
    await atBothWidths(page, 'keys');
  });

  it('adds a webhook for the key and shows its signing secret once', async () => {
    await nav(page, 'Webhooks');
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

    await dialog.getByLabel('Endpoint URL').fill(run.receiver.url);
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const reveal = page.getByRole('dialog', { name: 'Webhook created' });
    await reveal.waitFor();
    signingSecret = await reveal.getByTestId('webhook-secret').inputValue();
    expect(signingSecret).toMatch(/^whsec_/);
    expect(await reveal.textContent()).toContain('You will not see this signing secret again');
    await atBothWidths(page, 'webhook-created');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();

    const card = group.locator('li[data-webhook-id]');
    await card.waitFor();
    webhookId = (await card.getAttribute('data-webhook-id')) ?? '';
    expect(await card.textContent()).toContain(run.receiver.url);
    expect(await card.textContent()).toContain('Active');
    expect(await page.locator('body').textContent()).not.toContain(signingSecret);
    await atBothWidths(page, 'webhooks');
  });

  it('edits the webhook events and disables and re-enables it', async () => {
    const card = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await card.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit webhook' });
    await dialog.waitFor();
    expect(await dialog.getByLabel('Endpoint URL').inputValue()).toBe(run.receiver.url);
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

    const before = run.receiver.received.length;
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

    const ping = run.receiver.received[before];
    expect(ping).toBeDefined();
    expect(ping.headers['x-partner-event']).toBe('ping');
    expect(ping.headers['x-partner-delivery']).toBe(queued.id);
    expect(verifySignature(ping.body, String(ping.headers['x-partner-signature']), signingSecret)).toBe(true);
    expect(verifySignature(ping.body, String(ping.headers['x-partner-signature']), 'whsec_wrong')).toBe(false);
    expect(verifySignature(`${ping.body} `, String(ping.headers['x-partner-signature']), signingSecret)).toBe(false);
    // The health card above the log follows the attempts live, without a reload.
    await page.locator('[data-testid="webhook-health"][data-verdict="Healthy"]').waitFor();
    expect(await page.getByTestId('health-rate').textContent()).toBe('100% of 1 attempt');
    await atBothWidths(page, 'deliveries');
  });

  it('shows a failing attempt as FAILED with the HTTP status, then redelivers it live', async () => {
    run.receiver.answerWith(500);
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
    await page.locator('[data-testid="webhook-health"][data-verdict="Failing"]').waitFor();
    expect(await page.getByTestId('health-rate').textContent()).toBe('50% of 2 attempts');
    await atBothWidths(page, 'deliveries-failed');
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.locator('tbody tr').nth(1).waitFor();

    run.receiver.answerWith(200);
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
    await nav(page, 'API keys');
    await page.locator(`tr[data-key-id="${liveKeyId}"]`).getByRole('link', { name: 'Dispatch system', exact: true }).click();
    await page.getByRole('heading', { name: 'Dispatch system' }).waitFor();
    // A request is counted once its answer has gone (usage-recorder.ts), so the page may be read before
    // both are: read it again until it shows them.
    await expect
      .poll(
        async () => {
          const text = await page.getByTestId('total-requests').textContent(PAGE_DEADLINE);
          if (text !== '2') await page.reload();
          return text;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe('2');
    expect(await page.getByTestId('total-4xx').textContent()).toBe('1');
    expect(await page.getByTestId('total-5xx').textContent()).toBe('0');
    expect(await page.locator('canvas[role="img"]').getAttribute('aria-label')).toContain('2 requests, 1 client errors');
    // The day-by-day table behind the chart: today (UTC) holds both requests, 7 days in all.
    const today = new Date(run.t.ctx.clock.nowMs()).toISOString().slice(0, 10);
    await page.getByText('Show the numbers as a table').click();
    expect(await page.locator('tr[data-day]').count()).toBe(7);
    expect(await page.locator(`tr[data-day="${today}"] td`).allTextContents()).toEqual(['2', '1', '0']);
    expect(await page.evaluate(() => document.querySelector('canvas')?.width ?? 0)).toBeGreaterThan(0);
    await atBothWidths(page, 'key-usage');

    await page.getByRole('radio', { name: 'Last 35 days' }).check();
    await page.waitForFunction(() => document.querySelectorAll('tr[data-day]').length === 35);
    expect(await page.getByTestId('total-requests').textContent()).toBe('2');

    await nav(page, 'Usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await page.getByTestId('overview-total').waitFor();
    expect(await page.getByTestId('overview-total').textContent()).toContain('2 requests');
    expect(await page.locator(`tr[data-key-id="${liveKeyId}"] [data-testid="row-requests"]`).textContent()).toBe('2');
    await atBothWidths(page, 'usage-overview');
  });

  it('rotates the key: the new key is shown once with the old key’s grace end, and both keys work', async () => {
    await nav(page, 'API keys');
    const row = page.locator(`tr[data-key-id="${liveKeyId}"]`);
    await row.getByRole('button', { name: /Rotate/ }).click();
    const confirm = page.getByRole('dialog', { name: /Rotate “Dispatch system”/ });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('24');
    await screenshot(page, 'key-rotate-confirm-desktop');
    await confirm.getByRole('button', { name: 'Rotate key' }).click();
    const reveal = page.getByRole('dialog', { name: 'Your rotated API key' });
    await reveal.waitFor();
    rotatedKey = await reveal.getByTestId('rotated-key').inputValue();
    expect(rotatedKey).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(rotatedKey).not.toBe(liveKey);
    const grace = (await reveal.getByTestId('grace-end').textContent()) ?? '';
    expect(grace).toContain('keeps working until');
    expect(await reveal.textContent()).toContain('1 webhook');
    await atBothWidths(page, 'key-rotated');
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
    await nav(page, 'Webhooks');
    const moved = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await moved.waitFor();
    expect(await moved.evaluate((el) => el.closest('section')?.getAttribute('data-key-id'))).not.toBe(liveKeyId);
  });

  it('revokes the rotated-out key at once: it answers ERR_API_KEY_REVOKED, the new key keeps working', async () => {
    await nav(page, 'API keys');
    const row = page.locator(`tr[data-key-id="${liveKeyId}"]`);
    await row.getByRole('button', { name: /Revoke/ }).click();
    const confirm = page.getByRole('dialog', { name: /Revoke “Dispatch system”/ });
    await confirm.waitFor();
    // The safe choice has the focus.
    expect(await confirm.getByRole('button', { name: 'Cancel' }).evaluate((el) => el === document.activeElement)).toBe(true);
    await atBothWidths(page, 'key-revoke-confirm');
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
    await atBothWidths(page, 'keys-after-revoke');
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(run.browser.pageErrors).toEqual([]);
  });
});
