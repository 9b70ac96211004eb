/**
 * The realtime channel (spec 1.5, decisions §7): Socket.IO namespace `/realtime` on the same listeners as
 * the API. The handshake reads `auth.token` (an access token); a missing, expired or forged one fails
 * the connection with `ERR_UNAUTHORIZED`, and a token that expires during a connection ends it.
 *
 * Rooms: `partner:<partnerId>` (every PARTNER user of that partner) and `admins`. Events:
 *   order.updated    { order }     → the partner owning the order's key (customer only with orders:pii)
 *                                    and admins (with customer)
 *   delivery.updated { delivery }  → the partner owning the webhook
 * They come from what the worker has committed (outbox rows it fanned out, delivery state changes), so
 * nothing is emitted for a change that rolled back.
 *
 * One hub per process. Each listener gets its own Socket.IO server; without Redis an event is emitted on
 * each of them. With REDIS_URL every server uses the Redis adapter, and an event is emitted once, through
 * one server: the adapter carries it to every other server, in this process and in others.
 */
import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type Socket } from 'socket.io';
import type { AppContext } from '../../context.js';
import { type Principal, verifyAccessToken } from '../auth/tokens.js';

export const REALTIME_NAMESPACE = '/realtime';

interface OutboxEvent {
  type: string;
  orderId: string | null;
  assignedKeyId: string | null;
  data: { order?: Record<string, unknown> & { customer?: unknown } };
}

interface KeyOwner {
  partnerId: string;
  pii: boolean;
}

// Order events that describe the same change as a status_changed row emitted beside them.
const REDUNDANT_ORDER_EVENTS = new Set(['order.delivered', 'order.cancelled']);

export class RealtimeHub {
  private readonly servers: Server[] = [];
  private readonly keyOwners = new Map<string, KeyOwner>();
  private readonly redisClients: Array<{ quit(): Promise<unknown>; disconnect(): void }> = [];
  private readonly unsubscribe: Array<() => void> = [];
  private closed = false;

  constructor(private readonly ctx: AppContext) {
    const onOutbox = (rows: OutboxEvent[]) =>
      void this.publishOrders(rows).catch((err) => ctx.log.error({ err }, 'realtime order fan-out failed'));
    const onDelivery = (event: { partnerId: string; delivery: unknown }) =>
      this.emit(`partner:${event.partnerId}`, 'delivery.updated', { delivery: event.delivery });
    ctx.events.on('outbox.processed', onOutbox);
    ctx.events.on('delivery.updated', onDelivery);
    this.unsubscribe.push(
      () => ctx.events.off('outbox.processed', onOutbox),
      () => ctx.events.off('delivery.updated', onDelivery),
    );
  }

  /** Serves the channel on a listener's HTTP server (or, with no server, only emits: worker processes). */
  attach(httpServer?: HttpServer): Server {
    const io = new Server({ serveClient: false, cors: { origin: true, credentials: false } });
    if (this.ctx.redis) {
      const pub = this.ctx.redis.duplicate();
      const sub = this.ctx.redis.duplicate();
      this.redisClients.push(pub, sub);
      io.adapter(createAdapter(pub, sub, { key: `${this.ctx.config.redisKeyPrefix}:realtime` }));
    }
    const nsp = io.of(REALTIME_NAMESPACE);
    nsp.use((socket, next) => {
      void this.authenticate(socket)
        .then(() => next())
        .catch((err: Error) => next(err));
    });
    nsp.on('connection', (socket) => this.onConnection(socket));
    if (httpServer) io.attach(httpServer);
    this.servers.push(io);
    return io;
  }

