import type { FastifyBaseLogger } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Logger } from 'pino';

/**
 * Structured JSON logs. Credentials never reach the log: API keys, bearer tokens, refresh tokens,
 * webhook secrets and one-time codes are redacted wherever they appear in a logged object.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  '*.key',
  '*.apiKey',
  '*.secret',
  '*.body.code',
  '*.otp',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.password',
  'key',
  'secret',
  'otp',
  'token',
  'accessToken',
  'refreshToken',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'partner-api' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Fastify's `childLoggerFactory`, made lazy: the per-request child (`{ reqId }`) is created on the
 * first line actually written, not on every request. Creating a pino child redacts its bindings
 * through the redaction rules, a cost every request paid although most requests write nothing at the
 * configured level.
 */
export function lazyChildLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger as Logger, bindings, options);
}

class LazyChildLogger implements FastifyBaseLogger {
  private real: Logger | null = null;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.real?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }

  private write(method: LogMethod, args: unknown[]): void {
    // Below the level nothing is written, so no child is needed (a route-level level decides itself).
    if (this.real === null && this.options.level === undefined && !this.parent.isLevelEnabled(method)) return;
    (this.logger()[method] as (...a: unknown[]) => void)(...args);
  }

  private logger(): Logger {
    this.real ??= this.parent.child(this.bindings, this.options);
    return this.real;
  }
}
