/**
 * The request log's writer under pressure (docs/decisions-log.md, 'Request log' and 'Dependency faults'): the overload rule forced with a tiny
 * queue (no timing), a database outage and a refused batch (a database that fails request-log
 * statements on demand), and the live tail's cap with its one-second window frozen. Each test owns its
 * app, its partner and its keys; nothing is timed, only counted.
 */
import type { AddressInfo } from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestKey, type TestPartner } from '../../../test/factories.js';
import { createSecondApp, createTestApp, type TestApp, type TestAppOptions } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import type { Db } from '../../db/db.js';
import { AppError } from '../../errors.js';
import type { RequestLogged } from './request-log.types.js';

const apps: TestApp[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.disconnect();
  for (const t of apps.splice(0)) await t.close();
});

async function appWith(options: TestAppOptions): Promise<TestApp> {
  const t = await createTestApp(options);
  apps.push(t);
  return t;
}

/** A database whose request-log statements fail while `mode` says so; everything else goes through. */
function failingLog(): { wrap: (db: Db) => Db; mode: 'up' | 'down' | 'refusing' } {
  const control = {
    mode: 'up' as 'up' | 'down' | 'refusing',
    wrap: (db: Db): Db =>
      new Proxy(db, {
        get(target, prop, receiver) {
          // Rows are written by INSERT (embedded) or COPY (server): both are failed alike.
          const failure = (text: string) => {
            if (/request_log/.test(text) && control.mode === 'down') {
              return new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable');
            }
            if (/(INSERT INTO|COPY) request_log /.test(text) && control.mode === 'refusing') {
              return Object.assign(new Error('value too long for type'), { code: '22001' });
            }
            return null;
          };
          if (prop === 'query') {
            return (text: string, params?: readonly unknown[]) => {
              const err = failure(text);
              return err ? Promise.reject(err) : target.query(text, params);
            };
          }
          if (prop === 'copyFrom') {
            return (copy: string, data: string | readonly Buffer[]) => {
              const err = failure(copy);
              return err ? Promise.reject(err) : target.copyFrom(copy, data);
            };
          }
          const value = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
  };
  return control;
}

const get = (t: TestApp, key: TestKey, url: string) => t.live.inject({ method: 'GET', url, headers: key.headers });
const post = (t: TestApp, key: TestKey, url: string, payload: object) =>
  t.live.inject({ method: 'POST', url, headers: key.headers, payload });

async function logged(t: TestApp, partner: TestPartner) {
  const res = await t.live.inject({ method: 'GET', url: '/v1/developer/requests?pageSize=50', headers: partner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { total: number; items: Array<{ id: string; statusCode: number; method: string }> };
}

async function drops(t: TestApp, partner: TestPartner) {
  const res = await t.live.inject({ method: 'GET', url: '/v1/developer/requests/drops', headers: partner.auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    dropped: number;
    notStreamed: number;
    items: Array<{ minute: string; dropped: number; notStreamed: number }>;
  };
}

describe('overload: a full queue', () => {
  it('leaves successful reads out and counts them per minute; errors and writes are still logged', async () => {
    const t = await appWith({ requestLog: { maxQueued: 2, autoFlush: false } });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const minuteOf = (ms: number) => Math.floor(ms / 60_000) * 60_000;
    const firstMinute = minuteOf(t.clock.nowMs());
    const reads = [];
    for (let i = 0; i < 5; i++) reads.push(await get(t, key, '/v1/partner/me'));
    const error = await get(t, key, '/v1/partner/orders/NO-SUCH');
    const write = await post(t, key, '/v1/partner/orders/NO-SUCH/events', { type: 'PICKED_UP' });
    expect([...reads, error, write].map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 404, 404]);
    expect(t.ctx.requestLog.queued).toBe(4);

    await t.ctx.requestLog.flush();
    const page = await logged(t, partner);
    expect(page.items.map((r) => r.id)).toEqual([write, error, reads[1], reads[0]].map((r) => r.headers['x-request-id']));
    // Counted in the minute they happened (in two, when the requests straddled the end of a minute).
    const counted = await drops(t, partner);
    expect(counted).toMatchObject({ dropped: 3, notStreamed: 0 });
    expect(counted.items.reduce((n, m) => n + m.dropped, 0)).toBe(3);
    for (const m of counted.items) {
      expect(Date.parse(m.minute)).toBeGreaterThanOrEqual(firstMinute);
      expect(Date.parse(m.minute)).toBeLessThanOrEqual(minuteOf(t.clock.nowMs()));
      expect(Date.parse(m.minute) % 60_000).toBe(0);
    }

    // Another partner's drops are its own.
    const other = await createPartner(t.ctx);
    expect(await drops(t, other)).toMatchObject({ dropped: 0, notStreamed: 0, items: [] });
  });
});

describe('a full batch', () => {
  it('is written at once, without waiting for the next tick', async () => {
    // A tick an hour away: only a full batch can write these.
    const t = await appWith({ requestLog: { flushIntervalMs: 3_600_000, maxBatch: 4 } });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await get(t, key, `/v1/partner/me?n=${i}`));
    expect(t.ctx.requestLog.queued).toBe(3);
    reads.push(await get(t, key, '/v1/partner/me?n=3'));
    await waitFor(() => t.ctx.requestLog.queued === 0, { what: 'the full batch written' });
    const ids = reads.map((r) => r.headers['x-request-id']).reverse();
    await waitFor(async () => (await logged(t, partner)).items.map((r) => r.id).join() === ids.join(), {
      what: 'the four requests in the log',
    });
  });
});

describe('database faults', () => {
  it('keeps the queue through an outage without holding a request, and writes it all once the database is back', async () => {
    const db = failingLog();
    const t = await appWith({ wrapDb: db.wrap, requestLog: { autoFlush: false } });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    db.mode = 'down';
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await get(t, key, `/v1/partner/me?n=${i}`));
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    await expect(t.ctx.requestLog.flush()).rejects.toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    answers.push(await get(t, key, '/v1/partner/me?n=3'));
    await expect(t.ctx.requestLog.flush()).rejects.toMatchObject({ code: 'ERR_DEPENDENCY_UNAVAILABLE' });
    expect(t.ctx.requestLog.queued).toBe(4);

    db.mode = 'up';
    await t.ctx.requestLog.flush();
    expect((await logged(t, partner)).items.map((r) => r.id)).toEqual(answers.map((r) => r.headers['x-request-id']).reverse());
  });

  it('drops what no longer fits in memory during a long outage, errors included, and counts it', async () => {
    const db = failingLog();
    // Room for one or two small entries, not five.
    const t = await appWith({ wrapDb: db.wrap, requestLog: { autoFlush: false, maxQueuedBytes: 1_500 } });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    db.mode = 'down';
    for (let i = 0; i < 5; i++) expect((await get(t, key, '/v1/partner/orders/NO-SUCH')).statusCode).toBe(404);
    const kept = t.ctx.requestLog.queued;
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(kept).toBeLessThan(5);
    db.mode = 'up';
    await t.ctx.requestLog.flush();
    expect((await logged(t, partner)).total).toBe(kept);
    expect((await drops(t, partner)).dropped).toBe(5 - kept);
  });

  it('drops a batch the database refuses (counted), instead of retrying it ahead of everything else forever', async () => {
    const db = failingLog();
    const t = await appWith({ wrapDb: db.wrap, requestLog: { autoFlush: false } });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    db.mode = 'refusing';
    await get(t, key, '/v1/partner/me');
    await get(t, key, '/v1/partner/me');
    await expect(t.ctx.requestLog.flush()).rejects.toMatchObject({ code: '22001' });
    db.mode = 'up';
    const after = await get(t, key, '/v1/partner/me');
    await t.ctx.requestLog.flush();
    expect((await logged(t, partner)).items.map((r) => r.id)).toEqual([after.headers['x-request-id']]);
    expect((await drops(t, partner)).dropped).toBe(2);
  });
});

function realtimeUrl(t: TestApp): string {
  return `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}/realtime`;
}

/** A partner user's socket, connected; returns the request.logged messages it receives. */
async function watch(url: string, p: TestPartner): Promise<Array<{ request: Record<string, unknown> }>> {
  const s = connect(url, { auth: { token: p.token }, transports: ['websocket'], reconnection: false, forceNew: true });
  sockets.push(s);
  await new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });
  const got: Array<{ request: Record<string, unknown> }> = [];
  s.on('request.logged', (m) => got.push(m));
  return got;
}

/** Counts request.logged messages the recorder hands to the realtime hub, by partner. */
function countEmitted(t: TestApp): Map<string, number> {
  const emitted = new Map<string, number>();
  const count = (e: RequestLogged) => emitted.set(e.partnerId, (emitted.get(e.partnerId) ?? 0) + 1);
  t.ctx.events.on('request.logged', count);
  return emitted;
}

describe('live tail: request.logged on the realtime channel', () => {
  it('sends the summary to the partner’s users, at most 50 a second per partner, and counts the rest', async () => {
    let second = 1_000_000;
    const t = await appWith({ requestLog: { autoFlush: false, liveNowMs: () => second * 1000 } });
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    const partner = await createPartner(t.ctx);
    const other = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const otherKey = await createKey(t.ctx, other.id);
    const mine = await watch(realtimeUrl(t), partner);
    const theirs = await watch(realtimeUrl(t), other);
    const emitted = countEmitted(t);

    const first = await get(t, key, '/v1/partner/me?first=1');
    for (let i = 1; i < 60; i++) await get(t, key, '/v1/partner/me');
    for (let i = 0; i < 3; i++) await get(t, otherKey, '/v1/partner/me');
    // One frozen second: 50 sent for the partner, 10 counted; the other partner has a cap of its own.
    expect(emitted.get(partner.id)).toBe(50);
    expect(emitted.get(other.id)).toBe(3);
    await waitFor(() => mine.length === 50 && theirs.length === 3, { timeoutMs: 20_000, what: '53 messages' });
    expect(mine[0]).toEqual({
      request: {
        id: first.headers['x-request-id'],
        apiKeyId: key.id,
        environment: 'LIVE',
        method: 'GET',
        path: '/v1/partner/me',
        query: 'first=1',
        statusCode: 200,
        errorCode: null,
        durationMs: expect.any(Number),
        ip: '127.0.0.1',
        userAgent: 'lightMyRequest',
        idempotencyKey: null,
        createdAt: expect.any(String),
      },
    });
    expect(theirs.every((m) => m.request.apiKeyId === otherKey.id)).toBe(true);

    // The next second sends again.
    second++;
    for (let i = 0; i < 5; i++) await get(t, key, '/v1/partner/me');
    expect(emitted.get(partner.id)).toBe(55);
    await waitFor(() => mine.length === 55, { timeoutMs: 20_000, what: '55 messages' });

    // Every request is logged; the ones not sent live are counted.
    await t.ctx.requestLog.flush();
    expect((await logged(t, partner)).total).toBe(65);
    expect(await drops(t, partner)).toMatchObject({ dropped: 0, notStreamed: 10 });
    expect(await drops(t, other)).toMatchObject({ dropped: 0, notStreamed: 0 });
  });

  it('counts any one-second span, not clock seconds: a burst across a second boundary still gets 50', async () => {
    let nowMs = 1_000_000_900;
    const t = await appWith({ requestLog: { autoFlush: false, liveNowMs: () => nowMs } });
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const mine = await watch(realtimeUrl(t), partner);
    const emitted = countEmitted(t);

    for (let i = 0; i < 50; i++) await get(t, key, '/v1/partner/me');
    // 200 ms later, in the next clock second: the last second already holds 50.
    nowMs += 200;
    for (let i = 0; i < 10; i++) await get(t, key, '/v1/partner/me');
    expect(emitted.get(partner.id)).toBe(50);
    // A second after the first 50: room again.
    nowMs += 800;
    for (let i = 0; i < 5; i++) await get(t, key, '/v1/partner/me');
    expect(emitted.get(partner.id)).toBe(55);
    await waitFor(() => mine.length === 55, { timeoutMs: 20_000, what: '55 messages' });
    await t.ctx.requestLog.flush();
    expect(await drops(t, partner)).toMatchObject({ dropped: 0, notStreamed: 10 });
  });

  it('builds, sends and counts nothing for a partner none of whose users is connected', async () => {
    const t = await appWith({ requestLog: { autoFlush: false, liveNowMs: () => 0 } });
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    const partner = await createPartner(t.ctx);
    const watched = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    await watch(realtimeUrl(t), watched);
    const emitted = countEmitted(t);
    for (let i = 0; i < 60; i++) await get(t, key, '/v1/partner/me');
    expect(emitted.get(partner.id)).toBeUndefined();
    await t.ctx.requestLog.flush();
    expect((await logged(t, partner)).total).toBe(60);
    expect(await drops(t, partner)).toMatchObject({ dropped: 0, notStreamed: 0 });
  });

  it.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)(
    'reaches a user connected to another process (through Redis)',
    async () => {
      const a = await appWith({});
      const b = await createSecondApp(a);
      apps.push(b);
      await b.live.listen({ port: 0, host: '127.0.0.1' });
      const partner = await createPartner(a.ctx);
      const key = await createKey(a.ctx, partner.id);
      const got = await watch(realtimeUrl(b), partner);
      // Process A learns that the partner has a user within about a second: keep asking until it has.
      const ids = new Set<string>();
      await waitFor(
        async () => {
          ids.add((await get(a, key, '/v1/partner/me')).headers['x-request-id'] as string);
          return got.length > 0;
        },
        { timeoutMs: 20_000, what: 'a request.logged from the other process' },
      );
      expect(ids.has(got[0].request.id as string)).toBe(true);
    },
  );
});
