/**
 * Gathers the calls made in one turn of the event loop into one batch, with at most `maxInFlight`
 * batches under way: while a batch is being written, the calls that arrive meanwhile wait and go
 * together in the next one. Under load the batches grow by themselves (the fixed cost of a round trip,
 * a transaction or a socket write is shared by more callers); a call alone goes out one setImmediate
 * later (no timer, no measurable latency).
 *
 * Each caller gets its own answer: `run` settles the entries of its batch one by one (an entry's
 * refusal does not touch the others). Whatever `run` leaves unsettled is settled when it ends: with its
 * error if it failed, otherwise with an error saying the batch gave no answer, so no caller is left
 * waiting. Calls keep their arrival order, within a batch and from one batch to the next (a call that
 * `admits` turns away waits at the head of the next batch, ahead of later arrivals).
 */

/** One waiting call: what it asked for and how to answer it (a promise's: only the first answer counts). */
export interface BatchEntry<In, Out> {
  readonly item: In;
  resolve(value: Out): void;
  reject(err: unknown): void;
}

export interface BatcherOptions<In, Out> {
  /**
   * Writes one batch and settles its entries. `release` gives the batch's slot back early (for instance
   * at a COMMIT, before the answers are sent); otherwise the slot is given back when `run` ends.
   */
  run(batch: BatchEntry<In, Out>[], release: () => void): Promise<void>;
  /** Batches under way at once (default 1). */
  maxInFlight?: number;
  /** Calls in one batch at most (default: no limit). */
  maxBatch?: number;
  /**
   * Whether `item` may join a batch that already holds `batch` (in arrival order); one turned away
   * waits for the next batch. The first waiting call always goes, so every call is eventually sent.
   */
  admits?(batch: readonly In[], item: In): boolean;
}

export class Batcher<In, Out> {
  private waiting: BatchEntry<In, Out>[] = [];
  private scheduled = false;
  /** Batches sent whose slot is not given back yet. */
  private inFlight = 0;
  private readonly maxInFlight: number;
  private readonly maxBatch: number;

  constructor(private readonly options: BatcherOptions<In, Out>) {
    this.maxInFlight = options.maxInFlight ?? 1;
    this.maxBatch = options.maxBatch ?? Number.POSITIVE_INFINITY;
  }

  /** Calls waiting for a batch (not those of a batch under way). */
  get size(): number {
    return this.waiting.length;
  }

  /** Joins the next batch; settles with this call's own answer. */
  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    // After the poll phase: every call made in this turn of the loop joins the batch.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.inFlight >= this.maxInFlight) return;
    const batch = this.take();
    if (batch.length === 0) return;
    this.inFlight++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.schedule();
    };
    let running: Promise<void>;
    try {
      running = this.options.run(batch, release);
    } catch (err) {
      running = Promise.reject(err);
    }
    running
      .then(
        () => {
          for (const entry of batch) entry.reject(new Error('the batch ended without answering this call'));
        },
        (err: unknown) => {
          for (const entry of batch) entry.reject(err);
        },
      )
      .finally(release);
    // More than one batch may be under way (maxInFlight > 1): what is left goes in another.
    this.schedule();
  }

  /** The next batch, in arrival order; what it does not take keeps its place at the head of the queue. */
  private take(): BatchEntry<In, Out>[] {
    const { admits } = this.options;
    const batch: BatchEntry<In, Out>[] = [];
    const items: In[] = [];
    const rest: BatchEntry<In, Out>[] = [];
    for (const waiting of this.waiting) {
      if (batch.length < this.maxBatch && (batch.length === 0 || !admits || admits(items, waiting.item))) {
        batch.push(waiting);
        items.push(waiting.item);
      } else rest.push(waiting);
    }
    this.waiting = rest;
    return batch;
  }
}
