/**
 * Upload pacing (docs/tracking-and-proof.md, "Upload limits"): each process reads upload bodies at a
 * bounded rate, shared by every partner's, through real connections (inject has no pace to slow).
 * The assertions are lower bounds a pace guarantees (a paced body cannot arrive sooner), never a speed.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { jpegBytes } from './uploads.test-helpers.js';

const KiB = 1024;
const PACE = 512 * KiB;
/** What a process reads at once before pacing starts (byte-pacer.ts, createUploadPacing). */
const BURST = 1024 * KiB;

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await createTestApp({ env: { UPLOAD_BYTES_PER_SECOND: String(PACE) } });
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

async function key(): Promise<TestKey> {
  return createKey(t.ctx, (await createPartner(t.ctx)).id, { scopes: ['logistics:write', 'orders:read'] });
}

async function upload(k: TestKey, body: Buffer): Promise<{ status: number; id: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${base}/v1/partner/uploads`, {
    method: 'POST',
    headers: { ...k.headers, 'content-type': 'image/jpeg' },
    body,
  });
  const answer = (await res.json()) as { id: string };
  return { status: res.status, id: answer.id, ms: performance.now() - started };
}

describe('upload pacing', () => {
  it('reads bodies beyond the first MiB at the process’s pace, shared by two partners, and stores each whole', async () => {
    const [a, b] = [await key(), await key()];
    const photo = jpegBytes(1024 * KiB);
    const [first, second] = await Promise.all([upload(a, photo), upload(b, photo)]);
    expect([first.status, second.status]).toEqual([201, 201]);
    // 2 MiB together, the first MiB at once, the second at 512 KiB/s: the later one ends 2 s or more
    // after both started (a little less is allowed for the timer's rounding).
    expect(Math.max(first.ms, second.ms)).toBeGreaterThanOrEqual(((2 * 1024 * KiB - BURST) / PACE) * 1000 - 100);
    for (const [k, u] of [
      [a, first],
      [b, second],
    ] as const) {
      const back = await fetch(`${base}/v1/partner/uploads/${u.id}`, { headers: k.headers });
      expect(Buffer.from(await back.arrayBuffer()).equals(photo)).toBe(true);
    }
  });
});
