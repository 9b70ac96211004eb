/**
 * The realtime channel (docs/decisions-log.md, 'Realtime channel'): Socket.IO namespace `/realtime` on the same listeners as
 * the API. The handshake reads `auth.token` (an access token); a missing, expired or forged one fails
 * the connection with `ERR_UNAUTHORIZED`, and a token that expires during a connection ends it.
 *
 * Rooms: `partner:<partnerId>` (every PARTNER user of that partner) and `admins`. Events:
 *   order.updated    { order }     → the partner owning the order's key (the order as that key sees it:
 *                                    orderAsSeenBy, visibility.ts) and admins (with customer)
 *   payment_intent.updated { paymentIntent } → the partner owning the order's key, and admins
 *   settlement.updated { settlement } → the settlement's partner, and admins (docs/payments.md)
 *   delivery.updated { delivery }  → the partner owning the webhook
 *   request.logged   { request }   → the partner owning the key (at most 50 a second per partner from a
 *                                    process: request-log/request-recorder.ts)
 *   webhook.updated  { webhook }   → the partner owning the webhook (edit, streak, isActive, secret rotation)
 *   offer.created | offer.expired | offer.withdrawn { offer } → the partner owning the offered key;
 *   offer.accepted | offer.declined | offer.expired { offer } → admins (docs/offers.md)
 *   order.tracking   { tracking }  → the partner owning the order's key and admins, after each flush of the
 *                                    location buffer (tracking/tracking-buffer.ts)
 *   listen.event     { apiKeyId, event } → the sockets that subscribed to the key's events with listen.subscribe
 *                                    (`partner listen`): the envelope its webhooks get (listen.ts)
 * They come from what the worker has committed (outbox rows it fanned out, delivery state changes), so
 * nothing is emitted for a change that rolled back.
 *
 * Only rooms with a socket connected somewhere get updates at all: the hub knows which (audience.ts: its
 * own sockets exactly, other processes' through Redis), and an update for a room nobody is in is not
 * built, emitted or published (the request log's live tail asks the same audience).
 *
 * One hub per process. Each listener gets its own Socket.IO server. Updates are sent in batches, one per
 * turn of the event loop: the hub emits each update on every server of this process, and only to a room
 * that has a socket there (an update nobody here listens to costs no encoding); with REDIS_URL it also
 * publishes the turn's batch ONCE, as one Socket.IO server-side event through the Redis adapter, and every
 * other process's servers emit it to their own sockets. (Emitting each update through the adapter, as
 * before, cost a Redis PUBLISH, a msgpack encoding and a decoding by every server in every process per
 * update: during a webhook burst, two updates per delivery, that was a sixth of the worker's CPU.)
 */
import { randomUUID } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { type DefaultEventsMap, Server, type Socket } from 'socket.io';
import type { AppContext } from '../../context.js';
import { ERROR_STATUS } from '../../errors.js';
import { duplicateRedis } from '../../redis.js';
import type { ApiKeyScope } from '../../shared/schemas.js';
import { type Principal, verifyAccessToken } from '../auth/tokens.js';
import { findKeyOwner } from '../keys/keys.repo.js';
import { OUTBOX_PROCESSED_EVENT, type ProcessedOutboxEvent } from '../orders/outbox.js';
import { orderAsSeenBy } from '../orders/visibility.js';
import { REQUEST_LOGGED_EVENT, type RequestLogged } from '../request-log/request-log.types.js';
import { TRACKING_UPDATED_EVENT, type TrackingUpdate } from '../tracking/tracking-buffer.js';
import { DELIVERY_UPDATED_EVENT, type DeliveryUpdated, WEBHOOK_UPDATED_EVENT, type WebhookUpdated } from '../webhooks/signals.js';
import { RealtimeAudience } from './audience.js';
import { ListenSessions } from './listen.js';

export const REALTIME_NAMESPACE = '/realtime';

const ADMINS_ROOM = 'admins';
const PARTNER_OFFER_EVENTS: ReadonlySet<string> = new Set(['offer.created', 'offer.expired', 'offer.withdrawn']);
const ADMIN_OFFER_EVENTS: ReadonlySet<string> = new Set(['offer.accepted', 'offer.declined', 'offer.expired']);
const partnerRoom = (partnerId: string) => `partner:${partnerId}`;

interface KeyOwner {
  partnerId: string;
  scopes: ApiKeyScope[];
}

