import pino, { type Logger } from 'pino';

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
