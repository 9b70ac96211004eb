/**
 * The set-up most route test files share: one app on a fresh database for the whole file, a fresh
 * operator (ADMIN) token for each test (tests move the clock past a token's 15 minutes), and the app
 * closed when the file ends. `bind` receives the app and an operator's header once the app is made,
 * then again before each test.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startWorker, type Worker, type WorkerOptions } from '../src/worker/worker.js';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestAppOptions } from './harness.js';
import { WebhookReceiver } from './webhook-receiver.js';

export type OperatorAuth = { authorization: string };

export function setUpTestAppWithOperator(bind: (t: TestApp, admin: OperatorAuth) => void, options: TestAppOptions = {}): void {
  let t: TestApp | undefined;
  const operator = async (app: TestApp) => (await createUser(app.ctx, 'ADMIN')).auth;
  // Bound once the app exists (for the file's own beforeAll hooks), then again with a fresh token per test.
  beforeAll(async () => {
    t = await createTestApp(options);
    bind(t, await operator(t));
  });
  beforeEach(async () => {
    if (!t) throw new Error('the test app was not created');
    bind(t, await operator(t));
  });
  afterAll(() => t?.close());
}

export interface AppWithWorker {
  t: TestApp;
  admin: OperatorAuth;
  /** A webhook endpoint for the whole file. */
  receiver: WebhookReceiver;
  worker: Worker;
}

/**
 * The same, with a webhook receiver and a running worker for the whole file, for tests that follow
 * events out to an endpoint. `bind` receives them once made, then with a fresh operator before each test.
 */
export function setUpTestAppWithWorker(bind: (s: AppWithWorker) => void, workerOptions: Partial<WorkerOptions> = {}): void {
  let made: Omit<AppWithWorker, 'admin'> | undefined;
  const bindFresh = async () => {
    if (!made) throw new Error('the test app was not created');
    bind({ ...made, admin: (await createUser(made.t.ctx, 'ADMIN')).auth });
  };
  beforeAll(async () => {
    const t = await createTestApp();
    const receiver = await WebhookReceiver.start();
    const worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100, ...workerOptions });
    made = { t, receiver, worker };
    await bindFresh();
  });
  beforeEach(bindFresh);
  afterAll(async () => {
    await made?.worker.stop();
    await made?.receiver.close();
    await made?.t.close();
  });
}