// Order events that describe the same change as a status_changed row emitted beside them.
const REDUNDANT_ORDER_EVENTS = new Set(['order.delivered', 'order.cancelled']);

/** One update for the sockets of one room. */
interface RoomMessage {
  room: string;
  event: string;
  payload: unknown;
}

/** What one hub publishes to the other processes' servers (through the Redis adapter). */
interface RealtimeBatch {
  /** The publishing hub: the other servers of the same process have emitted it already. */
  hub: string;
  messages: RoomMessage[];
}

interface InterServerEvents {
  'realtime.batch': (batch: RealtimeBatch) => void;
  /** A room's first socket connected in the sending process (audience.ts). */
  'realtime.joined': (room: string) => void;
}

type RealtimeServer = Server<DefaultEventsMap, DefaultEventsMap, InterServerEvents>;

/** Updates per published batch (a fan-out of hundreds of deliveries is sent in several). */
const MAX_BATCH = 256;

export class RealtimeHub {
  private readonly servers: RealtimeServer[] = [];
  private readonly id = randomUUID();
  /** Updates of this turn of the event loop, sent together by `flush`. */
  private queued: RoomMessage[] = [];
  private flushScheduled = false;
  private readonly keyOwners = new Map<string, KeyOwner>();
  private readonly redisClients: Array<{ quit(): Promise<unknown>; disconnect(): void }> = [];
  private readonly unsubscribe: Array<() => void> = [];
  /** Rooms with a socket connected, here or elsewhere: updates are built and sent for them only. */
  private readonly audience: RealtimeAudience;
  /** `partner listen`: a key's events on a PARTNER user's socket (listen.ts). */
  private readonly listen: ListenSessions;
  private closed = false;

  constructor(private readonly ctx: AppContext) {
    this.audience = new RealtimeAudience(ctx.config.redisKeyPrefix, ctx.log);
    const noAudience = ctx.requestLog.setLiveAudience((partnerId) => this.audience.has(partnerRoom(partnerId)));
    this.listen = new ListenSessions(ctx, {
      has: (room) => this.audience.has(room),
      join: (socket, room) => this.joinRoom(socket, room),
      leave: (socket, room) => this.leaveRoom(socket, room),
      emit: (room, event, payload) => this.emit(room, event, payload),
    });
    const onOutbox = (rows: ProcessedOutboxEvent[]) => {
      void this.publishOrders(rows).catch((err) => ctx.log.error({ err }, 'realtime order fan-out failed'));
      void this.listen.publish(rows).catch((err) => ctx.log.error({ err }, 'realtime listen fan-out failed'));
    };
    const onDelivery = (event: DeliveryUpdated) =>
      this.emit(partnerRoom(event.partnerId), 'delivery.updated', { delivery: event.delivery });
    const onWebhook = (event: WebhookUpdated) =>
      this.emit(partnerRoom(event.partnerId), 'webhook.updated', { webhook: event.webhook });
    const onRequestLogged = (event: RequestLogged) =>
      this.emit(partnerRoom(event.partnerId), 'request.logged', { request: event.request });
    const onTracking = (updates: TrackingUpdate[]) =>
      void this.publishTracking(updates).catch((err) => ctx.log.error({ err }, 'realtime tracking fan-out failed'));
    ctx.events.on(TRACKING_UPDATED_EVENT, onTracking);
    this.unsubscribe.push(() => ctx.events.off(TRACKING_UPDATED_EVENT, onTracking));
    ctx.events.on(OUTBOX_PROCESSED_EVENT, onOutbox);
    ctx.events.on(DELIVERY_UPDATED_EVENT, onDelivery);
    ctx.events.on(REQUEST_LOGGED_EVENT, onRequestLogged);
    ctx.events.on(WEBHOOK_UPDATED_EVENT, onWebhook);
    this.unsubscribe.push(
      () => ctx.events.off(OUTBOX_PROCESSED_EVENT, onOutbox),
      () => ctx.events.off(DELIVERY_UPDATED_EVENT, onDelivery),
      () => ctx.events.off(REQUEST_LOGGED_EVENT, onRequestLogged),
      noAudience,
      () => this.audience.stop(),
      () => ctx.events.off(WEBHOOK_UPDATED_EVENT, onWebhook),
    );
    const untrackMetrics = ctx.metrics?.trackRealtime(() => this.connections);
    if (untrackMetrics) this.unsubscribe.push(untrackMetrics);
  }

