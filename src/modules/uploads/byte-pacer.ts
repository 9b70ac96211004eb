/**
 * The rate at which this process reads upload bodies (docs/tracking-and-proof.md, "Upload limits"): a
 * token bucket of bytes per second shared by every body it paces. A reader takes a chunk's bytes after
 * the chunk arrived; while the bucket is in debt the reader is paused (the stream stops, the kernel's
 * buffers fill and TCP slows the sender). Once what was read is paid for, paused readers are resumed
 * oldest first; each reads one more chunk, then waits at the back of the queue again, so the bodies
 * share the rate chunk by chunk.
 *
 * Why: reading a body costs CPU in the API (the kernel's copies, hashing, the write to PostgreSQL) and in
 * the database; unpaced, one partner's burst of uploads takes both cores of a small machine for seconds
 * and every other partner's requests wait for a share of them. Paced, a burst takes longer and the
 * other requests keep their latency (docs/performance.md, "Uploads beside other partners").
 */

import type { Readable } from 'node:stream';
import type { UploadLimits } from '../../config.js';

export interface BytePacerOptions {
  /** Bytes per second; 0: not paced. */
  bytesPerSecond: number;
  /** What the bucket holds when full (a burst read at once before pacing starts). */
  burstBytes: number;
  /** Real time in ms (a rate, not a business rule). */
  nowMs?: () => number;
}

export class BytePacer {
  private tokens: number;
  private lastMs: number;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly nowMs: () => number;

  constructor(private readonly options: BytePacerOptions) {
    this.nowMs = options.nowMs ?? (() => performance.now());
    this.tokens = options.burstBytes;
    this.lastMs = this.nowMs();
  }

  get paced(): boolean {
    return this.options.bytesPerSecond > 0;
  }

  /** Readers waiting for the bucket (the metrics and tests read it). */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Charges `bytes` that were just read. True: read on. False: pause now; `resume` is called once it is
   * this reader's turn again (never synchronously).
   */
  take(bytes: number, resume: () => void): boolean {
    if (!this.paced) return true;
    this.refill();
    this.tokens -= bytes;
    if (this.tokens >= 0 && this.waiting.length === 0) return true;
    this.waiting.push(resume);
    this.schedule();
    return false;
  }

  /**
   * Paces a stream read in flowing mode: after each chunk it is paused while the bucket is in debt, and
   * resumed on its turn. Returns what stops pacing it (call it however the stream ends).
   */
  pace(stream: Readable): () => void {
    const resume = () => stream.resume();
    const onData = (chunk: Buffer) => {
      if (!this.take(chunk.length, resume)) stream.pause();
    };
    stream.on('data', onData);
    return () => {
      stream.off('data', onData);
      this.forget(resume);
    };
  }

  /** A paused reader that went away (its body ended, failed or was cut): it is not resumed. */
  forget(resume: () => void): void {
    const i = this.waiting.indexOf(resume);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** Stops the timer (the process is closing); waiting readers are resumed so that nothing hangs. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const resume of this.waiting.splice(0)) resume();
  }

  private refill(): void {
    const now = this.nowMs();
    const elapsed = Math.max(0, now - this.lastMs);
    this.lastMs = now;
    this.tokens = Math.min(this.options.burstBytes, this.tokens + (elapsed * this.options.bytesPerSecond) / 1000);
  }

  private schedule(): void {
    if (this.timer || this.waiting.length === 0) return;
    const debt = Math.max(0, -this.tokens);
    const waitMs = Math.max(1, Math.ceil((debt * 1000) / this.options.bytesPerSecond));
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refill();
      // One reader per turn of the bucket out of debt: it reads a chunk and queues again if still in debt.
      if (this.tokens >= 0) this.waiting.shift()?.();
      this.schedule();
    }, waitMs);
    this.timer.unref();
  }
}

/** The two paces of a process: admitted bodies, and refused ones read only to be dropped. */
export interface UploadPacing {
  bodies: BytePacer;
  drains: BytePacer;
  close(): void;
}

/** 1 MiB of an admitted body, 256 KiB of a refused one, are read at once before pacing starts. */
export function createUploadPacing(limits: Pick<UploadLimits, 'bytesPerSecond' | 'drainBytesPerSecond'>): UploadPacing {
  const bodies = new BytePacer({ bytesPerSecond: limits.bytesPerSecond, burstBytes: 1024 * 1024 });
  const drains = new BytePacer({ bytesPerSecond: limits.drainBytesPerSecond, burstBytes: 256 * 1024 });
  return {
    bodies,
    drains,
    close() {
      bodies.close();
      drains.close();
    },
  };
}
