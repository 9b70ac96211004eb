/**
 * The set-up the CLI test files share (packages/cli/test/*.e2e.test.ts): the `partner` CLI (packages/cli;
 * test/stale-builds.ts builds it when stale), run as a child process against the real app on OS-chosen
 * ports (both listeners, the real worker). Each test has its own partner, keys and config folder; every
 * child is killed when its test ends, whatever happened, and every wait has a deadline.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { startWorker, type Worker } from '../../../src/worker/worker.js';
import { spawnOwned } from '../../../test/child-processes.js';
import { createPartner, type TestPartner } from '../../../test/factories.js';
import { createTestApp, TEST_OTP, type TestApp } from '../../../test/harness.js';

const CLI_DIR = join(import.meta.dirname, '..');
const CLI = join(CLI_DIR, 'dist', 'main.js');
const RUN_DEADLINE_MS = 90_000;
/** Each test runs several CLI processes (a Node start-up each): generous on a busy machine. */
export const TEST_TIMEOUT = { timeout: 120_000 };
/** The deadline of a wait for what a CLI process did (test/wait.ts). */
export const CLI_WAIT = { timeoutMs: 20_000 };

export interface CliUrls {
  PARTNER_API_URL: string;
  PARTNER_SANDBOX_URL: string;
}

/** The file's app and the URLs the CLI is given, made by setUpCliApp before the file's tests (each test file has a module instance of its own). */
export let t: TestApp;
export let urls: CliUrls;

/**
 * Starts the file's app (`t`, `urls`) on OS-chosen ports with a worker before
 * its tests and stops them after.
 */
export function setUpCliApp(): void {
  let worker: Worker | undefined;
  beforeAll(async () => {
    t = await createTestApp();
    await t.live.listen({ port: 0, host: '127.0.0.1' });
    await t.sandbox.listen({ port: 0, host: '127.0.0.1' });
    const port = (app: TestApp['live']) => (app.server.address() as AddressInfo).port;
    urls = { PARTNER_API_URL: `http://127.0.0.1:${port(t.live)}`, PARTNER_SANDBOX_URL: `http://127.0.0.1:${port(t.sandbox)}` };
    worker = startWorker(t.ctx, { attemptTimeoutMs: 5_000, leaseMs: 20_000, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker?.stop();
    await t?.close();
  });
}

export interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** The first line of `stream` that matches, within the deadline (rejects when the child exits first). */
  line(stream: 'stdout' | 'stderr', match: (line: string) => boolean, deadlineMs?: number): Promise<string>;
}

/** A user of the CLI: a partner signed in nowhere yet, with a config folder of its own. */
export interface User {
  partner: TestPartner;
  env: Record<string, string>;
  configDir: string;
}

export async function newUser(): Promise<User> {
  const configDir = mkdtempSync(join(tmpdir(), 'partner-cli-'));
  onTestFinished(() => rmSync(configDir, { recursive: true, force: true }));
  const partner = await createPartner(t.ctx);
  return { partner, configDir, env: { ...urls, PARTNER_CONFIG_DIR: configDir } };
}

export function start(user: User, args: string[], env: Record<string, string> = {}): Cli {
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
export async function run(user: User, args: string[], env: Record<string, string> = {}) {
  const cli = start(user, args, env);
  const code = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

export async function runJson<T>(user: User, args: string[]): Promise<T> {
  const result = await run(user, [...args, '--json']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

export async function signedIn(): Promise<User> {
  const user = await newUser();
  const login = await run(user, ['login', '--phone', user.partner.phone, '--code', TEST_OTP]);
  expect(login.code, login.stderr).toBe(0);
  return user;
}

export async function sandboxKey(user: User): Promise<{ id: string; key: string }> {
  return runJson(user, ['keys', 'create', '--name', 'CLI sandbox key']);
}

/** A local webhook receiver: records raw bodies and headers, answers 200. */
export async function receiver(): Promise<{ url: string; got: Array<{ body: string; headers: IncomingHttpHeaders }> }> {
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
