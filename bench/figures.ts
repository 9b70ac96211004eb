/** The figures the benchmarks print and write to bench/results, and how they are printed. */
import type { CpuPerRequest } from './cpu.js';
import type { LoadResult } from './load-generator.js';

/** One measured path: throughput, latency and the answers that were not 2xx. */
export interface Measured {
  name: string;
  requestsPerSec: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** A load run's figures under `name`. */
export function measured(name: string, r: LoadResult): Measured {
  return { name, requestsPerSec: Math.round(r.requests), p50: r.p50, p99: r.p99, non2xx: r.non2xx };
}

/** A path of bench/run.ts, against the bare route and its own limit, with its CPU per request. */
export interface Figure extends Measured {
  ratio: number | null;
  /** Ratio to the path's own limit (same rounds), when it has one. */
  limit?: { name: string; requestsPerSec: number; ratio: number };
  /** CPU µs per request by process (bench/cpu.ts); null where not measured. */
  cpu: CpuPerRequest | null;
  /** Request log on, against the same path with it off in the same rounds (median of per-round ratios). */
  log?: { offRequestsPerSec: number; ratio: number; dropped: number };
  /**
   * Against another path measured in the same rounds (Rounds.versus): the median of the rounds'
   * throughput ratios, and this path's CPU per request (all processes) ÷ the other's.
   */
  versus?: { name: string; ratio: number; cpuRatio: number | null };
  note?: string;
}

/**
 * What the on/off pairs compare: the request log (REQUEST_LOG), the Prometheus metrics (METRICS_PORT),
 * `DELIVERED` with a location proof against `DELIVERED` without one (events only), or events on cash
 * orders, whose `DELIVERED` collects the payment intent, against events on prepaid card orders, whose
 * `DELIVERED` moves none (events only), or events each with a fresh Idempotency-Key against events
 * without one (events only).
 */
export type Compared = 'log' | 'metrics' | 'proof' | 'payments' | 'idempotency';

/** One line of a figure as it is measured. */
export function figureLine(f: Figure, compare: Compared): string {
  return `${f.name.padEnd(44)} ${String(f.requestsPerSec).padStart(7)} req/s  p50 ${String(f.p50).padStart(5)} ms  p99 ${String(f.p99).padStart(5)} ms  ${f.ratio === null ? '' : `×${f.ratio.toFixed(2)}`}${f.limit ? `  ×${f.limit.ratio.toFixed(2)} of ${f.limit.name}` : ''}${f.log ? `  ${compare} on/off ×${f.log.ratio.toFixed(2)} (off ${f.log.offRequestsPerSec} req/s, dropped ${f.log.dropped})` : ''}${f.versus ? `  ×${f.versus.ratio.toFixed(2)} of ${f.versus.name} (CPU/req ×${f.versus.cpuRatio?.toFixed(2) ?? '—'})` : ''}${f.non2xx ? `  non-2xx ${f.non2xx}` : ''}`;
}

/** The Markdown table of every figure, and of the webhook fan-out by run. */
export function figuresTable(
  figures: Figure[],
  webhooks: Record<string, Record<string, number>> | null,
  compare: Compared,
): string {
  const lines = [
    `| path | req/s | p50 ms | p99 ms | ratio to bare | ratio to its limit | ${compare} on/off | CPU µs/req: API | PostgreSQL | Redis |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const us = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v.toFixed(0));
  for (const f of figures) {
    const limitRow = f.name.startsWith('bare') || f.name.startsWith('(');
    lines.push(
      `| ${f.name} | ${f.requestsPerSec} | ${limitRow ? '—' : f.p50} | ${limitRow ? '—' : f.p99} | ${(f.ratio ?? 1).toFixed(2)} | ${f.limit ? `${f.limit.ratio.toFixed(2)} of ${f.limit.name.slice(0, 3)}` : '—'} | ${f.log ? `${f.log.ratio.toFixed(2)}${f.log.dropped ? ` (${f.log.dropped} dropped)` : ''}` : '—'} | ${us(f.cpu?.api)} | ${us(f.cpu?.postgres)} | ${us(f.cpu?.redis)} |`,
    );
  }
  const pairs = figures.filter((f) => f.versus);
  if (pairs.length > 0) {
    lines.push('', '| path | against | req/s ratio | CPU µs/req ratio |', '|---|---|---:|---:|');
    for (const f of pairs) {
      const v = f.versus as NonNullable<Figure['versus']>;
      lines.push(`| ${f.name} | ${v.name} | ${v.ratio.toFixed(2)} | ${v.cpuRatio === null ? '—' : v.cpuRatio.toFixed(2)} |`);
    }
  }
  if (webhooks) {
    const runs = Object.keys(webhooks);
    lines.push(
      '',
      `| webhook fan-out | ${runs.map((r) => `log ${r}`).join(' | ')} |`,
      `|---|${runs.map(() => '---:').join('|')}|`,
    );
    for (const k of Object.keys(webhooks[runs[0]])) {
      const cell = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
      lines.push(`| ${k} | ${runs.map((r) => cell(webhooks[r][k])).join(' | ')} |`);
    }
  }
  return lines.join('\n');
}
