/**
 * Sending one-time codes by SMS (docs/operating.md, "SMS gateways"). `SmsProvider` is the seam; the
 * configuration chooses the gateway: Twilio, any HTTP gateway of the operator's (a signed JSON POST), or,
 * outside production only, the log. Production refuses to start without a real gateway (config.ts), so a
 * production code is never written to a log: the gateways log failures without the message or the phone.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { HttpSmsGateway, TwilioSmsGateway } from './sms-gateways.js';

export interface SmsProvider {
  readonly name: string;
  /** Resolves once the gateway accepted the message; rejects when it could not be handed over. */
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

export function createSmsProvider(config: Config, log: Logger): SmsProvider {
  const sms = config.sms;
  if (sms.provider === 'twilio') return new TwilioSmsGateway(sms);
  if (sms.provider === 'http') return new HttpSmsGateway(sms);
  return new LogSmsProvider(log);
}

export function otpMessage(code: string, ttlSec: number): string {
  return `Your sign-in code is ${code}. It expires in ${Math.round(ttlSec / 60)} minutes.`;
}
