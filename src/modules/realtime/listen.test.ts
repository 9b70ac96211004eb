import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createSecondApp, createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { platformMove, rotateKey, sandboxSetup, testOrder, waitForEvents } from '../sandbox/sandbox.test-helpers.js';
import { ALL_EVENTS, devAuth } from '../webhooks/webhooks.test-helpers.js';
import { openRealtime } from './realtime.test-helpers.js';

const WORKER = { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 };

interface ListenEvent {
  apiKeyId: string;
  event: { id: string; type: string; environment: string; data: { order?: { code: string; customer: unknown } } };
}
type Answer = { subscription: { apiKeyId: string; environment: string; events: string[] } } | { error: Record<string, unknown> };

function subscribe(socket: Socket, body: unknown): Promise<Answer> {
  return socket.timeout(10_000).emitWithAck('listen.subscribe', body);
}

function collect(socket: Socket): ListenEvent[] {
  const got: ListenEvent[] = [];
  socket.on('listen.event', (payload: ListenEvent) => got.push(payload));
  return got;
}

/** How many times the listen fan-out read the keys that may see a batch (its first and only read). */
function countListenReads(t: TestApp): () => number {
  const spy = vi.spyOn(t.ctx.db, 'query');
  onTestFinished(() => spy.mockRestore());
  return () =>
    spy.mock.calls.filter(([sql]) => String(sql).includes('SELECT k.id, k.environment, k.scopes, k.receives_all_orders')).length;
}

describe('realtime listen sessions (listen.subscribe → listen.event)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let worker: Worker;

  beforeAll(async () => {
    t = await createTestApp();
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    receiver = await WebhookReceiver.start();
    worker = startWorker(t.ctx, WORKER);
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });

  it('reads and builds nothing while nobody listens; a session makes the fan-out build its events', async () => {
    const reads = countListenReads(t);
    const s = await sandboxSetup(t, receiver);
    // A partner user connected without a listen session is no listener either.
    await openRealtime(t, s.partner.token);
    const quiet = await testOrder(t, s.key, 'PACKED');
    await waitFor(() => receiver.requestsTo(s.path).some((r) => r.body.includes(quiet.code)));
    expect(reads()).toBe(0);

    const socket = await openRealtime(t, s.partner.token);
    const got = collect(socket);
    expect(await subscribe(socket, { apiKeyId: s.key.id })).toEqual({
      subscription: {
        apiKeyId: s.key.id,
        environment: 'sandbox',
        // Every kind the key may receive: the order kinds, then the offers made to it.
        events: [...ALL_EVENTS, 'offer.created', 'offer.expired', 'offer.withdrawn'],
      },
    });
    const heard = await testOrder(t, s.key, 'PACKED');
    await waitFor(() => got.some((e) => e.event.data.order?.code === heard.code));
    expect(reads()).toBeGreaterThan(0);
    expect(got.every((e) => e.event.data.order?.code === heard.code)).toBe(true);
  });

  it('sends the key’s events with exactly the body its webhook gets', async () => {
    const s = await sandboxSetup(t, receiver);
    const socket = await openRealtime(t, s.partner.token);
    const got = collect(socket);
    await subscribe(socket, { apiKeyId: s.key.id });
    const order = await testOrder(t, s.key, 'PACKED');
    expect((await platformMove(t, s.key, order.code, 'CANCELLED')).statusCode).toBe(200);

    await waitFor(() => got.length >= 4);
    expect(got.map((e) => e.event.type)).toEqual([
      'order.placed',
      'order.assigned_to_partner',
      'order.status_changed',
      'order.cancelled',
    ]);
    const delivered = await waitForEvents(
      receiver,
      s.path,
      got.map((e) => e.event.id),
    );
    expect(delivered).toHaveLength(4);
    for (const { apiKeyId, event } of got) {
      expect(apiKeyId).toBe(s.key.id);
      const body = receiver.requestsTo(s.path).find((r) => r.body.includes(event.id))?.body;
      expect(JSON.stringify(event)).toBe(body);
    }
  });

  it('sends only the kinds asked for, of the orders the key sees, as the key sees them (customer only with orders:pii)', async () => {
    const a = await createPartner(t.ctx);
    const plain = await sandboxSetup(t, null, { partner: a, scopes: ['orders:read', 'logistics:write'] });
    const sibling = await sandboxSetup(t, null, { partner: a });
    const stranger = await sandboxSetup(t, null);
    const socket = await openRealtime(t, a.token);
    const got = collect(socket);
    expect(await subscribe(socket, { apiKeyId: plain.key.id, events: ['order.cancelled'] })).toMatchObject({
      subscription: { events: ['order.cancelled'] },
    });

    for (const other of [sibling, stranger]) {
      const o = await testOrder(t, other.key, 'PACKED');
      expect((await platformMove(t, other.key, o.code, 'CANCELLED')).statusCode).toBe(200);
    }
    const kept = await testOrder(t, plain.key, 'PACKED');
    expect((await platformMove(t, plain.key, kept.code, 'SCANNED_TO_VAN')).statusCode).toBe(200);
    const cancelled = await testOrder(t, plain.key, 'PACKED');
    expect((await platformMove(t, plain.key, cancelled.code, 'CANCELLED')).statusCode).toBe(200);

    // Batches are published in fan-out order: once this one is here, every earlier one was handled.
    await waitFor(() => got.length >= 1);
    expect(got).toHaveLength(1);
    expect(got[0].event).toMatchObject({ type: 'order.cancelled', environment: 'sandbox' });
    expect(got[0].event.data.order).toMatchObject({ code: cancelled.code, customer: null });
  });

  it('stops sending after listen.unsubscribe', async () => {
    const s = await sandboxSetup(t, receiver);
    const socket = await openRealtime(t, s.partner.token);
    const got = collect(socket);
    await subscribe(socket, { apiKeyId: s.key.id, events: ['order.assigned_to_partner'] });
    const first = await testOrder(t, s.key, 'PACKED');
    await waitFor(() => got.length === 1);
    expect(await socket.timeout(10_000).emitWithAck('listen.unsubscribe', { apiKeyId: s.key.id })).toEqual({
      unsubscribed: s.key.id,
    });
    const second = await testOrder(t, s.key, 'PACKED');
    // Its webhook got it, so the fan-out has been through it.
    await waitFor(() => receiver.requestsTo(s.path).some((r) => r.body.includes(second.code)));
    await new Promise((r) => setImmediate(r));
    expect(got.map((e) => e.event.data.order?.code)).toEqual([first.code]);
  });

  it('refuses another partner’s key, a revoked or rotated key, bad input and non-partner accounts, with the API’s error envelope', async () => {
    const a = await createPartner(t.ctx);
    const b = await createPartner(t.ctx);
    const ownKey = await createKey(t.ctx, a.id, { environment: 'SANDBOX' });
    const othersKey = await createKey(t.ctx, b.id);
    const revoked = await createKey(t.ctx, a.id);
    const revoke = await t.live.inject({
      method: 'DELETE',
      url: `/v1/developer/keys/${revoked.id}`,
      headers: await devAuth(t, a),
    });
    expect(revoke.statusCode).toBe(200);
    const rotated = await createKey(t.ctx, a.id);
    const successor = await rotateKey(t, { partner: a, key: rotated });

    const socket = await openRealtime(t, a.token);
    const refused = (code: string, statusCode: number) => ({ error: { statusCode, code, message: expect.any(String) } });
    expect(await subscribe(socket, { apiKeyId: othersKey.id })).toEqual(refused('ERR_NOT_FOUND', 404));
    expect(await subscribe(socket, { apiKeyId: revoked.id })).toEqual(refused('ERR_API_KEY_REVOKED', 401));
    const onRotated = await subscribe(socket, { apiKeyId: rotated.id });
    expect(onRotated).toEqual(refused('ERR_API_KEY_REVOKED', 401));
    expect(JSON.stringify(onRotated)).toContain(successor.id);
    expect(await subscribe(socket, { apiKeyId: 'nope' })).toMatchObject({
      error: { statusCode: 400, code: 'ERR_VALIDATION', details: [{ field: 'apiKeyId' }] },
    });
    expect(
      await subscribe(socket, { apiKeyId: ownKey.id, events: ['order.placed', 'order.lost', 'order.placed'] }),
    ).toMatchObject({
      error: { code: 'ERR_VALIDATION', details: [{ field: 'events.1' }, { field: 'events.2' }] },
    });
    expect(await subscribe(socket, { apiKeyId: ownKey.id, events: [] })).toMatchObject({ error: { code: 'ERR_VALIDATION' } });
    expect(await socket.timeout(10_000).emitWithAck('listen.unsubscribe', { apiKeyId: 5 })).toMatchObject({
      error: { statusCode: 400, code: 'ERR_VALIDATION', details: [{ field: 'apiKeyId' }] },
    });

    const admin = await createUser(t.ctx, 'ADMIN');
    const adminSocket = await openRealtime(t, admin.token);
    expect(await subscribe(adminSocket, { apiKeyId: ownKey.id })).toEqual(refused('ERR_FORBIDDEN', 403));
  });
});

