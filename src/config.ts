/**
 * Every environment variable the service reads (docs/decisions-log.md, 'Processes and configuration'), parsed and checked once at start-up.
 * A bad value throws ConfigError with one line naming the variable and what is allowed; main.ts prints
 * that line and exits.
 */
export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  isProduction: boolean;
  host: string;
  port: number;
  sandboxPort: number;
  /** A PostgreSQL server URL; when absent the embedded PGlite database under dataDir is used. */
  databaseUrl: string | null;
  /** PGlite storage folder, or `memory://` for nothing kept. */
  dataDir: string;
  redisUrl: string | null;
  /** Start of every Redis key and channel name: processes sharing one deployment share the prefix. */
  redisKeyPrefix: string;
  /** When absent outside production a secret is generated once and stored with the data. */
  jwtSecret: string | null;
  otpFixedCode: string | null;
  bootstrapAdminPhone: string | null;
  testClock: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Where partners reach the live and the sandbox API (the OpenAPI documents' `servers`), without a trailing slash. */
  publicUrl: string;
  sandboxPublicUrl: string;
  /** Capture partner requests into the request log (docs/decisions-log.md, 'Request log'); `REQUEST_LOG=off` turns capture off. */
  requestLog: boolean;
  /**
   * Render the API reference pages on the server once, after their first request (docs/openapi.md, "The
   * reference page"); `REFERENCE_SERVER_RENDER=off` leaves them to the reader's browser.
   */
  referenceServerRender: boolean;
  /** The gateway one-time codes are sent through (docs/operating.md, "SMS gateways"). */
  sms: SmsConfig;
  /** The port of this process's `/metrics` listener, or null for none (docs/operating.md, "Metrics"). */
  metricsPort: number | null;
  /** OTLP/HTTP traces endpoint (the collector's base URL), or null for no tracing (docs/operating.md, "Traces"). */
  otlpEndpoint: string | null;
  /**
   * After SIGTERM, how long a process with listeners answers /readyz 503 while still serving, before it
   * stops accepting (docs/operating.md, "Restarts"): time for the load balancer to take it out.
   */
  shutdownDrainMs: number;
  /** What one partner's uploads may hold of this process (docs/tracking-and-proof.md, "Upload limits"). */
  uploads: UploadLimits;
}

export interface UploadLimits {
  /** Uploads of one partner (all its keys) being received or stored at once: UPLOAD_IN_FLIGHT_PER_PARTNER, 4. */
  inFlightPerPartner: number;
  /** Uploads of all partners at once in this process: UPLOAD_IN_FLIGHT_PER_PROCESS, 16. */
  inFlightPerProcess: number;
  /** Bytes one partner may send in any 60 s: UPLOAD_BYTES_PER_PARTNER_PER_MINUTE, 104857600 (100 MiB). */
  bytesPerPartnerPerMinute: number;
  /** The whole body must arrive within this: UPLOAD_BODY_TIMEOUT_MS, 30000. */
  bodyTimeoutMs: number;
  /** Admitted bodies of all partners are read at most this fast: UPLOAD_BYTES_PER_SECOND, 16 MiB; 0: unpaced. */
  bytesPerSecond: number;
  /** Refused bodies (read and dropped) of all partners, at most this fast: UPLOAD_DRAIN_BYTES_PER_SECOND, 4 MiB; 0: unpaced. */
  drainBytesPerSecond: number;
}

export type SmsConfig =
  | { provider: 'log' }
  | {
      provider: 'twilio';
      accountSid: string;
      authToken: string;
      /** Exactly one of the sender number and the messaging service. */
      from: string | null;
      messagingServiceSid: string | null;
      /** Twilio's API base URL, without a trailing slash (a stand-in's in tests). */
      apiUrl: string;
    }
  | { provider: 'http'; url: string; secret: string };

/** In production `/metrics` listens here unless METRICS_PORT says otherwise (the OpenTelemetry Prometheus port). */
export const DEFAULT_PRODUCTION_METRICS_PORT = 9464;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** Letters, digits and `:_.-`, so a prefix can never form a Redis glob pattern or collide with one. */
const REDIS_KEY_PREFIX = /^[A-Za-z0-9:_.-]{1,64}$/;

function redisKeyPrefix(env: Env): string {
  const raw = value(env, 'REDIS_KEY_PREFIX');
  if (raw === undefined) return 'partner-api';
  if (!REDIS_KEY_PREFIX.test(raw)) {
    throw new ConfigError('REDIS_KEY_PREFIX', `must be 1 to 64 letters, digits or ":_.-", got "${raw}"`);
  }
  return raw;
}

export const PHONE_PATTERN = /^\+994\d{9}$/;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NODE_ENVS = ['development', 'production', 'test'] as const;

