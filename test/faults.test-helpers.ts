/**
 * Dependency faults (docs/decisions-log.md, 'Dependency faults'), injected for real: a fault proxy (test/fault-proxy.ts) stands
 * between the app and the machine's PostgreSQL server and Redis, and resets, refuses or blackholes
 * their connections while requests and deliveries are in flight. The app, its worker and a second app
 * instance are the real code in this process: an error that escaped every handler would reach Vitest as
 * an unhandled error and fail the run, with no process-level net to hide it.
 *
 * Server mode only: the embedded database runs inside the process and cannot be cut off.
 * Nothing here sleeps to let things settle: every wait is for a condition, with a deadline.
 *
 * This module: whether this run has a server to cut off, an app's log captured, the database read past
 * the proxy, timed answers and sandbox orders (waits: test/wait.ts).
 */
import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { expect } from 'vitest';
import { createLogger } from '../src/logger.js';
import type { TestKey } from './factories.js';
import type { TestApp } from './harness.js';

export const databaseUrl = process.env.DATABASE_URL;
export const redisUrl = process.env.REDIS_URL;
export const serverMode = Boolean(databaseUrl && redisUrl);
if (!serverMode) {
  console.info('test/faults-*.e2e.test.ts: skipped (needs DATABASE_URL and REDIS_URL: the embedded database cannot be cut off)');
}

/** Log lines written by an app, parsed, for the "logged once" checks. */
export function logCapture() {
  const lines: Array<Record<string, unknown> & { msg: string; level: number }> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { log: createLogger('debug', sink), lines, count: (re: RegExp) => lines.filter((l) => re.test(l.msg)).length };
}

/** The same database, reached directly (not through the proxy): to check what was committed. */
export function directUrl(proxiedUrl: string): string {
  const url = new URL(proxiedUrl);
  const direct = new URL(databaseUrl as string);
  url.hostname = direct.hostname;
  url.port = direct.port;
  return url.toString();
}

export async function directQuery<R extends pg.QueryResultRow>(t: TestApp, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: directUrl(t.ctx.config.databaseUrl as string) });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

export interface Answer {
  startedMs: number;
  ms: number;
  status: number;
  body: string;
}

/**
 * One request, timed, sent the way a client over the network would: after a turn of the event loop. An
 * injected request answered from memory (a cached order, a rate-limit slice) never waits for I/O, so a
 * loop of them alone would keep the loop from ever reading a socket or running a timer: replies from
 * Redis and PostgreSQL would sit unread for seconds while their deadlines passed.
 */
export async function timed(app: FastifyInstance, options: InjectOptions): Promise<Answer> {
  await nextTurn();
  const startedMs = Date.now();
  const res = await app.inject(options);
  return { startedMs, ms: Date.now() - startedMs, status: res.statusCode, body: res.body };
}

export function isUnavailableEnvelope(a: Answer): boolean {
  const body = JSON.parse(a.body) as Record<string, unknown>;
  return (
    a.status === 503 &&
    body.statusCode === 503 &&
    body.code === 'ERR_DEPENDENCY_UNAVAILABLE' &&
    typeof body.message === 'string' &&
    Object.keys(body).every((k) => ['statusCode', 'code', 'message'].includes(k))
  );
}

export function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

export async function sandboxOrders(t: TestApp, key: TestKey, n: number): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.sandbox.inject({ method: 'POST', url: '/v1/partner/sandbox/orders', headers: key.headers });
    expect(res.statusCode, res.body).toBe(201);
    codes.push(res.json().code);
  }
  return codes;
}
