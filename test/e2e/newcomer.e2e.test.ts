/**
 * A new partner developer's path through the portal, in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on real ports, with the webhook
 * worker and a local webhook receiver: the real API addresses where a newcomer looks, the sandbox key
 * that can run the simulator, each sandbox error said once in plain words, order buttons that stay put,
 * an Events page in lifecycle order and a valid reference with a way back. Keys, webhooks, deliveries,
 * rotated keys and the request log are newcomer-keys.e2e.test.ts. Every page and dialog is scanned with
 * axe (no serious or critical finding) at desktop (1366×900) and phone (390×844) width.
 *
 * The steps build on each other, in order. Screenshots go to artifacts/screenshots/newcomer-*.png.
 */
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestKey, TestPartner } from '../factories.js';
import { TEST_OTP } from '../harness.js';
import { seriousFindings } from './axe.js';
import { CHROMIUM, hasChromium, PAGE_DEADLINE, signInWithCode, untilIdle } from './chromium.js';
import { bothWidths, LIVE_URL, type NewcomerRun, SANDBOX_URL, startNewcomerRun } from './newcomer-run.js';
import { AXE_WIDTHS, nav, SHOTS, sandboxCall } from './portal-run.js';

// Browser globals used inside page callbacks (this file is compiled with the Node libraries only).
declare const document: { body: { innerText: string } };

const DESKTOP = AXE_WIDTHS.desktop;
const PHONE = AXE_WIDTHS.phone;
const STEP_TIMEOUT = 150_000;

