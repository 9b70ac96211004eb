/**
 * The set-up most route test files share: one app on a fresh database for the whole file, a fresh
 * operator (ADMIN) token for each test (tests move the clock past a token's 15 minutes), and the app
 * closed when the file ends. `bind` receives the app and an operator's header once the app is made,
 * then again before each test.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createUser } from './factories.js';
import { createTestApp, type TestApp, type TestAppOptions } from './harness.js';

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
