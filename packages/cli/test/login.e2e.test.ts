/**
 * `partner login`, `whoami` and `logout` (docs/decisions-log.md, 'CLI and listen sessions'): the one-time
 * code, the session file, refreshing and signing out.
 */

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newUser, run, runJson, setUpCliApp, signedIn, TEST_TIMEOUT, t, urls } from './cli.test-helpers.js';

setUpCliApp();

describe('partner login / whoami / logout', TEST_TIMEOUT, () => {
  it('signs in with the one-time code, keeps the tokens in a 0600 file, and signs out', async () => {
    const user = await signedIn();
    const session = join(user.configDir, 'session.json');
    expect(statSync(session).mode & 0o777).toBe(0o600);
    expect(statSync(user.configDir).mode & 0o777).toBe(0o700);
    expect(Object.keys(JSON.parse(readFileSync(session, 'utf8')).sessions)).toEqual([urls.PARTNER_API_URL]);

    const me = await runJson<{ user: { phone: string; partnerId: string } }>(user, ['whoami']);
    expect(me.user).toMatchObject({ phone: user.partner.phone, partnerId: user.partner.id });

    // Once the access token has expired, the next command refreshes it and keeps the new pair (refresh
    // tokens are single use: the next command must find the new one).
    const tokens = () => JSON.parse(readFileSync(session, 'utf8')).sessions[urls.PARTNER_API_URL].refreshToken as string;
    const before = tokens();
    t.clock.advance(16 * 60);
    expect((await run(user, ['whoami'])).code).toBe(0);
    expect(tokens()).not.toBe(before);
    t.clock.advance(16 * 60);
    expect((await run(user, ['keys', 'list'])).code).toBe(0);

    expect((await run(user, ['logout'])).code).toBe(0);
    const after = await run(user, ['whoami']);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('Not signed in');
  });

  it('refuses a wrong code with the API’s message, and writes no session', async () => {
    const user = await newUser();
    const login = await run(user, ['login', '--phone', user.partner.phone, '--code', '000000']);
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^Error: .+ \(ERR_OTP_INVALID, HTTP 400\)$/m);
    expect(statSync(join(user.configDir, 'session.json'), { throwIfNoEntry: false })).toBeUndefined();
  });
});
