/**
 * Paging the request log at any size (docs/paging.md, "Request log"): the total counted up to 10,000
 * and said to be capped beyond, page numbers up to 10,000 requests deep, and the `startingAfter` cursor
 * for any depth, refused when it is not a request of the same list. The logs are written straight into
 * the table (request-log.test-helpers.ts); each test has its own partner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { seedLoggedRequests } from './request-log.test-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

interface Page {
  page: number;
  pageSize: number;
  total: number;
  totalCapped: boolean;
  nextStartingAfter: string | null;
  items: Array<{ id: string; apiKeyId: string; statusCode: number; createdAt: string }>;
}

async function list(partner: TestPartner, query: string): Promise<Page> {
  const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests?${query}`, headers: partner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Page;
}

async function refused(partner: TestPartner, query: string, field: string): Promise<void> {
  const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests?${query}`, headers: partner.auth });
  expectError(res, 400, 'ERR_VALIDATION');
  expect((res.json() as { details: Array<{ field: string }> }).details.map((d) => d.field)).toContain(field);
}

/** A partner with two keys and `count` logged requests, one a minute going back from now. */
async function loggedPartner(count: number) {
  const partner = await createPartner(t.ctx);
  const keys = [await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id)];
  const ids = await seedLoggedRequests(t.ctx.db, {
    partnerId: partner.id,
    keyIds: keys.map((k) => k.id),
    count,
    nowMs: t.clock.nowMs(),
    stepMs: 60_000,
  });
  return { partner, keys, ids };
}

describe('GET /v1/developer/requests at any size', () => {
  it('counts matching requests up to 10,000, then answers 10,000 with totalCapped true', async () => {
    const { partner, ids } = await loggedPartner(10_050);
    const all = await list(partner, 'pageSize=50');
    expect(all).toMatchObject({ page: 1, pageSize: 50, total: 10_000, totalCapped: true, nextStartingAfter: ids[49] });
    expect(all.items.map((r) => r.id)).toEqual(ids.slice(0, 50));
    // Every 50th is a 503: 201 of them, counted exactly.
    const errors = await list(partner, 'status=503&pageSize=50');
    expect(errors).toMatchObject({ total: 201, totalCapped: false });
    const none = await list(partner, 'status=201');
    expect(none).toEqual({ page: 1, pageSize: 20, total: 0, totalCapped: false, nextStartingAfter: null, items: [] });
  });

  it('pages by number while page × pageSize is at most 10,000, and refuses deeper pages naming page', async () => {
    const { partner, ids } = await loggedPartner(10_050);
    const deepest = await list(partner, 'page=200&pageSize=50');
    expect(deepest.items.map((r) => r.id)).toEqual(ids.slice(9_950, 10_000));
    expect(deepest.nextStartingAfter).toBe(ids[9_999]);
    const single = await list(partner, 'page=10000&pageSize=1');
    expect(single.items.map((r) => r.id)).toEqual([ids[9_999]]);
    await refused(partner, 'page=201&pageSize=50', 'page');
    await refused(partner, 'page=10000&pageSize=2', 'page');
    // Past the end of a short list: an empty page, not an error.
    const past = await list(partner, 'status=503&page=20&pageSize=50');
    expect(past).toMatchObject({ total: 201, items: [], nextStartingAfter: null });
  });

  it('walks the whole list by cursor, newest first, with the same filters, to its end', async () => {
    const { partner, keys, ids } = await loggedPartner(10_050);
    // Beyond what page numbers reach: from the 10,000th request to the oldest.
    const tail: string[] = [];
    let cursor: string | null = ids[9_999];
    while (cursor !== null) {
      const page = await list(partner, `startingAfter=${cursor}&pageSize=20`);
      expect(page).toMatchObject({ page: 1, pageSize: 20, total: 10_000, totalCapped: true });
      tail.push(...page.items.map((r) => r.id));
      cursor = page.nextStartingAfter;
    }
    expect(tail).toEqual(ids.slice(10_000));

    // A filter: the second key's 404s (every 10th request, every other of them), page by page.
    const filter = `apiKeyId=${keys[1].id}&status=404`;
    const first = await list(partner, `${filter}&pageSize=50`);
    const walked = first.items.map((r) => r.id);
    cursor = first.nextStartingAfter;
    while (cursor !== null) {
      const page = await list(partner, `${filter}&startingAfter=${cursor}&pageSize=50`);
      for (const r of page.items) expect(r).toMatchObject({ apiKeyId: keys[1].id, statusCode: 404 });
      walked.push(...page.items.map((r) => r.id));
      cursor = page.nextStartingAfter;
    }
    const expected = ids.filter((_, i) => (i + 1) % 10 === 0 && (i + 1) % 50 !== 0 && (i + 1) % 2 === 1);
    expect(walked).toEqual(expected);
    expect(first.total).toBe(expected.length);
  });

  it('refuses a cursor that is not a request of this list with 400 ERR_VALIDATION naming startingAfter', async () => {
    const { partner, keys, ids } = await loggedPartner(200);
    const other = await loggedPartner(10);
    await refused(partner, 'startingAfter=abc', 'startingAfter');
    await refused(partner, `startingAfter=req_${'0'.repeat(32)}`, 'startingAfter');
    // Another partner's request.
    await refused(partner, `startingAfter=${other.ids[0]}`, 'startingAfter');
    // Ours, but not of this filter: the 1st request is a 200 of the second key.
    await refused(partner, `status=404&startingAfter=${ids[0]}`, 'startingAfter');
    await refused(partner, `apiKeyId=${keys[0].id}&startingAfter=${ids[0]}`, 'startingAfter');
    // A cursor with a page number.
    await refused(partner, `page=2&startingAfter=${ids[0]}`, 'page');
    // Filters keep their own validation beside a cursor.
    await refused(partner, `status=6xx&startingAfter=${ids[0]}`, 'status');
    // The same cursor with its own list is fine.
    const page = await list(partner, `apiKeyId=${keys[1].id}&startingAfter=${ids[0]}&pageSize=5`);
    expect(page.items.map((r) => r.id)).toEqual([ids[2], ids[4], ids[6], ids[8], ids[10]]);
  });
});
