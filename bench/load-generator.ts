/**
 * One load generator run: autocannon in a child process (bench/load.mjs), so that client and server do
 * not share an event loop. The scenario goes through a file (a list of keys and paths outgrows argv).
 * BENCH_DEBUG=1 prints every result as it comes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What bench/load.mjs answers for one run. */
export interface LoadResult {
  requests: number;
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  duration: number;
  codes?: string[];
}

export type Load = (scenario: Record<string, unknown>) => Promise<LoadResult>;

export async function load(scenario: Record<string, unknown>): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-load-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, ['bench/load.mjs', `@${file}`], { maxBuffer: 64 * 1024 * 1024 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.env.BENCH_DEBUG) console.log(stdout.length > 2000 ? `${stdout.slice(0, 2000)}…` : stdout);
  return JSON.parse(stdout) as LoadResult;
}
