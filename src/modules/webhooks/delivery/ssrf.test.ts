/**
 * The SSRF guard of a production deployment (docs/decisions-log.md, 'Webhooks'): webhook URLs that lead inside the network
 * are refused when saved, and a delivery never connects to a non-public address, whatever the URL
 * says and whatever the name resolves to at connect time.
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createPartner, type TestPartner } from '../../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../../test/harness.js';
import { WebhookReceiver } from '../../../../test/webhook-receiver.js';
import { newId } from '../../../shared/ids.js';
import { startWorker, type Worker } from '../../../worker/worker.js';
import { createWebhookVia, devAuth, waitForDeliveries } from '../webhooks.test-helpers.js';

let t: TestApp;
let receiver: WebhookReceiver;
let worker: Worker;
let partner: TestPartner;
let keyId: string;

/** A resolver for made-up names, standing in for DNS (what an attacker's name server would answer). */
const FAKE_DNS: Record<string, LookupAddress[]> = {
  'rebind.attacker.test': [{ address: '127.0.0.1', family: 4 }],
  'metadata.attacker.test': [{ address: '169.254.169.254', family: 4 }],
  'mixed.attacker.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ],
  'mapped.attacker.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'ula.attacker.test': [{ address: 'fd00:ec2::254', family: 6 }],
};

beforeAll(async () => {
  t = await createTestApp({
    env: {
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(40),
      OTP_FIXED_CODE: undefined,
      TEST_CLOCK: undefined,
      // Production needs a gateway; no code is requested here.
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: 'http://127.0.0.1:9/sms',
      SMS_HTTP_SECRET: 'unused-sms-gateway-secret',
    },
  });
  expect(t.ctx.config.isProduction).toBe(true);
  receiver = await WebhookReceiver.start();
  worker = startWorker(t.ctx, {
    attemptTimeoutMs: 2_000,
    leaseMs: 10_000,
    pollIntervalMs: 50,
    lookup: (hostname, _options, callback) => {
      const answer = FAKE_DNS[hostname];
      if (answer) return callback(null, answer);
      if (hostname === 'localhost')
        return callback(null, [
          { address: '127.0.0.1', family: 4 },
          { address: '::1', family: 6 },
        ]);
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    },
  });
  partner = await createPartner(t.ctx);
  keyId = (await createKey(t.ctx, partner.id)).id;
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
  await t.close();
});

/** A webhook row written directly: the URL policy would refuse these URLs at creation. */
async function insertWebhook(url: string): Promise<string> {
  const id = newId();
  await t.ctx.db.query(
    `INSERT INTO webhooks (id, partner_id, api_key_id, url, events, secret_ciphertext, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [id, partner.id, keyId, url, ['order.placed'], t.ctx.secrets.encrypt('whsec_test'), t.clock.now()],
  );
  return id;
}

async function pingAndWait(webhookId: string) {
  const res = await t.live.inject({
    method: 'POST',
    url: `/v1/developer/webhooks/${webhookId}/test`,
    headers: await devAuth(t, partner),
  });
  expect(res.statusCode, res.body).toBe(200);
  const [d] = await waitForDeliveries(t, partner, webhookId, (items) => items[0]?.status === 'FAILED');
  return d;
}

describe('URL policy in production', () => {
  it('refuses http, localhost and IP literals of non-public ranges with 400 ERR_WEBHOOK_URL_INVALID', async () => {
    const port = receiver.port;
    const refused = [
      `http://localhost:${port}/hook`,
      `http://127.0.0.1:${port}/hook`,
      'http://hooks.example.com/orders',
      `https://localhost:${port}/hook`,
      'https://api.localhost/hook',
      `https://127.0.0.1:${port}/hook`,
      'https://10.1.2.3/hook',
      'https://172.16.0.1/hook',
      'https://192.168.1.10/hook',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:a9fe:a9fe]/hook',
      'https://2130706433/hook',
      'https://0x7f.0.0.1/hook',
      'https://intranet/hook',
    ];
    for (const url of refused) {
      const res = await t.live.inject({
        method: 'POST',
        url: '/v1/developer/webhooks',
        headers: await devAuth(t, partner),
        payload: { apiKeyId: keyId, url, events: ['order.placed'] },
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ statusCode: 400, code: 'ERR_WEBHOOK_URL_INVALID' });
    }
  });

  it('accepts public https URLs', async () => {
    for (const url of ['https://hooks.example.com/orders', 'https://93.184.216.34:8443/x', 'https://[2606:4700::1111]/x']) {
      const hook = await createWebhookVia(t, await devAuth(t, partner), {
        apiKeyId: (await createKey(t.ctx, partner.id)).id,
        url,
        events: ['order.placed'],
      });
      expect(hook.id).toBeTruthy();
    }
  });
});

describe('connect-time guard in production', () => {
  it('never connects to an IP literal in a non-public range', async () => {
    const before = receiver.connections;
    const d = await pingAndWait(await insertWebhook(`https://127.0.0.1:${receiver.port}/hook`));
    expect(d).toMatchObject({ attempts: 1, statusCode: null, lastError: 'destination address not allowed' });
    expect(receiver.connections).toBe(before);
  });

  it('refuses a name that resolves to loopback at connect time (localhost, DNS rebinding)', async () => {
    const before = receiver.connections;
    for (const url of [`https://localhost:${receiver.port}/hook`, `https://rebind.attacker.test:${receiver.port}/hook`]) {
      const d = await pingAndWait(await insertWebhook(url));
      expect(d, url).toMatchObject({ statusCode: null, lastError: 'destination address not allowed' });
    }
    expect(receiver.connections).toBe(before);
    expect(receiver.requests).toEqual([]);
  });

  it('refuses names resolving to metadata, IPv4-mapped loopback, unique-local, or any private address among public ones', async () => {
    for (const host of ['metadata.attacker.test', 'mapped.attacker.test', 'ula.attacker.test', 'mixed.attacker.test']) {
      const d = await pingAndWait(await insertWebhook(`https://${host}/hook`));
      expect(d, host).toMatchObject({ statusCode: null, lastError: 'destination address not allowed' });
    }
  });

  it('refuses plain http at send time, even for a row saved before', async () => {
    const before = receiver.connections;
    const d = await pingAndWait(await insertWebhook(receiver.url('/plain')));
    expect(d).toMatchObject({ statusCode: null, lastError: 'https required' });
    expect(receiver.connections).toBe(before);
  });

  it('reports a name that does not resolve as "host not found"', async () => {
    const d = await pingAndWait(await insertWebhook('https://nowhere.invalid/hook'));
    expect(d).toMatchObject({ statusCode: null, lastError: 'host not found' });
  });
});
