/**
 * The partner's credit in the portal (docs/payments.md, "Overpayment"; docs/portal.md, "Money"): a
 * sandbox statement is over-remitted through HTTP (the partner remits part of it, then the operator's
 * negative adjustment leaves it SETTLED with outstandingQepik −623), the Payments page shows the credit
 * and the statement says where its overpayment goes; the next statement, closed from the portal, carries
 * it as a line that reads as a credit and links back, and the credit leaves the balance.
 *
 * Screenshots at 1366×900 and 390×844 go to artifacts/screenshots/payments-credit-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../factories.js';
import { CHROMIUM, hasChromium, PAGE_DEADLINE } from './chromium.js';
import {
  AXE_WIDTHS,
  atBothWidths,
  callJson,
  manat,
  nav,
  plain,
  type SandboxKeyRun,
  signIn,
  startWithSandboxKey,
} from './portal-run.js';

const TIMEOUT = 180_000;

if (!hasChromium) console.warn(`payments credit end-to-end test skipped: ${CHROMIUM} is absent`);

describe.skipIf(!hasChromium)("the partner's credit in the Payments page", { timeout: TIMEOUT }, () => {
  let run: SandboxKeyRun;

  beforeAll(async () => {
    run = await startWithSandboxKey(['orders:read', 'logistics:write', 'payments:read']);
  }, 240_000);
  afterAll(() => run?.close());

  /** The partner's own system on the sandbox API, with its key. */
  const call = async (url: string, payload: unknown, status: number) => {
    const res = await run.t.sandbox.inject({ method: 'POST', url, headers: run.key.headers, payload: payload as never });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
    return res.json();
  };
  /** A COD sandbox order of the key, delivered: its cash is collected. */
  const deliveredCod = async () => {
    const cod = await call('/v1/partner/sandbox/orders', { paymentMethod: 'COD' }, 201);
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) await call(`/v1/partner/orders/${cod.code}/events`, { type }, 201);
    return cod as { code: string; codAmountQepik: number };
  };
  const look = (name: string) => atBothWidths(run.page, `payments-credit-${name}`, { widths: AXE_WIDTHS, axe: true });

  it('shows the credit of an over-remitted statement, then the next statement carrying it, and nothing once carried', async () => {
    const { page, origin, partner } = run;
    await deliveredCod();
    run.t.clock.advance(1);
    const first = await call('/v1/partner/sandbox/settlements', {}, 201);
    const due = first.dueQepik as number;
    expect(due).toBeGreaterThan(200);
    // 200 left outstanding, then the operator takes 823 off what is due: 623 over-remitted.
    await call(`/v1/partner/sandbox/settlements/${first.id}/remittances`, { amountQepik: due - 200, reference: 'BANK-1' }, 201);
    const operator = await createUser(run.t.ctx, 'ADMIN');
    const adjusted = await callJson(run.url(`/v1/admin/settlements/${first.id}/adjustments`), operator.auth, 'POST', {
      amountQepik: -823,
      note: 'refund to the customer',
    });
    expect(adjusted.status, JSON.stringify(adjusted.body)).toBe(201);
    const balance = await callJson(run.url('/v1/developer/payments/balance?environment=SANDBOX'), partner.auth, 'GET');
    expect(balance.body).toMatchObject({ awaitingRemittanceQepik: 0, creditQepik: 623 });

    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav(page, 'Payments');
    await page.getByRole('heading', { name: 'Payments', level: 1 }).waitFor();
    await expect.poll(() => page.getByRole('radio', { name: 'Sandbox' }).isChecked(), PAGE_DEADLINE).toBe(true);
    const credit = page.getByTestId('credit');
    await expect.poll(async () => plain(await credit.innerText().catch(() => '')), PAGE_DEADLINE).toBe(manat(623));
    const tile = page.getByTestId('payments-balance').locator('li', { has: credit });
    expect(await tile.innerText()).toContain('Credit, carried to your next statement');
    expect(await page.getByTestId('awaiting-remittance').innerText()).toBe('0.00 AZN');
    expect(await page.locator('#balance-heading ~ .hint').innerText()).toContain('your next statement takes it off what you owe');
    const firstRow = page.locator(`tr[data-settlement-id="${first.id}"]`);
    await expect.poll(() => firstRow.getByText('Settled', { exact: true }).count(), PAGE_DEADLINE).toBe(1);
    expect(plain(await firstRow.locator('td[data-label="Outstanding"]').innerText())).toBe(`${manat(-623)} (overpaid)`);
    await look('balance');

    await firstRow.getByRole('link').click();
    await page.getByRole('heading', { name: /^Statement / }).waitFor();
    expect(await page.getByTestId('sum-outstanding').innerText()).toBe(manat(-623));
    expect(await page.getByTestId('statement-overpaid').innerText()).toBe(
      `You remitted ${manat(623)} more than this statement asks. That overpayment is your credit: your next statement takes it off what you owe, as an adjustment line.`,
    );
    await look('overpaid-statement');

    // The next period, closed from the portal: its statement carries the credit.
    const second = await deliveredCod();
    run.t.clock.advance(1);
    await nav(page, 'Payments');
    await page.getByTestId('close-sandbox-period').click();
    await page.getByText(/^Period closed: a statement of 1 collection/).waitFor();
    await expect.poll(() => page.getByTestId('credit').count(), PAGE_DEADLINE).toBe(0);
    await expect
      .poll(async () => plain(await page.getByTestId('awaiting-remittance').innerText()), PAGE_DEADLINE)
      .toBe(manat(second.codAmountQepik - 623));
    expect(await page.locator('#balance-heading ~ .hint').innerText()).not.toContain('Credit');
    expect(await page.getByTestId('payments-balance').locator('li').count()).toBe(3);

    // The statements are a query of their own, read again after the close: wait for the new one.
    const statements = page.getByTestId('settlements').locator('tbody tr');
    await expect.poll(() => statements.count(), PAGE_DEADLINE).toBe(2);
    const newest = statements.first();
    expect(await newest.getAttribute('data-settlement-id')).not.toBe(first.id);
    await newest.getByRole('link').click();
    await page.getByRole('heading', { name: /^Statement / }).waitFor();
    expect(await page.getByTestId('sum-adjustments').innerText()).toBe(manat(-623));
    const carried = page.locator(`tr[data-credit-from="${first.id}"]`);
    await carried.waitFor();
    expect(await carried.getAttribute('data-line-type')).toBe('ADJUSTMENT');
    expect(await carried.locator('th').innerText()).toBe('Credit from an earlier statement');
    expect(await carried.locator('td[data-label="Amount"]').innerText()).toBe(manat(-623));
    expect(await carried.locator('td[data-label="Note"]').innerText()).toBe(
      `Overpayment of ${first.id}, taken off what this statement asks`,
    );
    expect(await page.getByTestId('statement-overpaid').count()).toBe(0);
    await look('carried');

    await carried.getByRole('link', { name: first.id }).click();
    await expect.poll(() => page.getByTestId('statement-overpaid').count(), PAGE_DEADLINE).toBe(1);
    expect(run.browser.pageErrors).toEqual([]);
  });
});
