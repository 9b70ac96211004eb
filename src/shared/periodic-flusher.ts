/**
 * The timer under every writer that keeps work in memory and writes it in the background (the usage
 * counters, the request log, the location buffer), as batcher.ts is for the turn batchers:
 *  - an interval (real time, unref'd: it never holds a process open), started and stopped by its owner;
 *  - one flush at a time: a tick while a flush runs is skipped, and `flush()` called meanwhile waits
 *    for it and then runs another (the writer's in-flight data is never written twice); `soon()` is a
 *    tick out of turn, for a writer whose work filled a batch before the interval ends;
 *  - a final flush on `close()`, after which the timer never starts again;
 *  - failures logged at one level: a dependency outage is logged once by the dependency's health
 *    (src/dependencies.ts), so a tick that fails for it logs at debug; any other failure of a tick, and a
 *    failed final flush (what it held is lost), at error. The writer keeps what a failed flush held.
 */
import type { Logger } from 'pino';
import { isUnavailableError } from '../db/db-errors.js';

export interface PeriodicFlusherOptions {
  /** Names the writer in its log lines (`<what> flush failed`). */
  what: string;
  intervalMs: number;
  /** Writes what waits; rejects when nothing (or not everything) could be written. `force`: see `flush`. */
  flush(force: boolean): Promise<void>;
  log: Pick<Logger, 'debug' | 'error'>;
  /** The timer functions (tests drive the ticks themselves). */
  timers?: {
    set(tick: () => void, ms: number): unknown;
    clear(handle: unknown): void;
  };
}

const realTimers = {
  set(tick: () => void, ms: number): unknown {
    const handle = setInterval(tick, ms);
    handle.unref();
    return handle;
  },
  clear(handle: unknown): void {
    clearInterval(handle as NodeJS.Timeout);
  },
};

export class PeriodicFlusher {
  private handle: unknown = null;
  /** The flush under way (never rejects), or null. */
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly timers: NonNullable<PeriodicFlusherOptions['timers']>;

  constructor(private readonly options: PeriodicFlusherOptions) {
    this.timers = options.timers ?? realTimers;
  }

  /** Whether the timer runs. */
  get started(): boolean {
    return this.handle !== null;
  }

  /** Starts the timer (nothing if it runs, or once closed). */
  start(): void {
    if (this.handle !== null || this.closed) return;
    this.handle = this.timers.set(() => this.tick(), this.options.intervalMs);
  }

  /** Stops the timer; nothing is flushed (the owner starts it again when there is work). */
  stop(): void {
    if (this.handle === null) return;
    this.timers.clear(this.handle);
    this.handle = null;
  }

  /**
   * Flushes now, after the flush under way if any (`force` is passed to the writer: the location buffer
   * then writes every order, however recently flushed). Rejects with the flush's failure, unlogged.
   */
  async flush(force = false): Promise<void> {
    while (this.running) await this.running;
    const run = this.options.flush(force);
    this.running = run.then(
      () => {
        this.running = null;
      },
      () => {
        this.running = null;
      },
    );
    return run;
  }

  /**
   * A flush now, as a tick would start it (nothing while one runs, or while the timer is stopped): for a
   * writer whose work filled a batch before the next tick.
   */
  soon(): void {
    if (this.handle !== null) this.tick();
  }

  /** Stops the timer for good and flushes everything (forced); a failure is logged, not thrown. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    await this.flush(true).catch((err: unknown) => this.options.log.error({ err }, `final ${this.options.what} flush failed`));
  }

  private tick(): void {
    if (this.running) return;
    this.flush(false).catch((err: unknown) => {
      if (isUnavailableError(err)) this.options.log.debug({ err }, `${this.options.what} flush failed`);
      else this.options.log.error({ err }, `${this.options.what} flush failed`);
    });
  }
}
