/**
 * A production start without a usable SMS gateway stops the process with one line naming the variable
 * (the built entry point, dist/src/main.js, as a child process: see test/main-process.ts; the
 * configuration rules: sms-gateway-config.unit.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { spawnOwned } from '../../../test/child-processes.js';

const PRODUCTION_BASE = { NODE_ENV: 'production', JWT_SECRET: 'p'.repeat(40) };

describe('start-up without a usable gateway', () => {
  it('stops a production start with one line naming SMS_PROVIDER', async () => {
    const child = spawnOwned(process.execPath, ['dist/src/main.js', 'start'], {
      env: { ...process.env, ...PRODUCTION_BASE, DATA_DIR: 'memory://', PORT: '0', SANDBOX_PORT: '0', HOST: '127.0.0.1' },
      deadlineMs: 60_000,
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^Configuration error: SMS_PROVIDER: is required when NODE_ENV=production/);
  }, 60_000);
});
