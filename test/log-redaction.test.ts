/**
 * What the process log holds (docs/decisions-log.md, 'Requests, errors and input'): never a credential, and one
 * line per request at its level.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createTestApp } from './harness.js';

// Each test makes the file's first app (the embedded database's first start in this worker): a minute.
describe('log redaction', () => {
  it('never writes API keys, bearer tokens, secrets or codes to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger('trace', sink);
    const apiKey = `svc_live_${'A'.repeat(32)}`;
    log.info({ req: { headers: { 'x-api-key': apiKey, authorization: 'Bearer abc.def.ghi' } } }, 'request');
    log.info(
      { key: apiKey, secret: 'whsec_topsecret', refreshToken: 'rt_1', otp: '654321', nested: { token: 'tok_1' } },
      'objects',
    );
    const t = await createTestApp({ log });
    await t.live.inject({
      method: 'GET',
      url: '/v1/partner/me',
      headers: { 'x-api-key': apiKey, authorization: 'Bearer abc.def.ghi' },
    });
    await t.close();
    const all = lines.join('');
    expect(lines.length).toBeGreaterThan(2);
    for (const leaked of [apiKey, 'abc.def.ghi', 'whsec_topsecret', 'rt_1', '654321', 'tok_1']) expect(all).not.toContain(leaked);
    expect(all).toContain('[redacted]');
  }, 60_000);

  it('writes one line per request with its request id and listener, and nothing below the level', async () => {
    const capture = (level: string) => {
      const lines: Array<Record<string, unknown>> = [];
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(JSON.parse(String(chunk)));
          cb();
        },
      });
      return { lines, log: createLogger(level, sink) };
    };
    const info = capture('info');
    const t = await createTestApp({ log: info.log });
    const first = await t.live.inject({ method: 'GET', url: '/healthz?x=1', headers: { 'x-request-id': 'client-42' } });
    const second = await t.sandbox.inject({ method: 'GET', url: '/nope' });
    await t.close();
    expect(info.lines.filter((l) => l.msg === 'request')).toEqual([
      expect.objectContaining({
        reqId: first.headers['x-request-id'],
        clientRequestId: 'client-42',
        listener: 'live',
        method: 'GET',
        url: '/healthz',
        statusCode: 200,
      }),
      expect.objectContaining({
        reqId: second.headers['x-request-id'],
        listener: 'sandbox',
        method: 'GET',
        url: '/nope',
        statusCode: 404,
      }),
    ]);

    const warn = capture('warn');
    const quiet = await createTestApp({ log: warn.log });
    await quiet.live.inject({ method: 'GET', url: '/healthz' });
    await quiet.close();
    expect(warn.lines.filter((l) => l.msg === 'request')).toEqual([]);
  }, 60_000);
});
