/**
 * The environment every benchmark builds its API from: production settings (no test clock, no fixed
 * sign-in code), nothing kept on disk, and an SMS gateway that is never called (production requires
 * one; a benchmark signs no one in by code).
 */
export const BENCH_ENV = {
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  LOG_LEVEL: 'warn',
  SMS_PROVIDER: 'http',
  SMS_HTTP_URL: 'http://127.0.0.1:9/sms',
  SMS_HTTP_SECRET: 'unused-sms-gateway-secret',
  DATA_DIR: 'memory://',
} as const;