type Env = Record<string, string | undefined>;

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  return trimmed === '' ? undefined : trimmed;
}

function port(env: Env, name: string, fallback: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `must be a port number from 0 to 65535, got "${raw}"`);
  }
  return Number(raw);
}

function positiveInteger(env: Env, name: string, fallback: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(name, `must be a whole number of at least 1, got "${raw}"`);
  }
  return Number(raw);
}

function wholeNumber(env: Env, name: string, fallback: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(name, `must be a whole number (0 or more), got "${raw}"`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function flag(env: Env, name: string): boolean {
  const raw = value(env, name);
  if (raw === undefined) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(name, `must be 1 or 0 (true or false), got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = value(env, name);
  if (raw === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL (${protocols.map((p) => `${p}//…`).join(' or ')})`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function required(env: Env, name: string, why: string): string {
  const raw = value(env, name);
  if (raw === undefined) throw new ConfigError(name, `is required ${why}`);
  return raw;
}

/** The SMS gateway (docs/operating.md, "SMS gateways"): production must name a real one. */
function smsConfig(env: Env, isProduction: boolean): SmsConfig {
  const raw = value(env, 'SMS_PROVIDER');
  if (raw === undefined) {
    if (isProduction) {
      throw new ConfigError(
        'SMS_PROVIDER',
        'is required when NODE_ENV=production (twilio or http): sign-in codes are sent by SMS',
      );
    }
    return { provider: 'log' };
  }
  const provider = oneOf(env, 'SMS_PROVIDER', ['log', 'twilio', 'http'] as const, 'log');
  if (provider === 'log') {
    if (isProduction) {
      throw new ConfigError(
        'SMS_PROVIDER',
        'log writes codes to the log and is refused when NODE_ENV=production (use twilio or http)',
      );
    }
    return { provider };
  }
  if (provider === 'http') {
    const why = 'when SMS_PROVIDER=http';
    const gateway = url(env, 'SMS_HTTP_URL', ['https:', 'http:']);
    if (gateway === null) throw new ConfigError('SMS_HTTP_URL', `is required ${why}`);
    const secret = required(env, 'SMS_HTTP_SECRET', why);
    if (secret.length < 16) throw new ConfigError('SMS_HTTP_SECRET', 'must be at least 16 characters long');
    return { provider, url: gateway, secret };
  }
  const why = 'when SMS_PROVIDER=twilio';
  const accountSid = required(env, 'TWILIO_ACCOUNT_SID', why);
  if (!/^AC[0-9a-fA-F]{32}$/.test(accountSid)) {
    throw new ConfigError('TWILIO_ACCOUNT_SID', 'must be AC followed by 32 hexadecimal digits');
  }
  const authToken = required(env, 'TWILIO_AUTH_TOKEN', why);
  const from = value(env, 'TWILIO_FROM') ?? null;
  const messagingServiceSid = value(env, 'TWILIO_MESSAGING_SERVICE_SID') ?? null;
  if (from === null && messagingServiceSid === null) {
    throw new ConfigError('TWILIO_FROM', `or TWILIO_MESSAGING_SERVICE_SID is required ${why}`);
  }
  if (from !== null && messagingServiceSid !== null) {
    throw new ConfigError('TWILIO_FROM', 'and TWILIO_MESSAGING_SERVICE_SID exclude each other: set one');
  }
  if (from !== null && !/^\+[1-9]\d{6,14}$/.test(from) && !/^[A-Za-z0-9 ]{1,11}$/.test(from)) {
    throw new ConfigError('TWILIO_FROM', `must be an E.164 number (+…) or an alphanumeric sender ID, got "${from}"`);
  }
  const apiUrl = url(env, 'TWILIO_API_URL', ['https:', 'http:']) ?? 'https://api.twilio.com';
  return { provider, accountSid, authToken, from, messagingServiceSid, apiUrl: apiUrl.replace(/\/+$/, '') };
}

/** In production a process drains this long after SIGTERM unless SHUTDOWN_DRAIN_MS says otherwise. */
export const DEFAULT_PRODUCTION_DRAIN_MS = 10_000;

/** SHUTDOWN_DRAIN_MS: milliseconds, 0 to 120000; unset means none outside production, 10 s in production. */
function shutdownDrainMs(env: Env, isProduction: boolean): number {
  const raw = value(env, 'SHUTDOWN_DRAIN_MS');
  if (raw === undefined) return isProduction ? DEFAULT_PRODUCTION_DRAIN_MS : 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 120_000) {
    throw new ConfigError('SHUTDOWN_DRAIN_MS', `must be milliseconds from 0 to 120000, got "${raw}"`);
  }
  return Number(raw);
}

/** METRICS_PORT: a port, or `off`; unset means off outside production and 9464 in production. */
function metricsPort(env: Env, isProduction: boolean): number | null {
  const raw = value(env, 'METRICS_PORT');
  if (raw === undefined) return isProduction ? DEFAULT_PRODUCTION_METRICS_PORT : null;
  if (raw.toLowerCase() === 'off') return null;
  return port(env, 'METRICS_PORT', 0);
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', NODE_ENVS, 'development');
  const isProduction = nodeEnv === 'production';

  const jwtSecret = value(env, 'JWT_SECRET') ?? null;
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters long');
  }
  if (isProduction && jwtSecret === null) {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  }

  const otpFixedCode = value(env, 'OTP_FIXED_CODE') ?? null;
  if (otpFixedCode !== null && !/^\d{6}$/.test(otpFixedCode)) {
    throw new ConfigError('OTP_FIXED_CODE', `must be exactly 6 digits, got "${otpFixedCode}"`);
  }
  if (isProduction && otpFixedCode !== null) {
    throw new ConfigError('OTP_FIXED_CODE', 'is refused when NODE_ENV=production (tests and demos only)');
  }

  const testClock = flag(env, 'TEST_CLOCK');
  if (isProduction && testClock) {
    throw new ConfigError('TEST_CLOCK', 'is refused when NODE_ENV=production (tests and demos only)');
  }

  const bootstrapAdminPhone = value(env, 'BOOTSTRAP_ADMIN_PHONE') ?? null;
  if (bootstrapAdminPhone !== null && !PHONE_PATTERN.test(bootstrapAdminPhone)) {
    throw new ConfigError('BOOTSTRAP_ADMIN_PHONE', `must be +994 and 9 digits, got "${bootstrapAdminPhone}"`);
  }

  const livePort = port(env, 'PORT', 3000);
  const sandboxPort = port(env, 'SANDBOX_PORT', 3001);
  if (livePort !== 0 && livePort === sandboxPort) {
    throw new ConfigError('SANDBOX_PORT', `must differ from PORT (${livePort})`);
  }

  const dataDir = value(env, 'DATA_DIR') ?? './data';
  // Unset, the documents' servers name the loopback address rather than `localhost`, which linters
  // (Redocly's no-server-example.com) warn about (docs/operating.md, 'Configuration').
  const publicUrl = url(env, 'PUBLIC_URL', ['https:', 'http:']) ?? `http://127.0.0.1:${livePort}`;
  const sandboxPublicUrl = url(env, 'SANDBOX_PUBLIC_URL', ['https:', 'http:']) ?? `http://127.0.0.1:${sandboxPort}`;

  const metrics = metricsPort(env, isProduction);
  if (metrics !== null && metrics !== 0 && (metrics === livePort || metrics === sandboxPort)) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT and SANDBOX_PORT (${metrics})`);
  }
  const otlpEndpoint = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['https:', 'http:']);

  return {
    nodeEnv,
    isProduction,
    host: value(env, 'HOST') ?? '0.0.0.0',
    port: livePort,
    sandboxPort,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: redisKeyPrefix(env),
    jwtSecret,
    otpFixedCode,
    bootstrapAdminPhone,
    testClock,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    publicUrl: publicUrl.replace(/\/+$/, ''),
    sandboxPublicUrl: sandboxPublicUrl.replace(/\/+$/, ''),
    requestLog: value(env, 'REQUEST_LOG') === undefined || flag(env, 'REQUEST_LOG'),
    referenceServerRender: value(env, 'REFERENCE_SERVER_RENDER') === undefined || flag(env, 'REFERENCE_SERVER_RENDER'),
    sms: smsConfig(env, isProduction),
    metricsPort: metrics,
    otlpEndpoint: otlpEndpoint === null ? null : otlpEndpoint.replace(/\/+$/, ''),
    shutdownDrainMs: shutdownDrainMs(env, isProduction),
    uploads: {
      inFlightPerPartner: positiveInteger(env, 'UPLOAD_IN_FLIGHT_PER_PARTNER', 4),
      inFlightPerProcess: positiveInteger(env, 'UPLOAD_IN_FLIGHT_PER_PROCESS', 16),
      bytesPerPartnerPerMinute: positiveInteger(env, 'UPLOAD_BYTES_PER_PARTNER_PER_MINUTE', 100 * 1024 * 1024),
      bodyTimeoutMs: positiveInteger(env, 'UPLOAD_BODY_TIMEOUT_MS', 30_000),
      bytesPerSecond: wholeNumber(env, 'UPLOAD_BYTES_PER_SECOND', 16 * 1024 * 1024),
      drainBytesPerSecond: wholeNumber(env, 'UPLOAD_DRAIN_BYTES_PER_SECOND', 4 * 1024 * 1024),
    },
  };
}
