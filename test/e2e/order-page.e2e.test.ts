/**
 * The order page, the Payments page and a delivery's headers (docs/portal.md, "The order page",
 * "Payments", "Headers as sent"), in real headless Chromium at 1366×900 and 390×844 with the real
 * Content-Security-Policy and axe on each state, against the real app with the worker and a webhook
 * receiver. Orders are made and moved through the sandbox API as a partner's system would.
 *
 * Covered: an EN_ROUTE order with pings and an ETA, reached from its sandbox card, following a new ping
 * live; a CARD order captured and part-refunded; a delivered COD order with proof, reached from its
 * request-log entry; "not yours" apart from "nothing yet"; the Payments page opening on the environment
 * with money, its payment intents filtered and updating live, the sandbox period closed from the page;
 * a delivery's every header as its endpoint got it.
 *
 * Screenshots: artifacts/screenshots/order-*.png, payments-live-*.png, delivery-headers-*.png.
 */
import { crc32, deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestKey, type TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium, PAGE_DEADLINE } from './chromium.js';
import { AXE_WIDTHS, atBothWidths, callJson, nav, type PortalRun, signIn, startPortalRun } from './portal-run.js';

const TIMEOUT = 120_000;

if (!hasChromium) console.warn(`order page end-to-end tests skipped: ${CHROMIUM} is absent`);