  /** Serves the channel on a listener's HTTP server (or, with no server, only emits: worker processes). */
  attach(httpServer?: HttpServer): RealtimeServer {
    const io: RealtimeServer = new Server({ serveClient: false, cors: { origin: true, credentials: false } });
    if (this.ctx.redis) {
      // The adapter never awaits its PUBLISH commands: duplicateRedis handles their rejections. While
      // Redis is out a batch is emitted to this process's sockets only (docs/decisions-log.md, 'Dependency faults') and its PUBLISH
      // fails at once; nothing is queued to be sent late.
      const pub = duplicateRedis(this.ctx.redis, this.ctx.log, 'realtime-pub');
      const sub = duplicateRedis(this.ctx.redis, this.ctx.log, 'realtime-sub', { subscriber: true });
      this.redisClients.push(pub, sub);
      io.adapter(createAdapter(pub, sub, { key: `${this.ctx.config.redisKeyPrefix}:realtime` }));
      this.audience.share(pub);
    }
    const nsp = io.of(REALTIME_NAMESPACE);
    // Another hub's batch (another process, or a hub of another context): emitted to this server's sockets.
    // Anything else on the channel (a process of another version) is ignored rather than thrown inside
    // the adapter's message handler.
    nsp.on('realtime.batch', (batch) => {
      if (batch?.hub !== this.id && Array.isArray(batch?.messages)) this.emitLocally(io, batch.messages);
    });
    nsp.on('realtime.joined', (room) => {
      if (typeof room === 'string') this.audience.noteRemote(room);
    });
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

  /** Sockets connected to this process, on every listener (the metrics' realtime_connections). */
  get connections(): number {
    let n = 0;
    for (const io of this.servers) n += io.of(REALTIME_NAMESPACE).sockets.size;
    return n;
  }

  /** Stops serving on one listener's server without closing the HTTP server itself. */
  async detach(io: RealtimeServer): Promise<void> {
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
    if (typeof token !== 'string' || token.length === 0)
      throw refusal('ERR_UNAUTHORIZED', 'auth.token (an access token) is required');
    let principal: Principal & { exp: number };
    try {
      principal = await verifyAccessToken(this.ctx.secrets.jwtKey, this.ctx.clock, token);
    } catch {
      throw refusal('ERR_UNAUTHORIZED', 'The access token is invalid or expired');
    }
    if (principal.role === 'CUSTOMER' || (principal.role === 'PARTNER' && !principal.partnerId)) {
      throw refusal('ERR_FORBIDDEN', 'Only PARTNER and ADMIN accounts may use the realtime channel');
    }
    socket.data.principal = principal;
  }

  private onConnection(socket: Socket): void {
    const principal = socket.data.principal as Principal & { exp: number };
    const room = principal.role === 'ADMIN' ? ADMINS_ROOM : partnerRoom(principal.partnerId as string);
    this.joinRoom(socket, room);
    socket.on('disconnect', () => this.audience.leave(room));
    this.listen.serve(socket, principal.role === 'PARTNER' ? (principal.partnerId ?? null) : null);
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

  private joinRoom(socket: Socket, room: string): void {
    void socket.join(room);
    // The room's first socket in this process: other processes start publishing for it now.
    if (this.audience.join(room) && this.ctx.redis) socket.nsp.serverSideEmit('realtime.joined', room);
  }

  /** Leaves a room before the socket disconnects (on disconnect Socket.IO leaves them by itself). */
  private leaveRoom(socket: Socket, room: string): void {
    void socket.leave(room);
    this.audience.leave(room);
  }

  /** Queues an update; the turn's updates go out together (see the top of this file). */
  private emit(room: string, event: string, payload: unknown): void {
    if (this.servers.length === 0 || this.closed || !this.audience.has(room)) return;
    this.queued.push({ room, event, payload });
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const messages = this.queued;
    this.queued = [];
    if (this.closed || this.servers.length === 0) return;
    for (const io of this.servers) this.emitLocally(io, messages);
    if (!this.ctx.redis) return;
    // One server's adapter publishes for the whole process; the others ignore this hub's own batches.
    const nsp = this.servers[0].of(REALTIME_NAMESPACE);
    for (let i = 0; i < messages.length; i += MAX_BATCH) {
      nsp.serverSideEmit('realtime.batch', { hub: this.id, messages: messages.slice(i, i + MAX_BATCH) });
    }
  }

  /** Emits to this server's own sockets only, and only to rooms that have one here. */
  private emitLocally(io: RealtimeServer, messages: RoomMessage[]): void {
    const nsp = io.of(REALTIME_NAMESPACE);
    for (const m of messages) {
      if (nsp.adapter.rooms.has(m.room)) nsp.local.to(m.room).emit(m.event, m.payload);
    }
  }

  private async publishOrders(rows: ProcessedOutboxEvent[]): Promise<void> {
    if (this.audience.empty) return;
    for (const row of rows) {
      if (row.type.startsWith('payment_intent.') || row.type.startsWith('settlement.')) {
        await this.publishPayment(row);
        continue;
      }
      if (row.type.startsWith('offer.')) {
        await this.publishOffer(row);
        continue;
      }
      const order = (row.data as { order?: { customer?: unknown } } | undefined)?.order;
      if (!order || REDUNDANT_ORDER_EVENTS.has(row.type)) continue;
      this.emit(ADMINS_ROOM, 'order.updated', { order });
      if (!row.assignedKeyId) continue;
      const owner = await this.ownerOf(row.assignedKeyId);
      if (!owner || !this.audience.has(partnerRoom(owner.partnerId))) continue;
      this.emit(partnerRoom(owner.partnerId), 'order.updated', { order: orderAsSeenBy(owner, order) });
    }
  }

  /**
   * payment_intent.updated { paymentIntent } to the partner owning the order's key, and
   * settlement.updated { settlement } to the settlement's partner; both to admins (docs/payments.md).
   */
  private async publishPayment(row: ProcessedOutboxEvent): Promise<void> {
    const { paymentIntent, settlement } = row.data as { paymentIntent?: unknown; settlement?: unknown };
    if (paymentIntent) {
      this.emit(ADMINS_ROOM, 'payment_intent.updated', { paymentIntent });
      const owner = row.assignedKeyId ? await this.ownerOf(row.assignedKeyId) : null;
      if (owner) this.emit(partnerRoom(owner.partnerId), 'payment_intent.updated', { paymentIntent });
    } else if (settlement) {
      this.emit(ADMINS_ROOM, 'settlement.updated', { settlement });
      if (row.partnerId) this.emit(partnerRoom(row.partnerId), 'settlement.updated', { settlement });
    }
  }

  /**
   * Offers (docs/offers.md): offer.created, offer.expired, offer.withdrawn { offer } to the partner owning
   * the offered key; offer.accepted, offer.declined, offer.expired { offer } to admins.
   */
  private async publishOffer(row: ProcessedOutboxEvent): Promise<void> {
    const offer = (row.data as { offer?: unknown }).offer;
    if (!offer) return;
    if (ADMIN_OFFER_EVENTS.has(row.type)) this.emit(ADMINS_ROOM, row.type, { offer });
    if (!PARTNER_OFFER_EVENTS.has(row.type) || !row.assignedKeyId) return;
    const owner = await this.ownerOf(row.assignedKeyId);
    if (owner) this.emit(partnerRoom(owner.partnerId), row.type, { offer });
  }

  private async publishTracking(updates: TrackingUpdate[]): Promise<void> {
    if (this.audience.empty) return;
    for (const { assignedKeyId, tracking } of updates) {
      this.emit(ADMINS_ROOM, 'order.tracking', { tracking });
      if (!assignedKeyId) continue;
      const owner = await this.ownerOf(assignedKeyId);
      if (owner) this.emit(partnerRoom(owner.partnerId), 'order.tracking', { tracking });
    }
  }

  private async ownerOf(keyId: string): Promise<KeyOwner | null> {
    const known = this.keyOwners.get(keyId);
    if (known) return known;
    const owner = await findKeyOwner(keyId, this.ctx.db);
    if (!owner) return null;
    // Scopes of a key never change after creation, and its partner never does: safe to remember.
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

/**
 * A refused handshake: the client's `connect_error` carries the code as `err.message` and the error
 * envelope of the HTTP API as `err.data`.
 */
function refusal(
  code: 'ERR_UNAUTHORIZED' | 'ERR_FORBIDDEN',
  message: string,
): Error & { data: { statusCode: number; code: string; message: string } } {
  return Object.assign(new Error(code), { data: { statusCode: ERROR_STATUS[code], code, message } });
}
