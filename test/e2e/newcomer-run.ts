/**
 * The newcomer files' common start (newcomer.e2e.test.ts, newcomer-keys.e2e.test.ts): the app with its
 * published live and sandbox addresses, both listeners, the worker and a receiver; a partner (Ganja
 * Express) with the sandbox key that can run the simulator and, newer, a read-only sandbox key; pages
 * looked at the widths of the accessibility rule.
 */
import type { Page } from 'playwright-core';
import { createKey, createPartner, type TestKey, type TestPartner } from '../factories.js';
import { AXE_WIDTHS, atBothWidths, type PortalRun, startPortalRun } from './portal-run.js';

export const LIVE_URL = 'https://partners.example.test';
export const SANDBOX_URL = 'https://sandbox.partners.example.test';

export interface NewcomerRun extends PortalRun {
  partner: TestPartner;
  simulatorKey: TestKey;
  readOnlyKey: TestKey;
}

export async function startNewcomerRun(): Promise<NewcomerRun> {
  const run = await startPortalRun({
    env: { PUBLIC_URL: LIVE_URL, SANDBOX_PUBLIC_URL: SANDBOX_URL },
    sandbox: true,
    worker: { pollIntervalMs: 100 },
  });
  const partner = await createPartner(run.t.ctx, 'Ganja Express');
  // The key that can run the simulator first; a newer read-only sandbox key after it.
  const simulatorKey = await createKey(run.t.ctx, partner.id, {
    environment: 'SANDBOX',
    name: 'Dispatch sandbox',
    scopes: ['orders:read', 'orders:pii', 'logistics:write', 'webhooks:manage'],
  });
  run.t.clock.advance(1);
  const readOnlyKey = await createKey(run.t.ctx, partner.id, {
    environment: 'SANDBOX',
    name: 'Reporting sandbox',
    scopes: ['orders:read'],
  });
  await run.page.setViewportSize(AXE_WIDTHS.desktop);
  return { ...run, partner, simulatorKey, readOnlyKey };
}

/** The page at both widths of the accessibility rule, each screenshot kept (newcomer-<name>-…) and scanned with axe. */
export function bothWidths(page: Page, name: string, atPhone?: () => Promise<void>): Promise<void> {
  return atBothWidths(page, `newcomer-${name}`, { widths: AXE_WIDTHS, axe: true, firstScreen: true, atPhone });
}
