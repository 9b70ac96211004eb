/**
 * A new partner developer's path through the portal, in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on real ports, with the webhook
 * worker and a local webhook receiver: the real API addresses where a newcomer looks, the sandbox key
 * that can run the simulator, one-time secrets that cannot be lost, each error said once in plain
 * words, order buttons that stay put, rotated keys told apart and charted as one integration, a valid
 * reference with a way back, an Events page in lifecycle order, one attempts count, the Requests
 * filters folded on phones, labelled time zones and distinct health cards. Every page and dialog is
 * scanned with axe (no serious or critical finding) at desktop (1366×900) and phone (390×844) width.
 *
 * The steps build on each other, in order. Screenshots go to artifacts/screenshots/newcomer-*.png.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { createKey, createPartner, type TestKey, type TestPartner } from '../factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../harness.js';
import { seriousFindings } from './axe.js';
import { CHROMIUM, hasChromium, openPortalBrowser, type PortalBrowser, sidewaysOverflow, signInWithCode } from './chromium.js';
import { ensurePortalBuilt } from './portal-build.js';

// Browser globals used inside page callbacks (this file is compiled with the Node libraries only).
declare const document: { body: { innerText: string } };

const SHOTS = join(process.cwd(), 'artifacts', 'screenshots');
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const LIVE_URL = 'https://partners.example.test';
const SANDBOX_URL = 'https://sandbox.partners.example.test';
const STEP_TIMEOUT = 150_000;

if (!hasChromium) console.warn(`newcomer end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

/** A webhook endpoint answering with the status it is told. */
async function startReceiver() {
  let status = 200;
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    answerWith(next: number) {
      status = next;
    },
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!hasChromium)('a new partner developer’s path through the portal', { timeout: STEP_TIMEOUT }, () => {
  let t: TestApp;
  let worker: Worker;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let browser: PortalBrowser;
  let page: Page;
  let origin: string;
  let sandboxOrigin: string;
  let partner: TestPartner;
  let simulatorKey: TestKey;
  let readOnlyKey: TestKey;
  let liveKeyId = '';
  let webhookId = '';
  let placed = '';
  let packed = '';

  const url = (path: string) => `${origin}${path}`;
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

  /** A developer-API call as the partner (bearer token). */
  async function developer(method: string, path: string, body?: unknown) {
    const res = await fetch(url(path), {
      method,
      headers: {
        authorization: `Bearer ${partner.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** The partner's own system calling the sandbox API. */
  async function sandboxCall(key: string, method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string) {
    const res = await fetch(`${sandboxOrigin}${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** No serious or critical axe finding on the page as it is now. */
  async function expectAxeClean(what: string) {
    expect(await seriousFindings(page), `axe on ${what}`).toEqual([]);
  }

  /**
   * The page at desktop and at phone width: a screenshot of each, an axe scan of each, nothing
   * scrolling sideways on the phone; `atPhone` checks what only the phone layout shows.
   */
  async function bothWidths(name: string, atPhone?: () => Promise<void>) {
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, `newcomer-${name}-desktop.png`), fullPage: true });
    await expectAxeClean(`${name} at desktop width`);
    await page.setViewportSize(PHONE);
    expect(await sidewaysOverflow(page), `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
    await atPhone?.();
    await page.screenshot({ path: join(SHOTS, `newcomer-${name}-phone.png`), fullPage: true });
    await page.screenshot({ path: join(SHOTS, `newcomer-${name}-phone-first-screen.png`) });
    await expectAxeClean(`${name} at phone width`);
    await page.setViewportSize(DESKTOP);
  }

  const orderCard = (code: string): Locator => page.locator(`li[data-order-code="${code}"]`);

  beforeAll(async () => {
    ensurePortalBuilt();
    mkdirSync(SHOTS, { recursive: true });
    t = await createTestApp({ env: { PUBLIC_URL: LIVE_URL, SANDBOX_PUBLIC_URL: SANDBOX_URL } });
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}`;
    sandboxOrigin = `http://127.0.0.1:${(t.sandbox.server.address() as AddressInfo).port}`;
    worker = startWorker(t.ctx, { pollIntervalMs: 100 });
    receiver = await startReceiver();
    partner = await createPartner(t.ctx, 'Ganja Express');
    // The key that can run the simulator first; a newer read-only sandbox key after it.
    simulatorKey = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      name: 'Dispatch sandbox',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
    });
    t.clock.advance(1);
    readOnlyKey = await createKey(t.ctx, partner.id, {
      environment: 'SANDBOX',
      name: 'Reporting sandbox',
      scopes: ['orders:read'],
    });
    browser = await openPortalBrowser(origin);
    page = browser.page;
    await page.setViewportSize(DESKTOP);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await receiver?.close();
    await t?.close();
  });

  it('signs in; the Docs page shows the live and sandbox base URLs, in every snippet, and both signature schemes', async () => {
    await page.goto(url('/portal'));
    await page.getByLabel('Phone number').waitFor();
    await bothWidths('sign-in');
    await signInWithCode(page, partner.phone, TEST_OTP);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    // The keys page: both addresses.
    expect(await page.getByTestId('base-url-live').textContent()).toBe(LIVE_URL);
    expect(await page.getByTestId('base-url-sandbox').textContent()).toBe(SANDBOX_URL);

    await nav('Docs');
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
    await bothWidths('docs');
  });

  it('opens the Sandbox page on the key that can run the simulator, says why the other cannot, and offers no useless retry', async () => {
    await nav('Sandbox');
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
    await bothWidths('sandbox-key-choice');
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
    await bothWidths('sandbox-count-error');
    // Changing the input clears it.
    await count.fill('2');
    expect(await form.locator('.field-error').count()).toBe(0);
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
    const since = new Date(t.clock.nowMs() - 3_600_000).toISOString();
    expect(
      (await sandboxCall(simulatorKey.key, 'GET', `/v1/partner/orders?updatedSince=${encodeURIComponent(since)}`)).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) {
      const sent = await sandboxCall(
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
    await bothWidths('sandbox-orders');
  });

  it('will not let the new key’s dialog go without “I have copied it”; it shows the key’s real base URL', async () => {
    await nav('API keys');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name', { exact: true }).fill('Dispatch live');
    await dialog.getByRole('radio', { name: /^Live/ }).check();
    await dialog.getByRole('checkbox', { name: /webhooks:manage/ }).check();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const reveal = page.getByRole('dialog', { name: 'Your new API key' });
    await reveal.waitFor();
    expect(await reveal.getByTestId('key-base-url').textContent()).toBe(LIVE_URL);
    expect(await reveal.locator('pre').textContent()).toContain(`curl ${LIVE_URL}/v1/partner/me`);
    // Escape and a click on the backdrop leave it open, and say why.
    await page.keyboard.press('Escape');
    await reveal.getByTestId('dialog-blocked').waitFor();
    expect(await reveal.isVisible()).toBe(true);
    await page.mouse.click(5, 5);
    expect(await reveal.isVisible()).toBe(true);
    await bothWidths('key-created-dialog');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await reveal.waitFor({ state: 'hidden' });
    liveKeyId = (await page.locator('tr[data-key-name="Dispatch live"]').getAttribute('data-key-id')) ?? '';
    expect(liveKeyId).not.toBe('');
    // Its page shows the live address only.
    await page.locator(`tr[data-key-id="${liveKeyId}"]`).getByRole('link', { name: 'Dispatch live', exact: true }).click();
    await page.getByTestId('base-url-live').getByText(LIVE_URL).waitFor();
    expect(await page.getByTestId('base-url-sandbox').count()).toBe(0);
    await bothWidths('key-detail');
  });

  it('says a webhook URL error once, clears it on typing, and keeps the secret dialog until “I have copied it”', async () => {
    await nav('Webhooks');
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
    await bothWidths('webhook-url-error');
    await field.fill('http://example.com/hook2');
    expect(await dialog.locator('[data-error-code]').count()).toBe(0);
    expect(await dialog.getByText(/must use https/).count()).toBe(0);

    await field.fill(receiver.url);
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
    await dialog.getByLabel('Endpoint URL').fill(`${receiver.url}/second`);
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await group.locator('li[data-webhook-id]').nth(1).waitFor();
    const healthNames = await page
      .getByTestId('webhook-health')
      .evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
    expect(healthNames).toHaveLength(2);
    expect(new Set(healthNames).size).toBe(2);
    await bothWidths('webhooks');
  });

  it('counts a delivery’s attempts one way everywhere and drops the “queued again” note once it is delivered', async () => {
    receiver.answerWith(500);
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
    await page.locator(`tr[data-delivery-id="${deliveryId}"][data-status="FAILED"]`).waitFor({ timeout: 30_000 });
    await row.getByTestId('delivery-requeued').waitFor();
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    // Queued again and delivered: recovered, the note goes.
    receiver.answerWith(200);
    await row.getByRole('button', { name: /Redeliver/ }).click();
    await page.locator(`tr[data-delivery-id="${deliveryId}"][data-status="DELIVERED"]`).waitFor({ timeout: 30_000 });
    await row.getByTestId('delivery-requeued').waitFor({ state: 'detached' });
    expect(await page.getByText(/queued again\./).count()).toBe(0);
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    await bothWidths('deliveries');

    await row.getByRole('link', { name: /Details/ }).click();
    const history = page.getByRole('heading', { name: /Attempt history/ });
    await history.waitFor();
    expect(await history.textContent()).toContain('3 in all rounds');
    expect(await page.getByRole('heading', { name: /^Attempts/ }).count()).toBe(0);
    await bothWidths('delivery-detail');
  });

  it('tells a rotated key apart, keeps its status to one short line, and charts it with its successor as one integration', async () => {
    // The partner calls with the key, rotates it, and calls with both.
    expect((await sandboxCall(simulatorKey.key, 'GET', '/v1/partner/me')).status).toBe(200);
    const rotated = await developer('POST', `/v1/developer/keys/${simulatorKey.id}/rotate`);
    expect(rotated.status).toBe(200);
    const successorKey = String(rotated.body.key);
    expect((await sandboxCall(successorKey, 'GET', '/v1/partner/me')).status).toBe(200);
    expect((await sandboxCall(simulatorKey.key, 'GET', '/v1/partner/me')).status).toBe(200);
    await t.ctx.usage.flush();

    await nav('API keys');
    const old = page.locator(`tr[data-key-id="${simulatorKey.id}"]`);
    await old.getByTestId('key-rotated').waitFor();
    expect(await old.getByTestId('key-rotated').textContent()).toMatch(/^\s*\(rotated, expires .+ UTC\)$/);
    const fresh = page.locator(`tr[data-key-id="${String(rotated.body.id)}"]`);
    expect(await fresh.getByTestId('key-rotated').count()).toBe(0);
    const badge = old.getByTestId('key-status').locator('.badge');
    expect(await badge.textContent()).toBe('Rotated');
    expect((await badge.boundingBox())?.height ?? 99).toBeLessThan(32);
    await bothWidths('keys-rotated');

    await nav('Usage');
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
    await bothWidths('usage');
  });

  it('lists the Events in lifecycle order with an index, and renders the descriptions', async () => {
    await nav('Events');
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
    await bothWidths('events');
  });

  it('folds the Requests filters into a drawer on a phone and labels its times', async () => {
    await nav('Requests');
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    expect(await page.getByTestId('filters-drawer').count()).toBe(0);
    expect(await page.getByLabel('Error code').isVisible()).toBe(true);
    expect(await page.locator('.log-filters').textContent()).toMatch(/Your time \(UTC\)/);
    await bothWidths('requests', async () => {
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
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(page.url()).toMatch(/\/portal\/requests\/[^/]+$/);
    await bothWidths('request-detail');
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

    await nav('Docs');
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
    await page.waitForTimeout(500); // Redoc renders the rest of the page lazily after the first paint
    await page.setViewportSize(DESKTOP);
    await page.screenshot({ path: join(SHOTS, 'newcomer-reference-desktop.png') });
    await expectAxeClean('/docs at desktop width');
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(SHOTS, 'newcomer-reference-phone.png') });
    await expectAxeClean('/docs at phone width');
    await page.setViewportSize(DESKTOP);
    await page.getByTestId('back-to-portal').click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(browser.pageErrors).toEqual([]);
  });
});
