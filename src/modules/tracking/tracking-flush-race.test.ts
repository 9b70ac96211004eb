/**
 * A tracking read racing the flush that stores the order's points: held (test/gated-db.ts) inside the
 * flush's transaction, after the buffer has handed the points over and before they are committed, the
 * read still shows them (the flush's in-flight data), and after the commit it shows them from the
 * database. On a PostgreSQL server only: the embedded database has one connection, which the held
 * flush keeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { GatedDb } from '../../../test/gated-db.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { orderFor } from '../orders/orders.test-helpers.js';

let t: TestApp;
let gated: GatedDb;
beforeAll(async () => {
  if (!process.env.DATABASE_URL) return;
  t = await createTestApp({
    wrapDb: (db) => {
      gated = new GatedDb(db);
      return gated;
    },
  });
});
afterAll(() => t?.close());

describe.skipIf(!process.env.DATABASE_URL)('a tracking read during a flush', () => {
  it('shows the points the flush is writing, before and after its commit', async () => {
    const admin = (await createUser(t.ctx, 'ADMIN')).auth;
    const partner = await createPartner(t.ctx);
    const key = await createKey(t.ctx, partner.id);
    const code = await orderFor(t, admin, key.id, 'EN_ROUTE');
    const at = t.clock.now().toISOString();
    const pause = gated.pauseBefore(/INSERT INTO order_tracking/);
    const ping = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/locations`,
      headers: key.headers,
      payload: { points: [{ lat: 40.5, lng: 49.9, accuracyM: 3, at }] },
    });
    expect(ping.statusCode, ping.body).toBe(202);
    const flushed = t.ctx.tracking.flushAll();
    await pause.reached;
    const read = () => t.live.inject({ method: 'GET', url: `/v1/partner/orders/${code}/tracking`, headers: key.headers });
    const during = await read();
    expect(during.statusCode).toBe(200);
    expect(during.json()).toMatchObject({
      location: { lat: 40.5, lng: 49.9, accuracyM: 3, at },
      trail: [{ lat: 40.5, lng: 49.9, at }],
    });
    pause.release();
    await flushed;
    expect((await read()).json()).toMatchObject({
      location: { lat: 40.5, lng: 49.9, accuracyM: 3, at },
      trail: [{ lat: 40.5, lng: 49.9, at }],
    });
  });
});
