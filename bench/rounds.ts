/**
 * The measurement rounds of bench/run.ts. This VM's throughput drifts a lot from minute to minute, so
 * each scenario runs in several rounds, each right after a bare-route measurement (and its own limit's,
 * when it has one); the ratios are the medians of the per-round ratios. Within a round the path is
 * measured with the compared feature on and off (the request log, or the metrics), back to back in
 * alternating order, since the machine drifts within a round too. Two different paths can be measured
 * against each other the same way (`versus`: an offer's accept against a partner event).
 */
import { addCpu, type CpuPerRequest, type CpuTotals, cpuSample, perRequest } from './cpu.js';
import { type Compared, type Figure, figureLine } from './figures.js';
import { type LoadResult, load } from './load-generator.js';
import { startProfile } from './profile.js';
import { median } from './stats.js';

export interface RoundsOptions {
  rounds: number;
  /** Connections and duration of every measurement. */
  common: { connections: number; duration: number };
  bareUrl: string;
  /** Which servers' CPU is measured. */
  servers: { postgres: boolean; redis: boolean };
  /** `--profile`: record the first round of each scenario. */
  profile: boolean;
  compare: Compared;
  /** The note of the figure with the compared feature off. */
  offNote: string;
  /** Requests the request log has left out so far. */
  droppedSoFar: () => Promise<number>;
  /** Writes whatever the request log still holds. */
  flushLog: () => Promise<void>;
  /** The PostgreSQL processes to count (bench/cpu.ts, `--pg-cpu=own`); absent: every one on the machine. */
  postgresPids?: () => Promise<ReadonlySet<string>>;
}

/** One of two paths measured against each other (Rounds.versus). */
export interface Versus {
  name: string;
  scenario: (round: number) => Record<string, unknown>;
  note?: string;
}

/** A path's own limit: a bare route measured in the same rounds. */
export interface Limit {
  name: string;
  scenario: (round: number) => Record<string, unknown>;
}

const zeroCpu = (): CpuTotals => ({ api: 0, postgres: 0, redis: 0 });

export class Rounds {
  /** Every figure, in the order measured. */
  readonly figures: Figure[] = [];
  private readonly bares: number[] = [];
  private bareRequests = 0;
  private readonly bareCpu = zeroCpu();
  private readonly limitRates = new Map<string, number[]>();
  private readonly limitCpu = new Map<string, { cpu: CpuTotals; requests: number }>();

  constructor(private readonly o: RoundsOptions) {}

  private print(f: Figure): void {
    this.figures.push(f);
    console.log(figureLine(f, this.o.compare));
  }

  /** One load run, with the CPU it made each process use added to `cpu`. */
  private async measured(scenario: Record<string, unknown>, cpu: CpuTotals): Promise<LoadResult> {
    const before = cpuSample();
    const result = await load(scenario);
    const pids = await this.o.postgresPids?.();
    addCpu(cpu, before, pids);
    return result;
  }

  /** The bare route once, for the rounds' ratios. */
  async measureBare(): Promise<number> {
    const bare = await this.measured({ ...this.o.common, url: this.o.bareUrl }, this.bareCpu);
    this.bares.push(bare.requests);
    this.bareRequests += bare.total;
    return bare.requests;
  }

  /** Measures the path `name` in every round, on and off, and prints both figures. */
  async compare(
    name: string,
    scenario: (round: number, variant: 'on' | 'off') => Record<string, unknown>,
    note?: string,
    limit?: Limit,
  ): Promise<void> {
    const { common, compare } = this.o;
    const rounds: Array<{ bare: number; limit: number | null; r: LoadResult; off: LoadResult }> = [];
    const cpu = zeroCpu();
    const cpuOff = zeroCpu();
    const droppedBefore = await this.o.droppedSoFar();
    for (let round = 0; round < this.o.rounds; round++) {
      const bare = await this.measureBare();
      let limitRate: number | null = null;
      if (limit) limitRate = await this.measureLimit(limit, round);
      const runVariant = async (variant: 'on' | 'off') => {
        const profiling = this.o.profile && round === 0 ? await startProfile() : null;
        const r = await this.measured({ ...common, ...scenario(round, variant) }, variant === 'on' ? cpu : cpuOff);
        if (profiling) await profiling.stop(variant === 'on' ? name : `${name} (${compare} off)`);
        return r;
      };
      let r: LoadResult;
      let off: LoadResult;
      if (round % 2 === 0) {
        r = await runVariant('on');
        off = await runVariant('off');
      } else {
        off = await runVariant('off');
        r = await runVariant('on');
      }
      rounds.push({ bare, limit: limitRate, r, off });
    }
    // Whatever the log still holds is written before the drops are counted.
    await this.o.flushLog();
    const dropped = (await this.o.droppedSoFar()) - droppedBefore;
    /** The figure of one variant's runs (on or off), against the bare route of the same rounds. */
    const summary = (variant: 'r' | 'off', totals: CpuTotals): Omit<Figure, 'name'> => ({
      requestsPerSec: Math.round(median(rounds.map((x) => x[variant].requests))),
      p50: median(rounds.map((x) => x[variant].p50)),
      p99: median(rounds.map((x) => x[variant].p99)),
      ratio: median(rounds.map((x) => x[variant].requests / x.bare)),
      non2xx: rounds.reduce((n, x) => n + x[variant].non2xx, 0),
      cpu: perRequest(
        totals,
        rounds.reduce((n, x) => n + x[variant].total, 0),
        this.o.servers,
      ),
    });
    this.print({
      name,
      ...summary('r', cpu),
      ...(limit
        ? {
            limit: {
              name: limit.name,
              requestsPerSec: Math.round(median(rounds.map((x) => x.limit as number))),
              ratio: median(rounds.map((x) => x.r.requests / (x.limit as number))),
            },
          }
        : {}),
      log: {
        offRequestsPerSec: Math.round(median(rounds.map((x) => x.off.requests))),
        ratio: median(rounds.map((x) => x.r.requests / x.off.requests)),
        dropped,
      },
      note,
    });
    this.print({ name: `${name} (${compare} off)`, ...summary('off', cpuOff), note: this.o.offNote });
  }

