import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BytePacer } from './byte-pacer.js';

const KiB = 1024;

describe('BytePacer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const pacer = (bytesPerSecond: number, burstBytes: number) =>
    new BytePacer({ bytesPerSecond, burstBytes, nowMs: () => Date.now() });

  it('lets everything through at once when the rate is 0', () => {
    const p = pacer(0, 0);
    expect(p.paced).toBe(false);
    for (let i = 0; i < 100; i++) expect(p.take(1024 * KiB, () => {})).toBe(true);
    expect(p.queued).toBe(0);
  });

  it('reads the burst at once, then pauses a reader until its debt is paid at the rate', () => {
    const p = pacer(100 * KiB, 64 * KiB);
    const resume = vi.fn();
    expect(p.take(64 * KiB, resume)).toBe(true);
    // 50 KiB more than the bucket held: half a second at 100 KiB/s.
    expect(p.take(50 * KiB, resume)).toBe(false);
    expect(resume).not.toHaveBeenCalled();
    vi.advanceTimersByTime(480);
    expect(resume).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30);
    expect(resume).toHaveBeenCalledTimes(1);
    expect(p.queued).toBe(0);
  });

  it('resumes paused readers oldest first once what was read is paid for, so bodies share the rate', () => {
    const p = pacer(100 * KiB, 0);
    const order: string[] = [];
    const a = () => order.push('a');
    const b = () => order.push('b');
    expect(p.take(10 * KiB, a)).toBe(false);
    expect(p.take(10 * KiB, b)).toBe(false);
    expect(p.queued).toBe(2);
    // Both chunks are paid for (200 ms at 100 KiB/s) before anyone reads on.
    vi.advanceTimersByTime(199);
    expect(order).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(order).toEqual(['a']);
    // Out of debt, the next reader goes on too.
    vi.advanceTimersByTime(1);
    expect(order).toEqual(['a', 'b']);
    // a read its next chunk: it waits for it to be paid.
    expect(p.take(10 * KiB, a)).toBe(false);
    vi.advanceTimersByTime(99);
    expect(order).toEqual(['a', 'b']);
    vi.advanceTimersByTime(1);
    expect(order).toEqual(['a', 'b', 'a']);
  });

  it('a reader that is forgotten is never resumed; close resumes whoever waits', () => {
    const p = pacer(100 * KiB, 0);
    const gone = vi.fn();
    const waiting = vi.fn();
    p.take(10 * KiB, gone);
    p.take(10 * KiB, waiting);
    p.forget(gone);
    p.close();
    expect(gone).not.toHaveBeenCalled();
    expect(waiting).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000);
    expect(waiting).toHaveBeenCalledTimes(1);
  });
});
