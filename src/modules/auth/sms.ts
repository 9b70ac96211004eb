/**
 * Sending one-time codes by SMS. `SmsProvider` is the seam a real gateway plugs into; until one is
 * configured, development and tests write the message (code included) to the log, and production logs
 * that SMS is not configured, without the code (a production code must never reach a log).
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';

export interface SmsProvider {
  readonly name: string;
  send(phone: string, text: string): Promise<void>;
}

/** Development and tests: the log is the SMS gateway, so the message itself is the log line. */
export class LogSmsProvider implements SmsProvider {
  readonly name = 'log';
  constructor(private readonly log: Logger) {}

  async send(phone: string, text: string): Promise<void> {
    // Deliberately in the message string, not a field: the redaction rules would hide a field named
    // like a code, and showing the code is this provider's whole purpose. The phone number is personal
    // data the developer reading the log does not need: only its last four digits are shown.
    this.log.info(`SMS to ${maskPhone(phone)}: ${text}`);
  }
}

/** `+994501234567` → `+********4567`: the last four digits, enough to tell test accounts apart. */
export function maskPhone(phone: string): string {
  const visible = phone.slice(-4);
  const hidden = phone.slice(0, -4).replace(/\d/g, '*');
  return hidden + visible;
}

/** Production without a gateway: nothing is delivered, and the code is not written anywhere. */
export class UnconfiguredSmsProvider implements SmsProvider {
  readonly name = 'unconfigured';
  constructor(private readonly log: Logger) {}

  async send(phone: string): Promise<void> {
    this.log.warn({ phoneSuffix: phone.slice(-4) }, 'SMS is not configured: a one-time code was not delivered');
  }
}

export function createSmsProvider(config: Config, log: Logger): SmsProvider {
  return config.isProduction ? new UnconfiguredSmsProvider(log) : new LogSmsProvider(log);
}

export function otpMessage(code: string, ttlSec: number): string {
  return `Your sign-in code is ${code}. It expires in ${Math.round(ttlSec / 60)} minutes.`;
}
