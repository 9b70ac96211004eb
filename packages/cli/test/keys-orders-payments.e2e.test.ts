/**
 * `partner keys`, `orders`, `trigger`, and `payments`, `balance` and `settlements` (docs/decisions-log.md,
 * 'CLI and listen sessions') against the real app.
 */

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUser } from '../../../test/factories.js';
import { run, runJson, sandboxKey, setUpCliApp, signedIn, TEST_TIMEOUT, t } from './cli.test-helpers.js';

setUpCliApp();

describe('partner keys / orders / trigger', TEST_TIMEOUT, () => {
  it('creates and lists keys, keeps the full key for --key, lists orders made by trigger, explains errors', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    expect(key.key).toMatch(/^svc_sandbox_/);
    expect(statSync(join(user.configDir, 'keys.json')).mode & 0o777).toBe(0o600);

    const list = await run(user, ['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ENV/);
    expect(list.stdout).toMatch(new RegExp(`${key.id}\\s+CLI sandbox key\\s+sandbox.*yes$`, 'm'));

    const created = await runJson<{ items: Array<{ code: string }> }>(user, [
      'trigger',
      'order',
      '--count',
      '2',
      '--payment',
      'COD',
    ]);
    expect(created.items).toHaveLength(2);
    const cancelled = await runJson<{ order: { code: string; status: string } }>(user, ['trigger', 'order.cancelled']);
    expect(cancelled.order.status).toBe('CANCELLED');

    const orders = await runJson<{ items: Array<{ code: string }>; total: number }>(user, ['orders', 'list', '--key', key.id]);
    expect(orders.items.map((o) => o.code).sort()).toEqual([...created.items.map((o) => o.code), cancelled.order.code].sort());
    const table = await run(user, ['orders', 'list', '--key', key.id, '--status', 'CANCELLED']);
    expect(table.stdout).toMatch(new RegExp(`^${cancelled.order.code}\\s+CANCELLED`, 'm'));

    const missing = await run(user, ['orders', 'get', 'ORD-NOPE', '--key', key.id]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\(ERR_NOT_FOUND, HTTP 404\)/);
    const noKey = await run(user, ['orders', 'list']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain(`--key <id> (kept here: ${key.id})`);
  });
});

describe('partner payments, balance and settlements', TEST_TIMEOUT, () => {
  it('lists and reads payment intents, the balance, settlements and their lines, and prints the CSV statement', async () => {
    const user = await signedIn();
    const key = await runJson<{ id: string; key: string }>(user, [
      'keys',
      'create',
      '--name',
      'CLI payments key',
      '--scopes',
      'orders:read,logistics:write,payments:read',
    ]);
    const headers = { 'x-api-key': key.key };
    const order = (
      await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers, payload: { paymentMethod: 'COD' } })
    ).json();
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) {
      const res = await t.sandbox.inject({
        method: 'POST',
        url: `/v1/partner/orders/${order.code}/events`,
        headers,
        payload: { type },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const intents = await runJson<{ items: Array<{ id: string; status: string }> }>(user, ['payments', 'list', '--key', key.id]);
    expect(intents.items).toEqual([expect.objectContaining({ status: 'COLLECTED' })]);
    const one = await run(user, ['payments', 'get', intents.items[0].id, '--key', key.id]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^Status:\s+COLLECTED$/m);
    const balance = await runJson<{ codOnHandQepik: number }>(user, ['balance', '--key', key.id]);
    expect(balance.codOnHandQepik).toBe(order.codAmountQepik);
    t.clock.advance(1);
    const closed = (await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/settlements', headers })).json();
    const list = await run(user, ['settlements', 'list', '--key', key.id]);
    expect(list.stdout).toMatch(new RegExp(`^${closed.id}\\s+AWAITING_REMITTANCE`, 'm'));
    const got = await runJson<{ id: string; outstandingQepik: number }>(user, ['settlements', 'get', closed.id, '--key', key.id]);
    expect(got).toMatchObject({ id: closed.id, outstandingQepik: order.codAmountQepik });
    const lines = await run(user, ['settlements', 'lines', closed.id, '--key', key.id]);
    expect(lines.stdout).toMatch(new RegExp(`COD_COLLECTION\\s+${order.code}`));
    const csv = await run(user, ['settlements', 'lines', closed.id, '--csv', '--key', key.id]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    expect(csv.stdout).toContain(`,COD_COLLECTION,${order.code},`);
  });

  it('prints the credit of an over-remitted statement, and the line of the next statement that carries it', async () => {
    const user = await signedIn();
    const key = await runJson<{ id: string; key: string }>(user, [
      'keys',
      'create',
      '--name',
      'CLI credit key',
      '--scopes',
      'orders:read,logistics:write,payments:read',
    ]);
    const headers = { 'x-api-key': key.key };
    const sandboxPost = async (url: string, payload?: unknown) => {
      const res = await t.sandbox.inject({ method: 'POST', url, headers, payload: payload as never });
      expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
      return res.json();
    };
    const deliveredCod = async () => {
      const order = await sandboxPost('/v1/partner/sandbox/orders', { paymentMethod: 'COD' });
      for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED'])
        await sandboxPost(`/v1/partner/orders/${order.code}/events`, { type });
      return order;
    };
    await deliveredCod();
    t.clock.advance(1);
    const first = await sandboxPost('/v1/partner/sandbox/settlements');
    expect(first.dueQepik).toBeGreaterThan(200);
    await sandboxPost(`/v1/partner/sandbox/settlements/${first.id}/remittances`, {
      amountQepik: first.dueQepik - 200,
      reference: 'BANK-1',
    });
    const none = await run(user, ['balance', '--key', key.id]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/^Credit:\s+0\.00 AZN$/m);

    // The operator takes 823 off a statement with 200 outstanding: 623 over-remitted.
    const operator = await createUser(t.ctx, 'ADMIN');
    const adjusted = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/settlements/${first.id}/adjustments`,
      headers: operator.auth,
      payload: { amountQepik: -823, note: 'refund to the customer' },
    });
    expect(adjusted.statusCode, adjusted.body).toBe(201);
    const human = await run(user, ['balance', '--key', key.id]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^Credit:\s+6\.23 AZN, carried to your next statement$/m);
    expect(human.stdout).toMatch(/^Awaiting remittance:\s+0\.00 AZN$/m);
    const json = await runJson<{ creditQepik: number; awaitingRemittanceQepik: number }>(user, ['balance', '--key', key.id]);
    expect(json).toMatchObject({ creditQepik: 623, awaitingRemittanceQepik: 0 });

    await deliveredCod();
    t.clock.advance(1);
    const second = await sandboxPost('/v1/partner/sandbox/settlements');
    expect(second.adjustmentsQepik).toBe(-623);
    const lines = await run(user, ['settlements', 'lines', second.id, '--key', key.id]);
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout).toMatch(new RegExp(`ADJUSTMENT\\s+-\\s+-6\\.23\\s+Overpayment carried from ${first.id}$`, 'm'));
  });
});
