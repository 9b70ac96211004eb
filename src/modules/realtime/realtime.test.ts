import type { AddressInfo } from 'node:net';
import { createAdapter } from '@socket.io/redis-adapter';
import type { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createSecondApp, createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { duplicateRedis } from '../../redis.js';
import { signAccessToken } from '../auth/tokens.js';
import { emitPartial } from './realtime.test-helpers.js';

function urlOf(t: TestApp, listener: 'live' | 'sandbox' = 'live'): string {
  const { port } = t[listener].server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/realtime`;
}

function open(url: string, token?: string): Socket {
  return connect(url, {
    auth: token === undefined ? {} : { token },
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
  });
}

function connected(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (err) => reject(err));
  });
}

/** The refusal of a handshake: the code as the error's message, the HTTP API's envelope as its data. */
function refused(socket: Socket): Promise<{ message: string; data: unknown }> {
  return new Promise((resolve, reject) => {
    socket.once('connect', () => reject(new Error('connected but should have been refused')));
    socket.once('connect_error', (err) => resolve({ message: err.message, data: (err as Error & { data?: unknown }).data }));
  });
}

const refusal = (code: 'ERR_UNAUTHORIZED' | 'ERR_FORBIDDEN') => ({
  message: code,
  data: { statusCode: code === 'ERR_UNAUTHORIZED' ? 401 : 403, code, message: expect.any(String) },
});

function collect(socket: Socket, event: string): unknown[] {
  const got: unknown[] = [];
  socket.on(event, (payload) => got.push(payload));
  return got;
}

const order = (code: string) => ({
  code,
  status: 'EN_ROUTE',
  customer: { name: 'Aysel', phone: '+994501112233', address: { street: 'Nizami 1', details: null, lat: null, lng: null } },
});

describe('realtime channel /realtime', () => {
  let t: TestApp;
  const sockets: Socket[] = [];
  const track = (s: Socket) => {
    sockets.push(s);
    return s;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await t.close();
  });

  it('accepts a valid partner access token', async () => {
    const partner = await createPartner(t.ctx);
    const socket = track(open(urlOf(t), partner.token));
    await connected(socket);
    expect(socket.connected).toBe(true);
  });

  it('refuses a missing token with ERR_UNAUTHORIZED', async () => {
    expect(await refused(track(open(urlOf(t))))).toEqual(refusal('ERR_UNAUTHORIZED'));
  });

  it('refuses a forged token with ERR_UNAUTHORIZED', async () => {
    const forged = await signAccessToken(new TextEncoder().encode('y'.repeat(48)), t.clock, {
      userId: '00000000-0000-4000-8000-000000000000',
      role: 'PARTNER',
      partnerId: '00000000-0000-4000-8000-000000000001',
    });
    expect(await refused(track(open(urlOf(t), forged)))).toEqual(refusal('ERR_UNAUTHORIZED'));
  });

  it('refuses an expired token with ERR_UNAUTHORIZED', async () => {
    const partner = await createPartner(t.ctx);
    const past = { nowMs: () => t.clock.nowMs() - 16 * 60_000, now: () => new Date(t.clock.nowMs() - 16 * 60_000) };
    const expired = await signAccessToken(t.ctx.secrets.jwtKey, past, {
      userId: partner.userId,
      role: 'PARTNER',
      partnerId: partner.id,
    });
    expect(await refused(track(open(urlOf(t), expired)))).toEqual(refusal('ERR_UNAUTHORIZED'));
  });

  it('refuses a customer account with ERR_FORBIDDEN', async () => {
    const customer = await createUser(t.ctx, 'CUSTOMER');
    expect(await refused(track(open(urlOf(t), customer.token)))).toEqual(refusal('ERR_FORBIDDEN'));
  });

  it("sends a partner its own keys' order updates, never another partner's; customer only with orders:pii", async () => {
    const a = await createPartner(t.ctx);
    const b = await createPartner(t.ctx);
    const admin = await createUser(t.ctx, 'ADMIN');
    const aPii = await createKey(t.ctx, a.id, { scopes: ['orders:read', 'orders:pii'] });
    const aPlain = await createKey(t.ctx, a.id, { scopes: ['orders:read'] });
    const sa = track(open(urlOf(t), a.token));
    const sb = track(open(urlOf(t, 'sandbox'), b.token));
    const sAdmin = track(open(urlOf(t), admin.token));
    await Promise.all([connected(sa), connected(sb), connected(sAdmin)]);
    const gotA = collect(sa, 'order.updated');
    const gotB = collect(sb, 'order.updated');
    const gotAdmin = collect(sAdmin, 'order.updated');

    emitPartial(t.ctx.events, 'outbox.processed', [
      { type: 'order.status_changed', orderId: 'o1', assignedKeyId: aPii.id, data: { order: order('ORD-1') } },
      { type: 'order.delivered', orderId: 'o1', assignedKeyId: aPii.id, data: { order: order('ORD-1') } },
      { type: 'order.status_changed', orderId: 'o2', assignedKeyId: aPlain.id, data: { order: order('ORD-2') } },
      { type: 'order.placed', orderId: 'o3', assignedKeyId: null, data: { order: order('ORD-3') } },
      { type: 'batch.completed', orderId: null, assignedKeyId: null, data: { batch: { code: 'B1' } } },
    ]);
    await waitFor(() => gotA.length === 2 && gotAdmin.length === 3);
    await new Promise((r) => setTimeout(r, 100));
    expect(gotA).toEqual([{ order: order('ORD-1') }, { order: { ...order('ORD-2'), customer: null } }]);
    expect(gotAdmin.map((e) => (e as { order: { code: string } }).order.code)).toEqual(['ORD-1', 'ORD-2', 'ORD-3']);
    expect(gotB).toEqual([]);
  });

  it('sends delivery updates to the partner owning the webhook only', async () => {
    const a = await createPartner(t.ctx);
    const b = await createPartner(t.ctx);
    const sa = track(open(urlOf(t), a.token));
    const sb = track(open(urlOf(t), b.token));
    await Promise.all([connected(sa), connected(sb)]);
    const gotA = collect(sa, 'delivery.updated');
    const gotB = collect(sb, 'delivery.updated');
    const delivery = { id: 'd1', webhookId: 'w1', event: 'ping', status: 'DELIVERED', attempts: 1 };
    emitPartial(t.ctx.events, 'delivery.updated', { partnerId: a.id, delivery });
    await waitFor(() => gotA.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(gotA).toEqual([{ delivery }]);
    expect(gotB).toEqual([]);
  });

  it('sends each update once to every connection, on both listeners, in the order emitted', async () => {
    const a = await createPartner(t.ctx);
    const onLive = track(open(urlOf(t), a.token));
    const onSandbox = track(open(urlOf(t, 'sandbox'), a.token));
    await Promise.all([connected(onLive), connected(onSandbox)]);
    const gotLive = collect(onLive, 'delivery.updated');
    const gotSandbox = collect(onSandbox, 'delivery.updated');
    // Emitted in one turn of the event loop, so they travel as one batch (with Redis: through the adapter too).
    for (let i = 0; i < 300; i++) emitPartial(t.ctx.events, 'delivery.updated', { partnerId: a.id, delivery: { id: `d${i}` } });
    await waitFor(() => gotLive.length >= 300 && gotSandbox.length >= 300);
    await new Promise((r) => setTimeout(r, 150));
    const expected = Array.from({ length: 300 }, (_, i) => ({ delivery: { id: `d${i}` } }));
    expect(gotLive).toEqual(expected);
    expect(gotSandbox).toEqual(expected);
  });

  it('ends a connection when its token expires', async () => {
    const partner = await createPartner(t.ctx);
    const socket = track(open(urlOf(t), partner.token));
    await connected(socket);
    const expired = new Promise<string>((resolve) => socket.once('session.expired', (p) => resolve(p.code)));
    const closed = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
    t.clock.advance(15 * 60 + 1);
    expect(await expired).toBe('ERR_UNAUTHORIZED');
    expect(await closed).toBe('io server disconnect');
  });
});

describe.skipIf(!process.env.REDIS_URL || !process.env.DATABASE_URL)('realtime across processes (Redis adapter)', () => {
  it('publishes nothing for a room nobody is in, anywhere; a room gets updates once somebody joins it', async () => {
    const first = await createTestApp();
    const second = await createSecondApp(first);
    // Everything the hubs publish on the channel, as a stranger subscribed to it sees it.
    const sub = duplicateRedis(first.ctx.redis as Redis, first.ctx.log, 'witness-sub', { subscriber: true });
    let published = 0;
    sub.on('pmessageBuffer', () => published++);
    await sub.psubscribe(`${first.ctx.config.redisKeyPrefix}:realtime*`);
    try {
      await first.live.listen({ port: 0, host: '127.0.0.1' });
      await second.live.listen({ port: 0, host: '127.0.0.1' });
      const partner = await createPartner(first.ctx);
      const admin = await createUser(first.ctx, 'ADMIN');
      const adminSocket = open(urlOf(first), admin.token);
      await connected(adminSocket);
      const adminGot = collect(adminSocket, 'delivery.updated');
      // The admin room's first socket is announced to the other processes: one message.
      await waitFor(() => published >= 1);

      // Nobody in the partner's room: its updates are not published (nor emitted); the admins' are.
      const before = published;
      for (let n = 0; n < 50; n++) {
        emitPartial(first.ctx.events, 'delivery.updated', { partnerId: partner.id, delivery: { id: `unwatched-${n}` } });
      }
      await new Promise((r) => setImmediate(r));
      // A marker for a room with somebody in it, published after them (Redis keeps the order).
      emitPartial(first.ctx.events, 'webhook.updated', { partnerId: partner.id, webhook: { id: 'unwatched' } });
      emitPartial(first.ctx.events, 'outbox.processed', [
        { type: 'order.status_changed', assignedKeyId: null, data: { order: order('ORD-MARKER') } },
      ]);
      const adminOrders = collect(adminSocket, 'order.updated');
      await waitFor(() => adminOrders.length === 1 && published > before);
      expect(published - before).toBe(1);
      expect(adminGot).toEqual([]);

      // Somebody joins the partner's room on the other process: updates made here reach them.
      const socket = open(urlOf(second), partner.token);
      await connected(socket);
      const got = collect(socket, 'delivery.updated');
      for (let n = 0; got.length === 0; n++) {
        if (n === 100) throw new Error('no update reached the new socket in 10 s');
        emitPartial(first.ctx.events, 'delivery.updated', { partnerId: partner.id, delivery: { id: `probe-${n}` } });
        await new Promise((r) => setTimeout(r, 100));
      }
      socket.disconnect();
      adminSocket.disconnect();
    } finally {
      await sub.quit();
      await second.close();
      await first.close();
    }
  });

  it('an update produced through one app instance reaches a client connected to another', async () => {
    const first = await createTestApp();
    const second = await createSecondApp(first);
    try {
      await first.live.listen({ port: 0, host: '127.0.0.1' });
      await second.live.listen({ port: 0, host: '127.0.0.1' });
      const partner = await createPartner(first.ctx);
      const socket = open(urlOf(second), partner.token);
      await connected(socket);
      const got = collect(socket, 'delivery.updated');
      // The adapters subscribe on Redis asynchronously: send probes until one crosses, so the test does not
      // depend on how long that takes on a loaded machine.
      for (let n = 0; got.length === 0; n++) {
        if (n === 100) throw new Error('no probe crossed the Redis adapter in 10 s');
        emitPartial(first.ctx.events, 'delivery.updated', { partnerId: partner.id, delivery: { id: `probe-${n}` } });
        await new Promise((r) => setTimeout(r, 100));
      }
      // A probe still on its way may arrive after this point: count only the real update.
      const updates = () => got.filter((e) => !(e as { delivery: { id: string } }).delivery.id.startsWith('probe-'));
      emitPartial(first.ctx.events, 'delivery.updated', { partnerId: partner.id, delivery: { id: 'd-x' } });
      await waitFor(() => updates().length === 1);
      await new Promise((r) => setTimeout(r, 150));
      expect(updates()).toEqual([{ delivery: { id: 'd-x' } }]);

      // A process of another version publishing something else on the channel is ignored (no throw
      // inside the adapter's handler, which would be an unhandled rejection), and updates still flow.
      const stranger = new Server();
      const pub = duplicateRedis(first.ctx.redis as Redis, first.ctx.log, 'stranger-pub');
      const sub = duplicateRedis(first.ctx.redis as Redis, first.ctx.log, 'stranger-sub', { subscriber: true });
      try {
        // Connections without an offline queue refuse commands until they are up.
        await waitFor(() => pub.status === 'ready' && sub.status === 'ready');
        stranger.adapter(createAdapter(pub, sub, { key: `${first.ctx.config.redisKeyPrefix}:realtime` }));
        for (const odd of [null, 'text', { hub: 'other' }, { hub: 'other', messages: 'nope' }]) {
          stranger.of('/realtime').serverSideEmit('realtime.batch', odd);
        }
        emitPartial(first.ctx.events, 'delivery.updated', { partnerId: partner.id, delivery: { id: 'd-y' } });
        await waitFor(() => updates().length === 2);
        expect(updates()).toEqual([{ delivery: { id: 'd-x' } }, { delivery: { id: 'd-y' } }]);
      } finally {
        // (never attached to an HTTP server, so there is nothing for stranger.close() to close)
        await pub.quit();
        await sub.quit();
      }
      socket.disconnect();
    } finally {
      await second.close();
      await first.close();
    }
  });
});
