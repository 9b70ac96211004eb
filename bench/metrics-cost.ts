/**
 * `--compare=metrics`: what Prometheus metrics cost in CPU, measured without the load generator, so
 * that the figures hold on a busy machine (where throughput ratios are noise).
 */
import type { buildApp } from '../src/app.js';
import { Metrics } from '../src/metrics/metrics.js';

type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * The per-request update (plugins/http-metrics.ts) over a realistic spread of series, and one scrape of
 * the resulting registry.
 */
export async function metricsHookCost(): Promise<{ observeUs: number; scrapeMs: number }> {
  const metrics = new Metrics();
  const routes = ['/v1/partner/me', '/v1/partner/orders', '/v1/partner/orders/:code', '/v1/partner/orders/:code/events'];
  const cpuUs = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const calls = 1_000_000;
  for (let i = 0; i < 100_000; i++) metrics.observeRequest('live', routes[i & 3], 'GET', i % 50 ? 200 : 404, 1.5);
  const t0 = cpuUs();
  for (let i = 0; i < calls; i++) metrics.observeRequest('live', routes[i & 3], 'GET', i % 50 ? 200 : 404, (i % 100) / 10);
  const observeUs = (cpuUs() - t0) / calls;
  await metrics.render();
  const t1 = cpuUs();
  for (let i = 0; i < 20; i++) await metrics.render();
  return { observeUs, scrapeMs: (cpuUs() - t1) / 20 / 1000 };
}

/** One read path: its name, the API with metrics and without, and the paths and keys to read it with (in step). */
export type InjectedPath = [name: string, on: App, off: App, paths: string[], keys: string[]];

/**
 * CPU per request through app.inject, one at a time, metrics on and off alternating: the same routing,
 * hooks and handlers without sockets or a load generator. Returns a Markdown table.
 */
export async function injectedCpuTable(injected: InjectedPath[]): Promise<string> {
  const rows: string[] = ['| path (app.inject) | CPU µs/req metrics on | off | on/off |', '|---|---:|---:|---:|'];
  for (const [name, on, off, paths, keys] of injected) {
    const cpu = { on: 0, off: 0 };
    const n = 2_000;
    // Rounds 0 and 1 warm up (JIT, the key and order caches) and are not counted.
    for (let round = 0; round < 8; round++) {
      const variant = round % 2 === 0 ? 'on' : 'off';
      const target = variant === 'on' ? on : off;
      const t0 = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const j = round * n + i;
        await target.inject({ method: 'GET', url: paths[j % paths.length], headers: { 'x-api-key': keys[j % keys.length] } });
      }
      const d = process.cpuUsage(t0);
      if (round >= 2) cpu[variant] += (d.user + d.system) / n / 3;
    }
    rows.push(`| ${name} | ${cpu.on.toFixed(1)} | ${cpu.off.toFixed(1)} | ${(cpu.off / cpu.on).toFixed(3)} |`);
  }
  return rows.join('\n');
}
