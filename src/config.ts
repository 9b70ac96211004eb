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
}

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
  const publicUrl = url(env, 'PUBLIC_URL', ['https:', 'http:']) ?? `http://localhost:${livePort}`;
  const sandboxPublicUrl = url(env, 'SANDBOX_PUBLIC_URL', ['https:', 'http:']) ?? `http://localhost:${sandboxPort}`;

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
  };
}