if (!hasChromium) console.warn(`newcomer end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!hasChromium)('a new partner developer’s path through the portal', { timeout: STEP_TIMEOUT }, () => {
  let run: NewcomerRun;
  let page: Page;
  let origin: string;
  let partner: TestPartner;
  let simulatorKey: TestKey;
  let readOnlyKey: TestKey;
  let placed = '';
  let packed = '';

  const url = (path: string) => `${origin}${path}`;

  /** No serious or critical axe finding on the page as it is now. */
  async function expectAxeClean(what: string) {
    expect(await seriousFindings(page), `axe on ${what}`).toEqual([]);
  }

  const orderCard = (code: string): Locator => page.locator(`li[data-order-code="${code}"]`);

  beforeAll(async () => {
    run = await startNewcomerRun();
    ({ page, origin, partner, simulatorKey, readOnlyKey } = run);
  }, 240_000);

  afterAll(() => run?.close());

  it('signs in; the Docs page shows the live and sandbox base URLs, in every snippet, and both signature schemes', async () => {
    await page.goto(url('/portal'));
    await page.getByLabel('Phone number').waitFor();
    await bothWidths(page, 'sign-in');
    await signInWithCode(page, partner.phone, TEST_OTP);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    // The keys page: both addresses, once the published document has given them ('…' until then).
    await page.getByTestId('base-url-live').getByText(LIVE_URL).waitFor();
    expect(await page.getByTestId('base-url-sandbox').textContent()).toBe(SANDBOX_URL);

    await nav(page, 'Docs');
    await page.getByRole('heading', { name: 'Docs', level: 1 }).waitFor();
    await page.getByTestId('base-url-live').getByText(LIVE_URL).waitFor();
    expect(await page.getByTestId('base-url-sandbox').textContent()).toBe(SANDBOX_URL);
    const snippets = await page.locator('figure.code pre').allTextContents();
    const all = snippets.join('\n');
    expect(all).toContain(`curl ${LIVE_URL}/v1/partner/me`);
    expect(all).toContain(`curl ${SANDBOX_URL}/v1/partner/me`);
    expect(all).not.toContain('<api-host>');
    expect(all).not.toContain('example.com');
    expect(all).toContain(SANDBOX_URL);
    // Both signature schemes.
    const verify = page.locator('section', { has: page.getByRole('heading', { name: 'Verify a webhook signature' }) });
    const text = (await verify.textContent()) ?? '';
    for (const words of [
      'X-Partner-Signature',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature: v1,',
      'standardwebhooks',
    ]) {
      expect(text).toContain(words);
    }
    expect(text).toContain('new Webhook(secret).verify(body, headers)');
    await bothWidths(page, 'docs');
  });

  it('opens the Sandbox page on the key that can run the simulator, says why the other cannot, and offers no useless retry', async () => {
    await nav(page, 'Sandbox');
    await page.getByRole('heading', { name: 'Sandbox', level: 1 }).waitFor();
    const picker = page.getByLabel('Sandbox key');
    await picker.waitFor();
    expect(await picker.inputValue()).toBe(simulatorKey.id);
    expect(await page.getByTestId('base-url-sandbox').textContent()).toBe(SANDBOX_URL);
    // The read-only key is listed, not choosable, with the reason.
    const readOnly = picker.locator(`option[value="${readOnlyKey.id}"]`);
    expect(await readOnly.isDisabled()).toBe(true);
    expect(await readOnly.textContent()).toContain('no logistics:write scope');
    expect(await page.getByTestId('unusable-keys').textContent()).toContain('Reporting sandbox');
    await page.getByTestId('checklist-progress').waitFor();
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    expect(await page.locator('[role="alert"]').count()).toBe(0);

    // Asked for the read-only key by link: the page says why not and opens on the one that can.
    await page.goto(url(`/portal/sandbox?key=${readOnlyKey.id}`));
    await page
      .getByTestId('unusable-keys')
      .getByText(/“Reporting sandbox.*” cannot run the simulator/)
      .waitFor();
    expect(await page.getByLabel('Sandbox key').inputValue()).toBe(simulatorKey.id);
    expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    await bothWidths(page, 'sandbox-key-choice');
  });

  it('says a sandbox error once, in plain words, and clears it when the input changes or a later action succeeds', async () => {
    const form = page.locator('form.sandbox-create');
    const count = form.getByLabel('How many');
    await count.fill('25');
    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.locator('.field-error').getByText('Enter a whole number from 1 to 20.').waitFor();
    const body = await page.evaluate(() => document.body.innerText);
    expect(body.match(/from 1 to 20/g)?.length).toBe(1);
    expect(body).not.toMatch(/must be <=|<= 20/);
    expect(await page.locator('[role="alert"]').count()).toBe(0);
    expect(await count.getAttribute('aria-invalid')).toBe('true');
    await bothWidths(page, 'sandbox-count-error');
    // Changing the input clears it (the form hears of it a moment later).
    await count.fill('2');
    await expect.poll(() => form.locator('.field-error').count(), PAGE_DEADLINE).toBe(0);
    expect(await form.getByText('1 to 20').count()).toBe(1);

    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.getByText('Created 2 test orders.').waitFor();
    await form.getByLabel('Status').selectOption('PLACED');
    await count.fill('1');
    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.getByText(/^Created ORD-/).waitFor();
    await page.locator('li[data-order-code]').nth(2).waitFor();
    const codes = await page
      .locator('li[data-order-code]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-order-code') ?? ''));
    placed = codes[0];
    packed = codes[1];

    // An error, then another action succeeds: the error goes.
    await count.fill('0');
    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.locator('.field-error').waitFor();
    await orderCard(packed)
      .getByRole('button', { name: `Scan onto a van ${packed}` })
      .click();
    await page.locator(`li[data-order-code="${packed}"][data-status="SCANNED_TO_VAN"]`).waitFor();
    await form.locator('.field-error').waitFor({ state: 'detached' });
  });

  it('keeps the Cancel order button in place while the checklist fills, so the first click cancels', async () => {
    const cancel = orderCard(placed).getByRole('button', { name: `Cancel order ${placed}` });
    // At the top of the page, where the browser's scroll anchoring does not hide a change above.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    const before = await cancel.boundingBox();
    const doneBefore = await page.locator('[data-item-id][data-done="true"]').count();
    // The partner's system proves checklist items meanwhile: the list with updatedSince, and EN_ROUTE sent
    // twice with one Idempotency-Key (an item whose hint takes two lines at desktop width).
    const since = new Date(run.t.clock.nowMs() - 3_600_000).toISOString();
    expect(
      (await sandboxCall(run, simulatorKey.key, 'GET', `/v1/partner/orders?updatedSince=${encodeURIComponent(since)}`)).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) {
      const sent = await sandboxCall(
        run,
        simulatorKey.key,
        'POST',
        `/v1/partner/orders/${packed}/events`,
        { type: 'EN_ROUTE' },
        'en-route-1',
      );
      expect(sent.status).toBe(201);
    }
    await page.waitForFunction(
      (n) =>
        (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
          '[data-item-id][data-done="true"]',
        ).length >= n,
      doneBefore + 3,
      { timeout: 30_000 },
    );
    const after = await cancel.boundingBox();
    expect(after?.y, 'the button moved while the checklist changed').toBe(before?.y);
    // One click, one cancel.
    await cancel.click();
    await page.locator(`li[data-order-code="${placed}"][data-status="CANCELLED"]`).waitFor();
    await bothWidths(page, 'sandbox-orders');
  });

  it('lists the Events in lifecycle order with an index, and renders the descriptions', async () => {
    await nav(page, 'Events');
    const index = page.getByTestId('event-index');
    await index.waitFor();
    const indexed = await index.locator('a code').allTextContents();
    expect(indexed[0]).toBe('order.assigned_to_partner');
    const sections = await page
      .locator('section[data-event-type]')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-event-type')));
    expect(sections).toEqual(indexed);
    expect(await page.locator('main').evaluate((el) => (el as unknown as { innerText: string }).innerText)).not.toContain('`');
    await index.getByRole('link', { name: 'order.delivered' }).click();
    expect(page.url()).toContain('#kind-order.delivered');
    await bothWidths(page, 'events');
  });

  it('the reference (/docs) has valid examples per event type, a way back to the portal, and passes axe at both widths', async () => {
    const doc = (await (await fetch(url('/v1/developer/openapi.json'))).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { requestBody?: { content: Record<string, { examples?: Record<string, { value: Record<string, unknown> }> }> } }
        >
      >;
    };
    const examples = doc.paths['/v1/partner/orders/{code}/events'].post.requestBody?.content['application/json'].examples ?? {};
    const values = Object.values(examples).map((e) => e.value);
    expect(values.map((v) => v.type)).toEqual(expect.arrayContaining(['PICKED_UP', 'EN_ROUTE', 'DELIVERED', 'FAILED']));
    for (const v of values) {
      if (v.type !== 'DELIVERED') expect(v, JSON.stringify(v)).not.toHaveProperty('codCollectedQepik');
      if (v.type !== 'FAILED') expect(v, JSON.stringify(v)).not.toHaveProperty('failReason');
      if (v.type === 'FAILED') expect(v).toHaveProperty('failReason');
    }

    await nav(page, 'Docs');
    await page.getByTestId('api-reference-link').click();
    await page.locator('#operation\\/createPartnerOrderEvent').waitFor({ timeout: 60_000 });
    const operation = page.locator('#operation\\/createPartnerOrderEvent');
    await operation.scrollIntoViewIfNeeded();
    expect(await operation.textContent()).toContain('PICKED_UP: the courier has the parcel');
    await page.evaluate(() =>
      (globalThis as unknown as { document: { getElementById(id: string): { scrollIntoView(): void } | null } }).document
        .getElementById('operation/createPartnerOrderEvent')
        ?.scrollIntoView(),
    );
    await page.screenshot({ path: join(SHOTS, 'newcomer-reference-event-examples-desktop.png') });
    expect(await page.getByTestId('back-to-portal').getAttribute('href')).toBe('/portal/');
    // Redoc renders the rest of the page after its first paint: wait until the page has nothing left to do.
    await untilIdle(page);
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, 'newcomer-reference-desktop.png') });
    await expectAxeClean('/docs at desktop width');
    await page.setViewportSize(PHONE);
    await untilIdle(page);
    await page.screenshot({ path: join(SHOTS, 'newcomer-reference-phone.png') });
    await expectAxeClean('/docs at phone width');
    await page.setViewportSize(DESKTOP);
    await page.getByTestId('back-to-portal').click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(run.browser.pageErrors).toEqual([]);
  });
});
