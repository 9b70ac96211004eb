/**
 * The PromQL expressions kept in deploy/ (the alerting rules, the Grafana dashboard) and the series each
 * one names, for the tests that check them against what the service exports. Pure code, usable from
 * unit tests: the syntax itself is checked by Prometheus's own parser in test/prometheus.e2e.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ALERTS_FILE = 'deploy/prometheus/alerts.yml';
export const DASHBOARD_DIR = 'deploy/grafana';

/** Operators and keywords of PromQL that look like names. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/**
 * The metric names an expression selects. Strings, label matchers (`{…}`), ranges (`[…]`), grouping
 * lists (`by (…)`, `on (…)`, …) and Grafana's variables are taken out first; every name left that is
 * not a function call or a keyword is a series name.
 */
export function seriesNamesIn(expr: string): string[] {
  let rest = expr
    .replace(/\$\{[^}]*\}|\$[a-zA-Z_][a-zA-Z0-9_]*/g, ' ')
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  // Numbers (1e3, 0.99, 0x1F) and durations after `offset` are not names.
  rest = rest.replace(/\b\d[\w.]*/g, ' ');
  const names = new Set<string>();
  for (const match of rest.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0];
    const after = rest.slice((match.index ?? 0) + name.length);
    if (/^\s*\(/.test(after)) continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

export interface NamedExpression {
  where: string;
  expr: string;
}

/**
 * Every `expr:` of the rules file: one line (`expr: a > 1`) or a block (`expr: |` and the lines indented
 * below it). The file is ours and written in these two forms only; Prometheus reads it as YAML.
 */
export function alertExpressions(text = readFileSync(ALERTS_FILE, 'utf8')): NamedExpression[] {
  const lines = text.split('\n');
  const found: NamedExpression[] = [];
  let alert = '';
  for (let i = 0; i < lines.length; i++) {
    const name = lines[i].match(/^\s*- alert:\s*(\S+)/);
    if (name) alert = name[1];
    const m = lines[i].match(/^(\s*)expr:\s*(.*)$/);
    if (!m) continue;
    if (m[2].trim() !== '|') {
      found.push({ where: alert, expr: m[2].trim() });
      continue;
    }
    const indent = m[1].length;
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1].trim() === '' || lines[i + 1].search(/\S/) > indent)) {
      block.push(lines[++i]);
    }
    found.push({ where: alert, expr: block.join('\n').trim() });
  }
  return found;
}

interface Panel {
  title?: string;
  targets?: Array<{ expr?: string; refId?: string }>;
  panels?: Panel[];
}

/** Every query of every panel (rows' panels included) of every dashboard in deploy/grafana. */
export function dashboardExpressions(dir = DASHBOARD_DIR): NamedExpression[] {
  const found: NamedExpression[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const dashboard = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { panels?: Panel[] };
    const visit = (panels: Panel[] = []) => {
      for (const panel of panels) {
        for (const target of panel.targets ?? []) {
          if (target.expr !== undefined) found.push({ where: `${file}: ${panel.title} (${target.refId})`, expr: target.expr });
        }
        visit(panel.panels);
      }
    };
    visit(dashboard.panels);
  }
  return found;
}
