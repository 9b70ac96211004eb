/**
 * `partner offers`, `offers accept` and `offers decline` (packages/cli/README.md, "Offers") against the
 * real app: sandbox offers made for a key the CLI created, listed, accepted in one call with a result per
 * id, declined with a reason, and the API's refusals in plain words.
 */
import { describe, expect, it } from 'vitest';
import { run, runJson, sandboxKey, setUpCliApp, signedIn, TEST_TIMEOUT, t } from './cli.test-helpers.js';

setUpCliApp();

describe('partner offers', TEST_TIMEOUT, () => {
  it('lists a key’s offers, accepts several at once with a result each, declines one with a reason', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const made = await t.sandbox.inject({
      method: 'POST',
      url: '/v1/partner/sandbox/offers',
      headers: { 'x-api-key': key.key },
      payload: { count: 3 },
    });
    expect(made.statusCode, made.body).toBe(201);
    const [a, b, c] = made.json().items as Array<{ id: string; orderCode: string }>;

    const table = await run(user, ['offers', '--key', key.id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+ORDER\s+STATUS\s+PAYMENT\s+COD\s+AREA\s+EXPIRES\s+REASON/);
    for (const o of [a, b, c]) expect(table.stdout).toMatch(new RegExp(`^${o.id}\\s+${o.orderCode}\\s+PENDING`, 'm'));
    const pending = await runJson<{ items: unknown[]; total: number }>(user, ['offers', '--status', 'pending', '--key', key.id]);
    expect(pending.total).toBe(3);

    // Each id on its own: two accepted, an unknown one refused in its own result, so the call exits 1.
    const unknown = `ofr_${'A'.repeat(24)}`;
    const accepted = await run(user, ['offers', 'accept', a.id, b.id, unknown, '--key', key.id]);
    expect(accepted.code).toBe(1);
    expect(accepted.stdout).toMatch(new RegExp(`^${a.id}\\s+${a.orderCode}\\s+ACCEPTED$`, 'm'));
    expect(accepted.stdout).toMatch(new RegExp(`^${b.id}\\s+${b.orderCode}\\s+ACCEPTED$`, 'm'));
    expect(accepted.stdout).toMatch(new RegExp(`^${unknown}\\s+-\\s+.*\\(ERR_NOT_FOUND\\)$`, 'm'));
    expect(accepted.stderr).toContain('1 of 3 offers not accepted');
    const order = await runJson<{ code: string }>(user, ['orders', 'get', a.orderCode, '--key', key.id]);
    expect(order.code).toBe(a.orderCode);

    // OTHER needs a note: the API's field error, in plain words.
    const noNote = await run(user, ['offers', 'decline', c.id, '--reason', 'other', '--key', key.id]);
    expect(noNote.code).toBe(1);
    expect(noNote.stderr).toMatch(/\(ERR_VALIDATION, HTTP 400\)/);
    expect(noNote.stderr).toMatch(/^ {2}note: /m);
    const badReason = await run(user, ['offers', 'decline', c.id, '--reason', 'tired', '--key', key.id]);
    expect(badReason.code).toBe(2);
    expect(badReason.stderr).toContain('--reason must be one of NO_CAPACITY, OUT_OF_AREA, TIME_WINDOW, OTHER');

    const declined = await run(user, [
      'offers',
      'decline',
      c.id,
      '--reason',
      'no_capacity',
      '--note',
      'No van tonight',
      '--key',
      key.id,
    ]);
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stdout.trim()).toBe(`Declined ${c.id} (${c.orderCode}): NO_CAPACITY`);
    // A decided offer is closed: 409 with its status.
    const again = await run(user, ['offers', 'accept', c.id, '--key', key.id]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/\(ERR_OFFER_CLOSED\)$/m);

    const history = await runJson<{ items: Array<{ id: string; status: string; note: string | null }> }>(user, [
      'offers',
      '--key',
      key.id,
    ]);
    expect(Object.fromEntries(history.items.map((o) => [o.id, o.status]))).toEqual({
      [a.id]: 'ACCEPTED',
      [b.id]: 'ACCEPTED',
      [c.id]: 'DECLINED',
    });
  });
});
