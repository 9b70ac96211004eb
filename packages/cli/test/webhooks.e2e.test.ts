/**
 * `partner webhooks …` and `partner deliveries …` against the real app and worker: create (the secret
 * printed once), list, a signed test ping that reaches a local receiver, the delivery log, health, the
 * signing secret's form (a rotation suggested for one of the older base64url form), rotation, delete.
 */
import { describe, expect, it } from 'vitest';
import { giveOlderFormSecret } from '../../../test/factories.js';
import { waitFor } from '../../../test/wait.js';
import { CLI_WAIT, receiver, run, runJson, setUpCliApp, signedIn, TEST_TIMEOUT, t } from './cli.test-helpers.js';

setUpCliApp();

describe('partner webhooks', TEST_TIMEOUT, () => {
  it('creates, lists, tests, reads health and the secret form, rotates an older secret, and deletes a webhook', async () => {
    const user = await signedIn();
    const key = await runJson<{ id: string }>(user, [
      'keys',
      'create',
      '--name',
      'Hooks key',
      '--scopes',
      'orders:read,logistics:write,webhooks:manage',
    ]);
    const hooks = await receiver();

    const created = await run(user, [
      'webhooks',
      'create',
      '--key',
      key.id,
      '--url',
      hooks.url,
      '--events',
      'order.status_changed',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/Signing secret:\s+whsec_[A-Za-z0-9+/]{43}=/);
    expect(created.stderr).toContain('shown once');
    const id = /ID:\s+(\S+)/.exec(created.stdout)?.[1] ?? '';
    const listed = await runJson<{ items: Array<{ id: string; url: string }> }>(user, ['webhooks', 'list']);
    expect(listed.items).toEqual([expect.objectContaining({ id, url: hooks.url })]);

    const ping = await runJson<{ id: string; event: string }>(user, ['webhooks', 'test', id]);
    expect(ping.event).toBe('ping');
    await waitFor(() => hooks.got.find((g) => g.headers['x-partner-delivery'] === ping.id), CLI_WAIT);
    await waitFor(async () => {
      const page = await runJson<{ items: Array<{ id: string; status: string }> }>(user, ['deliveries', 'list', id]);
      return page.items.find((d) => d.id === ping.id && d.status === 'DELIVERED');
    }, CLI_WAIT);
    const health = await runJson<{ webhookId: string; delivered: number }>(user, ['webhooks', 'health', id]);
    expect(health.webhookId).toBe(id);
    expect(health.delivered).toBeGreaterThanOrEqual(1);

    expect(await runJson(user, ['webhooks', 'signing-secret', id])).toEqual({
      webhookId: id,
      form: 'base64',
      rotationSuggested: false,
    });
    // A secret made before secrets were standard base64.
    await giveOlderFormSecret(t.ctx, id);
    const older = await run(user, ['webhooks', 'signing-secret', id]);
    expect(older.code, older.stderr).toBe(0);
    expect(older.stdout).toMatch(/Form:\s+base64url/);
    expect(older.stdout).toContain(`suggested: partner webhooks rotate-secret ${id}`);
    expect(older.stderr).toContain('not with Standard Webhooks libraries');

    const rotated = await run(user, ['webhooks', 'rotate-secret', id, '--grace-hours', '1']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/Signing secret:\s+whsec_[A-Za-z0-9+/]{43}=/);
    expect(rotated.stdout).toMatch(/Old secret signs until:/);
    expect(await runJson(user, ['webhooks', 'signing-secret', id])).toMatchObject({ form: 'base64', rotationSuggested: false });

    expect((await run(user, ['webhooks', 'delete', id])).code).toBe(0);
    expect((await runJson<{ items: unknown[] }>(user, ['webhooks', 'list'])).items).toEqual([]);
    const gone = await run(user, ['webhooks', 'signing-secret', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/\(ERR_NOT_FOUND, HTTP 404\)/);
  });
});
