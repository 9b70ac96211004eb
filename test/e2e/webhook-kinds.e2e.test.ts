/**
 * The webhook forms and the test-event picker offer every kind of the event catalog the key may
 * receive, grouped, and an edit never drops a subscription (docs/portal.md, "Event kinds"), in real
 * headless Chromium at 1366×900 and 390×844 with the real Content-Security-Policy and axe on each state.
 *
 * A webhook subscribed through the API to every kind is edited in the portal and read back through the
 * API: exactly what the form showed ticked is saved; a change made through the API arrives live and stays
 * when a read of the list that started before it lands after it. A key without payments:read is offered no
 * payment or settlement kind; a key with it sends itself a settlement sample from the picker.
 *
 * Screenshots: artifacts/screenshots/webhook-kinds-*.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENTS } from '../../src/shared/schemas.js';
import { createKey, createPartner, type TestKey, type TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium, holdAnswers, PAGE_DEADLINE } from './chromium.js';
import { AXE_WIDTHS, atBothWidths, callJson, nav, type PortalRun, signIn, startPortalRun } from './portal-run.js';

const STEP_TIMEOUT = 90_000;
const PAYMENT_KINDS = WEBHOOK_EVENTS.filter((e) => e.startsWith('payment_intent.') || e.startsWith('settlement.'));

if (!hasChromium) console.warn(`webhook kinds end-to-end tests skipped: ${CHROMIUM} is absent`);

describe.skipIf(!hasChromium)('webhook event kinds in the portal', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let partner: TestPartner;
  let payKey: TestKey;
  let plainKey: TestKey;
  let webhookId = '';

  const api = (method: string, path: string, body?: unknown) => callJson(run.url(path), partner.auth, method, body);
  const readEvents = async () => {
    const list = await api('GET', '/v1/developer/webhooks');
    const items = list.body.items as Array<{ id: string; events: string[] }>;
    return items.find((w) => w.id === webhookId)?.events ?? [];
  };
  const shotBoth = (name: string) => atBothWidths(page, `webhook-kinds-${name}`, { widths: AXE_WIDTHS, axe: true });
  const card = () => page.locator(`li[data-webhook-id="${webhookId}"]`);
  const dialog = () => page.getByRole('dialog');
  const ticked = () =>
    dialog()
      .locator('[data-testid="event-kinds"] input[type="checkbox"]:checked')
      .evaluateAll((boxes) => boxes.map((b) => (b as unknown as { value: string }).value));

  beforeAll(async () => {
    run = await startPortalRun({ worker: { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 } });
    page = run.page;
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
    payKey = await createKey(run.t.ctx, partner.id, {
      name: 'Payments system',
      scopes: ['orders:read', 'logistics:write', 'webhooks:manage', 'payments:read'],
    });
    plainKey = await createKey(run.t.ctx, partner.id, { name: 'Dispatch system' });
    // Subscribed through the API to every kind, as the go-live checklist asks of a payments key.
    const created = await api('POST', '/v1/developer/webhooks', {
      apiKeyId: payKey.id,
      url: run.receiver.url,
      events: [...WEBHOOK_EVENTS],
    });
    expect(created.status).toBe(201);
    webhookId = String(created.body.id);
    await signIn(page, run.origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }, 240_000);

  afterAll(() => run?.close());

  it('the edit form shows every kind the webhook has, grouped, all ticked', async () => {
    await nav(page, 'Webhooks');
    await card().getByRole('button', { name: 'Edit' }).click();
    await dialog().getByTestId('event-kinds').waitFor();
    expect((await ticked()).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const groups = await dialog()
      .locator('fieldset.event-group')
      .evaluateAll((sets) => sets.map((s) => (s as unknown as { dataset: { group: string } }).dataset.group));
    expect(groups).toEqual(['Orders', 'Offers', 'Courier tracking', 'Payments', 'Settlements']);
    await shotBoth('edit-every-kind');
  });

  it('an edit saves exactly what the form shows: one kind unticked, every other kind kept', async () => {
    await dialog()
      .getByRole('checkbox', { name: /^order\.placed\b/ })
      .uncheck();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/v1/developer/webhooks/${webhookId}`) && r.request().method() === 'PATCH'),
      dialog().getByRole('button', { name: 'Save changes' }).click(),
    ]);
    const sent = answer.request().postDataJSON() as { url: string; events: string[] };
    expect(sent.url).toBe(run.receiver.url);
    expect(sent.events.sort()).toEqual(WEBHOOK_EVENTS.filter((e) => e !== 'order.placed').sort());
    await dialog().waitFor({ state: 'detached' });
    expect((await readEvents()).sort()).toEqual(WEBHOOK_EVENTS.filter((e) => e !== 'order.placed').sort());

    // Ticked again in a second edit that also changes the URL: every kind again, the new URL.
    await card().getByRole('button', { name: 'Edit' }).click();
    await dialog()
      .getByRole('checkbox', { name: /^order\.placed\b/ })
      .check();
    await dialog().getByLabel('Endpoint URL').fill(`${run.receiver.url}?v=2`);
    await dialog().getByRole('button', { name: 'Save changes' }).click();
    await dialog().waitFor({ state: 'detached' });
    expect((await readEvents()).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const list = await api('GET', '/v1/developer/webhooks');
    expect((list.body.items as Array<{ id: string; url: string }>).find((w) => w.id === webhookId)?.url).toBe(
      `${run.receiver.url}?v=2`,
    );
  });

  it('a change that arrives live stays shown when a read of the list that started before it lands after it', async () => {
    // Coming back to the tab reads the list again. Its answer, read before the change below was made
    // through the API, is held back until the change has arrived live (webhook.updated) and shown, as
    // happens on a busy machine: when it lands, it must not put the webhook back as it was.
    const reads = await holdAnswers(page, /\/v1\/developer\/webhooks$/);
    await page.evaluate(() =>
      (globalThis as unknown as { dispatchEvent(event: Event): boolean }).dispatchEvent(new Event('visibilitychange')),
    );
    await expect.poll(() => reads.held(), PAGE_DEADLINE).toBeGreaterThan(0);
    const moved = `${run.receiver.url}?v=3`;
    expect((await api('PATCH', `/v1/developer/webhooks/${webhookId}`, { url: moved })).status).toBe(200);
    await card().locator('.webhook-url', { hasText: moved }).waitFor();
    // Every read held here has answered once this resolves, the one that follows the change included.
    await reads.release();
    await page.locator(`section[data-key-id="${payKey.id}"] ul.webhook-list[aria-busy="false"]`).waitFor();
    expect(await card().locator('.webhook-url').textContent()).toBe(moved);
    await shotBoth('kept-after-read');
  });

  it('a key without payments:read is offered no payment or settlement kind', async () => {
    const group = page.locator(`section[data-key-id="${plainKey.id}"]`);
    await group.getByRole('button', { name: /Add webhook/ }).click();
    await dialog().getByTestId('event-kinds').waitFor();
    const offered = await dialog()
      .locator('[data-testid="event-kinds"] input[type="checkbox"]')
      .evaluateAll((boxes) => boxes.map((b) => (b as unknown as { value: string }).value));
    expect(offered).toContain('order.courier_location');
    expect(offered.filter((k) => PAYMENT_KINDS.includes(k as (typeof PAYMENT_KINDS)[number]))).toEqual([]);
    expect(offered).toHaveLength(WEBHOOK_EVENTS.length - PAYMENT_KINDS.length);
    await shotBoth('add-without-payments');
    await dialog().getByRole('button', { name: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached' });
  });

  it('the test-event picker offers every kind the key may receive and sends a settlement sample', async () => {
    const picker = card().getByLabel('Test event kind');
    const options = await picker
      .locator('option')
      .evaluateAll((opts) => opts.map((o) => (o as unknown as { value: string }).value));
    expect(options.sort()).toEqual(['ping', ...WEBHOOK_EVENTS].sort());
    await picker.selectOption('settlement.created');
    await card().getByRole('button', { name: 'Send test event' }).click();
    await card().getByText('Test settlement.created sample queued.').waitFor();
    await expect
      .poll(() => run.receiver.received.some((r) => r.headers['x-partner-event'] === 'settlement.created'), { timeout: 20_000 })
      .toBe(true);
    await shotBoth('test-settlement');
    expect(run.browser.pageErrors).toEqual([]);
  });
});
