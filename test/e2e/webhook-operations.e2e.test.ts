/**
 * Webhook operations in the developer portal, end to end in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on a real port, with the worker
 * running and a local webhook receiver: the health card that says "failing" before anything is dead,
 * a test event of any kind, the delivery detail updating live, a redeliver that visibly resets its row,
 * recovering a window of failed deliveries, rotating the signing secret (suggested for a secret of the
 * older form; shown once, with the grace's end; deliveries verify with either secret), and the event
 * catalog.
 *
 * Screenshots of every page, at desktop and phone width, go to artifacts/screenshots/webhook-ops-*.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../portal/snippets/verify-signature.js';
import { EVENT_TYPES } from '../../src/modules/webhooks/event-catalog.js';
import { createKey, createPartner, giveOlderFormSecret, type TestPartner } from '../factories.js';
import { CHROMIUM, hasChromium, holdAnswers, PAGE_DEADLINE } from './chromium.js';
import { addWebhook, atBothWidths, callJson, nav, type PortalRun, signIn, startPortalRun } from './portal-run.js';

const STEP_TIMEOUT = 90_000;

if (!hasChromium) console.warn(`webhook operations end-to-end tests skipped: ${CHROMIUM} is absent`);

describe.skipIf(!hasChromium)('webhook operations in the portal', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let page: Page;
  let origin: string;
  let partner: TestPartner;
  let webhookId = '';
  let secret = '';

  const url = (path: string) => `${origin}${path}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callJson(url(path), partner.auth, method, body);
    return { status: res.status, json: res.body };
  };
  const shotBoth = (name: string) => atBothWidths(page, `webhook-ops-${name}`);

  beforeAll(async () => {
    run = await startPortalRun({
      worker: { attemptTimeoutMs: 2_000, leaseMs: 10_000, pollIntervalMs: 100 },
      receiver: {
        reply: (status) => ({
          headers: { 'content-type': 'application/json', 'x-receiver': 'test' },
          body: status < 300 ? '{"received":true}' : '{"error":"endpoint is down for maintenance"}',
        }),
      },
    });
    ({ page, origin } = run);
    partner = await createPartner(run.t.ctx, 'Caspian Couriers');
    const key = await createKey(run.t.ctx, partner.id, { name: 'Dispatch system' });
    ({ id: webhookId } = await addWebhook(run, partner, key.id));
    // The webhook's secret was made before secrets were standard base64: whsec_ + base64url of 32
    // bytes. Deliveries verify with it; the Webhooks page suggests rotating it.
    secret = await giveOlderFormSecret(run.t.ctx, webhookId);

    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  }, 240_000);

  afterAll(() => run?.close());

  it('the health card says the endpoint is failing as soon as its deliveries fail, before any is dead', async () => {
    run.receiver.answerWith(500);
    for (let i = 0; i < 5; i++) expect((await api('POST', `/v1/developer/webhooks/${webhookId}/test`)).status).toBe(200);
    await nav(page, 'Webhooks');
    const card = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await card.locator('[data-testid="webhook-health"][data-verdict="Failing"]').waitFor();
    const health = card.getByTestId('webhook-health');
    expect(await health.textContent()).toContain('No attempt has succeeded yet.');
    expect(await card.textContent()).not.toContain('No failure streak');
    expect(await health.getByTestId('health-rate').textContent()).toMatch(/^0%/);
    expect(await health.getByTestId('health-streak').textContent()).toContain('None');
    await shotBoth('webhooks-failing');
  });

  it('sends a test event of the picked kind: a signed sample with an evt_test_ id, shown live in the log', async () => {
    run.receiver.answerWith(200);
    await page.locator(`li[data-webhook-id="${webhookId}"]`).getByRole('link', { name: 'Delivery log' }).click();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await page.getByLabel('Test event kind').first().selectOption('order.delivered');
    const [answer] = await Promise.all([
      page.waitForResponse(
        (r) => r.url().endsWith(`/v1/developer/webhooks/${webhookId}/test`) && r.request().method() === 'POST',
      ),
      page.getByRole('button', { name: 'Send test event' }).first().click(),
    ]);
    const queued = (await answer.json()) as { id: string };
    await page.locator(`tr[data-delivery-id="${queued.id}"][data-status="DELIVERED"]`).waitFor();
    const got = run.receiver.received.find((r) => r.headers['x-partner-delivery'] === queued.id);
    expect(got?.headers['x-partner-event']).toBe('order.delivered');
    expect(JSON.parse(got?.body ?? '{}').id).toMatch(/^evt_test_/);
    expect(verifySignature(got?.body ?? '', String(got?.headers['x-partner-signature']), secret)).toBe(true);
    // The health card above the log follows live: the latest attempt succeeded, one of six.
    await page.locator('[data-testid="webhook-health"][data-verdict="Healthy"]').waitFor();
    expect(await page.getByTestId('health-rate').textContent()).toBe('16.7% of 6 attempts');
    await shotBoth('deliveries');
  });

  it('opens a delivery: the payload pretty-printed and every attempt with what was sent and answered, updating live', async () => {
    run.receiver.answerWith(503);
    const queued = await api('POST', `/v1/developer/webhooks/${webhookId}/test`, { event: 'order.status_changed' });
    const id = String(queued.json.id);
    await page.locator(`tr[data-delivery-id="${id}"][data-status="FAILED"]`).waitFor();
    await page
      .locator(`tr[data-delivery-id="${id}"]`)
      .getByRole('link', { name: /Details/ })
      .click();
    await page.getByRole('heading', { name: 'order.status_changed delivery' }).waitFor();
    await page.getByTestId('attempt').first().waitFor();
    const payload = await page.locator('figure.code').first().textContent();
    expect(payload).toContain('"previousStatus": "SCANNED_TO_VAN"');
    expect(payload).toContain('evt_test_');
    const attempt = page.locator('[data-testid="attempt"][data-attempt="1"]');
    expect(await attempt.getByTestId('attempt-status').textContent()).toBe('HTTP 503');
    expect(await attempt.textContent()).toContain('x-partner-signature');
    expect(await attempt.textContent()).toContain('endpoint is down for maintenance');
    expect(await attempt.textContent()).toContain('x-receiver');
    expect(await attempt.getByTestId('attempt-duration').textContent()).toMatch(/^\d[\d,]* ms$/);
    await shotBoth('delivery-failed');

    // Redeliver from the detail: the new attempt appears by itself, accepted, the earlier one kept.
    run.receiver.answerWith(200);
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.locator('[data-testid="detail-status"][data-status="DELIVERED"]').waitFor();
    await page.locator('[data-testid="attempt"][data-attempt="2"]').waitFor();
    expect(await page.locator('[data-testid="attempt"][data-attempt="2"]').getByTestId('attempt-status').textContent()).toBe(
      'HTTP 200',
    );
    expect(await page.getByTestId('attempt').count()).toBe(2);
    await shotBoth('delivery-detail');
    await page.goBack();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
  });

  it('a redeliver visibly resets its row, even when the attempt fails again at once', async () => {
    run.receiver.answerWith(500);
    const failed = await api('POST', `/v1/developer/webhooks/${webhookId}/test`);
    const id = String(failed.json.id);
    const row = page.locator(`tr[data-delivery-id="${id}"]`);
    await page.locator(`tr[data-delivery-id="${id}"][data-status="FAILED"]`).waitFor();
    await row.getByRole('button', { name: /Redeliver/ }).click();
    await row.getByTestId('delivery-requeued').waitFor();
    expect(await row.getByTestId('delivery-requeued').textContent()).toMatch(/^Queued again \d\d:\d\d:\d\d UTC$/);
    // The repeated failure is the new attempt's: the row still says it was queued again.
    await page.locator(`tr[data-delivery-id="${id}"][data-status="FAILED"]`).waitFor();
    expect(await row.getByTestId('delivery-requeued').isVisible()).toBe(true);
    const detail = await api('GET', `/v1/developer/deliveries/${id}`);
    expect((detail.json.attempts as unknown[]).length).toBe(2);
    await shotBoth('deliveries-redelivered');
  });

  it('keeps a delivery’s live change when a read of the log that started before it lands after it', async () => {
    run.receiver.answerWith(500);
    const failed = await api('POST', `/v1/developer/webhooks/${webhookId}/test`);
    const id = String(failed.json.id);
    const row = page.locator(`tr[data-delivery-id="${id}"]`);
    await page.locator(`tr[data-delivery-id="${id}"][data-status="FAILED"]`).waitFor();
    // Coming back to the tab reads the log again, as a reconnection does. Its answer, read while the
    // delivery was FAILED, is held back here until the delivery has been redelivered and shown DELIVERED
    // live, as happens on a busy machine: when it lands, it must not put the row back as it was.
    const reads = await holdAnswers(page, new RegExp(`/v1/developer/webhooks/${webhookId}/deliveries\\?`));
    await page.evaluate(() =>
      (globalThis as unknown as { dispatchEvent(event: Event): boolean }).dispatchEvent(new Event('visibilitychange')),
    );
    await expect.poll(() => reads.held(), PAGE_DEADLINE).toBeGreaterThan(0);
    run.receiver.answerWith(200);
    expect((await api('POST', `/v1/developer/deliveries/${id}/redeliver`)).status).toBe(200);
    await page.locator(`tr[data-delivery-id="${id}"][data-status="DELIVERED"]`).waitFor();
    await reads.release();
    await page.locator('table.deliveries[aria-busy="false"]').waitFor();
    expect(await row.getAttribute('data-status')).toBe('DELIVERED');
    expect(await row.getByTestId('delivery-attempts').textContent()).toBe('1');
    await shotBoth('deliveries-read-again');
  });

  it('recovers the failed deliveries of a window in one go; they turn DELIVERED live', async () => {
    run.receiver.answerWith(200);
    const failedBefore = (await api('GET', `/v1/developer/webhooks/${webhookId}/deliveries?status=FAILED&pageSize=50`)).json
      .total as number;
    expect(failedBefore).toBeGreaterThanOrEqual(5);
    await page.getByRole('button', { name: 'Recover failed deliveries…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Recover failed deliveries' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Times are in your time zone (UTC)');
    // A window that starts after it ends is refused in the form, in plain words, before anything is sent.
    await dialog.getByLabel('Until (optional)').fill('2020-01-01T00:00');
    await dialog.getByRole('button', { name: 'Recover deliveries' }).click();
    expect(await dialog.locator('.field-error').textContent()).toBe('The start must be before the end.');
    await dialog.getByLabel('Until (optional)').fill('');
    await dialog.getByRole('button', { name: 'Recover deliveries' }).click();
    await dialog.getByTestId('recover-result').waitFor();
    expect(await dialog.getByTestId('recover-result').textContent()).toContain(
      `${failedBefore} failed or dead deliveries are queued again`,
    );
    await shotBoth('recover-done');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await expect
      .poll(async () => (await api('GET', `/v1/developer/webhooks/${webhookId}/deliveries?status=FAILED`)).json.total, {
        timeout: 15_000,
      })
      .toBe(0);
    await page.locator('tbody tr[data-status="FAILED"]').first().waitFor({ state: 'detached' });
  });

  it('suggests rotating a secret of the older form, and rotates it: the new one shown once with the end of the grace; deliveries verify with either', async () => {
    await nav(page, 'Webhooks');
    const card = page.locator(`li[data-webhook-id="${webhookId}"]`);
    await card.locator('[data-testid="webhook-health"][data-verdict="Healthy"]').waitFor();
    const suggestion = card.getByTestId('rotate-secret-suggested');
    await suggestion.waitFor();
    expect(await suggestion.textContent()).toContain('Standard Webhooks libraries cannot read it');
    await shotBoth('rotate-suggested');
    await suggestion.getByRole('button', { name: 'Rotate the secret…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.waitFor();
    await dialog.getByLabel('Keep the current secret working for').selectOption('72');
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    const reveal = page.getByRole('dialog', { name: 'New signing secret' });
    await reveal.waitFor();
    const rotated = await reveal.getByTestId('rotated-secret').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await reveal.textContent()).toContain('You will not see this signing secret again');
    expect(await reveal.getByTestId('grace-end').textContent()).toMatch(
      /Until \d+ \w+ \d{4}, \d\d:\d\d UTC every delivery is signed with both secrets/,
    );
    await shotBoth('rotate-secret');
    await reveal.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.locator('body').textContent()).not.toContain(rotated);
    await suggestion.waitFor({ state: 'detached' });

    const queued = await api('POST', `/v1/developer/webhooks/${webhookId}/test`);
    await expect
      .poll(() => run.receiver.received.some((r) => r.headers['x-partner-delivery'] === queued.json.id), PAGE_DEADLINE)
      .toBe(true);
    const got = run.receiver.received.find((r) => r.headers['x-partner-delivery'] === queued.json.id);
    const header = String(got?.headers['x-partner-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(got?.body ?? '', header, rotated)).toBe(true);
    expect(verifySignature(got?.body ?? '', header, secret)).toBe(true);
  });

  it('lists every event kind with its example and schema on the Events page', async () => {
    await nav(page, 'Events');
    await page.getByRole('heading', { name: 'Webhook events', level: 1 }).waitFor();
    await page.locator('section[data-event-type="batch.completed"]').waitFor();
    expect(await page.locator('section[data-event-type]').count()).toBe(EVENT_TYPES.length);
    const delivered = page.locator('section[data-event-type="order.delivered"]');
    expect(await delivered.textContent()).toContain('"type": "order.delivered"');
    await shotBoth('events');
    expect(run.browser.pageErrors).toEqual([]);
  });
});
