/**
 * axe-core in a page of the browser tests: the library's own bundle is evaluated in the page (through
 * the DevTools protocol, so the page's Content-Security-Policy, which forbids inline scripts, is not in
 * the way), then `axe.run` reports WCAG findings. `seriousFindings` keeps the serious and critical ones,
 * each as "rule-id (impact): help — selector, …".
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

declare const axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
declare const document: unknown;

export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => axe.run(document, { resultTypes: ['violations'] }));
  return result.violations;
}

export async function seriousFindings(page: Page): Promise<string[]> {
  return (await axeViolations(page))
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 5)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}
