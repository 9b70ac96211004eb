/**
 * What every portal end-to-end file sets up the same way: a fresh app listening on OS ports (the
 * sandbox listener too, when asked), the webhook worker (when asked), the browser on the portal, a
 * webhook receiver, screenshots at two widths, signing in and the calls a partner's own system makes.
 * Each file still owns its partner, keys and database.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { createKey, createPartner, type TestKey, type TestPartner } from '../factories.js';
import { createTestApp, TEST_OTP, type TestApp, type TestAppOptions } from '../harness.js';
import { seriousFindings } from './axe.js';
import { DESKTOP, openPortalBrowser, PHONE, type PortalBrowser, sidewaysOverflow, signInWithCode } from './chromium.js';

/** Where the screenshots go: artifacts/screenshots/<file's prefix>-<page>-<width>.png. */
export const SHOTS = join(process.cwd(), 'artifacts', 'screenshots');

export interface PortalRun {
  t: TestApp;
  origin: string;
  /** The sandbox listener's origin ('' unless `sandbox` was asked for). */
  sandboxOrigin: string;
  browser: PortalBrowser;
  page: Page;
  /** A webhook endpoint of the partner's (startReceiver). */
  receiver: Receiver;
  url(path: string): string;
  /** Ends the browser, the worker, the receiver and the app. */
  close(): Promise<void>;
}

export interface PortalRunOptions {
  env?: TestAppOptions['env'];
  /** Listen on the sandbox listener too. */
  sandbox?: boolean;
  /** Run the webhook worker, with these options. */
  worker?: Parameters<typeof startWorker>[1];
  /** How the webhook endpoint answers (startReceiver's options). */
  receiver?: ReceiverOptions;
  /** Given the app before the browser opens (a partner, keys, a webhook). */
  seed?: (t: TestApp, origin: string) => Promise<void>;
}

export async function startPortalRun(options: PortalRunOptions = {}): Promise<PortalRun> {
  mkdirSync(SHOTS, { recursive: true });
  const t = await createTestApp({ env: options.env });
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}`;
  let sandboxOrigin = '';
  if (options.sandbox) {
    await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
    sandboxOrigin = `http://127.0.0.1:${(t.sandbox.server.address() as AddressInfo).port}`;
  }
  const worker: Worker | undefined = options.worker ? startWorker(t.ctx, options.worker) : undefined;
  const receiver = await startReceiver(options.receiver);
  await options.seed?.(t, origin);
  const browser = await openPortalBrowser(origin);
  return {
    t,
    origin,
    sandboxOrigin,
    browser,
    page: browser.page,
    receiver,
    url: (path) => `${origin}${path}`,
    async close() {
      await browser.close();
      await worker?.stop();
      await receiver.close();
      await t.close();
    },
  };
}

export type SandboxKeyRun = PortalRun & { partner: TestPartner; key: TestKey };

