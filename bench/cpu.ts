/**
 * CPU time per request, by process: the API (this process: the listeners under test, and PGlite in
 * embedded mode), the PostgreSQL server's processes and Redis's. Throughput on a shared 2-core VM drifts
 * from minute to minute; the CPU a request costs each process moves much less, and says which of them
 * a path spends its time in.
 *
 * The servers' figures come from /proc (Linux): the user + system time of every process named
 * `postgres` or `redis-server` on the machine, so run nothing else against them while benchmarking.
 * Without /proc they are null. On a PostgreSQL server others use too, `--pg-cpu=own` (bench/run.ts)
 * counts only the processes of the bench's database (its sessions and autovacuum workers, as
 * pg_stat_activity lists them at the end of each measurement): the server's shared processes (WAL
 * writer, checkpointer) are then left out, so those figures are a little lower than the machine-wide ones.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** CPU microseconds per process, or in total over measurements. */
export interface CpuTotals {
  api: number;
  postgres: number | null;
  redis: number | null;
}

/** CPU microseconds used so far, by this process and by each server process (by pid). */
export interface CpuSample {
  api: number;
  servers: { postgres: Map<string, number>; redis: Map<string, number> } | null;
}

/** CPU microseconds per request over a measurement. */
export type CpuPerRequest = CpuTotals;

const SERVERS = { postgres: 'postgres', redis: 'redis-server' } as const;

let ticksPerSecond: number | null = null;
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU microseconds of every process with one of these names, by pid (null without /proc). */
function serverCpu(): CpuSample['servers'] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const total = { postgres: new Map<string, number>(), redis: new Map<string, number>() };
  const usPerTick = 1_000_000 / clockTicks();
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces or parentheses, so split after the last ')'.
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(open + 1, close);
    const which = comm === SERVERS.postgres ? 'postgres' : comm === SERVERS.redis ? 'redis' : null;
    if (!which) continue;
    const fields = stat.slice(close + 2).split(' ');
    // After comm: state is field 3 of stat(5); utime and stime are fields 14 and 15.
    total[which].set(pid, (Number(fields[11]) + Number(fields[12])) * usPerTick);
  }
  return total;
}

export function cpuSample(): CpuSample {
  const own = process.cpuUsage();
  return { api: own.user + own.system, servers: serverCpu() };
}

/**
 * CPU used by processes between two samples: what each process alive at the end used since the first
 * (all of it, if it started meanwhile). A process that ended meanwhile (a backend, an autovacuum worker)
 * took its time with it: that part is not counted.
 */
function used(before: Map<string, number>, now: Map<string, number>): number {
  let sum = 0;
  for (const [pid, us] of now) sum += us - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Adds up the CPU used between `before` and now into `into` (a running total over rounds); `postgresPids`:
 * only these PostgreSQL processes are counted (`--pg-cpu=own`).
 */
export function addCpu(into: CpuTotals, before: CpuSample, postgresPids?: ReadonlySet<string>): void {
  const now = cpuSample();
  into.api += now.api - before.api;
  const b = before.servers;
  const n = now.servers;
  const postgres = n && postgresPids ? new Map([...n.postgres].filter(([pid]) => postgresPids.has(pid))) : (n?.postgres ?? null);
  into.postgres = b && postgres && into.postgres !== null ? into.postgres + used(b.postgres, postgres) : null;
  into.redis = b && n && into.redis !== null ? into.redis + used(b.redis, n.redis) : null;
}

export function perRequest(total: CpuTotals, requests: number, servers: { postgres: boolean; redis: boolean }): CpuPerRequest {
  const per = (us: number | null) => (us === null || requests === 0 ? null : Math.round((us / requests) * 10) / 10);
  return {
    api: per(total.api) ?? 0,
    postgres: servers.postgres ? per(total.postgres) : null,
    redis: servers.redis ? per(total.redis) : null,
  };
}
