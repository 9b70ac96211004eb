import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, createUser } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { startWorker, type Worker } from '../../worker/worker.js';
import { orderFor } from '../orders/orders.test-helpers.js';
import { openRealtime } from '../realtime/realtime.test-helpers.js';

let t: TestApp;
let worker: Worker;

beforeAll(async () => {
  t = await createTestApp();
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 });
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

function collect(socket: Socket, event: string): Array<Record<string, Record<string, unknown>>> {
  const got: Array<Record<string, Record<string, unknown>>> = [];
  socket.on(event, (payload) => got.push(payload));
  return got;
}

describe('payment realtime updates', () => {
  it('payment_intent.updated and settlement.updated reach the partner and admins, never another partner', async () => {
    const a = await createPartner(t.ctx);
    const b = await createPartner(t.ctx);
    const admin = await createUser(t.ctx, 'ADMIN');
    const key = await createKey(t.ctx, a.id, { scopes: ['orders:read', 'logistics:write', 'payments:read'] });
    const [sa, sb, sAdmin] = await Promise.all([
      openRealtime(t, a.token),
      openRealtime(t, b.token),
      openRealtime(t, admin.token),
    ]);
    const intentsA = collect(sa, 'payment_intent.updated');
    const settlementsA = collect(sa, 'settlement.updated');
    const intentsB = collect(sb, 'payment_intent.updated');
    const settlementsB = collect(sb, 'settlement.updated');
    const settlementsAdmin = collect(sAdmin, 'settlement.updated');

    const code = await orderFor(t, admin.auth, key.id, 'EN_ROUTE');
    const delivered = await t.live.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/events`,
      headers: key.headers,
      payload: { type: 'DELIVERED' },
    });
    expect(delivered.statusCode).toBe(201);
    await waitFor(() => intentsA.some((m) => m.paymentIntent.orderCode === code));
    expect(intentsA.find((m) => m.paymentIntent.orderCode === code)?.paymentIntent).toMatchObject({ status: 'COLLECTED' });

    t.clock.advance(1);
    const created = await t.live.inject({
      method: 'POST',
      url: `/v1/admin/partners/${a.id}/settlements`,
      headers: admin.auth,
      payload: { environment: 'live', periodEnd: t.clock.now().toISOString() },
    });
    expect(created.statusCode).toBe(201);
    await waitFor(() => settlementsA.length > 0 && settlementsAdmin.length > 0);
    expect(settlementsA[0].settlement).toEqual(created.json());
    // B's socket got nothing of A's, though both are connected the whole time.
    expect(intentsB).toEqual([]);
    expect(settlementsB).toEqual([]);
  });
});