  /**
   * Measures two paths in every round, back to back in alternating order after the bare route (and the
   * limit's route), with the same settings (the request log on), and prints each against the bare
   * route and the limit, the first also against the second: the median of the rounds' throughput
   * ratios, and the ratio of their CPU per request (every process's, added up).
   */
  async versus(paths: [Versus, Versus], limit?: Limit): Promise<void> {
    const { common } = this.o;
    const rounds: Array<{ bare: number; limit: number | null; r: [LoadResult, LoadResult] }> = [];
    const cpu: [CpuTotals, CpuTotals] = [zeroCpu(), zeroCpu()];
    for (let round = 0; round < this.o.rounds; round++) {
      const bare = await this.measureBare();
      let limitRate: number | null = null;
      if (limit) limitRate = await this.measureLimit(limit, round);
      const run = async (i: 0 | 1) => {
        const profiling = this.o.profile && round === 0 ? await startProfile() : null;
        const r = await this.measured({ ...common, ...paths[i].scenario(round) }, cpu[i]);
        if (profiling) await profiling.stop(paths[i].name);
        return r;
      };
      let r: [LoadResult, LoadResult];
      if (round % 2 === 0) {
        const first = await run(0);
        r = [first, await run(1)];
      } else {
        const second = await run(1);
        r = [await run(0), second];
      }
      rounds.push({ bare, limit: limitRate, r });
    }
    const figures = ([0, 1] as const).map((i): Figure => {
      const runs = rounds.map((x) => x.r[i]);
      return {
        name: paths[i].name,
        requestsPerSec: Math.round(median(runs.map((x) => x.requests))),
        p50: median(runs.map((x) => x.p50)),
        p99: median(runs.map((x) => x.p99)),
        ratio: median(rounds.map((x) => x.r[i].requests / x.bare)),
        non2xx: runs.reduce((n, x) => n + x.non2xx, 0),
        cpu: perRequest(
          cpu[i],
          runs.reduce((n, x) => n + x.total, 0),
          this.o.servers,
        ),
        ...(limit
          ? {
              limit: {
                name: limit.name,
                requestsPerSec: Math.round(median(rounds.map((x) => x.limit as number))),
                ratio: median(rounds.map((x) => x.r[i].requests / (x.limit as number))),
              },
            }
          : {}),
        note: paths[i].note,
      };
    });
    const total = (c: CpuPerRequest | null) => (c ? c.api + (c.postgres ?? 0) + (c.redis ?? 0) : 0);
    const cpuB = total(figures[1].cpu);
    figures[0].versus = {
      name: paths[1].name,
      ratio: median(rounds.map((x) => x.r[0].requests / x.r[1].requests)),
      cpuRatio: cpuB > 0 ? total(figures[0].cpu) / cpuB : null,
    };
    for (const f of figures) this.print(f);
  }

  /** The limit's route once (round `round`), its rate kept for the limit's row; returns the rate. */
  private async measureLimit(limit: Limit, round: number): Promise<number> {
    const own = this.limitCpu.get(limit.name) ?? { cpu: zeroCpu(), requests: 0 };
    const l = await this.measured({ ...this.o.common, ...limit.scenario(round) }, own.cpu);
    own.requests += l.total;
    this.limitCpu.set(limit.name, own);
    this.limitRates.set(limit.name, [...(this.limitRates.get(limit.name) ?? []), l.requests]);
    return l.requests;
  }

  /**
   * Every figure, led by the bare route's and each limit's (medians of their runs); the bare route is
   * measured once if no scenario ran.
   */
  async allFigures(): Promise<Figure[]> {
    if (this.bares.length === 0) await this.measureBare();
    const spread = (rates: number[]) =>
      `median of ${rates.length} runs, min ${Math.round(Math.min(...rates))}, max ${Math.round(Math.max(...rates))}`;
    const limitRows: Figure[] = [...this.limitRates].map(([name, rates]) => {
      const own = this.limitCpu.get(name);
      return {
        name,
        requestsPerSec: Math.round(median(rates)),
        p50: 0,
        p99: 0,
        ratio: median(rates) / median(this.bares),
        non2xx: 0,
        cpu: own ? perRequest(own.cpu, own.requests, this.o.servers) : null,
        note: spread(rates),
      };
    });
    return [
      {
        name: 'bare Fastify route (limit)',
        requestsPerSec: Math.round(median(this.bares)),
        p50: 0,
        p99: 0,
        ratio: 1,
        non2xx: 0,
        cpu: perRequest(this.bareCpu, this.bareRequests, this.o.servers),
        note: spread(this.bares),
      },
      ...limitRows,
      ...this.figures,
    ];
  }
}
