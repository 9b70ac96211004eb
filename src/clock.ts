/**
 * The one clock every time rule reads (OTP expiry, key grace, rate windows, usage days, retries,
 * purges). Production uses the system clock; `TEST_CLOCK=1` and the tests use an offset clock that
 * flows with real time but can be moved forward (never back). With TEST_CLOCK=1 on a PostgreSQL server
 * every process reads one shared offset (SharedTestClock, docs/decisions-log.md, 'Dependency faults').
 */
import type { Logger } from 'pino';
import type { Db } from './db/db.js';

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
  protected offsetMs = 0;
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
    this.advanced();
  }

  protected advanced(): void {
    for (const listener of this.listeners) listener();
  }
  /** Called after every advance: the worker wakes up to attempt what has just come due. */
  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** NOTIFY channel of the shared test clock: the payload is the new offset in milliseconds. */
export const TEST_CLOCK_CHANNEL = 'partner_api_test_clock';
/** Every process reads the shared offset at least this often, whatever happens to NOTIFY. */
const SHARED_CLOCK_POLL_MS = 1_000;

/**
 * The test clock of a multi-process deployment on a PostgreSQL server: its offset is the row of
 * `test_clock` (migration 0012), so all processes read one time.
 *
 * Reading it costs nothing (the offset is held in memory, as in TestClock): what moves is how the offset
 * reaches each process.
 *  - POST /v1/test/clock in process A (`advanceShared`) adds to the row and NOTIFYs the new offset in
 *    one statement, and answers once that has committed; A's own clock has moved before it answers.
 *  - Every other process LISTENs and adopts the offset as soon as the notification arrives
 *    (milliseconds), waking its worker as a local advance would; it also re-reads the row every second
 *    and whenever its LISTEN connection is (re)established, so a lost notification costs at most 1 s.
 *  - GET /v1/test/clock reads the row (`sync`) before answering: a test that advanced the clock through
 *    A and then asks B for the time gets the advanced time, and from that answer on B's rules use it.
 *    That is the deterministic way for a test to wait for another process: ask it.
 * The offset never goes back: a process adopts the larger of its own and the shared one.
 */
export class SharedTestClock extends TestClock {
  private stopListening: (() => Promise<void>) | null = null;
  private poll: NodeJS.Timeout | null = null;

  private constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    super();
  }

  static async open(db: Db, log: Logger): Promise<SharedTestClock> {
    const clock = new SharedTestClock(db, log);
    await clock.sync();
    clock.stopListening = db.listen(
      [TEST_CLOCK_CHANNEL],
      (_channel, payload) => clock.adopt(Number(payload)),
      () => void clock.sync().catch(() => {}),
    );
    clock.poll = setInterval(() => void clock.sync().catch(() => {}), SHARED_CLOCK_POLL_MS);
    clock.poll.unref();
    return clock;
  }

  /** Moves every process's clock: this one at once, the others through the database (see above). */
  async advanceShared(seconds: number): Promise<void> {
    if (seconds < 0) throw new RangeError('the test clock never moves back');
    super.advance(seconds);
    const rows = await this.db.query<{ offset_ms: number }>(
      `WITH moved AS (UPDATE test_clock SET offset_ms = offset_ms + $1 RETURNING offset_ms)
       SELECT offset_ms, pg_notify($2, offset_ms::text) FROM moved`,
      [Math.round(seconds * 1000), TEST_CLOCK_CHANNEL],
    );
    if (rows[0]) this.adopt(rows[0].offset_ms);
  }

  /** A local advance (tests calling the clock directly) is shared too, in the background. */
  override advance(seconds: number): void {
    void this.advanceShared(seconds).catch((err) => this.log.warn({ err }, 'could not share a test clock advance'));
  }

  /** Adopts the shared offset now (GET /v1/test/clock, the poll, a new LISTEN connection). */
  async sync(): Promise<void> {
    const rows = await this.db.query<{ offset_ms: number }>('SELECT offset_ms FROM test_clock');
    if (rows[0]) this.adopt(rows[0].offset_ms);
  }

  private adopt(offsetMs: number): void {
    if (!Number.isFinite(offsetMs) || offsetMs <= this.offsetMs) return;
    this.offsetMs = offsetMs;
    this.advanced();
  }

  async close(): Promise<void> {
    if (this.poll) clearInterval(this.poll);
    await this.stopListening?.();
  }
}

export function isTestClock(clock: Clock): clock is TestClock {
  return clock instanceof TestClock;
}

/** UTC calendar day `YYYY-MM-DD` of an instant. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
