/**
 * The state of the service's dependencies (PostgreSQL, Redis) as this process sees them, and what is
 * logged about them (docs/decisions-log.md, 'Dependency faults'): each outage once when it starts and once when it ends, naming the
 * dependency, however many requests, clients and retries run into it meanwhile.
 *
 * A dependency is declared down by the first failure that means "unreachable" (a refused or reset
 * connection, a deadline passed) and up again by the first success of an operation that STARTED after
 * it went down: an operation already under way when the outage began, answered on a connection that
 * happened to survive, proves nothing, and counting it would make one outage look like several. In the
 * same way an operation that started before the dependency came back and fails after it does not start
 * a new outage (a connection event, which is news of now, always counts).
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';

export type DependencyName = 'PostgreSQL' | 'Redis';

export class DependencyHealth {
  private down: { sinceMs: number; seq: number; reason: string } | null = null;
  /** Counts operations begun: an operation begun after the outage started carries a later number. */
  private seq = 0;
  /** `seq` when the dependency last came back. */
  private upSeq = 0;
  private readonly emitter = new EventEmitter();

  constructor(readonly name: DependencyName) {}

  get available(): boolean {
    return this.down === null;
  }

  /** Taken when an operation begins; pass it to `succeeded` when it ends well. */
  begin(): number {
    return ++this.seq;
  }

  /**
   * An operation begun at `token` failed because the dependency is unreachable; without a token (a
   * connection error event) the failure is news of now.
   */
  failed(err: unknown, token?: number): void {
    if (this.down) return;
    if (token !== undefined && token <= this.upSeq) return;
    this.down = { sinceMs: Date.now(), seq: this.seq, reason: reasonOf(err) };
    this.emitter.emit('change', { available: false, reason: this.down.reason });
  }

  /**
   * An operation begun at `token` (from `begin`) succeeded. Without a token (a reconnect that completed a
   * handshake, say) the success is taken as proof on its own.
   */
  succeeded(token?: number): void {
    if (!this.down) return;
    if (token !== undefined && token <= this.down.seq) return;
    const downForMs = Date.now() - this.down.sinceMs;
    this.down = null;
    this.upSeq = this.seq;
    this.emitter.emit('change', { available: true, downForMs });
  }

  onChange(listener: (change: HealthChange) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }
}

export type HealthChange = { available: false; reason: string } | { available: true; downForMs: number };

/** What this process does instead while each dependency is out (the start-of-outage log line says it). */
const FALLBACK: Record<DependencyName, string> = {
  PostgreSQL: 'requests that need it answer 503 ERR_DEPENDENCY_UNAVAILABLE, /readyz answers 503, the worker waits',
  Redis:
    'rate limits per process, order reads from the database, key changes reach other processes through a 2 s key cache, realtime within this process',
};

/** Logs each outage of `health` once when it starts (warn) and once when it ends (info). */
export function logOutages(health: DependencyHealth, log: Logger): () => void {
  return health.onChange((change) => {
    if (!change.available) {
      log.warn(
        { dependency: health.name, reason: change.reason },
        `${health.name} unavailable: ${change.reason}; until it is back, ${FALLBACK[health.name]}`,
      );
    } else {
      log.info(
        { dependency: health.name, downForMs: change.downForMs },
        `${health.name} available again after ${(change.downForMs / 1000).toFixed(1)} s`,
      );
    }
  });
}

export function reasonOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const line = cause.message.split('\n')[0] || cause.name;
    return typeof code === 'string' && !line.includes(code) ? `${line} (${code})` : line;
  }
  return String(cause);
}

// Errors of the network and of the two drivers that mean "the dependency cannot be reached right now".
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);
const DRIVER_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|not queryable|Cannot use a pool after calling end|PGlite is closed|did not answer within|Connection is closed|Stream isn't writeable|Command timed out|Reached the max retries per request limit|Socket timeout|read ECONNRESET|write EPIPE/i;

/**
 * Whether `err` is a fault of a dependency (PostgreSQL, Redis, their connections) rather than of our
 * own code: the driver's connection errors, network errors, deadlines, ioredis's offline and retry
 * errors, and the 503 AppError they are turned into (by `code`).
 */
export function isDependencyError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (code === 'ERR_DEPENDENCY_UNAVAILABLE') return true;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || /^(08|53|57P|58)/.test(code))) return true;
  if (err.name === 'MaxRetriesPerRequestError') return true;
  if (DRIVER_MESSAGES.test(err.message)) return true;
  return err.cause !== undefined && err.cause !== err && isDependencyError(err.cause);
}

interface ProcessLike {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (err: Error) => void): unknown;
}

/**
 * The process-level last line of defence (main.ts). Every dependency client has its own error handling;
 * this only catches what slips past it, so that a driver quirk never ends a process:
 *  - an unhandled rejection or uncaught exception that is a dependency error (see isDependencyError) is
 *    logged (error) and swallowed: the process keeps serving, and the operation it belonged to has
 *    already failed or will be retried;
 *  - anything else is a bug whose effect on the process state is unknown: it is logged (fatal) and the
 *    process exits with status 1, as Node itself would, so a supervisor starts a clean one.
 */
export function installLastLineOfDefence(
  proc: ProcessLike,
  log: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const handle = (kind: 'unhandledRejection' | 'uncaughtException', err: unknown) => {
    if (isDependencyError(err)) {
      log.error({ err, kind }, `a dependency error escaped its handler (${kind}); ignored, the process keeps running`);
      return;
    }
    log.fatal({ err, kind }, `unexpected error (${kind}); exiting`);
    exit(1);
  };
  proc.on('unhandledRejection', (reason) => handle('unhandledRejection', reason));
  proc.on('uncaughtException', (err) => handle('uncaughtException', err));
}
