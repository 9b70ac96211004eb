/**
 * The pieces behind docs/decisions-log.md, 'Dependency faults' that need no dependency to fail for real: which errors count as a
 * dependency's fault, the process-level last line of defence (main.ts), and how outages are told apart
 * (test/faults-*.e2e.test.ts inject the real faults).
 */
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DependencyHealth, installLastLineOfDefence, isDependencyError, logOutages } from './dependencies.js';
import { AppError } from './errors.js';
import { createLogger } from './logger.js';

function capture() {
  const lines: Array<{ level: number; msg: string; dependency?: string }> = [];
  const log = createLogger(
    'debug',
    new Writable({
      write(chunk, _enc, cb) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        cb();
      },
    }),
  );
  return { log, lines };
}

describe('isDependencyError', () => {
  const dependency: Array<[string, Error]> = [
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ["pg's lost connection", new Error('Connection terminated unexpectedly')],
    ["pg's connect timeout", new Error('Connection terminated due to connection timeout')],
    [
      'a PostgreSQL shutdown (57P01)',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    ['our database deadline', Object.assign(new Error('PostgreSQL did not answer within 1500 ms'), { code: 'ETIMEDOUT' })],
    ["ioredis's command deadline", new Error('Command timed out')],
    ['ioredis without a connection', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    [
      "ioredis's retry limit",
      Object.assign(new Error('Reached the max retries per request limit (which is 0).'), { name: 'MaxRetriesPerRequestError' }),
    ],
    ['ioredis closed', new Error('Connection is closed.')],
    ['the 503 it becomes', new AppError('ERR_DEPENDENCY_UNAVAILABLE', 'The database is unavailable')],
    ['a wrapper of one', new Error('claim failed', { cause: Object.assign(new Error('x'), { code: 'EPIPE' }) })],
  ];
  for (const [what, err] of dependency) {
    it(`counts ${what}`, () => expect(isDependencyError(err)).toBe(true));
  }

  const ours: Array<[string, unknown]> = [
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a plain error', new Error('boom')],
    ['a unique violation', Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' })],
    [
      'a Redis reply error',
      Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { name: 'ReplyError' }),
    ],
    ['a domain error', new AppError('ERR_NOT_FOUND', 'Not found')],
    ['something thrown that is not an Error', 'text'],
  ];
  for (const [what, err] of ours) {
    it(`does not count ${what}`, () => expect(isDependencyError(err)).toBe(false));
  }
});

describe('the last line of defence (main.ts)', () => {
  function install() {
    const proc = new EventEmitter();
    const exits: number[] = [];
    const { log, lines } = capture();
    installLastLineOfDefence(proc as never, log, (code) => exits.push(code));
    return { proc, exits, lines };
  }

  it('logs a dependency error that escaped every handler and keeps the process running', () => {
    const { proc, exits, lines } = install();
    proc.emit(
      'unhandledRejection',
      Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }),
    );
    proc.emit('uncaughtException', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(exits).toEqual([]);
    expect(lines.map((l) => [l.level, l.msg.split(' (')[0]])).toEqual([
      [50, 'a dependency error escaped its handler'],
      [50, 'a dependency error escaped its handler'],
    ]);
  });

  it('logs anything else as fatal and ends the process with status 1, as Node would', () => {
    const { proc, exits, lines } = install();
    proc.emit('unhandledRejection', new TypeError('x is not a function'));
    proc.emit('uncaughtException', new RangeError('bad'));
    expect(exits).toEqual([1, 1]);
    expect(lines.map((l) => l.level)).toEqual([60, 60]);
  });
});

describe('DependencyHealth', () => {
  it('logs one outage once when it starts and once when it ends, however many failures it holds', () => {
    const health = new DependencyHealth('Redis');
    const { log, lines } = capture();
    logOutages(health, log);
    const before = health.begin();
    health.failed(new Error('Command timed out'));
    health.failed(new Error('Connection is closed.'));
    health.failed(new Error("Stream isn't writeable"), health.begin());
    expect(health.available).toBe(false);
    // An operation begun before the outage and answered after it proves nothing.
    health.succeeded(before);
    expect(health.available).toBe(false);
    const after = health.begin();
    health.succeeded(after);
    expect(health.available).toBe(true);
    // An operation begun before the recovery and failing after it does not start another outage.
    health.failed(new Error('Command timed out'), after);
    expect(health.available).toBe(true);
    expect(lines.map((l) => [l.level, l.dependency, l.msg.split(':')[0].split(' after')[0]])).toEqual([
      [40, 'Redis', 'Redis unavailable'],
      [30, 'Redis', 'Redis available again'],
    ]);
  });
});
