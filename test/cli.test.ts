/**
 * The `partner` CLI (packages/cli), built, run as a child process against the real app on OS-chosen
 * ports (both listeners, the real worker). Each test has its own partner, keys and config folder; every
 * child is killed when its test ends, whatever happened, and every wait has a deadline.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { verifyWebhook } from '../packages/sdk/src/index.js';
import { startWorker, type Worker } from '../src/worker/worker.js';
import { spawnOwned } from './child-processes.js';
import { createPartner, type TestPartner } from './factories.js';
import { createTestApp, TEST_OTP, type TestApp } from './harness.js';

const CLI_DIR = join(import.meta.dirname, '..', 'packages', 'cli');
const CLI = join(CLI_DIR, 'dist', 'main.js');
const RUN_DEADLINE_MS = 90_000;
/** Each test runs several CLI processes (a Node start-up each): generous on a busy machine. */
const TEST_TIMEOUT = { timeout: 120_000 };

/** Builds the CLI when its dist is missing or older than a source file (npm ci builds it too). */
function ensureBuilt(): void {
  const built = statSync(CLI, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = readdirSync(join(CLI_DIR, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  if (sources.every((f) => statSync(join(CLI_DIR, 'src', f)).mtimeMs < built)) return;
  execFileSync(process.execPath, [
    join(import.meta.dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    join(CLI_DIR, 'tsconfig.build.json'),
  ]);
}

let t: TestApp;
let worker: Worker;
let urls: { PARTNER_API_URL: string; PARTNER_SANDBOX_URL: string };

beforeAll(async () => {
  ensureBuilt();
  t = await createTestApp();
  await t.live.listen({ port: 0, host: '127.0.0.1' });
  await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
  const port = (app: TestApp['live']) => (app.server.address() as AddressInfo).port;
  urls = { PARTNER_API_URL: `http://127.0.0.1:${port(t.live)}`, PARTNER_SANDBOX_URL: `http://127.0.0.1:${port(t.sandbox)}` };
  worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 });
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** The first line of `stream` that matches, within the deadline (rejects when the child exits first). */
  line(stream: 'stdout' | 'stderr', match: (line: string) => boolean, deadlineMs?: number): Promise<string>;
}

/** A user of the CLI: a partner signed in nowhere yet, with a config folder of its own. */
interface User {
  partner: TestPartner;
  env: Record<string, string>;
  configDir: string;
}

async function newUser(): Promise<User> {
  const configDir = mkdtempSync(join(tmpdir(), 'partner-cli-'));
  onTestFinished(() => rmSync(configDir, { recursive: true, force: true }));
  const partner = await createPartner(t.ctx);
  return { partner, configDir, env: { ...urls, PARTNER_CONFIG_DIR: configDir } };
}

function start(user: User, args: string[], env: Record<string, string> = {}): Cli {
  const child = spawnOwned(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: user.configDir, ...user.env, ...env },
    deadlineMs: RUN_DEADLINE_MS,
  });
  const out = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout.on('data', (d) => {
    out.stdout += d;
    wake();
  });
  child.stderr.on('data', (d) => {
    out.stderr += d;
    wake();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      wake();
      resolve(code);
    }),
  );
  return {
    child,
    exited,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    line: (stream, match, deadlineMs = 20_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => settle(() => reject(new Error(`no such line within ${deadlineMs} ms:\n${out.stdout}\n${out.stderr}`))),
          deadlineMs,
        );
        const settle = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        const check = () => {
          const found = out[stream].split('\n').find(match);
          if (found !== undefined) settle(() => resolve(found));
          else if (child.exitCode !== null || child.signalCode !== null)
            settle(() => reject(new Error(`the CLI exited before the line appeared:\n${out.stdout}\n${out.stderr}`)));
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Runs a command to its end. */
async function run(user: User, args: string[], env: Record<string, string> = {}) {
  const cli = start(user, args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

async function runJson<T>(user: User, args: string[]): Promise<T> {
  const result = await run(user, [...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

async function signedIn(): Promise<User> {
  const user = await newUser();
  const login = await run(user, ['login', '--phone', user.partner.phone, '--code', TEST_OTP]);
  expect(login.code, login.stderr).toBe(0);
  return user;
}

async function sandboxKey(user: User): Promise<{ id: string; key: string }> {
  return runJson(user, ['keys', 'create', '--name', 'CLI sandbox key']);
}

/** A local webhook receiver: records raw bodies and headers, answers 200. */
async function receiver(): Promise<{ url: string; got: Array<{ body: string; headers: IncomingHttpHeaders }> }> {
  const got: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      got.push({ body, headers: req.headers });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, got };
}

async function until<T>(check: () => T | undefined | false | Promise<T | undefined | false>, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('partner login / whoami / logout', TEST_TIMEOUT, () => {
  it('signs in with the one-time code, keeps the tokens in a 0600 file, and signs out', async () => {
    const user = await signedIn();
    const session = join(user.configDir, 'session.json');
    expect(statSync(session).mode & 0o777).toBe(0o600);
    expect(statSync(user.configDir).mode & 0o777).toBe(0o700);
    expect(Object.keys(JSON.parse(readFileSync(session, 'utf8')).sessions)).toEqual([urls.PARTNER_API_URL]);

    const me = await runJson<{ user: { phone: string; partnerId: string } }>(user, ['whoami']);
    expect(me.user).toMatchObject({ phone: user.partner.phone, partnerId: user.partner.id });

    // Once the access token has expired, the next command refreshes it and keeps the new pair (refresh
    // tokens are single use: the next command must find the new one).
    const tokens = () => JSON.parse(readFileSync(session, 'utf8')).sessions[urls.PARTNER_API_URL].refreshToken as string;
    const before = tokens();
    t.clock.advance(16 * 60);
    expect((await run(user, ['whoami'])).code).toBe(0);
    expect(tokens()).not.toBe(before);
    t.clock.advance(16 * 60);
    expect((await run(user, ['keys', 'list'])).code).toBe(0);

    expect((await run(user, ['logout'])).code).toBe(0);
    const after = await run(user, ['whoami']);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('Not signed in');
  });

  it('refuses a wrong code with the API’s message, and writes no session', async () => {
    const user = await newUser();
    const login = await run(user, ['login', '--phone', user.partner.phone, '--code', '000000']);
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^Error: .+ \(ERR_OTP_INVALID, HTTP 400\)$/m);
    expect(statSync(join(user.configDir, 'session.json'), { throwIfNoEntry: false })).toBeUndefined();
  });
});

describe('partner keys / orders / trigger', TEST_TIMEOUT, () => {
  it('creates and lists keys, keeps the full key for --key, lists orders made by trigger, explains errors', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    expect(key.key).toMatch(/^svc_sandbox_/);
    expect(statSync(join(user.configDir, 'keys.json')).mode & 0o777).toBe(0o600);

    const list = await run(user, ['keys', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ENV/);
    expect(list.stdout).toMatch(new RegExp(`${key.id}\\s+CLI sandbox key\\s+sandbox.*yes$`, 'm'));

    const created = await runJson<{ items: Array<{ code: string }> }>(user, [
      'trigger',
      'order',
      '--count',
      '2',
      '--payment',
      'COD',
    ]);
    expect(created.items).toHaveLength(2);
    const cancelled = await runJson<{ order: { code: string; status: string } }>(user, ['trigger', 'order.cancelled']);
    expect(cancelled.order.status).toBe('CANCELLED');

    const orders = await runJson<{ items: Array<{ code: string }>; total: number }>(user, ['orders', 'list', '--key', key.id]);
    expect(orders.items.map((o) => o.code).sort()).toEqual([...created.items.map((o) => o.code), cancelled.order.code].sort());
    const table = await run(user, ['orders', 'list', '--key', key.id, '--status', 'CANCELLED']);
    expect(table.stdout).toMatch(new RegExp(`^${cancelled.order.code}\\s+CANCELLED`, 'm'));

    const missing = await run(user, ['orders', 'get', 'ORD-NOPE', '--key', key.id]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/\(ERR_NOT_FOUND, HTTP 404\)/);
    const noKey = await run(user, ['orders', 'list']);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain(`--key <id> (kept here: ${key.id})`);
  });
});

describe('partner payments, balance and settlements', TEST_TIMEOUT, () => {
  it('lists and reads payment intents, the balance, settlements and their lines, and prints the CSV statement', async () => {
    const user = await signedIn();
    const key = await runJson<{ id: string; key: string }>(user, [
      'keys',
      'create',
      '--name',
      'CLI payments key',
      '--scopes',
      'orders:read,logistics:write,payments:read',
    ]);
    const headers = { 'x-api-key': key.key };
    const order = (
      await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers, payload: { paymentMethod: 'COD' } })
    ).json();
    for (const type of ['PICKED_UP', 'EN_ROUTE', 'DELIVERED']) {
      const res = await t.sandbox.inject({
        method: 'POST',
        url: `/v1/partner/orders/${order.code}/events`,
        headers,
        payload: { type },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const intents = await runJson<{ items: Array<{ id: string; status: string }> }>(user, ['payments', 'list', '--key', key.id]);
    expect(intents.items).toEqual([expect.objectContaining({ status: 'COLLECTED' })]);
    const one = await run(user, ['payments', 'get', intents.items[0].id, '--key', key.id]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^Status:\s+COLLECTED$/m);
    const balance = await runJson<{ codOnHandQepik: number }>(user, ['balance', '--key', key.id]);
    expect(balance.codOnHandQepik).toBe(order.codAmountQepik);
    t.clock.advance(1);
    const closed = (await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/settlements', headers })).json();
    const list = await run(user, ['settlements', 'list', '--key', key.id]);
    expect(list.stdout).toMatch(new RegExp(`^${closed.id}\\s+AWAITING_REMITTANCE`, 'm'));
    const got = await runJson<{ id: string; outstandingQepik: number }>(user, ['settlements', 'get', closed.id, '--key', key.id]);
    expect(got).toMatchObject({ id: closed.id, outstandingQepik: order.codAmountQepik });
    const lines = await run(user, ['settlements', 'lines', closed.id, '--key', key.id]);
    expect(lines.stdout).toMatch(new RegExp(`COD_COLLECTION\\s+${order.code}`));
    const csv = await run(user, ['settlements', 'lines', closed.id, '--csv', '--key', key.id]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toBe('id,type,orderCode,paymentIntentId,expectedQepik,amountQepik,note,reference,at');
    expect(csv.stdout).toContain(`,COD_COLLECTION,${order.code},`);
  });
});

describe('partner track', TEST_TIMEOUT, () => {
  it("prints the courier's position, ETA and trail, and with --proof the proof of delivery", async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const created = await runJson<{ items: Array<{ code: string }> }>(user, ['trigger', 'order']);
    const code = created.items[0].code;
    expect((await run(user, ['events', 'post', code, 'PICKED_UP', '--key', key.id])).code).toBe(0);
    const at = t.clock.now().toISOString();
    const ping = await t.sandbox.inject({
      method: 'POST',
      url: `/v1/partner/orders/${code}/locations`,
      headers: { 'x-api-key': key.key },
      payload: { points: [{ lat: 40.41, lng: 49.86, accuracyM: 7, at }], etaAt: at },
    });
    expect(ping.statusCode, ping.body).toBe(202);
    const tracking = await runJson<{ orderCode: string; location: unknown; trail: unknown[] }>(user, [
      'track',
      code,
      '--key',
      key.id,
    ]);
    expect(tracking).toMatchObject({
      orderCode: code,
      status: 'SCANNED_TO_VAN',
      location: { lat: 40.41, lng: 49.86, accuracyM: 7, at },
    });
    const human = await run(user, ['track', code, '--key', key.id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Courier:\s+40\.41000, 49\.86000 \(±7 m\)/);
    const noProof = await run(user, ['track', code, '--proof', '--key', key.id]);
    expect(noProof.code).toBe(1);
    expect(noProof.stderr).toMatch(/\(ERR_NOT_FOUND, HTTP 404\)/);

    // A courier run: pings toward the address, then DELIVERED there with a photo.
    const courierKey = await runJson<{ id: string }>(user, [
      'keys',
      'create',
      '--name',
      'Courier key',
      '--scopes',
      'orders:read,orders:pii,logistics:write',
    ]);
    const run1 = await runJson<{ order: { code: string; status: string }; locationsAccepted: number; photoId: string }>(user, [
      'trigger',
      'courier',
      '--key',
      courierKey.id,
    ]);
    expect(run1.order.status).toBe('DELIVERED');
    expect(run1.locationsAccepted).toBe(5);
    const proof = await runJson<{ event: string; distanceM: number | null; photos: Array<{ id: string }> }>(user, [
      'track',
      run1.order.code,
      '--proof',
      '--key',
      courierKey.id,
    ]);
    expect(proof.event).toBe('DELIVERED');
    expect(proof.photos.map((p) => p.id)).toEqual([run1.photoId]);
  });
});

describe('partner listen', TEST_TIMEOUT, () => {
  it('forwards the key’s events to a local URL, signed so that the SDK’s verifyWebhook accepts them, one line each', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const local = await receiver();
    const listen = start(user, [
      'listen',
      '--forward-to',
      local.url,
      '--key',
      key.id,
      '--events',
      'order.assigned_to_partner,order.cancelled',
      '--json',
    ]);
    const ready = JSON.parse(await listen.line('stdout', (l) => l.includes('"ready"'))) as { secret: string; events: string[] };
    expect(ready.secret).toMatch(/^whsec_/);
    expect(ready.events).toEqual(['order.assigned_to_partner', 'order.cancelled']);

    const cancelled = await runJson<{ order: { code: string } }>(user, ['trigger', 'order.cancelled']);
    await until(() => local.got.length >= 2);
    const events = local.got.map(({ body, headers }) => verifyWebhook(body, headers['x-partner-signature'], ready.secret));
    expect(events.map((e) => e.type)).toEqual(['order.assigned_to_partner', 'order.cancelled']);
    for (const e of events) expect(e).toMatchObject({ environment: 'sandbox', data: { order: { code: cancelled.order.code } } });
    expect(local.got[1].headers['x-partner-event']).toBe('order.cancelled');
    // Signed like a delivery: the Standard Webhooks headers too, with the same secret string.
    for (const [i, { body, headers }] of local.got.entries()) {
      expect(headers['webhook-id']).toBe(events[i].id);
      expect(new Webhook(ready.secret).verify(body, headers as Record<string, string>)).toMatchObject({ id: events[i].id });
      expect(verifyWebhook(body, { ...headers, 'x-partner-signature': undefined }, ready.secret).id).toBe(events[i].id);
    }

    for (const e of events) {
      const line = JSON.parse(await listen.line('stdout', (l) => l.includes(e.id))) as { status: number; type: string };
      expect(line).toMatchObject({ status: 200, type: e.type });
    }
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(0);
  });

  it('keeps forwarding after the server ends the connection because the token expired', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const local = await receiver();
    const listen = start(user, ['listen', '--forward-to', local.url, '--key', key.id, '--events', 'order.cancelled']);
    const ready = await listen.line('stdout', (l) => l.startsWith('Ready!'));
    const secret = /whsec_[\w+/=-]+/.exec(ready)?.[0] ?? '';
    t.clock.advance(16 * 60); // session.expired, then a reconnection with a refreshed token
    await listen.line('stderr', (l) => l.startsWith('Reconnected'));
    const cancelled = await runJson<{ order: { code: string } }>(user, ['trigger', 'order.cancelled']);
    await until(() => local.got.length >= 1);
    const event = verifyWebhook(local.got[0].body, local.got[0].headers['x-partner-signature'], secret);
    expect(event).toMatchObject({ type: 'order.cancelled', data: { order: { code: cancelled.order.code } } });
    await listen.line('stdout', (l) => l.includes(event.id) && l.includes('-> 200'));
  });

  it('stops with a refusal in plain words: a revoked key (the channel’s answer), a key that is not the partner’s', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    expect((await run(user, ['keys', 'revoke', key.id])).code).toBe(0);
    const revoked = await run(user, ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--key', key.id]);
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain(`Error: Key ${key.id} is revoked (ERR_API_KEY_REVOKED)`);

    const stranger = await signedIn();
    const strangersKey = await sandboxKey(stranger);
    const foreign = await run(user, ['listen', '--forward-to', 'http://127.0.0.1:9/hooks', '--key', strangersKey.id]);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`No key ${strangersKey.id} among your keys`);
  });
});

describe('partner logs tail', TEST_TIMEOUT, () => {
  it('prints what was logged since --since, then the requests logged from now on, filtered', async () => {
    const user = await signedIn();
    const key = await sandboxKey(user);
    const listed = await run(user, ['orders', 'list', '--key', key.id]);
    expect(listed.code).toBe(0);
    // Written to the log in batches: wait until it is there, so that the backfill can find it.
    const auth = { authorization: `Bearer ${user.partner.token}` };
    await until(async () => {
      const res = await t.live.inject({ method: 'GET', url: `/v1/developer/requests?apiKeyId=${key.id}`, headers: auth });
      return res.json().total > 0;
    });

    const tail = start(user, ['logs', 'tail', '--key', key.id, '--path', '/v1/partner/orders*', '--since', '1h', '--json']);
    await tail.line('stdout', (l) => l.includes('"path":"/v1/partner/orders"'));
    await tail.line('stderr', (l) => l.startsWith('Tailing'));
    // Not the path asked for: not printed.
    const me = await fetch(`${urls.PARTNER_SANDBOX_URL}/v1/partner/me`, { headers: { 'x-api-key': key.key } });
    expect(me.status).toBe(200);
    const missing = await run(user, ['orders', 'get', 'ORD-NOPE', '--key', key.id]);
    expect(missing.code).toBe(1);
    await tail.line('stdout', (l) => l.includes('ORD-NOPE'));
    const lines = tail
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { path: string; statusCode: number; apiKeyId: string });
    expect(lines.map((l) => [l.path, l.statusCode])).toEqual([
      ['/v1/partner/orders', 200],
      ['/v1/partner/orders/ORD-NOPE', 404],
    ]);
    expect(lines.every((l) => l.apiKeyId === key.id)).toBe(true);

    const drops = await runJson<{ dropped: number; notStreamed: number; items: unknown[] }>(user, [
      'logs',
      'drops',
      '--since',
      '1h',
    ]);
    expect(drops).toMatchObject({ dropped: 0, notStreamed: 0, items: [] });
  });
});
