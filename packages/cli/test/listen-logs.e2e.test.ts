import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/wait.js';
import { verifyWebhook } from '../../sdk/src/index.js';
import {
  CLI_WAIT,
  receiver,
  run,
  runJson,
  sandboxKey,
  setUpCliApp,
  signedIn,
  start,
  TEST_TIMEOUT,
  t,
  urls,
} from './cli.test-helpers.js';

setUpCliApp();

describe('partner listen', TEST_TIMEOUT, () => {
  it('forwards the key’s events to a local URL, signed so that the SDK’s verifyWebhook accepts them, one line each', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const local = await receiver();
    const listen = start(user, [
      'listen',
      '--forward-to',
      local.url,
      '--key',
      key.id,
      '--events',
      'order.assigned_to_partner,order.cancelled',
      '--json',
    ]);
    const ready = JSON.parse(await listen.line('stdout', (l) => l.includes('"ready"'))) as { secret: string; events: string[] };
    expect(ready.secret).toMatch(/^whsec_/);
    expect(ready.events).toEqual(['order.assigned_to_partner', 'order.cancelled']);

    const cancelled = await runJson<{ order: { code: string } }>(user, ['trigger', 'order.cancelled']);
    await waitFor(() => local.got.length >= 2, CLI_WAIT);
    const events = local.got.map(({ body, headers }) => verifyWebhook(body, headers['x-partner-signature'], ready.secret));
    expect(events.map((e) => e.type)).toEqual(['order.assigned_to_partner', 'order.cancelled']);
    for (const e of events) expect(e).toMatchObject({ environment: 'sandbox', data: { order: { code: cancelled.order.code } } });
    expect(local.got[1].headers['x-partner-event']).toBe('order.cancelled');
    // Signed like a delivery: the Standard Webhooks headers too, with the same secret string.
    for (const [i, { body, headers }] of local.got.entries()) {
      expect(headers['webhook-id']).toBe(events[i].id);
      expect(new Webhook(ready.secret).verify(body, headers as Record<string, string>)).toMatchObject({ id: events[i].id });
      expect(verifyWebhook(body, { ...headers, 'x-partner-signature': undefined }, ready.secret).id).toBe(events[i].id);
    }

    for (const e of events) {
      const line = JSON.parse(await listen.line('stdout', (l) => l.includes(e.id))) as { status: number; type: string };
      expect(line).toMatchObject({ status: 200, type: e.type });
    }
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(0);
  });

  it('keeps forwarding after the server ends the connection because the token expired', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const local = await receiver();
    const listen = start(user, ['listen', '--forward-to', local.url, '--key', key.id, '--events', 'order.cancelled']);
    const ready = await listen.line('stdout', (l) => l.startsWith('Ready!'));
    const secret = /whsec_[\w+/=-]+/.exec(ready)?.[0] ?? '';
    t.clock.advance(16 * 60); // session.expired, then a reconnection with a refreshed token
    await listen.line('stderr', (l) => l.startsWith('Reconnected'));
    const cancelled = await runJson<{ order: { code: string } }>(user, ['trigger', 'order.cancelled']);
    await waitFor(() => local.got.length >= 1, CLI_WAIT);
    const event = verifyWebhook(local.got[0].body, local.got[0].headers['x-partner-signature'], secret);
    expect(event).toMatchObject({ type: 'order.cancelled', data: { order: { code: cancelled.order.code } } });
    await listen.line('stdout', (l) => l.includes(event.id) && l.includes('-> 200'));
  });

  it('stops with a refusal in plain words: a revoked key (the channel’s answer), a key that is not the partner’s', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    expect((await run(user, ['keys', 'revoke', key.id])).code).toBe(0);
    const revoked = await run(user, ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--key', key.id]);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain(`Error: Key ${key.id} is revoked (ERR_API_KEY_REVOKED)`);

    const stranger = await signedIn();
    const strangersKey = await sandboxKey(stranger);
    const foreign = await run(user, ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--key', strangersKey.id]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`No key ${strangersKey.id} among your keys`);
  });
});

describe('partner logs tail', TEST_TIMEOUT, () => {
  it('prints what was logged since --since, then the requests logged from now on, filtered', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const listed = await run(user, ['orders', 'list', '--key', key.id]);
    expect(listed.code).toBe(0);
    // Written to the log in batches: wait until it is there, so that the backfill can find it.
    const auth = { authorization: `Bearer ${user.partner.token}` };
    await waitFor(async () => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests?apiKeyId=${key.id}`, headers: auth });
      return res.json().total > 0;
    }, CLI_WAIT);

    const tail = start(user, ['logs', 'tail', '--key', key.id, '--path', '/v1/partner/orders*', '--since', '1h', '--json']);
    await tail.line('stdout', (l) => l.includes('"path":"/v1/partner/orders"'));
    await tail.line('stderr', (l) => l.startsWith('Tailing'));
    // Not the path asked for: not printed.
    const me = await fetch(`${urls.PARTNER_SANDBOX_URL}/v1/partner/me`, { headers: { 'x-api-key': key.key } });
    expect(me.status).toBe(200);
    const missing = await run(user, ['orders', 'get', 'ORD-NOPE', '--key', key.id]);
    expect(missing.code).toBe(1);
    await tail.line('stdout', (l) => l.includes('ORD-NOPE'));
    const lines = tail
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { path: string; statusCode: number; apiKeyId: string });
    expect(lines.map((l) => [l.path, l.statusCode])).toEqual([
      ['/v1/partner/orders', 200],
      ['/v1/partner/orders/ORD-NOPE', 404],
    ]);
    expect(lines.every((l) => l.apiKeyId === key.id)).toBe(true);

    const drops = await runJson<{ dropped: number; notStreamed: number; items: unknown[] }>(user, [
      'logs',
      'drops',
      '--since',
      '1h',
    ]);
    expect(drops).toMatchObject({ dropped: 0, notStreamed: 0, items: [] });
  });
});