/** A real 24×24 PNG of one colour. */
function png(rgb: [number, number, number]): Buffer {
  const size = 24;
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3).map((_, i) => rgb[i % 3])]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: size }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.skipIf(!hasChromium)('the order page, payments and headers in the portal', { timeout: TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let partner: TestPartner;
  let key: TestKey;
  let tracked = '';

  const sandbox = async (url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await run.t.sandbox.inject({
      method: 'POST',
      url,
      headers: { ...key.headers, ...headers },
      payload: payload as never,
    });
    expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
    return res.json();
  };
  const move = async (code: string, ...types: string[]) => {
    for (const type of types) await sandbox(`/v1/partner/orders/${code}/events`, { type });
  };
  const ping = (code: string, points: Array<{ lat: number; lng: number; at: number }>, etaAt?: string) =>
    sandbox(`/v1/partner/orders/${code}/locations`, {
      points: points.map((p) => ({ lat: p.lat, lng: p.lng, accuracyM: 6, at: new Date(p.at).toISOString() })),
      ...(etaAt ? { etaAt } : {}),
    });
  const look = (name: string) => atBothWidths(page, name, { widths: AXE_WIDTHS, axe: true });

  beforeAll(async () => {
    run = await startPortalRun({ worker: { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 } });
    page = run.page;
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
    key = await createKey(run.t.ctx, partner.id, {
      name: 'Courier app',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage', 'payments:read'],
    });
    const hook = await callJson(run.url('/v1/developer/webhooks'), partner.auth, 'POST', {
      apiKeyId: key.id,
      url: run.receiver.url,
      events: ['order.status_changed'],
    });
    expect(hook.status).toBe(201);
    await signIn(page, run.origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }, 240_000);

  afterAll(() => run?.close());

  it('an EN_ROUTE order, opened from its sandbox card: status, timeline, position, trail and ETA, following a new ping live', async () => {
    tracked = (await sandbox('/v1/partner/sandbox/orders', { paymentMethod: 'CARD' })).code;
    await move(tracked, 'PICKED_UP', 'EN_ROUTE');
    const now = run.t.clock.nowMs();
    const etaAt = new Date(now + 20 * 60_000).toISOString();
    await ping(
      tracked,
      [0, 1, 2, 3].map((i) => ({ lat: 40.37 + i * 0.002, lng: 49.83 + i * 0.003, at: now - (3 - i) * 10_000 })),
      etaAt,
    );
    await run.t.ctx.tracking.flushAll();

    await nav(page, 'Sandbox');
    await page.locator(`li[data-order-code="${tracked}"]`).getByRole('link', { name: tracked }).click();
    await page.getByRole('heading', { name: `Order ${tracked}`, level: 1 }).waitFor();
    expect(await page.getByTestId('order-status').innerText()).toContain('EN_ROUTE');
    expect(
      await page
        .getByTestId('order-timeline')
        .locator('li')
        .evaluateAll((l) => l.length),
    ).toBeGreaterThanOrEqual(3);
    expect(await page.getByTestId('tracking-position').innerText()).toBe('40.37600, 49.83900 (±6 m)');
    expect(await page.getByTestId('tracking-eta').innerText()).toMatch(/UTC$/);
    expect(await page.getByTestId('tracking-trail-count').innerText()).toContain('4 points');
    await page.getByTestId('trail-sketch').waitFor();
    // Nothing yet is said as nothing yet: no proof, a payment awaiting capture.
    expect(await page.getByTestId('proof-none').innerText()).toContain('No proof yet');
    expect(await page.getByTestId('payment-status').innerText()).toBe('Card payment awaiting capture');
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await look('order-en-route');

    // A new ping shows by itself once it is flushed (realtime order.tracking).
    await ping(tracked, [{ lat: 40.38, lng: 49.845, at: run.t.clock.nowMs() }]);
    await run.t.ctx.tracking.flushAll();
    await expect
      .poll(() => page.getByTestId('tracking-position').innerText(), { timeout: 15_000 })
      .toBe('40.38000, 49.84500 (±6 m)');
  });

  it('a CARD order captured and part-refunded: the capture and every refund, live', async () => {
    await sandbox(`/v1/partner/sandbox/orders/${tracked}/payment/capture`);
    await sandbox(`/v1/partner/sandbox/orders/${tracked}/payment/refunds`, { amountQepik: 250, reason: 'One item was missing' });
    await sandbox(`/v1/partner/sandbox/orders/${tracked}/payment/refunds`, { amountQepik: 100 });
    // The page is still open: payment_intent.updated brings the refunds in.
    await expect.poll(() => page.getByTestId('payment-status').innerText(), { timeout: 15_000 }).toBe('Paid by card');
    await expect.poll(() => page.getByTestId('payment-refunded').innerText(), { timeout: 15_000 }).toBe('3.50 AZN');
    const refunds = page.getByTestId('order-refunds');
    await refunds.waitFor();
    expect(await refunds.locator('tbody tr').count()).toBe(2);
    expect(await refunds.innerText()).toContain('One item was missing');
    expect(await refunds.innerText()).toContain('No reason given');
    expect(await page.getByTestId('payment-received').innerText()).toMatch(/ AZN on /);
    await look('order-card-refund');
  });

  it('a delivered COD order with proof, opened from its request-log entry; an unknown code is "not yours"', async () => {
    const cod = await sandbox('/v1/partner/sandbox/orders', { paymentMethod: 'COD' });
    await move(cod.code, 'PICKED_UP', 'EN_ROUTE');
    const photo = await sandbox('/v1/partner/uploads', png([30, 140, 90]), { 'content-type': 'image/png' });
    const home = { lat: cod.customer?.address?.lat ?? 40.3777, lng: cod.customer?.address?.lng ?? 49.8531 };
    await sandbox(`/v1/partner/orders/${cod.code}/events`, {
      type: 'DELIVERED',
      proof: { location: { ...home, accuracyM: 5 }, photoIds: [photo.id], recipientName: 'Nigar Əliyeva' },
    });
    // The DELIVERED request in the log (it shows there within a few seconds).
    let requestId = '';
    await expect
      .poll(
        async () => {
          const found = await callJson(
            run.url(`/v1/developer/requests?method=POST&path=${encodeURIComponent(`/v1/partner/orders/${cod.code}/events`)}`),
            partner.auth,
            'GET',
          );
          requestId = String((found.body.items as Array<{ id: string }> | undefined)?.[0]?.id ?? '');
          return (found.body.total as number) ?? 0;
        },
        { timeout: 20_000 },
      )
      .toBe(3);
    await page.goto(run.url(`/portal/requests/${requestId}`));
    await page.getByTestId('request-order-link').click();
    await page.getByRole('heading', { name: `Order ${cod.code}`, level: 1 }).waitFor();
    expect(await page.getByTestId('order-status').innerText()).toContain('DELIVERED');
    await expect.poll(() => page.getByTestId('proof-event').innerText(), PAGE_DEADLINE).toContain('DELIVERED');
    expect(await page.getByTestId('proof-recipient').innerText()).toBe('Nigar Əliyeva');
    expect(await page.getByTestId('proof-distance').innerText()).toBe('0 m');
    await page.locator(`figure[data-photo-id="${photo.id}"] img`).waitFor();
    expect(await page.getByTestId('payment-status').innerText()).toBe('Cash collected');
    expect(await page.getByTestId('order-payment').innerText()).toContain('Not on a statement yet');
    await look('order-cod-proof');

    await page.goto(run.url('/portal/orders/ORD-NOT-OURS'));
    await page.getByRole('heading', { name: 'Order ORD-NOT-OURS is not one of your keys’ orders', level: 1 }).waitFor();
    expect(await page.getByTestId('order-not-yours').innerText()).toContain('No order with this code is assigned to a key');
    await look('order-not-yours');
  });

  it('Payments opens on the environment with money, lists the intents with filters, updates live and closes the sandbox period', async () => {
    const waiting = (await sandbox('/v1/partner/sandbox/orders', { paymentMethod: 'CARD' })).code as string;
    await nav(page, 'Payments');
    await page.getByRole('heading', { name: 'Payments', level: 1 }).waitFor();
    await expect.poll(() => page.getByRole('radio', { name: 'Sandbox' }).isChecked(), PAGE_DEADLINE).toBe(true);
    const intents = page.getByTestId('payment-intents');
    await intents.waitFor();
    expect(await intents.locator('tbody tr').count()).toBe(3);
    const row = page.locator(`tr[data-intent-id]`, { has: page.getByRole('link', { name: waiting }) });
    expect(await row.getByTestId('intent-status').innerText()).toBe('Card payment awaiting capture');
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await look('payments-live-intents');

    // Captured elsewhere: the row says so without a reload.
    await sandbox(`/v1/partner/sandbox/orders/${waiting}/payment/capture`);
    await expect.poll(() => row.getByTestId('intent-status').innerText(), { timeout: 15_000 }).toBe('Paid by card');

    // The API's filters.
    await page.getByLabel('Method').selectOption('COD');
    await expect.poll(() => intents.locator('tbody tr').count(), PAGE_DEADLINE).toBe(1);
    await page.getByLabel('Method').selectOption('');
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await expect.poll(() => intents.locator('tbody tr').count(), PAGE_DEADLINE).toBe(2);
    await page.getByLabel('Status').selectOption('');

    // The sandbox's own period close: a statement of the cash collected, then remitted elsewhere, live.
    await page.getByTestId('close-sandbox-period').click();
    const statement = page.locator('[data-testid="settlements"] tr[data-settlement-id]');
    await statement.first().waitFor();
    expect(await statement.first().innerText()).toContain('Awaiting remittance');
    const settlementId = String(await statement.first().getAttribute('data-settlement-id'));
    const one = await callJson(run.url(`/v1/developer/settlements/${settlementId}`), partner.auth, 'GET');
    await sandbox(`/v1/partner/sandbox/settlements/${settlementId}/remittances`, {
      amountQepik: one.body.outstandingQepik,
      reference: 'BANK-42',
      note: 'All of it',
    });
    await expect.poll(() => statement.first().innerText(), { timeout: 15_000 }).toContain('Settled');
    await expect.poll(() => page.getByTestId('awaiting-remittance').innerText(), PAGE_DEADLINE).toBe('0.00 AZN');
    await look('payments-live-settled');

    // The choice is remembered: a later visit opens where it was left.
    await page.getByRole('radio', { name: 'Live' }).check();
    await page.goto(run.url('/portal/payments'));
    await expect.poll(() => page.getByRole('radio', { name: 'Live' }).isChecked(), PAGE_DEADLINE).toBe(true);
  });

  it('a delivery shows every header its endpoint got, the Standard Webhooks ones and User-Agent included', async () => {
    await expect.poll(() => run.receiver.received.length, { timeout: 20_000 }).toBeGreaterThan(0);
    const got = run.receiver.received[0];
    const deliveryId = String(got.headers['x-partner-delivery']);
    await page.goto(run.url(`/portal/deliveries/${deliveryId}`));
    const attempt = page.locator('[data-testid="attempt"][data-attempt="1"]');
    await attempt.waitFor();
    const table = attempt.locator('table', { has: page.locator('caption', { hasText: 'Request headers as sent' }) });
    await expect.poll(() => table.locator('tbody tr').count(), PAGE_DEADLINE).toBe(Object.keys(got.headers).length);
    for (const [name, value] of Object.entries(got.headers)) {
      const row = table.locator('tr', { has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) });
      expect(await row.locator('td').innerText(), name).toBe(String(value));
    }
    for (const name of ['user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature'])
      expect(got.headers[name]).toBeTruthy();
    expect(await page.getByTestId('delivery-order-link').count()).toBe(1);
    await look('delivery-headers');
    expect(run.browser.pageErrors).toEqual([]);
  });
});
