/**
 * The alerting rules (deploy/prometheus) and the dashboards (deploy/grafana) name only series the service
 * exports: the names come from the metrics registry itself (Metrics.exportedSeriesNames), so renaming or
 * dropping a series fails here instead of leaving an alert that can never fire or an empty panel. Each
 * alert's runbook points at a section that exists in docs/operating.md. PromQL syntax is Prometheus's
 * own parser's job (test/prometheus.e2e.test.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics/metrics.js';
import { ALERTS_FILE, alertExpressions, dashboardExpressions, seriesNamesIn } from './promql.js';

const exported = new Set(Metrics.exportedSeriesNames());

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

describe('the series deploy/ names', () => {
  it('reads names out of PromQL', () => {
    expect(
      seriesNamesIn(
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route=~"/v1/x.*",le!="1"}[$__rate_interval]))) > 0.5',
      ),
    ).toEqual(['a_bucket']);
    expect(seriesNamesIn('(sum(rate(b_total{x="y"}[5m])) / sum(rate(c_total[5m])) > 0.1) and on () d >= 3')).toEqual([
      'b_total',
      'c_total',
      'd',
    ]);
    expect(seriesNamesIn('max without (instance) (e offset 5m) unless f == bool 1')).toEqual(['e', 'f']);
  });

  it('knows what the service exports from its registry', () => {
    for (const name of [
      'partner_api_http_requests_total',
      'partner_api_http_request_duration_seconds_bucket',
      'partner_api_webhook_oldest_due_age_seconds',
      'partner_api_sms_sends_total',
      'nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(exported.has(name), name).toBe(true);
    }
    expect(exported.has('nodejs_active_handles_total')).toBe(false);
  });

  it('alerts on exported series only', () => {
    const rules = alertExpressions();
    expect(rules.length).toBeGreaterThanOrEqual(7);
    for (const { where, expr } of rules) {
      const names = seriesNamesIn(expr);
      expect(names.length, where).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name), `${where}: ${name}`).toBe(true);
    }
  });

  it("points each alert's runbook at a section of docs/operating.md", () => {
    const anchors = new Set(
      [...readFileSync('docs/operating.md', 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => `docs/operating.md#${anchorOf(m[1])}`),
    );
    const text = readFileSync(ALERTS_FILE, 'utf8');
    const alerts = [...text.matchAll(/- alert: (\S+)/g)].map((m) => m[1]);
    const runbooks = [...text.matchAll(/^\s+runbook: (\S+)$/gm)].map((m) => m[1]);
    expect(runbooks).toHaveLength(alerts.length);
    for (const runbook of runbooks) expect(anchors.has(runbook), runbook).toBe(true);
  });

  it('charts exported series only', () => {
    const queries = dashboardExpressions();
    expect(queries.length).toBeGreaterThan(10);
    for (const { where, expr } of queries) {
      const names = seriesNamesIn(expr);
      expect(names.length, where).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name), `${where}: ${name}`).toBe(true);
    }
  });
});
