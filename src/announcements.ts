/**
 * Changes announced to every process through Redis pub/sub, answered by each listener once it has
 * applied them (docs/performance.md, 'Partner reads without a Redis round trip').
 *
 * Partner reads no longer ask Redis on every request whether a cached key record or order answer is
 * still current: each process is told instead. A bare PUBLISH would leave a window in which a request
 * reaching another process right after the change was answered is served from what that process had
 * cached (the message still on its way). So `announce` waits for the listeners: every process applies
 * the message (drops the cached keys, moves its order versions) and then publishes an acknowledgement;
 * the announcer resolves once as many acknowledgements as PUBLISH counted listeners have arrived, or
 * after `waitMs` (100 ms) at most: a process too busy or cut off to answer by then is bounded by the
 * safeguards of what it caches (the key-cache generation checked whenever a key takes a slice of its rate
 * limit, at most five seconds apart; an order answer's 60 s age limit; the subscription checks).
 * On the writer's side that is one PUBLISH and a round of acknowledgements, about a millisecond, paid by
 * the change, never by a read. The announcing process counts its own listener when its subscriber
 * applies the message, without an acknowledgement through Redis: alone, an announcement costs the
 * PUBLISH and the message's way back.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** The longest an announcement waits for its listeners (the bound of a revocation across processes). */
export const ANNOUNCE_WAIT_MS = 100;

interface Waiting {
  expected: number;
  got: number;
  done: () => void;
}

export class Announcer {
  readonly ackChannel: string;
  private readonly handlers = new Map<string, (payload: string) => void>();
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    /** A command connection (PUBLISH). */
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.ackChannel = `${prefix}:announcements:ack`;
  }

  /** Applies the payloads announced on `channel` (by any process, this one included). */
  on(channel: string, apply: (payload: string) => void): void {
    this.handlers.set(channel, apply);
  }

  /** The channels a subscriber must listen to: every announced one and the acknowledgements. */
  channels(): string[] {
    return [...this.handlers.keys(), this.ackChannel];
  }

  /** A message of the subscriber connection. */
  message(channel: string, message: string): void {
    if (channel === this.ackChannel) {
      const waiting = this.waiting.get(message);
      if (waiting && ++waiting.got >= waiting.expected) waiting.done();
      return;
    }
    const apply = this.handlers.get(channel);
    if (!apply) return;
    const space = message.indexOf(' ');
    if (space < 0) return;
    apply(message.slice(space + 1));
    const nonce = message.slice(0, space);
    // This process's own announcement: it has been applied here, which needs no message to say so.
    const own = this.waiting.get(nonce);
    if (own) {
      if (++own.got >= own.expected) own.done();
      return;
    }
    void this.redis.publish(this.ackChannel, nonce).catch(() => {});
  }

  /**
   * Publishes `payload` on `channel` and resolves once every listener has applied it, or after
   * `waitMs`. Rejects only when the PUBLISH itself fails (Redis unreachable).
   */
  async announce(channel: string, payload: string, waitMs = ANNOUNCE_WAIT_MS): Promise<void> {
    const nonce = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const acknowledged = new Promise<void>((resolve) => {
      this.waiting.set(nonce, { expected: Number.POSITIVE_INFINITY, got: 0, done: resolve });
    });
    try {
      const listeners = await this.redis.publish(channel, `${nonce} ${payload}`);
      const waiting = this.waiting.get(nonce) as Waiting;
      waiting.expected = listeners;
      if (waiting.got >= listeners) return;
      await Promise.race([
        acknowledged,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(nonce);
    }
  }
}
