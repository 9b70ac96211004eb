/**
 * The upload limits (docs/tracking-and-proof.md, "Upload limits") through real connections: uploads
 * held open mid-body are what the limits bound, and only a socket can hold one.
 */

import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { waitFor } from '../../../test/wait.js';
import { jpegBytes } from './uploads.test-helpers.js';

let t: TestApp;
let port: number;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      UPLOAD_IN_FLIGHT_PER_PARTNER: '2',
      UPLOAD_IN_FLIGHT_PER_PROCESS: '3',
      UPLOAD_BYTES_PER_PARTNER_PER_MINUTE: String(64 * 1024),
    },
  });
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  port = (t.live.server.address() as AddressInfo).port;
});
afterAll(() => t.close());

async function key(partnerId?: string): Promise<TestKey> {
  return createKey(t.ctx, partnerId ?? (await createPartner(t.ctx)).id, { scopes: ['logistics:write'] });
}
function upload(k: TestKey, body: Buffer) {
  return t.live.inject({
    method: 'POST',
    url: '/v1/partner/uploads',
    headers: { ...k.headers, 'content-type': 'image/jpeg' },
    payload: body,
  });
}

interface Held {
  socket: Socket;
  /** What the server answered (empty until it does). */
  answer(): string;
  closed: Promise<void>;
}

/** An upload announcing `announced` bytes that sends all but the last byte, then waits. */
async function holdUpload(k: TestKey, announced = 4096): Promise<Held> {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (d) => {
    answer += d;
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `POST /v1/partner/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${k.key}\r\nContent-Type: image/jpeg\r\n` +
      `Content-Length: ${announced}\r\n\r\n`,
  );
  socket.write(jpegBytes(announced).subarray(0, announced - 1));
  return { socket, answer: () => answer, closed };
}

/** Waits until `n` uploads are being received (the held bodies reached the service). */
async function inFlight(n: number): Promise<void> {
  await waitFor(() => t.ctx.uploads.inFlightCount === n, { timeoutMs: 10_000, what: `${n} uploads in flight` });
}

describe('POST /v1/partner/uploads limits', () => {
  it('admits a partner’s uploads up to its cap in flight, then 429 ERR_RATE_LIMITED with Retry-After; others go on', async () => {
    const a = await key();
    const partnerA = (await t.ctx.db.query<{ partner_id: string }>('SELECT partner_id FROM api_keys WHERE id = $1', [a.id]))[0]
      .partner_id;
    // Two keys of one partner: the cap is the partner's, not the key's.
    const held = [await holdUpload(a), await holdUpload(await key(partnerA))];
    await inFlight(2);
    const refused = await upload(await key(partnerA), jpegBytes());
    expectError(refused, 429, 'ERR_RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers.connection).toBe('close');
    // Another partner is admitted meanwhile.
    expect((await upload(await key(), jpegBytes())).statusCode).toBe(201);

    // A third partner holds the process's third place: the process is full, for everyone.
    held.push(await holdUpload(await key()));
    await inFlight(3);
    const full = await upload(await key(), jpegBytes());
    expectError(full, 429, 'ERR_RATE_LIMITED');
    expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Clients that go away mid-body give their places back at once.
    for (const h of held) h.socket.destroy();
    await inFlight(0);
    expect((await upload(a, jpegBytes())).statusCode).toBe(201);
  });

  it('charges a partner’s bytes over any 60 s: past the budget 429 with the seconds until it fits, before the body is read', async () => {
    const k = await key();
    const big = jpegBytes(40 * 1024);
    expect((await upload(k, big)).statusCode).toBe(201);
    const over = await upload(k, big);
    expectError(over, 429, 'ERR_RATE_LIMITED');
    const wait = Number(over.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    // A smaller one still fits; another partner has a budget of its own.
    expect((await upload(k, jpegBytes(8 * 1024))).statusCode).toBe(201);
    expect((await upload(await key(), big)).statusCode).toBe(201);
    // Once the window has moved past the first upload, the second is admitted.
    t.clock.advance(wait);
    expect((await upload(k, big)).statusCode).toBe(201);
  });

  it('closes an upload whose body has not arrived by its deadline, answering 400 ERR_VALIDATION, and frees its place', async () => {
    // The deadline is read when each upload starts; this test shortens it for the uploads it makes.
    const before = t.ctx.config.uploads.bodyTimeoutMs;
    t.ctx.config.uploads.bodyTimeoutMs = 300;
    try {
      const k = await key();
      const held = await Promise.all([holdUpload(k), holdUpload(k)]);
      for (const h of held) {
        await h.closed;
        expect(h.answer()).toMatch(/^HTTP\/1\.1 400 /);
        expect(h.answer()).toContain('"code":"ERR_VALIDATION"');
      }
      await inFlight(0);
      const count = await t.ctx.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM uploads u JOIN api_keys k ON k.partner_id = u.partner_id WHERE k.id = $1',
        [k.id],
      );
      expect(count[0].n).toBe(0);
    } finally {
      t.ctx.config.uploads.bodyTimeoutMs = before;
    }
  });
});
