/**
 * Child processes a test starts, killed whatever happens: when the test that started them finishes
 * (passed, failed or timed out), at a deadline of their own, and when the test worker itself exits
 * (a file that fails in a hook, an interrupted run). A test never leaves a server running behind it.
 */
import { type ChildProcessWithoutNullStreams, type SpawnOptionsWithoutStdio, spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';

const running = new Set<ChildProcessWithoutNullStreams>();

function kill(child: ChildProcessWithoutNullStreams): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

process.once('exit', () => {
  for (const child of running) kill(child);
});

export interface OwnedChildOptions extends SpawnOptionsWithoutStdio {
  /** Killed after this many milliseconds even while its test still runs (default: none). */
  deadlineMs?: number;
}

/**
 * spawn() for tests: stdout and stderr piped, stdin ignored. Call it inside a test (it registers the
 * kill with the test's onTestFinished).
 */
export function spawnOwned(command: string, args: string[], options: OwnedChildOptions = {}): ChildProcessWithoutNullStreams {
  const { deadlineMs, ...spawnOptions } = options;
  const child = spawn(command, args, {
    ...spawnOptions,
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as unknown as ChildProcessWithoutNullStreams;
  running.add(child);
  const deadline = deadlineMs === undefined ? null : setTimeout(() => kill(child), deadlineMs);
  child.once('exit', () => {
    if (deadline) clearTimeout(deadline);
    running.delete(child);
  });
  onTestFinished(() => {
    if (deadline) clearTimeout(deadline);
    kill(child);
  });
  return child;
}
