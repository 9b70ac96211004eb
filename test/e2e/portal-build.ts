/**
 * Makes sure portal/dist holds a build of the current portal sources before the browser tests run:
 * builds when it is missing or older than any source file (so a developer never tests a stale build).
 * CI's `npm ci` has built it already, and then this does nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/modules/portal/portal.routes.js';

function newestMtime(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export function ensurePortalBuilt(): string {
  const root = projectRoot();
  const portal = join(root, 'portal');
  const index = join(portal, 'dist', 'index.html');
  const sources = ['src', 'snippets', 'index.html', 'vite.config.ts'].map((p) => join(portal, p)).filter(existsSync);
  const newestSource = Math.max(...sources.map(newestMtime));
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource) return join(portal, 'dist');
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const run = spawnSync(process.execPath, [vite, 'build', '--config', 'portal/vite.config.ts', '--logLevel', 'warn'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (run.status !== 0) throw new Error(`npm run build:portal failed:\n${run.stdout}\n${run.stderr}`);
  return join(portal, 'dist');
}
