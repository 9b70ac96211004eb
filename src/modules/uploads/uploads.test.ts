import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { createKey, createPartner, type TestKey } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { jpegBytes, pngBytes } from './uploads.test-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function key(scopes: ApiKeyScope[] = ['orders:read', 'logistics:write'], partnerId?: string): Promise<TestKey> {
  return createKey(t.ctx, partnerId ?? (await createPartner(t.ctx)).id, { scopes });
}
function upload(k: TestKey, body: Buffer | string, contentType = 'image/jpeg', headers: Record<string, string> = {}) {
  return t.live.inject({
    method: 'POST',
    url: '/v1/partner/uploads',
    headers: { ...k.headers, 'content-type': contentType, ...headers },
    payload: body,
  });
}
/** The upload route's address on a real listener (opened once for the file). */
async function uploadsUrl(): Promise<string> {
  if (!t.live.server.listening) await t.live.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.live.server.address() as AddressInfo).port}/v1/partner/uploads`;
}
async function count(): Promise<number> {
  return (await t.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM uploads'))[0].n;
}

describe('POST /v1/partner/uploads', () => {
  it('stores a JPEG and a PNG: 201 { id, contentType, bytes, sha256, createdAt }, the type judged by the bytes', async () => {
    const k = await key();
    const jpeg = jpegBytes();
    // Sent as image/png: the bytes say JPEG.
    const res = await upload(k, jpeg, 'image/png');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      id: expect.stringMatching(/^upl_[0-9A-Za-z]{24}$/),
      contentType: 'image/jpeg',
      bytes: jpeg.length,
      sha256: createHash('sha256').update(jpeg).digest('hex'),
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    const png = await upload(k, pngBytes(), 'image/jpeg');
    expect(png.statusCode, png.body).toBe(201);
    expect(png.json().contentType).toBe('image/png');
    // The request log keeps a note of the body, never the bytes.
    await t.ctx.requestLog.flush();
    const logged = await t.ctx.db.query<{ request_body: string }>(
      `SELECT request_body FROM request_log WHERE api_key_id = $1 AND path = '/v1/partner/uploads' ORDER BY created_at`,
      [k.id],
    );
    expect(logged.map((r) => r.request_body)).toEqual([
      `[image/jpeg: ${jpeg.length} bytes]`,
      `[image/png: ${pngBytes().length} bytes]`,
    ]);
  });

  it('stores a photo that arrives in many pieces, split inside its signature, and reads it back byte for byte', async () => {
    const k = await key();
    const base = await uploadsUrl();
    const png = pngBytes(3 * 1024 * 1024);
    png.fill(0x5a, 8, png.length - 12);
    for (let i = 8; i < png.length - 12; i += 4099) png[i] = i % 251;
    // Pieces of 3 bytes (inside the 8-byte signature), then of 64 KiB, sent as a stream.
    const cuts = [0, 3, 5, ...Array.from({ length: Math.ceil(png.length / 65_536) }, (_, i) => 8 + i * 65_536), png.length];
    const pieces = cuts
      .slice(1)
      .map((end, i) => png.subarray(cuts[i], Math.min(end, png.length)))
      .filter((p) => p.length > 0);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(new Uint8Array(piece));
        controller.close();
      },
    });
    const res = await fetch(base, { method: 'POST', headers: k.headers, body, duplex: 'half' } as RequestInit);
    const created = (await res.json()) as { id: string; bytes: number; sha256: string; createdAt: string; contentType: string };
    expect(res.status, JSON.stringify(created)).toBe(201);
    expect(created).toMatchObject({
      contentType: 'image/png',
      bytes: png.length,
      sha256: createHash('sha256').update(png).digest('hex'),
    });
    const read = await t.live.inject({ method: 'GET', url: `/v1/partner/uploads/${created.id}`, headers: k.headers });
    expect(read.statusCode).toBe(200);
    expect(read.rawPayload.equals(png)).toBe(true);
    const stored = await t.ctx.db.query<{ created_at: Date; bytes: number; sha256: string }>(
      'SELECT created_at, bytes, sha256 FROM uploads WHERE id = $1',
      [created.id],
    );
    expect(stored[0]).toEqual({ created_at: new Date(created.createdAt), bytes: png.length, sha256: created.sha256 });
  });

  it('judges by the magic bytes alone, whatever the Content-Type says (malformed included) or when there is none', async () => {
    const k = await key();
    const url = await uploadsUrl();
    const stubs: [Buffer, string][] = [
      [Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 7)]), 'image/jpeg'],
      [Buffer.concat([pngBytes().subarray(0, 8), Buffer.alloc(64, 7)]), 'image/png'],
    ];
    for (const [body, type] of stubs) {
      // A real request without a Content-Type header (fetch adds none for bytes).
      const res = await fetch(url, { method: 'POST', headers: k.headers, body: new Uint8Array(body) });
      expect(res.status, await res.clone().text()).toBe(201);
      expect(((await res.json()) as { contentType: string }).contentType).toBe(type);
      for (const declaredType of ['text/plain', 'undefined', 'image/', ';;']) {
        const declared = await upload(k, body, declaredType);
        expect(declared.statusCode, declared.body).toBe(201);
        expect(declared.json()).toMatchObject({ contentType: type, bytes: body.length });
      }
    }
  });

  it('refuses what does not start as a JPEG or PNG with 400 ERR_VALIDATION, storing nothing', async () => {
    const k = await key();
    const before = await count();
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(100)]);
    for (const [body, type] of [
      [gif, 'image/jpeg'],
      [Buffer.from('%PDF-1.7 not a photo'), 'image/png'],
      [Buffer.from([0xff, 0xd8]), 'image/jpeg'], // shorter than the JPEG magic number
      [pngBytes().subarray(0, 7), 'image/png'], // shorter than the PNG signature
      [Buffer.from('{"photo":true}'), 'application/json'],
    ] as const) {
      const res = await upload(k, body, type);
      expectError(res, 400, 'ERR_VALIDATION');
      expect(res.json().details[0].field).toBe('body');
    }
    expectError(await t.live.inject({ method: 'POST', url: '/v1/partner/uploads', headers: k.headers }), 400, 'ERR_VALIDATION');
    expect(await count()).toBe(before);
  });

  it('refuses a body over 5 MiB and a body shorter than its Content-Length with 400 ERR_VALIDATION, storing nothing', async () => {
    const k = await key();
    const before = await count();
    expectError(await upload(k, jpegBytes(5 * 1024 * 1024 + 1)), 400, 'ERR_VALIDATION');
    const atLimit = await upload(k, jpegBytes(5 * 1024 * 1024));
    expect(atLimit.statusCode, atLimit.body).toBe(201);
    const jpeg = jpegBytes();
    const truncated = await upload(k, jpeg, 'image/jpeg', { 'content-length': String(jpeg.length + 100) });
    expectError(truncated, 400, 'ERR_VALIDATION');
    expect(await count()).toBe(before + 1);
  });
});

describe('GET /v1/partner/uploads/{id}', () => {
  // Another partner's upload: test/auth-contract.test.ts, "another partner's resources".
  it('answers the bytes to any key of the partner with orders:read or logistics:write; an unknown id 404', async () => {
    const writer = await key(['logistics:write']);
    const jpeg = jpegBytes(2048);
    const { id } = (await upload(writer, jpeg)).json();
    const partnerId = (await t.ctx.db.query<{ partner_id: string }>('SELECT partner_id FROM uploads WHERE id = $1', [id]))[0]
      .partner_id;
    for (const scopes of [['orders:read'], ['logistics:write']] as ApiKeyScope[][]) {
      const reader = await key(scopes, partnerId);
      const res = await t.live.inject({ method: 'GET', url: `/v1/partner/uploads/${id}`, headers: reader.headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.rawPayload.equals(jpeg)).toBe(true);
    }
    const webhooksOnly = await key(['webhooks:manage'], partnerId);
    expectError(
      await t.live.inject({ method: 'GET', url: `/v1/partner/uploads/${id}`, headers: webhooksOnly.headers }),
      403,
      'ERR_API_KEY_SCOPE',
    );
    expectError(
      await t.live.inject({ method: 'GET', url: '/v1/partner/uploads/nope', headers: writer.headers }),
      404,
      'ERR_NOT_FOUND',
    );
  });
});

describe('every route that returns an upload', () => {
  it('answers the bytes with nosniff, an inline file name <id>.<ext> and a sandboxing Content-Security-Policy', async () => {
    const partner = await createPartner(t.ctx);
    const k = await key(['orders:read', 'logistics:write'], partner.id);
    // A valid upload (the PNG signature) whose rest is a page: it must never be run as one.
    const polyglot = Buffer.concat([pngBytes().subarray(0, 8), Buffer.from('<html><script>alert(1)</script></html>')]);
    const png = (await upload(k, polyglot, 'text/html')).json();
    const jpeg = (await upload(k, jpegBytes())).json();
    for (const [id, ext, type] of [
      [png.id, 'png', 'image/png'],
      [jpeg.id, 'jpg', 'image/jpeg'],
    ]) {
      for (const res of [
        await t.live.inject({ method: 'GET', url: `/v1/partner/uploads/${id}`, headers: k.headers }),
        await t.live.inject({ method: 'GET', url: `/v1/developer/uploads/${id}`, headers: partner.auth }),
      ]) {
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers['content-type']).toBe(type);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['content-disposition']).toBe(`inline; filename="${id}.${ext}"`);
        expect(res.headers['content-security-policy']).toBe("sandbox; default-src 'none'");
      }
    }
  });
});
