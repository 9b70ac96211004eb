/**
 * SHUTDOWN_DRAIN_MS (docs/operating.md, "Restarts"): how long a process with listeners drains after
 * SIGTERM. None by default outside production (a developer's Ctrl-C stops at once), 10 s in production.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_PRODUCTION_DRAIN_MS, loadConfig } from './config.js';

const production = {
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(40),
  SMS_PROVIDER: 'http',
  SMS_HTTP_URL: 'https://sms.example.test/send',
  SMS_HTTP_SECRET: 'y'.repeat(20),
};

describe('SHUTDOWN_DRAIN_MS', () => {
  it('is 0 outside production and 10 s in production unless set', () => {
    expect(loadConfig({}).shutdownDrainMs).toBe(0);
    expect(loadConfig(production).shutdownDrainMs).toBe(DEFAULT_PRODUCTION_DRAIN_MS);
    expect(DEFAULT_PRODUCTION_DRAIN_MS).toBe(10_000);
    expect(loadConfig({ ...production, SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '1500' }).shutdownDrainMs).toBe(1500);
  });

  it('refuses what is not milliseconds from 0 to 120000, naming the variable', () => {
    for (const raw of ['-1', '1.5', '2s', '120001']) {
      expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: raw }), raw).toThrow(ConfigError);
      expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: raw }), raw).toThrow(/^SHUTDOWN_DRAIN_MS: /);
    }
  });
});
