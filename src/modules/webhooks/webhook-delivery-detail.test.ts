/**
 * GET /v1/developer/deliveries/{id} (docs/decisions-log.md, 'Webhook operations') with a real worker and a
 * real local receiver: the payload exactly as signed and every attempt with what was sent and answered,
 * across retries and redeliveries; bodies cut to 4 KiB; attempts removed with their delivery.
 */
import { describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { purgeExpired } from '../../worker/purge.js';
import {
  callAs,
  createEndpoint,
  deliveryDetail,
  devAuth,
  receiver,
  sendTestEvent,
  setUpAppWithReceiver,
  startTestWorker,
  t,
  waitForDeliveries,
} from './webhooks.test-helpers.js';

const SOME_ID = '7d0c1a52-3a59-4c1f-9d5e-0b1f4f0e2a11';

setUpAppWithReceiver();

describe('GET /v1/developer/deliveries/{id}', () => {
  it('answers the payload exactly as signed and every attempt, oldest first, with what was sent and answered', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    receiver.on(h.path, (_r, i) =>
      i === 0 ? { status: 503, body: 'upstream down, try later' } : { status: 200, body: '{"ok":true}' },
    );
    const queued = await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'FAILED');
    t.clock.advance(61);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');

    const body = await deliveryDetail(t, h.partner, queued.id);
    const received = receiver.requestsTo(h.path);
    expect(received).toHaveLength(2);
    expect(body).toMatchObject({
      id: queued.id,
      webhookId: h.hook.id,
      event: 'ping',
      status: 'DELIVERED',
      statusCode: 200,
    });
    expect(body.payload).toBe(received[0].body);
    expect(JSON.parse(body.payload)).toMatchObject({ type: 'ping', data: { webhookId: h.hook.id } });
    expect(body.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2]);
    const [first, second] = body.attempts;
    expect(first).toMatchObject({ statusCode: 503, error: 'HTTP 503', responseBody: 'upstream down, try later' });
    expect(second).toMatchObject({ statusCode: 200, error: null, responseBody: '{"ok":true}' });
    expect(Date.parse(second.at) - Date.parse(first.at)).toBeGreaterThanOrEqual(60_000);
    for (const [i, attempt] of body.attempts.entries()) {
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(attempt.responseHeaders['content-type']).toBe('text/plain');
      // The headers we sent, and only Content-Type and the X-Partner-* ones: exactly what the endpoint got.
      expect(Object.keys(attempt.requestHeaders).sort()).toEqual([
        'content-type',
        'x-partner-delivery',
        'x-partner-event',
        'x-partner-signature',
      ]);
      for (const [name, value] of Object.entries(attempt.requestHeaders)) expect(received[i].headers[name]).toBe(value);
    }
  });

  it('GET …/request-headers lists every header each attempt sent, exactly as the endpoint got it', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const queued = await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const res = await callAs(t, h.partner, 'GET', `/v1/developer/deliveries/${queued.id}/request-headers`);
    expect(res.statusCode, res.body).toBe(200);
    const [received] = receiver.requestsTo(h.path);
    const body = res.json();
    expect(body.deliveryId).toBe(queued.id);
    expect(body.attempts).toHaveLength(1);
    expect(body.attempts[0].number).toBe(1);
    const sent = body.attempts[0].headers as Record<string, string>;
    // Every header the endpoint got, each with the value it got; nothing it did not get.
    expect(Object.keys(sent).sort()).toEqual(Object.keys(received.headers).sort());
    for (const [name, value] of Object.entries(received.headers)) expect(sent[name], name).toBe(value);
    expect(Object.keys(sent)).toEqual(
      expect.arrayContaining(['user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature']),
    );
    // The detail's requestHeaders keep to Content-Type and X-Partner-*.
    expect(Object.keys((await deliveryDetail(t, h.partner, queued.id)).attempts[0].requestHeaders).sort()).toEqual([
      'content-type',
      'x-partner-delivery',
      'x-partner-event',
      'x-partner-signature',
    ]);
    expectError(await callAs(t, h.partner, 'GET', `/v1/developer/deliveries/${SOME_ID}/request-headers`), 404, 'ERR_NOT_FOUND');
  });

  it('keeps earlier attempts across a redeliver, numbering on; records network failures without an answer', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    await t.ctx.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [h.hook.id, 'http://127.0.0.1:1/closed']);
    const queued = await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'FAILED');
    await t.ctx.db.query('UPDATE webhooks SET url = $2 WHERE id = $1', [h.hook.id, receiver.url(h.path)]);
    const res = await callAs(t, h.partner, 'POST', `/v1/developer/deliveries/${queued.id}/redeliver`);
    expect(res.statusCode).toBe(200);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const body = await deliveryDetail(t, h.partner, queued.id);
    expect(body.attempts).toEqual([
      expect.objectContaining({
        number: 1,
        statusCode: null,
        error: 'connection refused',
        responseHeaders: null,
        responseBody: null,
      }),
      expect.objectContaining({ number: 2, statusCode: 200, error: null, responseBody: 'ok' }),
    ]);
    expect(body.attempts[0].requestHeaders['x-partner-delivery']).toBe(queued.id);
  });

  it('stores at most the first 4 KiB of a body, whole characters, and a binary body as a short note', async () => {
    startTestWorker(t);
    const long = await createEndpoint(t, receiver);
    receiver.on(long.path, { status: 500, body: `${'é'.repeat(3000)}TAIL` });
    const a = await sendTestEvent(t, long.partner, long.hook.id);
    const binary = await createEndpoint(t, receiver);
    receiver.on(binary.path, { status: 200, body: 'PNG\u0000\u0001\u0002 bytes' });
    const b = await sendTestEvent(t, binary.partner, binary.hook.id);
    await waitForDeliveries(t, long.partner, long.hook.id, (d) => d[0]?.status === 'FAILED');
    await waitForDeliveries(t, binary.partner, binary.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const cut = (await deliveryDetail(t, long.partner, a.id)).attempts[0].responseBody as string;
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(cut)).toBeGreaterThan(4090);
    expect(cut).toBe('é'.repeat(2048));
    expect((await deliveryDetail(t, binary.partner, b.id)).attempts[0].responseBody).toBe(
      '[binary body not stored: 12 bytes of text/plain]',
    );
  });

  it('answers 404 for an unknown id and a malformed one', async () => {
    const h = await createEndpoint(t, receiver);
    expectError(await callAs(t, h.partner, 'GET', `/v1/developer/deliveries/${SOME_ID}`), 404, 'ERR_NOT_FOUND');
    expectError(await callAs(t, h.partner, 'GET', '/v1/developer/deliveries/not-a-uuid'), 404, 'ERR_NOT_FOUND');
  });

  it('attempts go with their delivery: the retention purge and deleting the webhook remove them', async () => {
    startTestWorker(t);
    const h = await createEndpoint(t, receiver);
    const queued = await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d[0]?.status === 'DELIVERED');
    const count = async () =>
      (
        await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1', [
          queued.id,
        ])
      )[0].n;
    expect(await count()).toBe(1);
    await t.ctx.db.query("UPDATE webhook_deliveries SET created_at = created_at - interval '36 days' WHERE id = $1", [queued.id]);
    await purgeExpired(t.ctx);
    expect(await count()).toBe(0);
    expectError(await callAs(t, h.partner, 'GET', `/v1/developer/deliveries/${queued.id}`), 404, 'ERR_NOT_FOUND');

    const second = await sendTestEvent(t, h.partner, h.hook.id);
    await waitForDeliveries(t, h.partner, h.hook.id, (d) => d.some((x) => x.id === second.id && x.status === 'DELIVERED'));
    expect(
      (
        await t.live.inject({
          method: 'DELETE',
          url: `/v1/developer/webhooks/${h.hook.id}`,
          headers: await devAuth(t, h.partner),
        })
      ).statusCode,
    ).toBe(204);
    const [{ n }] = await t.ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE webhook_id = $1',
      [h.hook.id],
    );
    expect(n).toBe(0);
  });
});
