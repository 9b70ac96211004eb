/**
 * From a new sandbox key to a complete go-live checklist, in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on real ports, with the webhook
 * worker and a local webhook run.receiver. Only the portal (key, webhook, test orders, the marketplace's
 * moves) and a scripted partner client (its own calls to the sandbox API with the key the portal showed
 * once) are used: no operator, no database writes. Steps build on each other, in order.
 *
 * Screenshots at desktop and phone width go to artifacts/screenshots/sandbox-*.png.
 */
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartner, type TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium } from './chromium.js';
import { atBothWidths, nav, type PortalRun, sandboxCall, signIn, startPortalRun } from './portal-run.js';

// Browser globals used inside page callbacks (this file is compiled with the Node libraries only).
declare const document: { querySelectorAll(selector: string): { length: number } };

const STEP_TIMEOUT = 120_000;
const ITEMS = 16;

if (!hasChromium) console.warn(`sandbox end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

interface Envelope {
  id: string;
  type: string;
  data: { order?: { code: string; status: string } };
}

describe.skipIf(!hasChromium)('from a new sandbox key to a complete go-live checklist', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let origin: string;
  let partner: TestPartner;

  // What the steps hand to each other.
  let sandboxKey = '';
  let keyId = '';
  let placed = '';
  const cod: string[] = [];

  const url = (path: string) => `${origin}${path}`;

  /** The partner's own system: a call to the sandbox API with the key. */
  const partnerCall = (method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string) =>
    sandboxCall(run, sandboxKey, method, path, body, idempotencyKey);
  /** What the receiver was sent: the event envelopes. */
  const events = () => run.receiver.received.map((r) => JSON.parse(r.body) as Envelope);

  async function event(code: string, body: Record<string, unknown>, idempotencyKey?: string) {
    const res = await partnerCall('POST', `/v1/partner/orders/${code}/events`, body, idempotencyKey);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res;
  }

  const shotBoth = (name: string) => atBothWidths(page, `sandbox-${name}`);
  const item = (id: string): Locator => page.locator(`[data-item-id="${id}"]`);
  const orderCard = (code: string): Locator => page.locator(`li[data-order-code="${code}"]`);

  /** The number of items the checklist shows done. */
  async function doneCount(): Promise<number> {
    return page.locator('[data-item-id][data-done="true"]').count();
  }

  /**
   * Waits until the checklist shows `n` items done: it follows the realtime channel by itself; the
   * Refresh button is pressed between checks in case a message is still on its way (deadline 30 s).
   */
  async function waitForDone(n: number) {
    const deadline = Date.now() + 30_000;
    while ((await doneCount()) < n) {
      if (Date.now() > deadline) throw new Error(`the checklist shows ${await doneCount()} of ${n} items done`);
      await page
        .waitForFunction((want) => document.querySelectorAll('[data-item-id][data-done="true"]').length >= want, n, {
          timeout: 2_000,
        })
        .catch(() => page.getByRole('button', { name: 'Refresh' }).click());
    }
  }

  beforeAll(async () => {
    run = await startPortalRun({ sandbox: true, worker: { pollIntervalMs: 100 }, receiver: { path: '/hooks/partner' } });
    ({ page, origin } = run);
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
  }, 240_000);

  afterAll(() => run?.close());

  it('signs in and creates a sandbox key, shown once', async () => {
    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name', { exact: true }).fill('Sandbox integration');
    await dialog.getByRole('radio', { name: /^Sandbox/ }).check();
    for (const scope of ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage']) {
      await dialog.getByRole('checkbox', { name: new RegExp(scope) }).check();
    }
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const reveal = page.getByRole('dialog', { name: 'Your new API key' });
    sandboxKey = await reveal.getByTestId('new-key').inputValue();
    expect(sandboxKey).toMatch(/^svc_sandbox_[0-9A-Za-z]{32}$/);
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    keyId = (await page.locator('tr[data-key-name="Sandbox integration"]').getAttribute('data-key-id')) ?? '';
    expect(keyId).not.toBe('');
  });

  it('adds a webhook of the key for every event', async () => {
    await nav(page, 'Webhooks');
    const group = page.locator(`section[data-key-id="${keyId}"]`);
    await group.getByRole('button', { name: /Add webhook/ }).click();
    const dialog = page.getByRole('dialog', { name: /Add a webhook/ });
    await dialog.getByLabel('Endpoint URL').fill(run.receiver.url);
    for (const event of ['order.placed', 'order.delivered', 'order.cancelled', 'batch.completed', 'offer.created']) {
      await dialog.getByRole('checkbox', { name: new RegExp(event.replace('.', '\\.')) }).check();
    }
    await dialog.getByRole('button', { name: 'Create webhook' }).click();
    const reveal = page.getByRole('dialog', { name: 'Webhook created' });
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    await group.locator('li[data-webhook-id]').waitFor();
  });

  it('opens the Sandbox page: every checklist item open, each with what to send and a link to the reference', async () => {
    await nav(page, 'Sandbox');
    await page.getByRole('heading', { name: 'Sandbox', level: 1 }).waitFor();
    await page.getByTestId('checklist-progress').getByText(`0 of ${ITEMS}`).waitFor();
    expect(await page.locator('[data-item-id]').count()).toBe(ITEMS);
    const open = item('event-delivered-cod-variance');
    expect(await open.textContent()).toContain('ERR_COD_VARIANCE_NOTE_REQUIRED');
    expect(await open.getByRole('link', { name: /Reference/ }).getAttribute('href')).toBe(
      '/docs#operation/createPartnerOrderEvent',
    );
    await page.getByText('No test orders for this key yet.').waitFor();
    await shotBoth('start');
  });

  it('creates test orders with options, showing the API’s answer to a count out of range', async () => {
    const form = page.locator('form.sandbox-create');
    await form.getByLabel('How many').fill('25');
    await form.getByRole('button', { name: 'Create test orders' }).click();
    // Said once, beside the field, in plain words.
    await form.locator('[data-error-code="ERR_VALIDATION"]').waitFor();
    expect(await form.locator('.field-error').textContent()).toBe('Enter a whole number from 1 to 20.');
    expect(await form.locator('[role="alert"]').count()).toBe(0);

    await form.getByLabel('How many').fill('3');
    await form.getByLabel('Cash on delivery').check();
    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.getByText('Created 3 test orders.').waitFor();
    await form.getByLabel('Status').selectOption('PLACED');
    await form.getByLabel('How many').fill('1');
    await form.getByLabel('With a customer').uncheck();
    await form.getByRole('button', { name: 'Create test orders' }).click();
    await form.getByText(/^Created ORD-/).waitFor();

    await page.locator('li[data-order-code]').nth(3).waitFor();
    const cards = page.locator('li[data-order-code]');
    const codes = await cards.evaluateAll((els) => els.map((el) => el.getAttribute('data-order-code') ?? ''));
    const statuses = await cards.evaluateAll((els) => els.map((el) => el.getAttribute('data-status') ?? ''));
    expect(statuses).toEqual(['PLACED', 'PACKED', 'PACKED', 'PACKED']);
    placed = codes[0];
    cod.push(...codes.slice(1));
    // The marketplace moves each status allows, as the API says.
    expect(
      await orderCard(placed)
        .locator('button[data-move]')
        .evaluateAll((b) => b.map((x) => x.getAttribute('data-move'))),
    ).toEqual(['VENDOR_ACCEPTED', 'CANCELLED']);
    expect(
      await orderCard(cod[0])
        .locator('button[data-move]')
        .evaluateAll((b) => b.map((x) => x.getAttribute('data-move'))),
    ).toEqual(['SCANNED_TO_VAN', 'CANCELLED']);
    expect(await orderCard(cod[0]).getByTestId('partner-events').textContent()).toContain('PICKED_UP, EN_ROUTE');
    expect(await orderCard(placed).textContent()).toContain('no customer');
    // A webhook answered order.assigned_to_partner for them.
    await waitForDone(1);
    expect(await item('webhook-order-assigned-to-partner').getAttribute('data-done')).toBe('true');
    await shotBoth('orders');
  });

  it('follows the partner’s own calls to the sandbox API, item by item', async () => {
    const [a, b, c] = cod;
    const since = new Date(run.t.clock.nowMs() - 3_600_000).toISOString();
    const listed = await partnerCall('GET', `/v1/partner/orders?updatedSince=${encodeURIComponent(since)}&pageSize=50`);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(4);
    const byCode = new Map((listed.body.items as Array<{ code: string; codAmountQepik: number }>).map((o) => [o.code, o]));

    // Order a: picked up (sent twice with one Idempotency-Key: the second answer is the first), delivered exactly.
    const first = await event(a, { type: 'PICKED_UP' }, 'pickup-a-1');
    const again = await event(a, { type: 'PICKED_UP' }, 'pickup-a-1');
    expect(again.body).toEqual(first.body);
    await event(a, { type: 'EN_ROUTE' });
    await event(a, { type: 'DELIVERED', codCollectedQepik: byCode.get(a)?.codAmountQepik });
    // Order b: the customer paid less, with a note.
    await event(b, { type: 'EN_ROUTE' });
    const short = (byCode.get(b)?.codAmountQepik ?? 0) - 200;
    await event(b, { type: 'DELIVERED', codCollectedQepik: short, note: 'Customer paid 2 AZN less: damaged box' });
    // Order c: nobody home, then out again.
    await event(c, { type: 'EN_ROUTE' });
    await event(c, { type: 'FAILED', failReason: 'NOT_HOME' });
    await event(c, { type: 'EN_ROUTE' });
    // Two sandbox offers (offer.created to the webhook): one accepted, one declined with a reason.
    const offers = await partnerCall('POST', '/v1/partner/sandbox/offers', { count: 2 });
    expect(offers.status, JSON.stringify(offers.body)).toBe(201);
    const [take, pass] = offers.body.items as Array<{ id: string }>;
    expect((await partnerCall('POST', `/v1/partner/offers/${take.id}/accept`)).status).toBe(200);
    expect((await partnerCall('POST', `/v1/partner/offers/${pass.id}/decline`, { reason: 'NO_CAPACITY' })).status).toBe(200);

    // Everything but the two marketplace-only webhooks (order.cancelled, batch.completed).
    await waitForDone(ITEMS - 2);
    for (const id of ['webhook-order-cancelled', 'webhook-batch-completed']) {
      expect(await item(id).getAttribute('data-done'), id).toBe('false');
    }
    // The order cards follow on their own (order.updated), independently of the checklist.
    await page.locator(`li[data-order-code="${c}"][data-status="EN_ROUTE"]`).waitFor();
    await page.locator(`li[data-order-code="${a}"][data-status="DELIVERED"]`).waitFor();
    await shotBoth('partner-calls');
  });

  it('cancels an order and runs a van batch to COMPLETED as the marketplace, completing the checklist', async () => {
    await orderCard(placed)
      .getByRole('button', { name: `Cancel order ${placed}` })
      .click();
    await page.locator(`li[data-order-code="${placed}"][data-status="CANCELLED"]`).waitFor();
    expect(await orderCard(placed).locator('button[data-move]').count()).toBe(0);

    const c = cod[2];
    await orderCard(c).getByLabel(`Add to a van batch ${c}`).check();
    await page.getByRole('button', { name: 'Put 1 order on a van batch' }).click();
    const batch = page.locator('li[data-batch-code]');
    await batch.waitFor();
    expect(await batch.textContent()).toContain(c);
    await batch.getByRole('button', { name: /Dispatch the van/ }).click();
    await page.locator('li[data-batch-code][data-status="DISPATCHED"]').waitFor();
    await batch.getByRole('button', { name: /Complete the batch/ }).click();
    await page.locator('li[data-batch-code][data-status="COMPLETED"]').waitFor();

    await waitForDone(ITEMS);
    await page.getByTestId('checklist-complete').waitFor();
    await page.getByTestId('checklist-progress').getByText(`${ITEMS} of ${ITEMS}`).waitFor();
    // The next step: a live key, on the live API's real address.
    const next = page.getByTestId('next-step');
    expect(await next.getByRole('link', { name: 'create a live key' }).getAttribute('href')).toBe(
      `/portal/keys?create=LIVE&from=${keyId}`,
    );
    const doc = (await (await fetch(url('/v1/developer/openapi.json'))).json()) as { servers: Array<{ url: string }> };
    expect(await next.textContent()).toContain(doc.servers[0].url);
    await shotBoth('complete');

    // The partner's receiver got the marketplace's events, and the API agrees with the page.
    expect(events().some((e) => e.type === 'order.cancelled' && e.data.order?.code === placed)).toBe(true);
    expect(events().some((e) => e.type === 'batch.completed')).toBe(true);
    const checklist = await fetch(url(`/v1/developer/keys/${keyId}/checklist`), {
      headers: { authorization: `Bearer ${partner.token}` },
    });
    expect(((await checklist.json()) as { complete: boolean }).complete).toBe(true);

    // "With the same scopes": the create dialog opens on Live with the sandbox key's scopes ticked.
    const keys = await fetch(url('/v1/developer/keys'), { headers: { authorization: `Bearer ${partner.token}` } });
    const scopes = ((await keys.json()) as { items: Array<{ id: string; scopes: string[] }> }).items.find(
      (k) => k.id === keyId,
    )?.scopes;
    await next.getByRole('link', { name: 'create a live key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    for (const scope of scopes ?? [])
      expect(await dialog.getByRole('checkbox', { name: new RegExp(scope) }).isChecked(), scope).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('raised no uncaught error and no Content-Security-Policy violation in the page', () => {
    expect(run.browser.pageErrors).toEqual([]);
  });
});
