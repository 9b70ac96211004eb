/**
 * The portal's Payments page (docs/payments.md, "Developer portal reads"), from a sandbox CARD and a
 * COD order to a SETTLED statement: the orders are made and moved through the sandbox API as a partner
 * would (capture the card, deliver the cash order, close the sandbox period, remit what is
 * outstanding), then read in real headless Chromium against the real app on a real port.
 *
 * Screenshots at 1366×900 and 390×844 go to artifacts/screenshots/payments-*.png.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, hasChromium, PAGE_DEADLINE } from './chromium.js';
import { AXE_WIDTHS, atBothWidths, manat, nav, plain, type SandboxKeyRun, signIn, startWithSandboxKey } from './portal-run.js';

const TIMEOUT = 180_000;

if (!hasChromium) console.warn(`payments end-to-end test skipped: ${CHROMIUM} is absent`);

describe.skipIf(!hasChromium)('a sandbox statement in the Payments page', { timeout: TIMEOUT }, () => {
  let run: SandboxKeyRun;

  beforeAll(async () => {
    run = await startWithSandboxKey(['orders:read', 'logistics:write', 'payments:read']);
  }, 240_000);
  afterAll(() => run?.close());

  const call = async (url: string, payload: unknown, status: number) => {
    const res = await run.t.sandbox.inject({ method: 'POST', url, headers: run.key.headers, payload: payload as never });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
    return res.json();
  };

  /** Both widths: a screenshot, no serious or critical axe finding, nothing scrolling sideways on the phone. */
  const look = (name: string) => atBothWidths(run.page, `payments-${name}`, { widths: AXE_WIDTHS, axe: true });

  it('shows cash awaiting remittance, then the SETTLED statement with its lines, links and CSV', async () => {
    const { page, origin, partner } = run;
    const card = await call('/v1/partner/sandbox/orders', { paymentMethod: 'CARD' }, 201);
    const captured = await call(`/v1/partner/sandbox/orders/${card.code}/payment/capture`, undefined, 200);
    expect(captured).toMatchObject({ method: 'CARD', status: 'SUCCEEDED' });
    const cod = await call('/v1/partner/sandbox/orders', { paymentMethod: 'COD' }, 201);
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) await call(`/v1/partner/orders/${cod.code}/events`, { type }, 201);
    const settlement = await call('/v1/partner/sandbox/settlements', {}, 201);
    expect(settlement).toMatchObject({ status: 'AWAITING_REMITTANCE', collectionsCount: 1 });
    const due = settlement.dueQepik as number;
    expect(due).toBeGreaterThan(0);

    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav(page, 'Payments');
    await page.getByRole('heading', { name: 'Payments', level: 1 }).waitFor();
    // All this partner's money is in the sandbox: the page opens there.
    await expect.poll(() => page.getByRole('radio', { name: 'Sandbox' }).isChecked(), PAGE_DEADLINE).toBe(true);
    await expect
      .poll(async () => plain(await page.getByTestId('awaiting-remittance').innerText()), PAGE_DEADLINE)
      .toBe(manat(due));
    expect(await page.getByTestId('cash-on-hand').innerText()).toBe('0.00 AZN');
    // The statements are a query of their own: the totals above may show before the list does.
    const row = page.locator(`tr[data-settlement-id="${settlement.id}"]`);
    await expect.poll(() => row.getByText('Awaiting remittance').count(), PAGE_DEADLINE).toBe(1);
    await look('awaiting');

    await call(`/v1/partner/sandbox/settlements/${settlement.id}/remittances`, { amountQepik: due, reference: 'BANK-77' }, 201);
    await page.reload();
    await expect.poll(() => row.getByText('Settled', { exact: true }).count(), PAGE_DEADLINE).toBe(1);
    await expect.poll(() => page.getByTestId('awaiting-remittance').innerText(), PAGE_DEADLINE).toBe('0.00 AZN');
    await look('settled-list');

    await row.getByRole('link').click();
    await page.getByRole('heading', { name: /^Statement / }).waitFor();
    expect(await page.getByTestId('statement-status').innerText()).toBe('Settled');
    expect(plain(await page.getByTestId('sum-due').innerText())).toBe(manat(due));
    expect(plain(await page.getByTestId('sum-remitted').innerText())).toBe(manat(due));
    expect(await page.getByTestId('sum-outstanding').innerText()).toBe('0.00 AZN');
    const collection = page.locator('tr[data-line-type="COD_COLLECTION"]');
    await collection.waitFor();
    expect(await collection.getByRole('link').innerText()).toBe(cod.code);
    expect(await page.locator('tr[data-line-type="REMITTANCE"]').innerText()).toContain('Reference BANK-77');
    await look('statement');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${settlement.id}-lines.csv`);
    const csv = readFileSync((await download.path()) as string, 'utf8').split('\r\n');
    expect(csv[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    expect(csv[1]).toContain(`,COD_COLLECTION,${cod.code},`);
    expect(csv[2]).toContain(`,REMITTANCE,,,,${due},,BANK-77,`);

    // A collection opens its order, which shows its payment, settled on this statement.
    await collection.getByRole('link').click();
    await page.getByTestId('order-payment').waitFor();
    expect(await page.getByTestId('payment-status').innerText()).toBe('Cash collected and settled');
    expect(await page.getByTestId('order-payment').getByRole('link', { name: settlement.id }).count()).toBe(1);
    await look('order-cod');

    // The card order has no proof yet; its captured payment still shows.
    await page.goto(`${origin}/portal/orders/${card.code}/proof`);
    await page.getByTestId('order-payment').waitFor();
    expect(await page.getByTestId('payment-status').innerText()).toBe('Paid by card');
    expect(plain(await page.getByTestId('payment-received').innerText())).toContain(manat(captured.amountReceivedQepik));
    expect(run.browser.pageErrors).toEqual([]);
  });
});
