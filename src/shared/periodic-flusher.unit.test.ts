import { describe, expect, it } from 'vitest';
import { PeriodicFlusher } from './periodic-flusher.js';

/** A flusher whose ticks the test fires and whose flushes it finishes; logs are recorded. */
function heldFlusher() {
  let tick: (() => void) | null = null;
  const flushes: { force: boolean; finish: (err?: unknown) => void }[] = [];
  const logged: { level: string; msg: string }[] = [];
  const log = {
    debug: (_obj: unknown, msg: string) => logged.push({ level: 'debug', msg }),
    error: (_obj: unknown, msg: string) => logged.push({ level: 'error', msg }),
  };
  const flusher = new PeriodicFlusher({
    what: 'test',
    intervalMs: 1000,
    log: log as never,
    flush: (force) =>
      new Promise<void>((resolve, reject) => {
        flushes.push({ force, finish: (err) => (err === undefined ? resolve() : reject(err)) });
      }),
    timers: {
      set: (fn) => {
        tick = fn;
        return 1;
      },
      clear: () => {
        tick = null;
      },
    },
  });
  return { flusher, flushes, logged, tick: () => tick?.(), ticking: () => tick !== null };
}

const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('PeriodicFlusher', () => {
  it('flushes on each tick once started, and not after stop', async () => {
    const f = heldFlusher();
    f.tick();
    expect(f.flushes).toHaveLength(0);
    f.flusher.start();
    f.tick();
    expect(f.flushes).toEqual([{ force: false, finish: expect.any(Function) }]);
    f.flushes[0].finish();
    await turns();
    f.flusher.stop();
    expect(f.ticking()).toBe(false);
    expect(f.flusher.started).toBe(false);
  });

  it('runs one flush at a time: a tick during a flush is skipped, a flush() call waits and runs after it', async () => {
    const f = heldFlusher();
    f.flusher.start();
    f.tick();
    f.tick();
    expect(f.flushes).toHaveLength(1);
    const explicit = f.flusher.flush(true);
    await turns();
    expect(f.flushes).toHaveLength(1);
    f.flushes[0].finish();
    await turns();
    expect(f.flushes).toHaveLength(2);
    expect(f.flushes[1].force).toBe(true);
    f.flushes[1].finish();
    await explicit;
  });

  it('logs a failed tick once per failure: an outage at debug, anything else at error', async () => {
    const f = heldFlusher();
    f.flusher.start();
    f.tick();
    f.flushes[0].finish(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    await turns();
    f.tick();
    f.flushes[1].finish(new Error('something else'));
    await turns();
    expect(f.logged).toEqual([
      { level: 'debug', msg: 'test flush failed' },
      { level: 'error', msg: 'test flush failed' },
    ]);
  });

  it('rejects an explicit flush with its failure, without logging it', async () => {
    const f = heldFlusher();
    const explicit = f.flusher.flush();
    f.flushes[0].finish(new Error('refused'));
    await expect(explicit).rejects.toThrow('refused');
    expect(f.logged).toEqual([]);
  });

  it('close stops the timer for good and makes a final forced flush, logging its failure at error', async () => {
    const f = heldFlusher();
    f.flusher.start();
    const closed = f.flusher.close();
    expect(f.ticking()).toBe(false);
    await turns();
    expect(f.flushes).toEqual([{ force: true, finish: expect.any(Function) }]);
    f.flushes[0].finish(new Error('gone'));
    await closed;
    expect(f.logged).toEqual([{ level: 'error', msg: 'final test flush failed' }]);
    f.flusher.start();
    expect(f.ticking()).toBe(false);
  });
});
