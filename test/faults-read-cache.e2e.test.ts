/**
 * The read cache's failure bounds (src/modules/orders/read-cache.ts, "Failure bounds"; docs/scale.md,
 * "Tenants") under real faults, two app instances on one database and one Redis: a change whose Redis
 * announcement fails in its own process still reaches the other process, through PostgreSQL, long before
 * the 60 s age bound; and a process whose PostgreSQL LISTEN is down serves nothing from its cache, then
 * starts afresh once it listens again. Server mode only (test/faults.test-helpers.ts).
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type Db, openDb } from '../src/db/db.js';
import { type Auth, orderFor } from '../src/modules/orders/orders.test-helpers.js';
import { createKey, createPartner, createUser, type TestKey } from './factories.js';
import { FaultProxy } from './fault-proxy.js';
import { databaseUrl, redisUrl, serverMode } from './faults.test-helpers.js';
import { createSecondApp, createTestApp, type TestApp } from './harness.js';
import { waitFor } from './wait.js';

async function read(app: TestApp, k: TestKey, code: string): Promise<Record<string, unknown>> {
  const res = await app.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}`, headers: k.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Changes an order behind the services' back (plain SQL): no process is told, so only an uncached read sees it. */
async function setArea(app: TestApp, code: string, area: string): Promise<void> {
  await app.ctx.db.query('UPDATE orders SET area = $2, updated_at = updated_at WHERE code = $1', [code, area]);
}

async function orderOfNewKey(app: TestApp): Promise<{ k: TestKey; code: string; admin: Auth }> {
  const admin = (await createUser(app.ctx, 'ADMIN')).auth;
  const k = await createKey(app.ctx, (await createPartner(app.ctx)).id, { scopes: ['orders:read', 'logistics:write'] });
  return { k, admin, code: await orderFor(app, admin, k.id, 'PACKED') };
}

describe.skipIf(!serverMode)('read cache under faults', () => {
  describe('a change whose Redis announcement fails', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await FaultProxy.startFor(redisUrl as string);
    });
    afterAll(() => proxy?.close());

    it('is seen by another process within seconds, through PostgreSQL, while the 60 s bound is far off', async () => {
      // A reaches Redis through the proxy, B directly: B keeps hearing Redis when A cannot reach it.
      const a = await createTestApp({ env: { REDIS_URL: proxy.url(redisUrl as string) } });
      onTestFinished(() => a.close());
      const b = await createSecondApp(a);
      onTestFinished(() => b.close());
      const { k, code } = await orderOfNewKey(a);
      expect(await read(b, k, code)).toMatchObject({ status: 'PACKED', area: 'Nəsimi' });
      await setArea(a, code, 'Yasamal');
      expect((await read(b, k, code)).area).toBe('Nəsimi'); // B serves it from its cache

      proxy.down();
      onTestFinished(() => proxy.pass());
      const res = await a.live.inject({
        method: 'POST',
        url: `/v1/partner/orders/${code}/events`,
        headers: { ...k.headers, 'content-type': 'application/json' },
        payload: { type: 'PICKED_UP' },
      });
      expect(res.statusCode, res.body).toBe(201);
      const picked = res.json();
      expect(picked).toMatchObject({ area: 'Yasamal' });
      expect(picked.status).not.toBe('PACKED');
      const answeredMs = Date.now();
      // The test clock does not move: only the notification can make B read the order again.
      await waitFor(async () => (await read(b, k, code)).status === picked.status, 5_000);
      expect(Date.now() - answeredMs).toBeLessThan(5_000);
      expect(await read(b, k, code)).toEqual(picked);
      // B never stopped hearing Redis, and caches again.
      expect(b.ctx.redisHealth.available).toBe(true);
      await setArea(a, code, 'Xətai');
      expect((await read(b, k, code)).area).toBe('Yasamal');
    });
  });

  describe("a process's PostgreSQL LISTEN down", () => {
    let proxy: FaultProxy;
    let listenDb: Db;
    beforeAll(async () => {
      proxy = await FaultProxy.startFor(databaseUrl as string);
    });
    afterAll(async () => {
      await listenDb?.close();
      await proxy?.close();
    });

    it('serves nothing from its cache while it is down, and starts afresh once it listens again', async () => {
      const a = await createTestApp();
      onTestFinished(() => a.close());
      // B's LISTEN connection goes through the proxy; its pool, and Redis, directly.
      const url = a.ctx.config.databaseUrl as string;
      listenDb = await openDb({ databaseUrl: proxy.url(url), dataDir: '', poolSize: 1 });
      const b = await createTestApp({
        db: { db: a.ctx.db, url },
        env: { REDIS_KEY_PREFIX: a.ctx.config.redisKeyPrefix },
        wrapDb: (db) => listeningThrough(db, listenDb),
      });
      onTestFinished(() => b.close());
      const { k, code } = await orderOfNewKey(a);
      expect((await read(b, k, code)).area).toBe('Nəsimi');
      await setArea(a, code, 'Yasamal');
      expect((await read(b, k, code)).area).toBe('Nəsimi'); // cached

      proxy.down();
      await waitFor(async () => (await read(b, k, code)).area === 'Yasamal', 5_000);
      // Not listening: every read goes to the database.
      for (const area of ['Xətai', 'Binəqədi']) {
        await setArea(a, code, area);
        expect((await read(b, k, code)).area).toBe(area);
      }

      proxy.pass();
      // Listening again: the first read of an unchanged order is from the database, the next from the cache.
      let area = 'Binəqədi';
      let n = 0;
      const stale: string[] = [];
      await waitFor(async () => {
        const first = (await read(b, k, code)).area as string;
        if (first !== area) stale.push(first);
        area = `Zone ${++n}`;
        await setArea(a, code, area);
        return (await read(b, k, code)).area !== area;
      }, 10_000);
      expect(stale).toEqual([]);
    });
  });
});

/** `db`, with its LISTEN connections opened by `listener` (through a fault proxy) instead. */
function listeningThrough(db: Db, listener: Db): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'listen') return listener.listen.bind(listener);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
