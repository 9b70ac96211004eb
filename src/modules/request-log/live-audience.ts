/**
 * The live tail's audience: which partners have a user connected to the realtime channel, anywhere in
 * the deployment. The request log's live tail (`request.logged`) is only produced for them. Without it every logged
 * request of every partner would be published through Redis to every process, whether anyone watched
 * or not: on the cheapest partner path that publishing cost more than the request itself.
 *
 * This process's sockets are counted per partner as they connect and disconnect (exact, immediate).
 * With REDIS_URL, each process also keeps its partners in one sorted set (member: partner id, score:
 * when the entry expires): it adds a partner at once when its first socket connects and refreshes its
 * partners every ANNOUNCE_MS, and it reads the set every POLL_MS. A user connected to another process
 * is so seen within about a second; a process that dies leaves its entries to expire. Redis faults
 * change nothing here but freshness (decisions §11: realtime is within the process meanwhile anyway).
 *
 * The commands go through the realtime channel's own command connection (the Socket.IO adapter's
 * publisher), not the main client: this is background traffic, and the main client's commands are what
 * Redis's health (and its "unavailable" / "available again" log lines) is judged by.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Namespace } from 'socket.io';

const POLL_MS = 1_000;
const ANNOUNCE_MS = 5_000;
/** An entry not refreshed for this long is stale (its process is gone). */
const TTL_MS = 15_000;

export class LiveAudience {
  private readonly local = new Map<string, number>();
  private remote = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly key: string;
  private redis: Redis | null = null;

  constructor(
    prefix: string,
    private readonly log: Logger,
  ) {
    this.key = `${prefix}:realtime:partners`;
  }

  /**
   * Counts the PARTNER sockets of a realtime namespace this process serves (the hub has authenticated
   * them: `socket.data.principal`), and starts sharing with other processes through `redis` (null: no
   * Redis, this process only).
   */
  watch(nsp: Namespace, redis: Redis | null): void {
    this.redis ??= redis;
    nsp.on('connection', (socket) => {
      const partnerId = (socket.data.principal as { role?: string; partnerId?: string | null } | undefined)?.partnerId;
      if (!partnerId) return;
      this.join(partnerId);
      socket.on('disconnect', () => this.leave(partnerId));
    });
    this.start();
  }

  /** Starts sharing with other processes (nothing to do without Redis). */
  private start(): void {
    if (!this.redis || this.timers.length > 0) return;
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

  private join(partnerId: string): void {
    const count = this.local.get(partnerId) ?? 0;
    this.local.set(partnerId, count + 1);
    if (count === 0) void this.announce([partnerId]);
  }

  private leave(partnerId: string): void {
    const count = (this.local.get(partnerId) ?? 1) - 1;
    if (count > 0) this.local.set(partnerId, count);
    else this.local.delete(partnerId);
  }

  /** Whether a user of this partner is connected here or (as last read) to another process. */
  has(partnerId: string): boolean {
    return this.local.has(partnerId) || this.remote.has(partnerId);
  }

  private async announce(partners: string[]): Promise<void> {
    if (!this.redis || partners.length === 0) return;
    const expires = Date.now() + TTL_MS;
    await this.redis.zadd(this.key, ...partners.flatMap((p) => [expires, p])).catch((err) => this.failed(err));
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
    this.log.debug({ err }, 'realtime presence not shared');
  }
}
