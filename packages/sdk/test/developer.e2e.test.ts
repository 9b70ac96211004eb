/**
 * The SDK's developer client against the real app (sdk.test-helpers.ts): sign-in with a one-time
 * code, token refresh and sign-out, keys and their usage, the OpenAPI document.
 */
import { describe, expect, it, vi } from 'vitest';
import { createPartner } from '../../../test/factories.js';
import { TEST_OTP } from '../../../test/harness.js';
import {
  developerClient,
  expectApiError,
  expectOperationsExercised,
  partnerClient,
  setUpSdkApp,
  signedIn,
  t,
  WAIT,
} from './sdk.test-helpers.js';
import { SDK_COVERAGE } from './sdk-coverage.js';

setUpSdkApp();

describe('developer client: sign-in, tokens, keys', () => {
  it('signs in with a one-time code, then lists, creates, rotates, revokes keys and reads their usage', async () => {
    const partner = await createPartner(t.ctx);
    const dev = developerClient();
    const requested = await dev.requestCode(partner.phone);
    expect(requested).toEqual({ expiresInSec: 300, resendAfterSec: 60 });
    const tokens = await dev.verifyCode(partner.phone, TEST_OTP);
    expect(tokens.user).toMatchObject({ id: partner.userId, role: 'PARTNER', partnerId: partner.id });
    expect(dev.tokens).toEqual({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken });
    expect(dev.user?.partnerName).toBe(partner.name);

    expect((await dev.keys.list()).items).toEqual([]);
    // The limits the server enforces, as the portal reads them.
    expect(await dev.limits()).toMatchObject({ activeKeysPerPartner: 10 });
    const created = await dev.keys.create({
      name: 'SDK key',
      environment: 'SANDBOX',
      scopes: ['orders:read', 'logistics:write'],
    });
    expect(created.key).toMatch(/^svc_sandbox_/);
    expect((await dev.keys.list()).items.map((k) => k.id)).toEqual([created.id]);

    // The key works, and its use shows in the usage series.
    const partnerApi = partnerClient(created.key);
    expect((await partnerApi.me()).keyName).toBe('SDK key');
    await vi.waitFor(async () => {
      const usage = await dev.keys.usage(created.id, { days: 1 });
      expect(usage.items.reduce((n, d) => n + d.requests, 0)).toBeGreaterThanOrEqual(1);
    }, WAIT);

    const rotated = await dev.keys.rotate(created.id);
    expect(rotated.key).toMatch(/^svc_sandbox_/);
    expect(rotated.key).not.toBe(created.key);
    expect((await partnerClient(rotated.key).me()).keyName).toBe('SDK key');

    const revoked = await dev.keys.revoke(rotated.id);
    expect(revoked.revokedAt).not.toBeNull();
    const refused = await expectApiError(partnerClient(rotated.key).me(), 401, 'ERR_API_KEY_REVOKED');
    expect(refused.requestId).toBeTruthy();
  });

  it('refreshes an expired access token once, for concurrent calls too, and tells onTokens', async () => {
    const partner = await createPartner(t.ctx);
    const changes: Array<string | null> = [];
    const dev = await signedIn(partner, { onTokens: (tokens) => changes.push(tokens?.accessToken ?? null) });
    const first = dev.tokens!;
    expect(changes).toEqual([first.accessToken]);

    t.clock.advance(16 * 60); // access tokens last 15 minutes
    const lists = await Promise.all([dev.keys.list(), dev.webhooks.list(), dev.keys.list()]);
    expect(lists.map((l) => l.items)).toEqual([[], [], []]);
    // One refresh for the three calls (a refresh token works once; a second use would end the session).
    expect(changes).toHaveLength(2);
    expect(dev.tokens!.accessToken).toBe(changes[1]);
    expect(dev.tokens!.refreshToken).not.toBe(first.refreshToken);

    const refreshed = await dev.refresh();
    expect(changes).toHaveLength(3);
    expect((await dev.keys.list()).items).toEqual([]);
    expect(refreshed.user.id).toBe(partner.userId);
  });

  it('forgets the session when the refresh token is refused, and signOut ends it on the server', async () => {
    const partner = await createPartner(t.ctx);
    const dev = await signedIn(partner);
    // A copy of the session that will present a refresh token already used by `dev`.
    const stale = developerClient({ tokens: { accessToken: null, refreshToken: dev.tokens!.refreshToken } });
    await dev.refresh();
    await expectApiError(stale.refresh(), 401, 'ERR_UNAUTHORIZED');
    expect(stale.tokens).toBeNull();

    // Reusing a refresh token signs that session out everywhere (docs/decisions-log.md, 'Accounts and sign-in'): sign in again (one
    // code a minute per phone; sign-in's 429 is not retried by the client).
    await expectApiError(developerClient().requestCode(partner.phone), 429, 'ERR_OTP_RATE_LIMITED');
    t.clock.advance(61);
    const again = await signedIn(partner);
    await again.signOut();
    expect(again.tokens).toBeNull();
    await expectApiError(again.keys.list(), 401, 'ERR_UNAUTHORIZED');
  });

  it('reads the OpenAPI document', async () => {
    const dev = developerClient();
    const doc = await dev.openApiDocument();
    expect(doc.openapi).toBe('3.0.0');
  });
});

expectOperationsExercised(SDK_COVERAGE.developer);
