/**
 * The set-up the SDK test files share (packages/sdk/test/*.e2e.test.ts): @partner-logistics/sdk against the real app
 * on real ports (both listeners on OS-chosen ports, a real worker), a database that answers 503 on
 * demand, a record of the operations each file sent through the SDK (each file checks its own share,
 * coverage.unit.test.ts that the shares cover every operation), and a webhook receiver written as
 * the SDK README shows. Waits are conditions with deadlines.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.js';
import { AppError } from '../../../src/errors.js';
import { signAccessToken } from '../../../src/modules/auth/tokens.js';
import { startWorker, type Worker } from '../../../src/worker/worker.js';
import { createUser, type TestPartner } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';
import {
  createDeveloperClient,
  createPartnerClient,
  type DeveloperClient,
  PartnerApiError,
  type PartnerClient,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../src/index.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const WAIT = { timeout: 20_000, interval: 20 };

// ---------------------------------------------------------------------------------------------------
// A database that answers 503 on demand: the next statement matching a pattern fails the way a lost
// database does (ERR_DEPENDENCY_UNAVAILABLE), through the real error path of the app.

/** The outage armed for the next statements matching `pattern`, `times` over; null when none is. */
export const outage: { armed: { pattern: RegExp; times: number } | null } = { armed: null };

function failIfArmed(text: string | { text: string }): void {
  const sql = typeof text === 'string' ? text : text.text;
  const armed = outage.armed;
  if (armed && armed.times > 0 && armed.pattern.test(sql)) {
    armed.times--;
    throw new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable; try again shortly');
  }
}

function withOutages(db: Db): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'query') {
        return async (text: string, params?: readonly unknown[]) => {
          failIfArmed(text);
          return target.query(text, params);
        };
      }
      if (prop === 'tx') {
        return (fn: (q: Pick<Db, 'query'>) => Promise<unknown>, options?: unknown) =>
          target.tx(
            (q) =>
              fn({
                query: async <R>(text: string, params?: readonly unknown[]) => {
                  failIfArmed(text);
                  return q.query<R>(text, params);
                },
              }),
            options as never,
          );
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Every operation the SDK sends, as `METHOD /path/{template}`, to check that each one ran.

const exercised = new Set<string>();
const recordOperations: Middleware = {
  onRequest({ request, schemaPath }) {
    exercised.add(`${request.method} ${schemaPath}`);
  },
};

/** Answers the tests look at (status, headers) as they came off the wire, every attempt included. */
export interface Seen {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  requestHeaders: Headers;
}

export function recordingFetch(into: Seen[]): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request);
    into.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      headers: response.headers,
      requestHeaders: request.headers,
    });
    return response;
  };
}

// ---------------------------------------------------------------------------------------------------
// The app, listening on OS-chosen ports, with a worker; one for the whole file.

/** The file's app, made by setUpSdkApp before the file's tests (each test file has a module instance of its own). */
export let t: TestApp;
const app = { liveUrl: '', sandboxUrl: '', adminUserId: '' };

/** Starts the file's app (`t`, on OS-chosen ports) and a worker before its tests, and stops them after. */
export function setUpSdkApp(): void {
  let worker: Worker | undefined;
  beforeAll(async () => {
    t = await createTestApp({ wrapDb: withOutages });
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
    app.liveUrl = urlOf(t.live);
    app.sandboxUrl = urlOf(t.sandbox);
    worker = startWorker(t.ctx, { pollIntervalMs: 50 });
    app.adminUserId = (await createUser(t.ctx, 'ADMIN')).userId;
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });
}

/** The live and sandbox base URLs of the running app. */
export function baseUrls(): { live: string; sandbox: string } {
  return { live: app.liveUrl, sandbox: app.sandboxUrl };
}

/** An operator's bearer header signed now (the tests move the clock past 15-minute tokens). */
export async function admin(): Promise<{ authorization: string }> {
  const token = await signAccessToken(t.ctx.secrets.jwtKey, t.clock, {
    userId: app.adminUserId,
    role: 'ADMIN',
    partnerId: null,
  });
  return { authorization: `Bearer ${token}` };
}

export function urlOf(app: FastifyInstance): string {
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export function partnerClient(apiKey: string, options: Partial<Parameters<typeof createPartnerClient>[0]> = {}): PartnerClient {
  const client = createPartnerClient({
    apiKey,
    baseUrls: { live: app.liveUrl, sandbox: app.sandboxUrl },
    ...options,
  });
  client.raw.use(recordOperations);
  return client;
}

export function developerClient(options: Partial<Parameters<typeof createDeveloperClient>[0]> = {}): DeveloperClient {
  const client = createDeveloperClient({ baseUrl: app.liveUrl, ...options });
  client.raw.use(recordOperations);
  return client;
}

export async function signedIn(partner: TestPartner, options: Partial<Parameters<typeof createDeveloperClient>[0]> = {}) {
  const dev = developerClient(options);
  await dev.requestCode(partner.phone);
  await dev.verifyCode(partner.phone, TEST_OTP);
  return dev;
}

export async function expectApiError(promise: Promise<unknown>, status: number, code: string): Promise<PartnerApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PartnerApiError);
  const apiError = err as PartnerApiError;
  expect({ status: apiError.status, code: apiError.code }, apiError.message).toEqual({ status, code });
  return apiError;
}

/**
 * The last describe of an SDK test file: every operation listed for the file (sdk-coverage.ts)
 * went through the SDK in it.
 */
export function expectOperationsExercised(listed: readonly string[]): void {
  describe('coverage', () => {
    it('every operation listed for this file went through the SDK above', () => {
      expect(
        listed.filter((op) => !exercised.has(op)),
        'operations listed for this file that no test sent',
      ).toEqual([]);
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// The webhook receiver, as packages/sdk/README.md writes it: Fastify, the raw body, verifyWebhook.

export interface Receiver {
  app: FastifyInstance;
  url: string;
  /** Each delivery as it arrived, and what verifyWebhook made of it. */
  deliveries: Array<{ rawBody: string; signature: string; event: WebhookEvent | null; refused: string | null }>;
}

export async function startReceiver(secrets: () => string[]): Promise<Receiver> {
  const deliveries: Receiver['deliveries'] = [];
  const app = Fastify();
  // Keep the body as the exact string that was signed: verify first, parse after.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post('/webhooks/partner', async (request, reply) => {
    const rawBody = request.body as string;
    const signature = request.headers['x-partner-signature'] as string;
    try {
      const event = verifyWebhook(rawBody, signature, secrets());
      deliveries.push({ rawBody, signature, event, refused: null });
      return reply.code(204).send();
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      deliveries.push({ rawBody, signature, event: null, refused: err.reason });
      return reply.code(400).send({ error: err.reason });
    }
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `${urlOf(app)}/webhooks/partner`, deliveries };
}
