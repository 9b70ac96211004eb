/**
 * A new partner developer's keys and webhooks in the portal, in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on real ports, with the webhook
 * worker and a local webhook receiver: one-time secrets that cannot be lost, a webhook URL error said
 * once, one attempts count, rotated keys told apart and charted as one integration, the Requests filters
 * folded on phones, labelled time zones and distinct health cards. Every page and dialog is scanned with
 * axe (no serious or critical finding) at desktop (1366×900) and phone (390×844) width.
 *
 * The steps build on each other, in order. Screenshots go to artifacts/screenshots/newcomer-*.png.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestKey, TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium, PAGE_DEADLINE } from './chromium.js';
import { bothWidths, LIVE_URL, type NewcomerRun, startNewcomerRun } from './newcomer-run.js';
import { callJson, nav, sandboxCall, signIn } from './portal-run.js';

const STEP_TIMEOUT = 150_000;

if (!hasChromium) console.warn(`newcomer keys end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!hasChromium)('a new partner developer’s keys and webhooks in the portal', { timeout: STEP_TIMEOUT }, () => {
  let run: NewcomerRun;
  let page: Page;
  let origin: string;
  let partner: TestPartner;
  let simulatorKey: TestKey;
  let liveKeyId = '';
  let webhookId = '';

  const url = (path: string) => `${origin}${path}`;
  /** A developer-API call as the partner (bearer token). */
  const developer = (method: string, path: string, body?: unknown) => callJson(url(path), partner.auth, method, body);

  beforeAll(async () => {
    run = await startNewcomerRun();
    ({ page, origin, partner, simulatorKey } = run);
    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }, 240_000);

  afterAll(() => run?.close());

  it('will not let the new key’s dialog go without “I have copied it”; it shows the key’s real base URL', async () => {
    await nav(page, 'API keys');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name', { exact: true }).fill('Dispatch live');
    await dialog.getByRole('radio', { name: /^Live/ }).check();
    await dialog.getByRole('checkbox', { name: /webhooks:manage/ }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const reveal = page.getByRole('dialog', { name: 'Your new API key' });
    await reveal.waitFor();
    // The address comes from the published document, read once per page load ('…' until it answers).
    await expect.poll(() => reveal.getByTestId('key-base-url').textContent(), PAGE_DEADLINE).toBe(LIVE_URL);
    expect(await reveal.locator('pre').textContent()).toContain(`curl ${LIVE_URL}/v1/partner/me`);
    // Escape and a click on the backdrop leave it open, and say why.
    await page.keyboard.press('Escape');
    await reveal.getByTestId('dialog-blocked').waitFor();
    expect(await reveal.isVisible()).toBe(true);
    await page.mouse.click(5, 5);
    expect(await reveal.isVisible()).toBe(true);
    await bothWidths(page, 'key-created-dialog');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await reveal.waitFor({ state: 'hidden' });
    liveKeyId = (await page.locator('tr[data-key-name="Dispatch live"]').getAttribute('data-key-id')) ?? '';
    expect(liveKeyId).not.toBe('');
    // Its page shows the live address only.
    await page.locator(`tr[data-key-id="${liveKeyId}"]`).getByRole('link', { name: 'Dispatch live', exact: true }).click();
    await page.getByTestId('base-url-live').getByText(LIVE_URL).waitFor();
    expect(await page.getByTestId('base-url-sandbox').count()).toBe(0);
    await bothWidths(page, 'key-detail');
  });

  it('says a webhook URL error once, clears it on typing, and keeps the secret dialog until “I have copied it”', async () => {
    await nav(page, 'Webhooks');
    const group = page.locator(`section[data-key-id="${simulatorKey.id}"]`);
    await group.getByRole('button', { name: /Add webhook/ }).click();
    const dialog = page.getByRole('dialog', { name: /Add a webhook/ });
    const field = dialog.getByLabel('Endpoint URL');
    await field.fill('http://example.com/hook');
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    await dialog.locator('[data-error-code="ERR_WEBHOOK_URL_INVALID"]').waitFor();
    const text = (await dialog.textContent()) ?? '';
    expect(text.match(/must use https/g)?.length, text).toBe(1);
    expect(await dialog.locator('.notice-error').count()).toBe(0);
    await bothWidths(page, 'webhook-url-error');
    await field.fill('http://example.com/hook2');
    // Typing drops the API's answer; the form hears of it a moment later.
    await expect.poll(() => dialog.locator('[data-error-code]').count(), PAGE_DEADLINE).toBe(0);
    expect(await dialog.getByText(/must use https/).count()).toBe(0);

    await field.fill(run.receiver.url);
    for (const event of ['order.assigned_to_partner', 'order.status_changed']) {
      expect(await dialog.getByRole('checkbox', { name: new RegExp(event.replace('.', '\\.')) }).isChecked()).toBe(true);
    }
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const reveal = page.getByRole('dialog', { name: 'Webhook created' });
    await reveal.waitFor();
    await page.keyboard.press('Escape');
    await reveal.getByTestId('dialog-blocked').waitFor();
    await page.mouse.click(5, 5);
    expect(await reveal.isVisible()).toBe(true);
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await reveal.waitFor({ state: 'hidden' });
    const card = group.locator('li[data-webhook-id]').first();
    await card.waitFor();
    webhookId = (await card.getAttribute('data-webhook-id')) ?? '';

    // A second webhook: two health cards, each named by its endpoint.
    await group.getByRole('button', { name: /Add webhook/ }).click();
    await dialog.getByLabel('Endpoint URL').fill(`${run.receiver.url}/second`);
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await group.locator('li[data-webhook-id]').nth(1).waitFor();
    // Each card reads its endpoint's health on its own, after the card shows.
    await expect.poll(() => page.getByTestId('webhook-health').count(), PAGE_DEADLINE).toBe(2);
    const healthNames = await page
      .getByTestId('webhook-health')
      .evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
    expect(healthNames).toHaveLength(2);
    expect(new Set(healthNames).size).toBe(2);
    await bothWidths(page, 'webhooks');
  });

  it('counts a delivery’s attempts one way everywhere and drops the “queued again” note once it is delivered', async () => {
    run.receiver.answerWith(500);
    const test = await developer('POST', `/v1/developer/webhooks/${webhookId}/test`, { event: 'ping' });
    expect(test.status).toBe(200);
    const deliveryId = String(test.body.id);
    await page.goto(url(`/portal/webhooks/${webhookId}`));
    const row = page.locator(`tr[data-delivery-id="${deliveryId}"]`);
    await page.locator(`tr[data-delivery-id="${deliveryId}"][data-status="FAILED"]`).waitFor({ timeout: 30_000 });
    expect(await page.getByRole('columnheader', { name: /Attempts this round/ }).count()).toBe(1);
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');

    // Queued again and failed again: the note stays, saying when it was queued.
    await row.getByRole('button', { name: /Redeliver/ }).click();
    // The note comes with the row's reset (PENDING, 0 attempts): the FAILED after it is the new attempt's.
    await row.getByTestId('delivery-requeued').waitFor();
    await page.locator(`tr[data-delivery-id="${deliveryId}"][data-status="FAILED"]`).waitFor({ timeout: 30_000 });
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    // Queued again and delivered: recovered, the note goes.
    run.receiver.answerWith(200);
    await row.getByRole('button', { name: /Redeliver/ }).click();
    await page.locator(`tr[data-delivery-id="${deliveryId}"][data-status="DELIVERED"]`).waitFor({ timeout: 30_000 });
    await row.getByTestId('delivery-requeued').waitFor({ state: 'detached' });
    expect(await page.getByText(/queued again\./).count()).toBe(0);
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    await bothWidths(page, 'deliveries');

    await row.getByRole('link', { name: /Details/ }).click();
    const history = page.getByRole('heading', { name: /Attempt history/ });
    await history.waitFor();
    expect(await history.textContent()).toContain('3 in all rounds');
    expect(await page.getByRole('heading', { name: /^Attempts/ }).count()).toBe(0);
    await bothWidths(page, 'delivery-detail');
  });

  it('tells a rotated key apart, keeps its status to one short line, and charts it with its successor as one integration', async () => {
    // The partner calls with the key, rotates it, and calls with both.
    expect((await sandboxCall(run, simulatorKey.key, 'GET', '/v1/partner/me')).status).toBe(200);
    const rotated = await developer('POST', `/v1/developer/keys/${simulatorKey.id}/rotate`);
    expect(rotated.status).toBe(200);
    const successorKey = String(rotated.body.key);
    expect((await sandboxCall(run, successorKey, 'GET', '/v1/partner/me')).status).toBe(200);
    expect((await sandboxCall(run, simulatorKey.key, 'GET', '/v1/partner/me')).status).toBe(200);
    await run.t.ctx.usage.flush();

    await nav(page, 'API keys');
    const old = page.locator(`tr[data-key-id="${simulatorKey.id}"]`);
    await old.getByTestId('key-rotated').waitFor();
    expect(await old.getByTestId('key-rotated').textContent()).toMatch(/^\s*\(rotated, expires .+ UTC\)$/);
    const fresh = page.locator(`tr[data-key-id="${String(rotated.body.id)}"]`);
    expect(await fresh.getByTestId('key-rotated').count()).toBe(0);
    const badge = old.getByTestId('key-status').locator('.badge');
    expect(await badge.textContent()).toBe('Rotated');
    expect((await badge.boundingBox())?.height ?? 99).toBeLessThan(32);
    await bothWidths(page, 'keys-rotated');

    await nav(page, 'Usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    expect(await page.locator('.lead').textContent()).toContain('UTC days');
    const chart = page.locator('.chart[data-series]');
    await chart.waitFor();
    await page.waitForFunction(
      () =>
        ((
          globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string | null } | null } }
        ).document
          .querySelector('.chart[data-series]')
          ?.getAttribute('data-series') ?? '') !== '',
    );
    const series = ((await chart.getAttribute('data-series')) ?? '').split('\n');
    expect(series.filter((s) => s.startsWith('Dispatch sandbox'))).toHaveLength(1);
    await bothWidths(page, 'usage');
  });

  it('folds the Requests filters into a drawer on a phone and labels its times', async () => {
    await nav(page, 'Requests');
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    expect(await page.getByTestId('filters-drawer').count()).toBe(0);
    expect(await page.getByLabel('Error code').isVisible()).toBe(true);
    expect(await page.locator('.log-filters').textContent()).toMatch(/Your time \(UTC\)/);
    await bothWidths(page, 'requests', async () => {
      const drawer = page.getByTestId('filters-drawer');
      await drawer.waitFor();
      expect(await page.getByLabel('Error code').isVisible()).toBe(false);
      // The first screen shows the log itself, not seven filters.
      expect((await drawer.boundingBox())?.height ?? 999).toBeLessThan(80);
      await drawer.locator('summary').click();
      expect(await page.getByLabel('Error code').isVisible()).toBe(true);
      await drawer.locator('summary').click();
    });
    // A request of the log, opened.
    await page.locator('a.request-link').first().click();
    await page.waitForURL(/\/portal\/requests\/[^/]+$/);
    await page.locator('h1.request-title').waitFor();
    await bothWidths(page, 'request-detail');
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(run.browser.pageErrors).toEqual([]);
  });
});