/** A run whose one partner (Caspian Couriers) holds one sandbox key with these scopes. */
export async function startWithSandboxKey(
  scopes: NonNullable<Parameters<typeof createKey>[2]>['scopes'],
): Promise<SandboxKeyRun> {
  let partner: TestPartner | undefined;
  let key: TestKey | undefined;
  const run = await startPortalRun({
    seed: async (t) => {
      partner = await createPartner(t.ctx, 'Caspian Couriers');
      key = await createKey(t.ctx, partner.id, { environment: 'SANDBOX', scopes });
    },
  });
  return { ...run, partner: partner as TestPartner, key: key as TestKey };
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ReceiverOptions {
  /** The endpoint's path (default /hook). */
  path?: string;
  /** The answer to a request while the endpoint answers `status` (plain "ok" / "nope" unless given). */
  reply?: (status: number) => { headers: Record<string, string>; body: string };
}

/** A webhook endpoint: records every request and answers with the status it is told (200 at first). */
export async function startReceiver(options: ReceiverOptions = {}) {
  const received: Received[] = [];
  let status = 200;
  const reply = options.reply ?? ((s: number) => ({ headers: { 'content-type': 'text/plain' }, body: s < 300 ? 'ok' : 'nope' }));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = reply(status);
      res.writeHead(status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.path ?? '/hook'}`,
    received,
    answerWith(next: number) {
      status = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A JSON call with these headers (a partner's key, a bearer token): the status and the parsed body. */
export async function callJson(
  target: string,
  headers: Record<string, string>,
  method: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(target, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
}

/** The partner's own system calling the sandbox API with a key (and an Idempotency-Key, when given). */
export function sandboxCall(
  run: PortalRun,
  key: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  idempotencyKey?: string,
): ReturnType<typeof callJson> {
  const headers = { 'x-api-key': key, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) };
  return callJson(`${run.sandboxOrigin}${path}`, headers, method, body);
}

/** A webhook of the key to the run's receiver, for order events, made through the developer API. */
export async function addWebhook(
  run: PortalRun,
  partner: TestPartner,
  apiKeyId: string,
): Promise<{ id: string; secret: string }> {
  const created = await callJson(run.url('/v1/developer/webhooks'), partner.auth, 'POST', {
    apiKeyId,
    url: run.receiver.url,
    events: ['order.assigned_to_partner', 'order.status_changed', 'order.delivered'],
  });
  expect(created.status).toBe(201);
  return { id: String(created.body.id), secret: String(created.body.secret) };
}

/** Opens the portal and signs in with the phone number and the test one-time code. */
export async function signIn(page: Page, origin: string, phone: string): Promise<void> {
  await page.goto(`${origin}/portal`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await signInWithCode(page, phone, TEST_OTP);
}

/** Follows a link of the main navigation. */
export function nav(page: Page, name: string): Promise<void> {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}

/** A screenshot of the page as it is now: artifacts/screenshots/<name>.png. */
export function screenshot(page: Page, name: string, fullPage = true): Promise<Buffer> {
  return page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });
}

export interface Widths {
  desktop: { width: number; height: number };
  phone: { width: number; height: number };
}

/** The widths of the accessibility rule (docs/portal.md, 'Accessibility'). */
export const AXE_WIDTHS: Widths = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844 } };

// Browser globals read inside page callbacks (this file is compiled with the Node libraries only).
declare const document: {
  documentElement: { clientWidth: number };
  querySelectorAll(
    selector: string,
  ): Iterable<{ tagName: string; className: string; getBoundingClientRect(): { right: number } }>;
};

/**
 * The page at desktop and at phone width: a full-page screenshot of each (`<name>-desktop.png`,
 * `<name>-phone.png`), nothing scrolling sideways on the phone (naming what sticks out). `axe`: no
 * serious or critical axe finding at either width; `atPhone` checks what only the phone layout shows;
 * `firstScreen` also keeps the phone's first screen alone (`<name>-phone-first-screen.png`).
 */
export async function atBothWidths(
  page: Page,
  name: string,
  options: { widths?: Widths; axe?: boolean; atPhone?: () => Promise<void>; firstScreen?: boolean } = {},
): Promise<void> {
  const widths = options.widths ?? { desktop: DESKTOP, phone: PHONE };
  await page.setViewportSize(widths.desktop);
  await screenshot(page, `${name}-desktop`);
  if (options.axe) expect(await seriousFindings(page), `axe on ${name} at desktop width`).toEqual([]);
  await page.setViewportSize(widths.phone);
  const overflow = await sidewaysOverflow(page);
  const wide =
    overflow > 0
      ? await page.evaluate(() =>
          [...document.querySelectorAll('main *')]
            .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth)
            .slice(0, 5)
            .map((el) => `${el.tagName}.${el.className}`),
        )
      : [];
  expect(overflow, `${name} scrolls sideways at ${widths.phone.width} px: ${wide.join(', ')}`).toBeLessThanOrEqual(0);
  await options.atPhone?.();
  await screenshot(page, `${name}-phone`);
  if (options.firstScreen) await screenshot(page, `${name}-phone-first-screen`, false);
  if (options.axe) expect(await seriousFindings(page), `axe on ${name} at phone width`).toEqual([]);
  await page.setViewportSize(widths.desktop);
}

/** Manat with two decimals from integer qəpik, by string surgery (independent of the portal's code). */
export function manat(qepik: number): string {
  const digits = String(Math.abs(qepik)).padStart(3, '0');
  return `${qepik < 0 ? '−' : ''}${digits.slice(0, -2)}.${digits.slice(-2)} AZN`;
}

/** A shown amount without its thousands separators, to compare with `manat`. */
export const plain = (text: string) => text.replaceAll(',', '').trim();
