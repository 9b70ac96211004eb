/**
 * The e2e tier's global set-up (vitest.config.ts): brings the built parts its tests run up to date with
 * their sources, once per `vitest run`, before any of its files starts (test files run in parallel and
 * must never build the same thing together). No other tier runs a build: a unit or api file starts at
 * once whatever was edited (docs/testing.md, 'Tiers').
 *  - the SDK's dist, which the CLI and the portal import;
 *  - the CLI's dist, which the CLI tests run as a child process;
 *  - portal/dist, which the browser tests load;
 *  - the server's dist/, which the tests that start src/main.ts as a process run (test/main-process.ts).
 * Each is built only when its output is missing or older than a source it is made from, so a developer
 * never tests a stale build. CI's `npm ci` has built all four already, and then this does nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = process.cwd();
const SDK = join(ROOT, 'packages', 'sdk');
const CLI = join(ROOT, 'packages', 'cli');
const PORTAL = join(ROOT, 'portal');

/**
 * The newest modification time of a file, or of any file under a folder that `counts`; 0 when it does
 * not exist.
 */
function newestMtime(path: string, counts: (name: string) => boolean = () => true): number {
  const s = statSync(path, { throwIfNoEntry: false });
  if (!s) return 0;
  if (!s.isDirectory()) return counts(path) ? s.mtimeMs : 0;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry), counts));
  return newest;
}

function isStale(output: string, inputs: string[], counts?: (name: string) => boolean): boolean {
  const built = statSync(output, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return Math.max(...inputs.map((input) => newestMtime(input, counts))) > built;
}

/** What tsconfig.build.json leaves out of the server's build: test files and their helpers. */
const notATest = (name: string) => !/\.test(-helpers)?\.ts$/.test(name);

function run(script: string, args: string[]): void {
  execFileSync(process.execPath, [join(ROOT, 'node_modules', ...script.split('/')), ...args], {
    cwd: ROOT,
    // Vitest sets NODE_ENV=test, which would make Vite bundle React's development build; the portal
    // the tests load is the one `npm start` serves afterwards, so it is built as `npm run build:portal` does.
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 180_000,
  });
}

export function buildStaleParts(): void {
  const sdkBuilt = join(SDK, 'dist', 'index.js');
  if (isStale(sdkBuilt, [join(SDK, 'src')])) run('typescript/bin/tsc', ['-p', join(SDK, 'tsconfig.build.json')]);
  if (isStale(join(CLI, 'dist', 'main.js'), [join(CLI, 'src'), sdkBuilt])) {
    run('typescript/bin/tsc', ['-p', join(CLI, 'tsconfig.build.json')]);
  }
  const portalSources = ['src', 'snippets', 'index.html', 'vite.config.ts'].map((p) => join(PORTAL, p)).filter(existsSync);
  if (isStale(join(PORTAL, 'dist', 'index.html'), [...portalSources, join(SDK, 'dist')])) {
    run('vite/bin/vite.js', ['build', '--config', 'portal/vite.config.ts', '--logLevel', 'warn']);
  }
  if (isStale(join(ROOT, 'dist', 'src', 'main.js'), [join(ROOT, 'src')], notATest)) {
    run('typescript/bin/tsc', ['-p', join(ROOT, 'tsconfig.build.json')]);
  }
}

/** Vitest's global set-up entry (the e2e tier's `globalSetup`). */
export default function setup(): void {
  buildStaleParts();
}
