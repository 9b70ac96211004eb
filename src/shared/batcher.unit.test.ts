import { describe, expect, it } from 'vitest';
import { type BatchEntry, Batcher, type BatcherOptions } from './batcher.js';

/** A batcher whose batches are held until the test answers them: each batch is recorded in `batches`. */
function heldBatcher(options: Partial<BatcherOptions<number, string>> = {}) {
  const batches: { entries: BatchEntry<number, string>[]; release: () => void; finish: (err?: unknown) => void }[] = [];
  let batchArrived: (() => void) | undefined;
  const batcher = new Batcher<number, string>({
    ...options,
    run: (entries, release) =>
      new Promise<void>((resolve, reject) => {
        batches.push({ entries, release, finish: (err) => (err === undefined ? resolve() : reject(err)) });
        batchArrived?.();
      }),
  });
  /** Resolves once `n` batches have been sent (deadline: the test's own). */
  const sent = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (batches.length >= n) resolve();
        else batchArrived = check;
      };
      check();
    });
  const answerAll = (i: number) => {
    for (const e of batches[i].entries) e.resolve(`answer ${e.item}`);
    batches[i].finish();
  };
  return { batcher, batches, sent, answerAll };
}

/** Lets every callback queued so far run (several turns of the event loop). */
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('Batcher', () => {
  it('sends the calls of one turn as one batch, in arrival order, and answers each caller with its own value', async () => {
    const seen: number[][] = [];
    const batcher = new Batcher<number, number>({
      run: async (batch) => {
        seen.push(batch.map((e) => e.item));
        for (const e of batch) e.resolve(e.item * 10);
      },
    });
    const answers = await Promise.all([1, 2, 3, 4].map((n) => batcher.add(n)));
    expect(answers).toEqual([10, 20, 30, 40]);
    expect(seen).toEqual([[1, 2, 3, 4]]);
  });

  it('keeps one batch in flight: calls made meanwhile wait and go together in the next, in order', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher();
    const first = [batcher.add(1), batcher.add(2)];
    await sent(1);
    const second = [batcher.add(3), batcher.add(4)];
    await turns();
    const third = [batcher.add(5)];
    await turns();
    expect(batches).toHaveLength(1);
    expect(batcher.size).toBe(3);
    answerAll(0);
    expect(await Promise.all(first)).toEqual(['answer 1', 'answer 2']);
    await sent(2);
    expect(batches[1].entries.map((e) => e.item)).toEqual([3, 4, 5]);
    answerAll(1);
    expect(await Promise.all([...second, ...third])).toEqual(['answer 3', 'answer 4', 'answer 5']);
    expect(batches).toHaveLength(2);
  });

  it('release() frees the slot before the batch ends: the next batch starts while the first is still answering', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher();
    const first = batcher.add(1);
    await sent(1);
    const second = batcher.add(2);
    batches[0].release();
    await sent(2);
    expect(batches[1].entries.map((e) => e.item)).toEqual([2]);
    answerAll(1);
    answerAll(0);
    expect(await Promise.all([first, second])).toEqual(['answer 1', 'answer 2']);
  });

  it('allows maxInFlight batches at once', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher({ maxInFlight: 2, maxBatch: 1 });
    const calls = [1, 2, 3].map((n) => batcher.add(n));
    await sent(2);
    await turns();
    expect(batches.map((b) => b.entries.map((e) => e.item))).toEqual([[1], [2]]);
    answerAll(0);
    await sent(3);
    expect(batches[2].entries.map((e) => e.item)).toEqual([3]);
    answerAll(1);
    answerAll(2);
    expect(await Promise.all(calls)).toEqual(['answer 1', 'answer 2', 'answer 3']);
  });

  it('cuts batches at maxBatch and leaves out what admits refuses; those wait at the head of the next batch', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher({
      maxBatch: 3,
      // At most one even number per batch.
      admits: (batch, item) => item % 2 === 1 || !batch.some((b) => b % 2 === 0),
    });
    const calls = [2, 4, 1, 3, 5, 7].map((n) => batcher.add(n));
    await sent(1);
    expect(batches[0].entries.map((e) => e.item)).toEqual([2, 1, 3]);
    const late = batcher.add(9);
    answerAll(0);
    await sent(2);
    expect(batches[1].entries.map((e) => e.item)).toEqual([4, 5, 7]);
    answerAll(1);
    await sent(3);
    expect(batches[2].entries.map((e) => e.item)).toEqual([9]);
    answerAll(2);
    expect(await Promise.all([...calls, late])).toHaveLength(7);
  });

  it('the first waiting call always goes, even when admits would refuse it', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher({ admits: () => false });
    const calls = [1, 2].map((n) => batcher.add(n));
    await sent(1);
    expect(batches[0].entries.map((e) => e.item)).toEqual([1]);
    answerAll(0);
    await sent(2);
    answerAll(1);
    expect(await Promise.all(calls)).toEqual(['answer 1', 'answer 2']);
  });

  it('an entry refused by run gets its own error; the others of its batch their answers', async () => {
    const batcher = new Batcher<number, number>({
      run: async (batch) => {
        for (const e of batch) {
          if (e.item === 2) e.reject(new Error('two refused'));
          else e.resolve(e.item);
        }
      },
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('two refused'));
  });

  it('a batch that fails gives its error to every caller it did not answer, and the next batch still goes', async () => {
    const { batcher, batches, sent, answerAll } = heldBatcher();
    const first = [1, 2, 3].map((n) => batcher.add(n));
    await sent(1);
    const next = batcher.add(4);
    batches[0].entries[0].resolve('answered before the failure');
    batches[0].finish(new Error('connection lost'));
    const results = await Promise.allSettled(first);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'answered before the failure' });
    expect(results.slice(1)).toEqual([
      { status: 'rejected', reason: new Error('connection lost') },
      { status: 'rejected', reason: new Error('connection lost') },
    ]);
    await sent(2);
    answerAll(1);
    expect(await next).toBe('answer 4');
  });

  it('a run that throws at once fails its batch the same way', async () => {
    const batcher = new Batcher<number, number>({
      run: () => {
        throw new Error('thrown synchronously');
      },
    });
    await expect(batcher.add(1)).rejects.toThrow('thrown synchronously');
    await expect(batcher.add(2)).rejects.toThrow('thrown synchronously');
  });

  it('leaves no caller waiting: a call the batch did not answer is rejected when the batch ends', async () => {
    const batcher = new Batcher<number, number>({
      run: async (batch) => {
        batch[0].resolve(1);
      },
    });
    const [a, b] = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    expect(a).toEqual({ status: 'fulfilled', value: 1 });
    expect(b.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason.message).toBe('the batch ended without answering this call');
  });
});
