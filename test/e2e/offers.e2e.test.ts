/**
 * The portal's Offers page (docs/portal.md, "Offers"): sandbox offers made through the sandbox API as a
 * partner's test would make them, then in real headless Chromium against the real app: pending offers
 * with their time left, accepting one, declining one with a reason (the API's word on a missing note
 * said beside the note), a new offer appearing live, the history, which shows an offer made while its
 * first read was in flight once that read lands, and both lists keeping up with a stream of offers faster
 * than their reads.
 *
 * Screenshots at 1366×900 and 390×844 go to artifacts/screenshots/offers-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from '../factories.js';
import { CHROMIUM, hasChromium, holdAnswers, PAGE_DEADLINE, slowAnswers } from './chromium.js';
import { AXE_WIDTHS, atBothWidths, nav, type SandboxKeyRun, signIn, startPortalRun } from './portal-run.js';

const TIMEOUT = 180_000;

if (!hasChromium) console.warn(`offers end-to-end test skipped: ${CHROMIUM} is absent`);

describe.skipIf(!hasChromium)('sandbox offers in the Offers page', { timeout: TIMEOUT }, () => {
  let run: SandboxKeyRun;

  beforeAll(async () => {
    // The worker hands each outbox row to the realtime channel: a new offer reaches the open page.
    const seeded: Partial<Pick<SandboxKeyRun, 'partner' | 'key'>> = {};
    const started = await startPortalRun({
      worker: { pollIntervalMs: 100 },
      seed: async (t) => {
        seeded.partner = await createPartner(t.ctx, 'Caspian Couriers');
        seeded.key = await createKey(t.ctx, seeded.partner.id, {
          environment: 'SANDBOX',
          scopes: ['orders:read', 'logistics:write'],
        });
      },
    });
    run = { ...started, partner: seeded.partner as SandboxKeyRun['partner'], key: seeded.key as SandboxKeyRun['key'] };
  }, 240_000);
  afterAll(() => run?.close());

  const offer = async (count: number): Promise<Array<{ id: string; orderCode: string }>> => {
    const res = await run.t.sandbox.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: run.key.headers,
      payload: { count },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().items;
  };
  const read = async (id: string) =>
    (await run.t.sandbox.inject({ method: 'GET', url: `/v1/partner/offers/${id}`, headers: run.key.headers })).json();

  /** Both widths: a screenshot, no serious or critical axe finding, nothing scrolling sideways on the phone. */
  const look = (name: string) => atBothWidths(run.page, `offers-${name}`, { widths: AXE_WIDTHS, axe: true });

  it('lists pending offers with their time left, accepts one, declines one with a reason, and shows a new one live', async () => {
    const { page, origin, partner } = run;
    const [first, second] = await offer(2);

    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav(page, 'Offers');
    await page.getByRole('heading', { name: 'Offers', level: 1 }).waitFor();
    const card = (o: { id: string }) => page.locator(`li[data-offer-id="${o.id}"]`);
    await card(first).waitFor();
    await card(second).waitFor();
    // The default deadline is 15 minutes: the card counts it down.
    expect(await card(first).getByTestId('time-left').innerText()).toMatch(/^1[45] min \d\d s left$/);
    // An offer shows enough to decide, never who the customer is.
    expect(await card(first).innerText()).toMatch(/items?, order total \d{1,3}(,\d{3})*\.\d\d AZN/);
    await page.getByTestId('live-status').and(page.locator('[data-state="live"]')).waitFor();
    await look('pending');

    // Accept: the order becomes the key's, the card leaves the pending list, the history links the order.
    await card(first)
      .getByRole('button', { name: `Accept ${first.orderCode}` })
      .click();
    await card(first).waitFor({ state: 'detached' });
    const history = (o: { id: string }) => page.locator(`tr[data-offer-id="${o.id}"]`);
    await expect.poll(() => history(first).getAttribute('data-status'), PAGE_DEADLINE).toBe('ACCEPTED');
    expect(await history(first).getByRole('link', { name: first.orderCode }).count()).toBe(1);
    expect(await read(first.id)).toMatchObject({ status: 'ACCEPTED', decidedAt: expect.any(String) });

    // Decline with OTHER and no note: the API's answer is said beside the note; with a note it goes through.
    await card(second)
      .getByRole('button', { name: `Decline… ${second.orderCode}` })
      .click();
    const dialog = page.getByRole('dialog', { name: `Decline the offer of ${second.orderCode}?` });
    await dialog.waitFor();
    await dialog.getByRole('radio', { name: /^Other/ }).check();
    await dialog.getByRole('button', { name: 'Decline offer' }).click();
    await dialog.locator('.field-error').waitFor();
    expect(await dialog.locator('.field-error').innerText()).toMatch(/^The note /);
    expect(await dialog.getByRole('alert').count()).toBe(0);
    await look('decline-dialog');
    await dialog.getByLabel('Note (required)').fill('Van in repair until Monday');
    await dialog.getByRole('button', { name: 'Decline offer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await card(second).waitFor({ state: 'detached' });
    await expect.poll(() => history(second).getAttribute('data-status'), PAGE_DEADLINE).toBe('DECLINED');
    expect(await history(second).innerText()).toContain('Van in repair until Monday');
    expect(await read(second.id)).toMatchObject({
      status: 'DECLINED',
      declineReason: 'OTHER',
      note: 'Van in repair until Monday',
    });

    // A new offer appears without a reload (realtime offer.created).
    const [third] = await offer(1);
    await card(third).waitFor();
    await expect.poll(() => history(third).getAttribute('data-status'), PAGE_DEADLINE).toBe('PENDING');
    await look('history');
    expect(run.browser.pageErrors).toEqual([]);
  });

  it('an offer made during the page’s first read of the history shows in it once that read lands', async () => {
    const { page } = run;
    // Coming back reads both lists afresh, as a first visit does. The history's first read is answered
    // before the new offer is made and held back until the offer has arrived live and the pending list
    // has shown it, as happens on a busy machine: the history must show it too once that read lands.
    await nav(page, 'API keys');
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    const historyReads = await holdAnswers(page, /\/v1\/developer\/offers\?page=1&pageSize=20$/);
    await nav(page, 'Offers');
    await expect.poll(() => historyReads.held(), PAGE_DEADLINE).toBeGreaterThan(0);
    await page.getByRole('heading', { name: /^Pending \(\d+\)$/ }).waitFor();
    const [made] = await offer(1);
    await page.locator(`li[data-offer-id="${made.id}"]`).waitFor();
    await historyReads.release();
    await expect.poll(() => page.locator(`tr[data-offer-id="${made.id}"]`).count(), PAGE_DEADLINE).toBe(1);
    expect(await page.locator(`tr[data-offer-id="${made.id}"]`).getAttribute('data-status')).toBe('PENDING');
    await look('history-after-first-read');
    expect(run.browser.pageErrors).toEqual([]);
  });

  it('keeps up with a stream of offers faster than its reads: new offers show while the stream goes on', async () => {
    const { page } = run;
    // Every read of the offers answers a second late, and an offer is made every 100 ms, so a change
    // reaches the page (each read again, coalesced to one per 300 ms) before the read it asked for has
    // landed. A read restarted on each change would never land while the stream lasts.
    await page.getByRole('heading', { name: 'Offers', level: 1 }).waitFor();
    const pendingCount = async () =>
      Number((await page.getByRole('heading', { name: /^Pending \(\d+\)$/ }).innerText()).replace(/\D/g, ''));
    const before = await pendingCount();
    const stop = await slowAnswers(page, /\/v1\/developer\/offers\?/, 1_000);
    const made: string[] = [];
    let shown = false;
    const deadline = Date.now() + PAGE_DEADLINE.timeout;
    try {
      while (!shown && Date.now() < deadline) {
        made.push((await offer(1))[0].id);
        // The stream's pace, not a wait for the page: the page is looked at after each offer.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const listed = await page
          .locator('tr[data-offer-id]')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-offer-id')));
        shown = (await pendingCount()) > before && made.some((id) => listed.includes(id));
      }
    } finally {
      await stop();
    }
    expect(shown, `${made.length} offers made and none shown in both lists while they were being made`).toBe(true);
    expect(run.browser.pageErrors).toEqual([]);
  });
});
