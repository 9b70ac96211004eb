/**
 * The portal shows a sandbox delivery's proof (docs/tracking-and-proof.md): a courier's pings and a
 * DELIVERED with a location, two photos and the recipient, sent through the sandbox API as a partner
 * would, then read in real headless Chromium against the real app on real ports.
 *
 * Screenshots at desktop and phone width go to artifacts/screenshots/proof-*.png.
 */
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, DESKTOP, hasChromium, PHONE } from './chromium.js';
import { type SandboxKeyRun, screenshot, signIn, startWithSandboxKey } from './portal-run.js';

declare const document: { querySelectorAll(selector: string): ArrayLike<{ naturalWidth: number }> };

const TIMEOUT = 120_000;

if (!hasChromium) console.warn(`proof end-to-end test skipped: ${CHROMIUM} is absent`);

/** A real PNG (size × size, one colour) that a browser draws. */
function png(size: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3).map((_, i) => rgb[i % 3])]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe.skipIf(!hasChromium)('the proof of a sandbox delivery in the portal', { timeout: TIMEOUT }, () => {
  let run: SandboxKeyRun;

  beforeAll(async () => {
    run = await startWithSandboxKey(['orders:read', 'orders:pii', 'logistics:write']);
  }, 240_000);
  afterAll(() => run?.close());

  it('shows the coordinates, the distance from the address, the recipient and the photos as thumbnails', async () => {
    const { t, page, origin, partner, key } = run;
    const call = (method: 'POST', url: string, payload: unknown, headers: Record<string, string> = {}) =>
      t.sandbox.inject({ method, url, headers: { ...key.headers, ...headers }, payload: payload as never });
    const created = await call('POST', '/v1/partner/sandbox/orders', { paymentMethod: 'CARD' });
    expect(created.statusCode, created.body).toBe(201);
    const order = created.json();
    const home = { lat: order.customer.address.lat ?? 40.3777, lng: order.customer.address.lng ?? 49.8531 };
    for (const type of ['PICKED_UP', 'EN_ROUTE']) {
      expect((await call('POST', `/v1/partner/orders/${order.code}/events`, { type })).statusCode).toBe(201);
    }
    const photos: string[] = [];
    for (const colour of [
      [200, 60, 40],
      [40, 120, 200],
    ] as Array<[number, number, number]>) {
      const res = await call('POST', '/v1/partner/uploads', png(32, colour), { 'content-type': 'image/png' });
      expect(res.statusCode, res.body).toBe(201);
      photos.push(res.json().id);
    }
    // 40 m north of the door.
    const at = { lat: home.lat + 40 / 111_195, lng: home.lng, accuracyM: 8 };
    const delivered = await call('POST', `/v1/partner/orders/${order.code}/events`, {
      type: 'DELIVERED',
      proof: { location: at, photoIds: photos, recipientName: 'Aysel Məmmədova' },
    });
    expect(delivered.statusCode, delivered.body).toBe(201);

    await signIn(page, origin, partner.phone);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await page.goto(`${origin}/portal/orders/${order.code}/proof`);
    await page.getByRole('heading', { name: `Order ${order.code}`, level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('proof-event').innerText()).toContain('DELIVERED');
    expect(await page.getByTestId('proof-location').innerText()).toBe(`${at.lat.toFixed(6)}, ${at.lng.toFixed(6)} (±8 m)`);
    expect(await page.getByTestId('proof-distance').innerText()).toBe('40 m');
    expect(await page.getByTestId('proof-recipient').innerText()).toBe('Aysel Məmmədova');
    // Both thumbnails drawn (fetched with the session's token).
    await page.waitForFunction(
      () => Array.from(document.querySelectorAll('figure[data-photo-id] img')).filter((i) => i.naturalWidth === 32).length === 2,
      null,
      { timeout: 15_000 },
    );
    await screenshot(page, 'proof-delivered-desktop');
    await page.setViewportSize(PHONE);
    await screenshot(page, 'proof-delivered-phone');
    await page.setViewportSize(DESKTOP);

    await page.goto(`${origin}/portal/orders/ORD-NOPE/proof`);
    await page.getByRole('heading', { name: 'Order ORD-NOPE is not one of your keys’ orders' }).waitFor();
  });
});
