/**
 * The one way a test waits: for a condition, polled, with a deadline (docs/testing.md, 'Waiting').
 * Never a fixed sleep: a busy machine makes any fixed time too short one day, and a quiet one makes it
 * too long every day.
 *
 * Imports nothing but the platform, so that unit tests may use it too.
 */
import { setTimeout as sleep } from 'node:timers/promises';

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export interface WaitOptions {
  /** How long to keep trying (real time, generous: the machine may be busy). Default 15 s. */
  timeoutMs?: number;
  /** The pause between two checks. Default 20 ms. */
  intervalMs?: number;
  /** What is awaited, for the failure message (default: the check's source); a function is read at the deadline. */
  what?: string | (() => string);
}

/**
 * Calls `check` until it answers a truthy value, and returns that value. A check that throws (an
 * `expect` not met yet) is tried again like a falsy answer. Past the deadline it fails naming what it
 * waited for, with the last error as the cause.
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions | number = {}): Promise<Truthy<T>> {
  const { timeoutMs = 15_000, intervalMs = 20, what } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const awaited = (typeof what === 'function' ? what() : (what ?? check.toString())).replace(/\s+/g, ' ').slice(0, 300);
      const reason = lastError instanceof Error ? ` (last: ${lastError.message.split('\n')[0]})` : '';
      throw new Error(`not met within ${timeoutMs} ms: ${awaited}${reason}`, { cause: lastError });
    }
    await sleep(intervalMs);
  }
}
