/**
 * The one clock every time rule reads (OTP expiry, key grace, rate windows, usage days, retries,
 * purges). Production uses the system clock; `TEST_CLOCK=1` and the tests use an offset clock that
 * flows with real time but can be moved forward (never back).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  now(): Date;
}

export class SystemClock implements Clock {
  nowMs(): number {
    return Date.now();
  }
  now(): Date {
    return new Date(this.nowMs());
  }
}

export class TestClock implements Clock {
  private offsetMs = 0;
  private readonly listeners = new Set<() => void>();

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }
  now(): Date {
    return new Date(this.nowMs());
  }
  /** Moves the clock forward by `seconds` (negative values are refused by the caller's schema). */
  advance(seconds: number): void {
    if (seconds < 0) throw new RangeError('the test clock never moves back');
    this.offsetMs += Math.round(seconds * 1000);
    for (const listener of this.listeners) listener();
  }
  /** Called after every advance: the worker wakes up to attempt what has just come due. */
  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function isTestClock(clock: Clock): clock is TestClock {
  return clock instanceof TestClock;
}

/** UTC calendar day `YYYY-MM-DD` of an instant. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
