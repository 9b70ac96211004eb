/**
 * What the developer routes read back from the request log (docs/decisions-log.md, 'Request log'):
 * filters, paging, one request. The log is flushed by hand (the recorder's flush) instead of waiting for
 * its timer, except in the test of the timer itself.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner } from '../../../test/factories.js';
import type { TestApp } from '../../../test/harness.js';
import { setUpTestAppWithOperator } from '../../../test/test-app-per-file.js';
import { type Auth, orderFor } from '../orders/orders.test-helpers.js';
import { callAs, detailOf, listOf, partnerWithKey } from './request-log.test-helpers.js';

let t: TestApp;
let admin: Auth;
setUpTestAppWithOperator((app, operator) => ([t, admin] = [app, operator]));

describe('GET /v1/developer/requests', () => {
  it('shows requests within 5 seconds without anyone asking for a flush', async () => {
    const { partner, key } = await partnerWithKey(t);
    const res = await callAs(t, key, 'GET', '/v1/partner/me');
    const deadline = Date.now() + 30_000;
    let items: unknown[] = [];
    while (items.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      items = (await t.live.inject({ method: 'GET', url: '/v1/developer/requests', headers: partner.auth })).json().items;
    }
    expect(items).toEqual([expect.objectContaining({ id: res.headers['x-request-id'] })]);
  });

  it("lists only the partner's own keys' requests, newest first, and pages them", async () => {
    const { partner, key } = await partnerWithKey(t);
    const stranger = await partnerWithKey(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await callAs(t, key, 'GET', `/v1/partner/me?n=${i}`)).headers['x-request-id'] as string);
    await callAs(t, stranger.key, 'GET', '/v1/partner/me');
    const first = await listOf(t, partner, '?pageSize=2');
    expect(first).toMatchObject({ page: 1, pageSize: 2, total: 5 });
    expect(first.items.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    const last = await listOf(t, partner, '?pageSize=2&page=3');
    expect(last.items.map((r) => r.id)).toEqual([ids[0]]);
    expect((await listOf(t, partner, '?pageSize=2&page=4')).items).toEqual([]);
    // The other partner's key as a filter: nothing, not an error.
    expect((await listOf(t, partner, `?apiKeyId=${stranger.key.id}`)).total).toBe(0);
  });

  it('filters by key, status class, status, code, method, exact path, path prefix and time', async () => {
    const { partner, key } = await partnerWithKey(t);
    const second = await createKey(t.ctx, partner.id, { scopes: ['orders:read', 'logistics:write'] });
    const code = await orderFor(t, admin, key.id);
    const start = new Date(t.clock.nowMs()).toISOString();
    const a = await callAs(t, key, 'GET', `/v1/partner/orders/${code}`); // 200
    const b = await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, { payload: { type: 'PICKED_UP' } }); // 201
    const c = await callAs(t, key, 'POST', `/v1/partner/orders/${code}/events`, { payload: { type: 'PICKED_UP' } }); // 409
    const d = await callAs(t, second, 'GET', '/v1/partner/orders/NOPE'); // 404
    const e = await callAs(t, second, 'GET', '/v1/partner/me'); // 200
    t.clock.advance(60);
    const middle = new Date(t.clock.nowMs()).toISOString();
    t.clock.advance(60);
    const f = await callAs(t, second, 'POST', '/v1/partner/orders/NOPE/events', { payload: {} }); // 400
    expect([a, b, c, d, e, f].map((r) => r.statusCode)).toEqual([200, 201, 409, 404, 200, 400]);
    const id = (r: typeof a) => r.headers['x-request-id'];
    const ids = async (query: string) => (await listOf(t, partner, query)).items.map((r) => r.id);

    expect(await ids('')).toEqual([f, e, d, c, b, a].map(id));
    expect(await ids(`?apiKeyId=${second.id}`)).toEqual([f, e, d].map(id));
    expect(await ids('?status=2xx')).toEqual([e, b, a].map(id));
    expect(await ids('?status=4xx')).toEqual([f, d, c].map(id));
    expect(await ids('?status=5xx')).toEqual([]);
    expect(await ids('?status=201')).toEqual([id(b)]);
    expect(await ids('?status=200')).toEqual([e, a].map(id));
    expect(await ids(`?status=200&apiKeyId=${second.id}`)).toEqual([id(e)]);
    expect(await ids('?code=ERR_INVALID_TRANSITION')).toEqual([id(c)]);
    expect(await ids('?method=POST')).toEqual([f, c, b].map(id));
    expect(await ids('?method=GET')).toEqual([e, d, a].map(id));
    expect(await ids('?method=GET&status=2xx')).toEqual([e, a].map(id));
    expect(await ids(`?path=/v1/partner/orders/${code}`)).toEqual([id(a)]);
    expect(await ids(`?path=/v1/partner/orders/${code}*`)).toEqual([c, b, a].map(id));
    expect(await ids('?path=/v1/partner/orders/NOPE*&status=404')).toEqual([id(d)]);
    expect(await ids(`?since=${encodeURIComponent(middle)}`)).toEqual([id(f)]);
    expect(await ids(`?since=${encodeURIComponent(start)}&until=${encodeURIComponent(middle)}`)).toEqual([e, d, c, b, a].map(id));
    // A `%` or `_` in a prefix is a character, not a wildcard.
    expect(await ids('?path=/v1/partner/%25*')).toEqual([]);
  });

  it('answers bad filters with 400 ERR_VALIDATION naming the parameter', async () => {
    const partner = await createPartner(t.ctx);
    const cases: Array<[string, string]> = [
      ['?color=red', 'color'],
      ['?status=abc', 'status'],
      ['?status=2XX', 'status'],
      ['?status=99', 'status'],
      ['?status=4000', 'status'],
      ['?code=not-a-code', 'code'],
      ['?method=FETCH', 'method'],
      ['?path=orders', 'path'],
      ['?apiKeyId=nope', 'apiKeyId'],
      ['?since=yesterday', 'since'],
      ['?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['?page=0', 'page'],
      ['?page=10001', 'page'],
      ['?pageSize=0', 'pageSize'],
      ['?pageSize=51', 'pageSize'],
    ];
    for (const [query, field] of cases) {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests${query}`, headers: partner.auth });
      expectError(res, 400, 'ERR_VALIDATION');
      expect(
        res.json().details.map((d: { field: string }) => d.field),
        query,
      ).toContain(field);
    }
  });
});

describe('GET /v1/developer/requests/{id}', () => {
  // Another partner's request: test/auth-contract.test.ts, "another partner's resources".
  it('answers an unknown id and a malformed one with 404', async () => {
    const { partner, key } = await partnerWithKey(t);
    const res = await callAs(t, key, 'GET', '/v1/partner/me');
    const id = res.headers['x-request-id'] as string;
    for (const probe of [`req_${'0'.repeat(32)}`, `${id.slice(0, -1)}x`, 'nope', `${id}0`]) {
      expectError(await detailOf(t, partner, probe), 404, 'ERR_NOT_FOUND');
    }
  });
});