describe.skipIf(!process.env.REDIS_URL || !process.env.DATABASE_URL)('realtime listen sessions across processes', () => {
  it('a session on one process gets the events the worker of another process fans out', async () => {
    const first = await createTestApp();
    onTestFinished(() => first.close());
    const second = await createSecondApp(first);
    onTestFinished(() => second.close());
    await second.live.listen({ port: 0, host: '127.0.0.1' });
    // Only the first process fans out; the session is on the second.
    const worker = startWorker(first.ctx, WORKER);
    onTestFinished(() => worker.stop());
    const reads = countListenReads(first);

    const s = await sandboxSetup(first, null);
    const socket = await openRealtime(second, s.partner.token);
    const got = collect(socket);
    await subscribe(socket, { apiKeyId: s.key.id, events: ['order.assigned_to_partner'] });
    // The first process learns of the session through Redis: make orders until one's event crosses.
    const codes: string[] = [];
    await waitFor(async () => {
      codes.push((await testOrder(first, s.key, 'PACKED')).code);
      return got.length > 0;
    }, 20_000);
    expect(reads()).toBeGreaterThan(0);
    const order = await testOrder(first, s.key, 'PACKED');
    await waitFor(() => got.some((e) => e.event.data.order?.code === order.code));
    // Each once, and only the key's own.
    const heard = got.map((e) => e.event.data.order?.code);
    expect(new Set(heard).size).toBe(heard.length);
    expect(heard.every((code) => code !== undefined && [...codes, order.code].includes(code))).toBe(true);
    expect(got.every((e) => e.apiKeyId === s.key.id && e.event.type === 'order.assigned_to_partner')).toBe(true);
  });
});
