import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import type { Db, Queryable } from '../../db/db.js';
import { BatchedUsageRecorder } from './usage-recorder.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/**
 * The test database, with a hook in front of every transaction (the recorder writes in one) and one
 * told each statement's text.
 */
function gatedDb(before: () => Promise<void>, onQuery: (text: string, params?: readonly unknown[]) => void = () => {}): Db {
  const db = t.ctx.db;
  return {
    kind: db.kind,
    health: db.health,
    query: (text, params) => {
      onQuery(text, params);
      return db.query(text, params);
    },
    connect: () => db.connect(),
    copyFrom: (copy, data) => db.copyFrom(copy, data),
    withTimeout: () => db,
    listen: () => async () => {},
    close: async () => {},
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      await before();
      return db.tx(fn);
    },
  };
}

const silent = pino({ level: 'silent' });

describe('BatchedUsageRecorder', () => {
  it('keeps the counts of a failed flush and writes them with the next one', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    let fail = true;
    const recorder = new BatchedUsageRecorder(
      gatedDb(async () => {
        if (fail) throw new Error('database away');
      }),
      t.clock,
      silent,
    );
    recorder.record(key.id, 200, true);
    recorder.record(key.id, 404, true);
    await expect(recorder.flush()).rejects.toThrow('database away');
    // Nothing lost, and the failure does not wedge later flushes.
    expect((await recorder.series(key.id, 1))[0]).toMatchObject({ requests: 2, clientErrors: 1 });
    recorder.record(key.id, 503, true);
    fail = false;
    await recorder.flush();
    const rows = await t.ctx.db.query('SELECT requests, client_errors, server_errors FROM api_key_usage WHERE api_key_id = $1', [
      key.id,
    ]);
    expect(rows).toEqual([{ requests: 3, client_errors: 1, server_errors: 1 }]);
    expect((await recorder.series(key.id, 1))[0]).toMatchObject({ requests: 3, clientErrors: 1, serverErrors: 1 });
  });

  it('reads exactly while a flush is being written, and after it commits', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    let release: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const recorder = new BatchedUsageRecorder(
      gatedDb(() => gate),
      t.clock,
      silent,
    );
    recorder.record(key.id, 200, true);
    recorder.record(key.id, 200, true);
    expect((await recorder.series(key.id, 1))[0].requests).toBe(2); // snapshot taken (empty) + pending

    gate = new Promise((resolve) => {
      release = resolve;
    });
    const flushing = recorder.flush();
    await new Promise((r) => setImmediate(r)); // the flush has taken the batch and waits at the gate
    recorder.record(key.id, 500, true);
    // Served from the snapshot + the batch in flight + the new count (not awaited before the release:
    // should the snapshot have expired on a slow machine, the read queues behind the flush instead).
    const during = recorder.series(key.id, 1);
    release();
    expect((await during)[0]).toMatchObject({ requests: 3, serverErrors: 1 });
    await flushing;
    expect((await recorder.series(key.id, 1))[0]).toMatchObject({ requests: 3, serverErrors: 1 });
    await recorder.flush();
    expect((await recorder.series(key.id, 1, { fresh: true }))[0]).toMatchObject({ requests: 3, serverErrors: 1 });
    await recorder.stop();
  });

  it('writes a key’s last use at once, then on its timer at most once a minute; a flush asked for writes the latest', async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const stored = async () => {
      const [row] = await t.ctx.db.query<{ last_used_at: Date | null; requests: number | null }>(
        `SELECT k.last_used_at, (SELECT sum(requests)::int FROM api_key_usage u WHERE u.api_key_id = k.id) AS requests
           FROM api_keys k WHERE k.id = $1`,
        [key.id],
      );
      return { lastUsedMs: row.last_used_at?.getTime() ?? null, requests: row.requests ?? 0 };
    };
    const recorder = new BatchedUsageRecorder(t.ctx.db, t.clock, silent);
    recorder.start();
    try {
      // The test clock moves on with real time too: a use is stamped within [before, after] of its record.
      const use = () => {
        const before = t.clock.nowMs();
        recorder.record(key.id, 200, true);
        return { before, after: t.clock.nowMs() };
      };
      const within = (ms: number | null, at: { before: number; after: number }) =>
        ms !== null && ms >= at.before && ms <= at.after;

      const first = use();
      await waitFor(async () => (await stored()).requests === 1, { what: 'the first use flushed by the timer' });
      const firstStored = (await stored()).lastUsedMs;
      expect(within(firstStored, first)).toBe(true);

      // 10 s later: the timer writes the count, not the use (written less than a minute ago).
      t.clock.advance(10);
      const second = use();
      await waitFor(async () => (await stored()).requests === 2, { what: 'the second use counted by the timer' });
      expect((await stored()).lastUsedMs).toBe(firstStored);
      // A flush asked for (a route answering the key, shutdown) writes it.
      await recorder.flush();
      expect(within((await stored()).lastUsedMs, second)).toBe(true);

      // A minute after that write, the timer writes the use again.
      t.clock.advance(61);
      const third = use();
      await waitFor(async () => within((await stored()).lastUsedMs, third), {
        what: 'a use a minute later written by the timer',
      });
    } finally {
      await recorder.stop();
    }
  });

  it('renews the snapshots of keys that come due within a moment of each other in one read', async () => {
    const partner = await createPartner(t.ctx);
    const keys = [await createKey(t.ctx, partner.id), await createKey(t.ctx, partner.id)];
    // The keys of each read of the stored counters, in order.
    const reads: string[][] = [];
    // The snapshots' ages are read on a clock of the test's (real time in service), so that how long a
    // read takes on a busy machine cannot move when each snapshot comes due.
    let now = 1_000_000;
    const recorder = new BatchedUsageRecorder(
      gatedDb(
        async () => {},
        (text, params) => {
          if (text.includes('FROM api_key_usage')) reads.push([...(params?.[0] as string[])]);
        },
      ),
      t.clock,
      silent,
      { nowMs: () => now },
    );
    const [a, b] = keys;
    // B's snapshot is read 60 ms after A's, so it comes due 60 ms later.
    await recorder.series(a.id, 1);
    now += 60;
    await recorder.series(b.id, 1);
    const first = reads.length;
    // A comes due (2 s): it is served and its renewal gathers; B comes due 60 ms later and joins it.
    now += 1_940;
    await recorder.series(a.id, 1);
    await recorder.series(b.id, 1);
    now += 60;
    await recorder.series(a.id, 1);
    await recorder.series(b.id, 1);
    await waitFor(() => reads.length > first, { what: 'a renewal' });
    expect(reads[first].sort()).toEqual([a.id, b.id].sort());
    await recorder.stop();
  });

  it("shows another process's flushed counts once its snapshot is renewed, renewing it behind a served read", async () => {
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const here = new BatchedUsageRecorder(t.ctx.db, t.clock, silent);
    const there = new BatchedUsageRecorder(t.ctx.db, t.clock, silent);
    here.record(key.id, 200, true);
    expect((await here.series(key.id, 1))[0].requests).toBe(1);
    there.record(key.id, 200, true);
    there.record(key.id, 404, true);
    await there.flush();
    // Within the snapshot's life (about two seconds, served up to 3.5 s while renewed) the other
    // process's rows show; until then, this process's own count is exact.
    await waitFor(
      async () => {
        const [today] = await here.series(key.id, 1);
        expect(today.requests).toBeGreaterThanOrEqual(1);
        return today.requests === 3 && today.clientErrors === 1;
      },
      { what: "the other process's two requests in this process's series" },
    );
    await here.stop();
    await there.stop();
  });
});
