/**
 * The SMS gateways against a stand-in: a local HTTP server speaking Twilio's Messages API or the
 * operator's signed JSON gateway, recording each request, and answering 500, hanging or refusing on
 * demand (test/webhook-receiver.ts).
 */
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../../../test/expect-error.js';
import { randomPhone } from '../../../test/factories.js';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { createLogger } from '../../logger.js';
import { verifySignature } from '../webhooks/delivery/signature.js';
import { SMS_DEADLINE_MS, SmsSendError, TwilioSmsGateway } from './sms-gateways.js';

const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const AUTH_TOKEN = 'twilio-auth-token-for-tests';
const MESSAGES_PATH = `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`;
const GATEWAY_SECRET = 'sms-gateway-secret-0123456789';
const PRODUCTION_BASE = { NODE_ENV: 'production', JWT_SECRET: 'p'.repeat(40) };
/** Over testConfig's settings: production refuses a fixed code and the test clock. */
const PRODUCTION = { ...PRODUCTION_BASE, OTP_FIXED_CODE: undefined, TEST_CLOCK: undefined };

const CODE_IN_TEXT = /Your sign-in code is (\d{6})\./;

let gateway: WebhookReceiver;
beforeAll(async () => {
  gateway = await WebhookReceiver.start();
});
afterAll(() => gateway.close());

