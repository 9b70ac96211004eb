/**
 * What deploy/ gives Prometheus, checked by Prometheus's own tool (`promtool`, Debian's `prometheus`
 * package, which .ci/run installs): the alerting rules load, their unit tests pass (each alert fires on a
 * series that should fire it and stays quiet on one that should not), every dashboard query parses as
 * PromQL, and a running process's /metrics passes `promtool check metrics` without a remark.
 * Which series the expressions may name is checked without promtool: test/deploy-series.unit.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../src/config.js';
import { LEFT_OUT_DEFAULT_SERIES } from '../src/metrics/metrics.js';
import { startRole } from '../src/roles.js';
import { freshDatabase } from './harness.js';
import { ALERTS_FILE, alertExpressions, dashboardExpressions } from './promql.js';

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
// CI installs it, so there a missing promtool fails the run; elsewhere the file says why it skips.
if (!hasPromtool && !process.env.CI) {
  console.info("test/prometheus.e2e.test.ts: skipped (no promtool; CI installs Debian's prometheus package)");
}

function promtool(args: string[], input?: string) {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.skipIf(!hasPromtool && !process.env.CI)('promtool', () => {
  it('loads the alerting rules', () => {
    const { status, output } = promtool(['check', 'rules', ALERTS_FILE]);
    expect(status, output).toBe(0);
    expect(output).toContain(`SUCCESS: ${alertExpressions().length} rules found`);
  });

  it("passes the rules' unit tests, which fire and leave quiet every alert", () => {
    const { status, output } = promtool(['test', 'rules', 'deploy/prometheus/alerts.test.yml']);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
    // Each alert has a test where it fires (exp_alerts) and one where it must not (no exp_alerts).
    const tests = readFileSync('deploy/prometheus/alerts.test.yml', 'utf8');
    const checks = [...tests.matchAll(/alertname: (\S+)\n(\s+exp_alerts:)?/g)].map((m) => ({
      alert: m[1],
      fires: m[2] !== undefined,
    }));
    for (const { where: alert } of alertExpressions()) {
      expect(
        checks.some((c) => c.alert === alert && c.fires),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        checks.some((c) => c.alert === alert && !c.fires),
        `${alert} stays quiet in a test`,
      ).toBe(true);
    }
  });

  it("parses every dashboard query as PromQL (Grafana's variables given values)", () => {
    const queries = dashboardExpressions();
    expect(queries.length).toBeGreaterThan(10);
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-promql-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const rules = queries.map(({ expr }, i) => {
      const concrete = expr
        .replace(/\$__rate_interval|\$__interval|\$__range/g, '5m')
        .replace(/\$\{?(\w+)\}?/g, '.*')
        .replace(/\n/g, ' ');
      return `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(concrete)}\n`;
    });
    writeFileSync(join(dir, 'queries.yml'), `groups:\n  - name: dashboard\n    rules:\n${rules.join('')}`);
    const { status, output } = promtool(['check', 'rules', join(dir, 'queries.yml')]);
    expect(status, `${output}\n${queries.map((q, i) => `${i}: ${q.where}`).join('\n')}`).toBe(0);
  });

  it("accepts a running process's /metrics without a remark", async () => {
    const fresh = await freshDatabase();
    await fresh.db.close();
    onTestFinished(() => fresh.drop());
    const config = loadConfig({
      NODE_ENV: 'test',
      OTP_FIXED_CODE: '123456',
      LOG_LEVEL: 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      SANDBOX_PORT: '0',
      METRICS_PORT: '0',
      ...(fresh.url ? { DATABASE_URL: fresh.url } : { DATA_DIR: 'memory://' }),
    });
    // Both listeners and the worker: every series a process can export.
    const running = await startRole(config, { kind: 'start' });
    onTestFinished(() => running.stop());
    const live = `http://127.0.0.1:${running.ports.LIVE}`;
    await (await fetch(`${live}/healthz`)).arrayBuffer();
    await (await fetch(`${live}/v1/partner/me`)).arrayBuffer();
    const otp = await fetch(`${live}/v1/auth/otp/request`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone: '+994501234567' }),
    });
    expect(otp.status, await otp.text()).toBe(200);
    const text = await (await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`)).text();
    expect(text).toMatch(/^partner_api_sms_sends_total\{provider="log",outcome="sent"\} 1$/m);
    expect(text).toMatch(/^partner_api_webhook_queue_depth /m);
    for (const name of LEFT_OUT_DEFAULT_SERIES) expect(text).not.toMatch(new RegExp(`^${name}\\b`, 'm'));
    const { status, output } = promtool(['check', 'metrics'], text);
    expect(status, output).toBe(0);
    expect(output).toBe('');
  }, 60_000);
});
