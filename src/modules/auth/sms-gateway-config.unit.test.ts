/**
 * Start-up refuses an SMS gateway it cannot use: each incomplete or invalid setting stops the
 * configuration with one line naming the variable (the gateways themselves: sms-gateways.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';

const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const AUTH_TOKEN = 'twilio-auth-token-for-tests';
const PRODUCTION_BASE = { NODE_ENV: 'production', JWT_SECRET: 'p'.repeat(40) };

describe('start-up without a usable gateway', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ ...PRODUCTION_BASE }, 'SMS_PROVIDER'],
    [{ ...PRODUCTION_BASE, SMS_PROVIDER: 'log' }, 'SMS_PROVIDER'],
    [{ SMS_PROVIDER: 'pigeon' }, 'SMS_PROVIDER'],
    [{ SMS_PROVIDER: 'twilio' }, 'TWILIO_ACCOUNT_SID'],
    [{ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: 'nope' }, 'TWILIO_ACCOUNT_SID'],
    [{ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: ACCOUNT_SID }, 'TWILIO_AUTH_TOKEN'],
    [{ SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: ACCOUNT_SID, TWILIO_AUTH_TOKEN: AUTH_TOKEN }, 'TWILIO_FROM'],
    [
      {
        SMS_PROVIDER: 'twilio',
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        TWILIO_FROM: '+1',
        TWILIO_MESSAGING_SERVICE_SID: 'MG1',
      },
      'TWILIO_FROM',
    ],
    [{ SMS_PROVIDER: 'http' }, 'SMS_HTTP_URL'],
    [{ SMS_PROVIDER: 'http', SMS_HTTP_URL: 'ftp://x' }, 'SMS_HTTP_URL'],
    [{ SMS_PROVIDER: 'http', SMS_HTTP_URL: 'http://127.0.0.1:9/sms' }, 'SMS_HTTP_SECRET'],
    [{ SMS_PROVIDER: 'http', SMS_HTTP_URL: 'http://127.0.0.1:9/sms', SMS_HTTP_SECRET: 'short' }, 'SMS_HTTP_SECRET'],
  ];
  for (const [env, variable] of cases) {
    it(`refuses ${JSON.stringify(env)} naming ${variable}`, () => {
      const err = (() => {
        try {
          loadConfig(env);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(variable);
      expect((err as Error).message.startsWith(`${variable}: `)).toBe(true);
    });
  }
});
