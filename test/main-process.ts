/**
 * The server's entry point in a child process, owned by the test that starts it (test/child-processes.ts):
 * its output read line by line, its exit awaited.
 *
 * The child runs the compiled build (`dist/src/main.js`, what `npm start` runs; the e2e tier's set-up,
 * test/stale-builds.ts, rebuilds it when a source is newer), not `src/main.ts` through tsx: loading the
 * app's TypeScript through tsx's loader cost a start three times the CPU (about 11 s against 3.4 s, of
 * which 4.5 s in the loader's own thread), and on a shared 2-core host under load the start alone then
 * outlasted the deadlines of the tests that wait for it.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnOwned } from './child-processes.js';

export interface SpawnedChild {
  process: ChildProcess;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout line that matches, or rejects at the deadline or when the child exits. */
  waitForLine(match: (line: string) => boolean, deadlineMs: number): Promise<string>;
}

/** A child never outlives this, even if its test is still waiting for it. */
const CHILD_DEADLINE_MS = 60_000;

/**
 * The server's entry point in a child process with `env` over this one's. The child is killed when the test ends,
 * whatever happened (a failed expectation must not leave a server running), and at its deadline.
 */
export function spawnChild(args: string[], env: Record<string, string>): SpawnedChild {
  const child = spawnOwned(process.execPath, ['dist/src/main.js', ...args], {
    env: { ...process.env, DATA_DIR: 'memory://', ...env },
    deadlineMs: CHILD_DEADLINE_MS,
  });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (d) => {
    out += d;
    for (const w of waiters) w();
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      for (const w of waiters) w();
      resolve(code);
    }),
  );
  return {
    process: child,
    exited,
    stdout: () => out,
    stderr: () => err,
    waitForLine: (match, deadlineMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = out.split('\n').find(match);
          if (line !== undefined) done(() => resolve(line));
          else if (child.exitCode !== null || child.signalCode !== null) {
            done(() => reject(new Error(`child exited before the line appeared:\n${out}\n${err}`)));
          }
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`no such line within ${deadlineMs} ms:\n${out}\n${err}`))),
          deadlineMs,
        );
        const done = (settle: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      }),
  };
}

export async function runMain(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnChild(args, env);
  const code = await child.exited;
  return { code, stderr: child.stderr() };
}
