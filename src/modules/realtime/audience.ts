/**
 * The realtime channel's audience: which rooms (`partner:<id>`, `admins`) have a socket connected
 * anywhere in the deployment. The hub builds, emits and publishes an update only for a room with
 * somebody in it, and the request log's live tail is only produced for partners with a user connected:
 * without it every order change, every delivery attempt (two updates each) and every logged request
 * would be encoded and published through Redis to every process, and decoded there, whether anyone
 * watched or not (during a webhook burst that was most of the worker's CPU).
 *
 * This process's sockets are counted per room as they connect and disconnect (exact, immediate).
 * With Redis, the rooms are shared two ways:
 *  - when a room's first socket connects here, the hub tells the other processes at once (a
 *    server-side event through the Socket.IO adapter: `noteRemote` on their side), so an update
 *    made anywhere a moment later reaches the new socket;
 *  - each process also keeps its rooms in one sorted set (member: room, score: when the entry
 *    expires), refreshed every ANNOUNCE_MS and read every POLL_MS: a process that starts later learns
 *    of rooms that were already there, and a process that dies leaves its entries to expire.
 * A room left empty is still seen as watched for up to TTL_MS elsewhere (updates published for
 * nobody meanwhile: harmless). Redis faults change nothing here but freshness (docs/decisions-log.md, 'Dependency faults':
 * realtime is within the process meanwhile anyway).
 *
 * The commands go through the realtime channel's own command connection (the Socket.IO adapter's
 * publisher), never the main client: this is background traffic, and the main client's commands are
 * what Redis's health (and its "unavailable" / "available again" log lines) is judged by.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

const POLL_MS = 1_000;
const ANNOUNCE_MS = 5_000;
/** An entry not refreshed for this long is stale (its process is gone, or its last socket left). */
const TTL_MS = 15_000;

export class RealtimeAudience {
  private readonly local = new Map<string, number>();
  /** Rooms with a socket in another process, as last read from Redis. */
  private remote = new Set<string>();
  /** Rooms another process told us about since (room → until when the notice counts). */
  private readonly noticed = new Map<string, number>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly key: string;
  private redis: Redis | null = null;

  constructor(
    prefix: string,
    private readonly log: Logger,
  ) {
    this.key = `${prefix}:realtime:rooms`;
  }

  /** Starts sharing through `redis` (the channel's command connection); nothing to do without it. */
  share(redis: Redis): void {
    if (this.redis) return;
    this.redis = redis;
    const poll = setInterval(() => void this.poll(), POLL_MS);
    const announce = setInterval(() => void this.announce([...this.local.keys()]), ANNOUNCE_MS);
    poll.unref();
    announce.unref();
    this.timers.push(poll, announce);
    void this.poll();
  }

  stop(): void {
    for (const t of this.timers.splice(0)) clearInterval(t);
  }

  /** A socket joined `room` here. True when it is the room's first socket in this process. */
  join(room: string): boolean {
    const count = this.local.get(room) ?? 0;
    this.local.set(room, count + 1);
    if (count > 0) return false;
    void this.announce([room]);
    return true;
  }

  leave(room: string): void {
    const count = (this.local.get(room) ?? 1) - 1;
    if (count > 0) this.local.set(room, count);
    else this.local.delete(room);
  }

  /** Another process says `room` has a socket there now (before its sorted-set entry is read here). */
  noteRemote(room: string): void {
    this.noticed.set(room, Date.now() + TTL_MS);
  }

  /** Whether a socket of `room` is connected here or (as last heard) in another process. */
  has(room: string): boolean {
    if (this.local.has(room) || this.remote.has(room)) return true;
    const until = this.noticed.get(room);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.noticed.delete(room);
    return false;
  }

  /** Whether anybody is connected anywhere (nothing to build otherwise). */
  get empty(): boolean {
    return this.local.size === 0 && this.remote.size === 0 && this.noticed.size === 0;
  }

  private async announce(rooms: string[]): Promise<void> {
    if (!this.redis || rooms.length === 0) return;
    const expires = Date.now() + TTL_MS;
    await this.redis.zadd(this.key, ...rooms.flatMap((r) => [expires, r])).catch((err) => this.failed(err));
  }

  private async poll(): Promise<void> {
    if (!this.redis) return;
    const now = Date.now();
    try {
      await this.redis.zremrangebyscore(this.key, '-inf', now);
      this.remote = new Set(await this.redis.zrangebyscore(this.key, now, '+inf'));
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    // The outage itself is logged once by Redis's health (context.ts).
    this.log.debug({ err }, 'realtime audience not shared');
  }
}