  /** Stops serving on one listener's server without closing the HTTP server itself. */
  async detach(io: Server): Promise<void> {
    const i = this.servers.indexOf(io);
    if (i >= 0) this.servers.splice(i, 1);
    io.of(REALTIME_NAMESPACE).disconnectSockets(true);
    io.engine?.close();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const off of this.unsubscribe) off();
    for (const io of [...this.servers]) await this.detach(io);
    for (const c of this.redisClients) await c.quit().catch(() => c.disconnect());
  }

  private async authenticate(socket: Socket): Promise<void> {
    const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || token.length === 0) throw new Error('ERR_UNAUTHORIZED');
    let principal: Principal & { exp: number };
    try {
      principal = await verifyAccessToken(this.ctx.secrets.jwtKey, this.ctx.clock, token);
    } catch {
      throw new Error('ERR_UNAUTHORIZED');
    }
    if (principal.role === 'CUSTOMER' || (principal.role === 'PARTNER' && !principal.partnerId)) throw new Error('ERR_FORBIDDEN');
    socket.data.principal = principal;
  }

  private onConnection(socket: Socket): void {
    const principal = socket.data.principal as Principal & { exp: number };
    if (principal.role === 'ADMIN') void socket.join('admins');
    else void socket.join(`partner:${principal.partnerId}`);
    // A token that expires during the connection ends it (the client reconnects with a fresh token).
    const msLeft = principal.exp * 1000 - this.ctx.clock.nowMs();
    const timer = setTimeout(
      () => {
        socket.emit('session.expired', { code: 'ERR_UNAUTHORIZED' });
        socket.disconnect(true);
      },
      Math.max(0, Math.min(msLeft, 2_147_000_000)),
    );
    timer.unref();
    socket.on('disconnect', () => clearTimeout(timer));
    // The test clock can jump past the expiry: check again whenever it moves.
    const onWake = () => {
      if (principal.exp * 1000 <= this.ctx.clock.nowMs()) {
        socket.emit('session.expired', { code: 'ERR_UNAUTHORIZED' });
        socket.disconnect(true);
      }
    };
    this.ctx.events.on('wake', onWake);
    socket.on('disconnect', () => this.ctx.events.off('wake', onWake));
  }

  private emit(room: string, event: string, payload: unknown): void {
    if (this.servers.length === 0) return;
    // With the Redis adapter one emit reaches every server everywhere; without it, each local server.
    const targets = this.ctx.redis ? this.servers.slice(0, 1) : this.servers;
    for (const io of targets) io.of(REALTIME_NAMESPACE).to(room).emit(event, payload);
  }

  private async publishOrders(rows: OutboxEvent[]): Promise<void> {
    for (const row of rows) {
      const order = row.data?.order;
      if (!order || REDUNDANT_ORDER_EVENTS.has(row.type)) continue;
      this.emit('admins', 'order.updated', { order });
      if (!row.assignedKeyId) continue;
      const owner = await this.ownerOf(row.assignedKeyId);
      if (!owner) continue;
      this.emit(`partner:${owner.partnerId}`, 'order.updated', { order: owner.pii ? order : { ...order, customer: null } });
    }
  }

  private async ownerOf(keyId: string): Promise<KeyOwner | null> {
    const known = this.keyOwners.get(keyId);
    if (known) return known;
    const rows = await this.ctx.db.query<{ partner_id: string; scopes: string[] }>(
      'SELECT partner_id, scopes FROM api_keys WHERE id = $1',
      [keyId],
    );
    if (!rows[0]) return null;
    // Scopes of a key never change after creation, and its partner never does: safe to remember.
    const owner = { partnerId: rows[0].partner_id, pii: rows[0].scopes.includes('orders:pii') };
    if (this.keyOwners.size > 100_000) this.keyOwners.clear();
    this.keyOwners.set(keyId, owner);
    return owner;
  }
}

const hubs = new WeakMap<AppContext, { hub: RealtimeHub; users: number }>();

/** The process's hub for this context, created on first use and closed when its last user releases it. */
export function acquireRealtimeHub(ctx: AppContext): { hub: RealtimeHub; release: () => Promise<void> } {
  let entry = hubs.get(ctx);
  if (!entry) {
    entry = { hub: new RealtimeHub(ctx), users: 0 };
    hubs.set(ctx, entry);
  }
  entry.users++;
  const current = entry;
  let released = false;
  return {
    hub: current.hub,
    release: async () => {
      if (released) return;
      released = true;
      current.users--;
      if (current.users === 0) {
        hubs.delete(ctx);
        await current.hub.close();
      }
    },
  };
}
