/**
 * Three tiers as Vitest projects, told apart by file name alone (docs/testing.md, 'Tiers'), so that a new
 * test file is placed without anyone editing this config:
 *  - unit: `*.unit.test.ts`: no database, socket or child process;
 *  - e2e:  `*.e2e.test.ts`: Chromium, the CLI as a child process, the SDK over real ports, linters and
 *          Prism, multi-process and fault tests;
 *  - api:  every other `*.test.ts`: the app through `inject` on a fresh database per file.
 * `vitest run` runs all three; `--project NAME` (npm run test:unit|test:api|test:e2e) runs one.
 */
import { configDefaults, defineConfig } from 'vitest/config';

/** Test files live beside the code they test (src/), in the harness folder (test/) and in each package's test/. */
const ROOTS = ['src', 'test', 'packages/*/test'];
const named = (suffix: string) => ROOTS.map((root) => `${root}/**/*${suffix}`);
const UNIT = named('.unit.test.ts');
const E2E = named('.e2e.test.ts');

export default defineConfig({
  test: {
    // Child processes rather than threads: PGlite's WebAssembly heap and the servers a file starts are
    // released with the process, and a file that calls process.exit cannot take the runner down with it.
    pool: 'forks',
    // Two cores: two files at a time, each on its own fresh database.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          // Pure code: nothing a file leaves behind can touch the next one, so a worker keeps its loaded
          // modules from file to file instead of loading them again for each.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'api',
          include: named('.test.ts'),
          exclude: [...configDefaults.exclude, ...UNIT, ...E2E],
          globalSetup: ['test/global-setup.ts'],
          // Run again for each file: closes the apps a file left open when it ends (test/file-end.ts).
          setupFiles: ['test/file-end.ts'],
          // A worker runs its files one after another in one module graph: the app's ~1,000 modules and
          // PGlite's compiled WebAssembly are loaded once per worker instead of once per file (loading was
          // over a third of the suite's time). Safe because every file owns its state: its own app, context
          // and database made in beforeAll and closed in afterAll, no module-level state in the app (one
          // home for process state: createContext), no module mocks; the file-level variables of the
          // shared helpers are set again by each file's set-up.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E,
          // Only this tier runs the builds (the SDK and CLI its child processes load, the portal its
          // browser opens), and only when stale.
          globalSetup: ['test/global-setup.ts', 'test/stale-builds.ts'],
          // Isolated: these files start processes, proxies and browsers, cut connections and leave a
          // dependency down on purpose; a fresh worker per file keeps one file's wreckage from the next.
          isolate: true,
          // expect.poll gives up after 1 s by default: too short for a page that reads again, or a child
          // process, on a busy machine. 15 s, as every Playwright locator waits.
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
