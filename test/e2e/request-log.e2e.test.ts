/**
 * The Requests page of the developer portal end to end, in real headless Chromium (Debian's
 * /usr/bin/chromium through playwright-core) against the real app on a real port: a partner's
 * requests in the log, filters kept in the URL, the detail with both bodies and the curl line without
 * the key, the link from an error code to the reference, the live tail, the link from a day's 4xx in
 * the usage table, and the count of what the log left out. Steps build on each other, in order.
 *
 * Screenshots at desktop and phone width go to artifacts/screenshots/requests-*.png.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderFor } from '../../src/modules/orders/orders.test-helpers.js';
import { createKey, createPartner, createUser, type TestKey, type TestPartner } from '../factories.js';
import type { TestApp } from '../harness.js';
import { CHROMIUM, hasChromium, holdAnswers } from './chromium.js';
import { atBothWidths, nav, type PortalRun, signIn, startPortalRun } from './portal-run.js';

const STEP_TIMEOUT = 90_000;

if (!hasChromium) console.warn(`request log end-to-end tests skipped: ${CHROMIUM} is absent (apt-get install chromium)`);

describe.skipIf(!hasChromium)('the Requests page in headless Chromium', { timeout: STEP_TIMEOUT }, () => {
  let run: PortalRun;
  let t: TestApp;
  let page: Page;
  let origin: string;
  let partner: TestPartner;
  let key: TestKey;
  let code: string;
  const sent: Record<string, string> = {};

  const url = (path: string) => `${origin}${path}`;

  async function partnerCall(name: string, method: 'GET' | 'POST', path: string, body?: string, headers = {}) {
    const res = await fetch(url(path), {
      method,
      headers: { 'x-api-key': key.key, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body,
    });
    await res.arrayBuffer();
    sent[name] = res.headers.get('x-request-id') ?? '';
    return res.status;
  }

  const shotBoth = (name: string) => atBothWidths(page, `requests-${name}`);

  const rows = () => page.locator('table.requests tbody tr');

  beforeAll(async () => {
    // Where partners reach the API (the curl line uses it, not the test's own port).
    run = await startPortalRun({
      env: { PUBLIC_URL: 'https://api.partner.test' },
      seed: async (app, listening) => {
        t = app;
        origin = listening;
        partner = await createPartner(t.ctx, 'Caspian Couriers');
        key = await createKey(t.ctx, partner.id, { name: 'Dispatch system' });
        code = await orderFor(t, (await createUser(t.ctx, 'ADMIN')).auth, key.id);
        // Three successful reads were left out of the log a minute ago (overload), as the writer counts them.
        await t.ctx.db.query('INSERT INTO request_log_minutes (partner_id, minute, dropped) VALUES ($1, $2, 3)', [
          partner.id,
          new Date(Math.floor(t.clock.nowMs() / 60_000) * 60_000 - 60_000),
        ]);

        expect(await partnerCall('me', 'GET', '/v1/partner/me')).toBe(200);
        expect(await partnerCall('missing', 'GET', '/v1/partner/orders/ORD-NOPE')).toBe(404);
        expect(
          await partnerCall('picked', 'POST', `/v1/partner/orders/${code}/events`, '{"type":"PICKED_UP","note":"at the gate"}', {
            'idempotency-key': 'evt-7f0c',
          }),
        ).toBe(201);
        expect(await partnerCall('invalid', 'POST', `/v1/partner/orders/${code}/events`, '{"type":"TELEPORTED"}')).toBe(400);
        await t.ctx.requestLog.flush();
      },
    });
    page = run.page;
  }, 240_000);

  afterAll(async () => {
    const pageErrors = run?.browser.pageErrors ?? [];
    await run?.close();
    expect(pageErrors).toEqual([]);
  });

  it('lists the partner’s requests newest first, with what the log left out in plain words', async () => {
    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await nav(page, 'Requests');
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    await rows().first().waitFor();
    expect(await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-request-id')))).toEqual([
      sent.invalid,
      sent.picked,
      sent.missing,
      sent.me,
    ]);
    expect(await rows().first().textContent()).toContain('ERR_VALIDATION');
    expect(await page.getByTestId('log-drops').textContent()).toMatch(/3 requests were left out of the log/);
    await shotBoth('list');
  });

  it('filters by status class, keeping the filter in the URL', async () => {
    await page.getByLabel('Status').selectOption('4xx');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=4xx/);
    await expect.poll(() => rows().count()).toBe(2);
    expect(await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-status')))).toEqual(['400', '404']);
    await shotBoth('filtered-4xx');
  });

  it('shows a request with both bodies pretty-printed, the curl line without the key, and its error code in the reference', async () => {
    await page.locator(`tr[data-request-id="${sent.invalid}"] a.request-link`).click();
    await page.getByRole('heading', { level: 1, name: /POST/ }).waitFor();
    const requestBody = await page.getByTestId('request-body').locator('pre').textContent();
    expect(requestBody).toBe(JSON.stringify({ type: 'TELEPORTED' }, null, 2));
    const responseBody = await page.getByTestId('response-body').locator('pre').textContent();
    expect(JSON.parse(responseBody ?? '')).toMatchObject({ statusCode: 400, code: 'ERR_VALIDATION' });
    expect(responseBody).toContain('\n  "code": "ERR_VALIDATION"');

    const curl = (await page.locator('figure', { hasText: 'curl' }).locator('pre').textContent()) ?? '';
    expect(curl).toContain(`'https://api.partner.test/v1/partner/orders/${code}/events'`);
    expect(curl).toContain('X-Api-Key: $API_KEY');
    expect(curl).toContain(`--data '{"type":"TELEPORTED"}'`);
    expect(await page.locator('main').textContent()).not.toContain(key.key);

    const reference = await page.getByTestId('error-code-link').getAttribute('href');
    expect(reference).toBe('/docs#operation/createPartnerOrderEvent');
    await shotBoth('detail-error');
  });

  it('shows a successful write with its Idempotency-Key, and says a successful read keeps no body', async () => {
    await page.goto(url(`/portal/requests/${sent.picked}`));
    await page.getByRole('heading', { level: 1, name: /POST/ }).waitFor();
    expect(await page.getByTestId('request-body').locator('pre').textContent()).toBe(
      JSON.stringify({ type: 'PICKED_UP', note: 'at the gate' }, null, 2),
    );
    expect(await page.locator('figure', { hasText: 'curl' }).locator('pre').textContent()).toContain(
      "'Idempotency-Key: evt-7f0c'",
    );
    await shotBoth('detail-write');
    await page.goto(url(`/portal/requests/${sent.me}`));
    await page.getByRole('heading', { level: 1, name: /GET/ }).waitFor();
    expect(await page.getByTestId('response-body').textContent()).toContain('Not kept');
  });

  it('reads the OpenAPI document once per page load, for the base URLs and the curl line alike', async () => {
    const fetched: string[] = [];
    const count = (req: { url(): string }) => {
      if (new URL(req.url()).pathname === '/v1/developer/openapi.json') fetched.push(req.url());
    };
    page.on('request', count);
    try {
      await page.goto(url('/portal/keys'));
      await expect.poll(() => page.getByTestId('base-url-live').textContent()).toBe('https://api.partner.test');
      await page.getByRole('link', { name: 'Requests' }).click();
      await page.locator(`tr[data-request-id="${sent.invalid}"] a.request-link`).click();
      await expect
        .poll(async () => (await page.locator('figure', { hasText: 'curl' }).locator('pre').textContent()) ?? '')
        .toContain(`'https://api.partner.test/v1/partner/orders/${code}/events'`);
      expect(fetched).toHaveLength(1);
    } finally {
      page.off('request', count);
    }
  });

  it('tails the log live: a new request appears on top without a reload', async () => {
    await page.goto(url('/portal/requests'));
    await rows().first().waitFor();
    // Turning the tail on reads the stored page again. Its answer is held back here until a request
    // has arrived live, as happens on a busy machine: the page read before that request was stored
    // must not push it off the table when it lands.
    const reads = await holdAnswers(page, /\/v1\/developer\/requests\?/);
    await page.getByTestId('live-tail').check();
    await page.locator('[data-testid="live-status"][data-state="live"]').waitFor();
    await expect.poll(() => reads.held()).toBeGreaterThan(0);
    expect(await partnerCall('live', 'GET', '/v1/partner/orders?pageSize=1')).toBe(200);
    await page.locator(`tr[data-request-id="${sent.live}"]`).waitFor();
    await reads.release();
    await page.locator('table.requests[aria-busy="false"]').waitFor();
    expect(await rows().count()).toBe(5);
    expect(await rows().first().getAttribute('data-request-id')).toBe(sent.live);
    await shotBoth('live-tail');
  });

  it('opens a day’s 4xx from the key’s usage table in the log, filtered to it', async () => {
    await t.ctx.usage.flush();
    await page.goto(url(`/portal/keys/${key.id}`));
    await page.getByText('Show the numbers as a table').click();
    const today = new Date(t.clock.nowMs()).toISOString().slice(0, 10);
    await page.locator(`tr[data-day="${today}"] [data-testid="day-4xx"] a`).click();
    await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
    const params = new URL(page.url()).searchParams;
    expect(Object.fromEntries(params)).toEqual({
      apiKeyId: key.id,
      status: '4xx',
      since: `${today}T00:00:00.000Z`,
      until: new Date(Date.parse(`${today}T00:00:00.000Z`) + 86_400_000).toISOString(),
    });
    await expect.poll(() => rows().count()).toBe(2);
    expect(await page.getByLabel('Key').inputValue()).toBe(key.id);
    await shotBoth('from-usage');
  });
});
