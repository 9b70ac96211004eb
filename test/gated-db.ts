/**
 * A Db that can stop a request at a chosen statement, to force the order of two racing operations
 * deterministically (no timing): `pauseBefore(/UPDATE webhooks/)` holds the next statement matching the
 * pattern (inside its transaction, so the locks taken before it stay held) until `release()`.
 * `beforeEachCommit(look)` runs `look` at the end of every transaction, on its own database session
 * (what a session holds, such as its prepared statements, is visible only there). Everything else goes
 * straight to the wrapped database.
 */
import type pg from 'pg';
import type { Db, Queryable, TxOptions } from '../src/db/db.js';

interface Gate {
  pattern: RegExp;
  arrived: () => void;
  released: Promise<void>;
}

export interface Pause {
  /** Resolves when a statement matching the pattern is being held. */
  reached: Promise<void>;
  /** Lets the held statement run. */
  release(): void;
}

/** A statement's SQL, whether it was sent as text or as a prepared statement's `{ name, text }` (src/db/prepared.ts). */
export function textOf(text: string | { text: string }): string {
  return typeof text === 'string' ? text : text.text;
}

export class GatedDb implements Db {
  private readonly gates: Gate[] = [];
  private look: ((q: Queryable) => Promise<void>) | null = null;

  constructor(private readonly inner: Db) {}

  get kind() {
    return this.inner.kind;
  }

  get health() {
    return this.inner.health;
  }

  /** Holds the next statement (of any request) whose text matches `pattern`. */
  pauseBefore(pattern: RegExp): Pause {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.gates.push({ pattern, arrived, released });
    return { reached, release };
  }

  /** Runs `look` in every later transaction, after its work and before its COMMIT; null stops it. */
  beforeEachCommit(look: ((q: Queryable) => Promise<void>) | null): void {
    this.look = look;
  }

  private async pass(text: string | { text: string }): Promise<void> {
    const i = this.gates.findIndex((g) => g.pattern.test(textOf(text)));
    if (i < 0) return;
    const [gate] = this.gates.splice(i, 1);
    gate.arrived();
    await gate.released;
  }

  async query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]> {
    await this.pass(text);
    return this.inner.query<R>(text, params);
  }

  tx<T>(fn: (q: Queryable) => Promise<T>, options?: TxOptions): Promise<T> {
    return this.inner.tx(async (q) => {
      const result = await fn({
        query: async <R>(text: string, params?: readonly unknown[]) => {
          await this.pass(text);
          return q.query<R>(text, params);
        },
      });
      if (this.look) await this.look(q);
      return result;
    }, options);
  }

  connect(): Promise<pg.PoolClient> {
    return this.inner.connect();
  }

  async copyFrom(copy: string, data: string): Promise<void> {
    await this.pass(copy);
    return this.inner.copyFrom(copy, data);
  }

  withTimeout(): Db {
    return this;
  }

  listen(...args: Parameters<Db['listen']>): ReturnType<Db['listen']> {
    return this.inner.listen(...args);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