/** A port nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const requestCode = (app: TestApp, phone: string) =>
  app.live.inject({ method: 'POST', url: '/v1/auth/otp/request', payload: { phone } });
const verifyCode = (app: TestApp, phone: string, code: string) =>
  app.live.inject({ method: 'POST', url: '/v1/auth/otp/verify', payload: { phone, code } });

async function otpRequestsOf(app: TestApp, phone: string): Promise<number> {
  const rows = await app.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM otp_requests WHERE phone = $1', [phone]);
  return rows[0].n;
}

describe('SMS_PROVIDER=twilio', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        OTP_FIXED_CODE: undefined,
        SMS_PROVIDER: 'twilio',
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        TWILIO_FROM: '+15005550006',
        TWILIO_API_URL: gateway.url(''),
      },
    });
  });
  afterAll(() => t.close());

  it('posts the code to the Messages API (form, basic auth) and the code signs the user in', async () => {
    gateway.on(MESSAGES_PATH, { status: 201, body: '{"sid":"SM00000000000000000000000000000000"}' });
    const phone = randomPhone();
    const res = await requestCode(t, phone);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ expiresInSec: 300, resendAfterSec: 60 });

    const sent = gateway.requestsTo(MESSAGES_PATH).filter((r) => new URLSearchParams(r.body).get('To') === phone);
    expect(sent).toHaveLength(1);
    expect(sent[0].method).toBe('POST');
    expect(sent[0].headers.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`);
    expect(sent[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = Object.fromEntries(new URLSearchParams(sent[0].body));
    expect(form).toEqual({ To: phone, From: '+15005550006', Body: expect.stringMatching(CODE_IN_TEXT) });
    const code = (form.Body.match(CODE_IN_TEXT) as RegExpMatchArray)[1];

    const signedIn = await verifyCode(t, phone, code);
    expect(signedIn.statusCode).toBe(200);
    expect(signedIn.json()).toMatchObject({ tokenType: 'Bearer', user: { phone, role: 'CUSTOMER' } });
  });

  it('answers 503 ERR_DEPENDENCY_UNAVAILABLE when Twilio fails twice, and leaves the phone free to ask again at once', async () => {
    const phone = randomPhone();
    const mine = () => gateway.requestsTo(MESSAGES_PATH).filter((r) => new URLSearchParams(r.body).get('To') === phone);
    gateway.on(MESSAGES_PATH, { status: 500, body: '{"code":20500,"message":"Internal Server Error"}' });
    expectError(await requestCode(t, phone), 503, 'ERR_DEPENDENCY_UNAVAILABLE');
    // One retry after the 5xx, then the failure.
    expect(mine()).toHaveLength(2);
    expect(await otpRequestsOf(t, phone)).toBe(0);
    expect(await t.ctx.db.query('SELECT 1 FROM otp_codes WHERE phone = $1', [phone])).toEqual([]);

    // The gateway is back: the next request goes out at once (no resend wait, nothing counted before).
    gateway.on(MESSAGES_PATH, { status: 201, body: '{"sid":"SM1"}' });
    const again = await requestCode(t, phone);
    expect(again.statusCode).toBe(200);
    expect(mine()).toHaveLength(3);
    expect(await otpRequestsOf(t, phone)).toBe(1);
    const code = (new URLSearchParams(mine()[2].body).get('Body')?.match(CODE_IN_TEXT) as RegExpMatchArray)[1];
    expect((await verifyCode(t, phone, code)).statusCode).toBe(200);
  });

  it('answers 503 when Twilio does not answer within the deadline, and counts nothing', async () => {
    const phone = randomPhone();
    gateway.on(MESSAGES_PATH, (r) => (new URLSearchParams(r.body).get('To') === phone ? { hang: true } : { status: 201 }));
    const started = Date.now();
    expectError(await requestCode(t, phone), 503, 'ERR_DEPENDENCY_UNAVAILABLE');
    expect(Date.now() - started).toBeGreaterThanOrEqual(SMS_DEADLINE_MS - 100);
    // The deadline covers the whole send: no second try after it.
    expect(gateway.requestsTo(MESSAGES_PATH).filter((r) => new URLSearchParams(r.body).get('To') === phone)).toHaveLength(1);
    expect(await otpRequestsOf(t, phone)).toBe(0);
  }, 20_000);
});

describe('TwilioSmsGateway', () => {
  const twilio = (apiUrl: string, sender: { from?: string; messagingServiceSid?: string }) =>
    new TwilioSmsGateway({
      provider: 'twilio',
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      from: sender.from ?? null,
      messagingServiceSid: sender.messagingServiceSid ?? null,
      apiUrl,
    });

  it('sends through a messaging service when TWILIO_MESSAGING_SERVICE_SID is set', async () => {
    gateway.on(MESSAGES_PATH, { status: 201 });
    const phone = randomPhone();
    await twilio(gateway.url(''), { messagingServiceSid: 'MG0123' }).send(phone, 'hello');
    const sent = gateway.requestsTo(MESSAGES_PATH).filter((r) => new URLSearchParams(r.body).get('To') === phone);
    expect(Object.fromEntries(new URLSearchParams(sent[0].body))).toEqual({
      To: phone,
      Body: 'hello',
      MessagingServiceSid: 'MG0123',
    });
  });

  it('does not retry a 4xx, and keeps Twilio’s error code but not its message', async () => {
    const phone = randomPhone();
    gateway.on(MESSAGES_PATH, { status: 400, body: `{"code":21211,"message":"The 'To' number ${phone} is not valid"}` });
    const err = await twilio(gateway.url(''), { from: '+15005550006' })
      .send(phone, 'hello')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SmsSendError);
    expect(err).toMatchObject({ statusCode: 400, gatewayCode: 21211 });
    expect((err as Error).message).not.toContain(phone);
    expect(gateway.requestsTo(MESSAGES_PATH).filter((r) => new URLSearchParams(r.body).get('To') === phone)).toHaveLength(1);
  });

  it('retries once when the connection is refused, then fails', async () => {
    const port = await closedPort();
    const err = await twilio(`http://127.0.0.1:${port}`, { from: '+15005550006' })
      .send(randomPhone(), 'hello')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SmsSendError);
    expect((err as Error).message).toMatch(/could not be reached/);
  });
});

describe('SMS_PROVIDER=http in production', () => {
  let t: TestApp;
  const lines: string[] = [];
  const GATEWAY_PATH = '/sms';
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    t = await createTestApp({
      env: {
        ...PRODUCTION,
        LOG_LEVEL: 'trace',
        SMS_PROVIDER: 'http',
        SMS_HTTP_URL: gateway.url(GATEWAY_PATH),
        SMS_HTTP_SECRET: GATEWAY_SECRET,
      },
      log: createLogger('trace', sink),
    });
  });
  afterAll(() => t.close());

  const sentTo = (phone: string) =>
    gateway.requestsTo(GATEWAY_PATH).filter((r) => (JSON.parse(r.body) as { to: string }).to === phone);

  it('posts { to, text, id } signed like a webhook, and the code signs the user in', async () => {
    gateway.on(GATEWAY_PATH, { status: 202 });
    const phone = randomPhone();
    expect((await requestCode(t, phone)).statusCode).toBe(200);
    const [sent] = sentTo(phone);
    expect(sent.method).toBe('POST');
    expect(sent.headers['content-type']).toBe('application/json');
    const body = JSON.parse(sent.body) as Record<string, string>;
    expect(body).toEqual({
      to: phone,
      text: expect.stringMatching(CODE_IN_TEXT),
      id: expect.stringMatching(/^sms_[0-9a-f-]{36}$/),
    });
    expect(verifySignature(String(sent.headers['x-partner-signature']), sent.body, GATEWAY_SECRET)).toBe(true);
    expect(verifySignature(String(sent.headers['x-partner-signature']), sent.body, 'another-secret-0123456789')).toBe(false);
    const code = (body.text.match(CODE_IN_TEXT) as RegExpMatchArray)[1];
    expect((await verifyCode(t, phone, code)).statusCode).toBe(200);
  });

  it('retries a 500 once with the same id, answers 503, and counts nothing against the phone', async () => {
    const phone = randomPhone();
    gateway.on(GATEWAY_PATH, { status: 500 });
    expectError(await requestCode(t, phone), 503, 'ERR_DEPENDENCY_UNAVAILABLE');
    const tries = sentTo(phone).map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(tries).toHaveLength(2);
    expect(tries[0]).toBe(tries[1]);
    expect(await otpRequestsOf(t, phone)).toBe(0);
    gateway.on(GATEWAY_PATH, { status: 200 });
    expect((await requestCode(t, phone)).statusCode).toBe(200);
    expect(await otpRequestsOf(t, phone)).toBe(1);
  });

  it('writes no code to any log line at trace level, sent or failed', async () => {
    gateway.on(GATEWAY_PATH, { status: 200 });
    const codes: string[] = [];
    for (const status of [200, 500]) {
      gateway.on(GATEWAY_PATH, { status });
      const phone = randomPhone();
      await requestCode(t, phone);
      for (const r of sentTo(phone))
        codes.push(((JSON.parse(r.body) as { text: string }).text.match(CODE_IN_TEXT) as RegExpMatchArray)[1]);
    }
    expect(codes.length).toBeGreaterThanOrEqual(2);
    const logged = lines.join('');
    expect(lines.length).toBeGreaterThan(0);
    expect(logged).toContain('SMS provider failed to send a one-time code');
    expect(logged).not.toMatch(/sign-in code/);
    for (const code of codes) expect(logged).not.toContain(code);
  });
});
