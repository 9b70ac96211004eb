/**
 * Listen sessions on the realtime channel (docs/decisions-log.md, 'CLI and listen sessions', `partner listen`): a PARTNER user's socket
 * subscribes to one of its partner's keys and receives that key's events as the key's webhooks would
 * get them, without a webhook.
 *
 *   → `listen.subscribe { apiKeyId, events? }` with an acknowledgement: `{ subscription: { apiKeyId,
 *     environment, events } }`, or `{ error }` (the HTTP API's envelope): 400 ERR_VALIDATION (a bad id or
 *     event kind), 403 ERR_FORBIDDEN (not a PARTNER account), 404 ERR_NOT_FOUND (not one of the partner's
 *     keys), 401 ERR_API_KEY_REVOKED (revoked or rotated out). Subscribing to the same key again replaces
 *     its event kinds.
 *   → `listen.unsubscribe { apiKeyId }`, acknowledged with `{ unsubscribed: apiKeyId }`, or with the 400
 *     ERR_VALIDATION envelope when apiKeyId is not a uuid.
 *   ← `listen.event { apiKeyId, event }`: `event` is the envelope a delivery's body holds (same id, type,
 *     createdAt, environment, data; fields in the same order), routed by the rule of the webhook fan-out
 *     (routing.ts eventDataFor: the key's environment, the orders it may see, `customer` only with
 *     orders:pii) and built by the same code (envelope.ts, the event catalog's schemas).
 *
 * Cost. A session joins one room per event kind, `listen:<keyId>:<kind>`, plus `listen:*:<kind>`, and the
 * hub's audience (audience.ts) knows, across processes, which rooms have a socket somewhere. When the
 * worker's fan-out commits a batch ('outbox.processed', in whichever process fanned it out), rows of
 * a kind nobody listens to anywhere are skipped before anything is read or built: without sessions the
 * fan-out pays one Map lookup per row. Only for the rest are the keys that may see them read (one query)
 * and, for `batch.completed`, the placements of the batch's orders.
 * Events are sent like every other update of the hub (batched, through Redis to the process holding the
 * socket). Best effort, like the rest of the channel: an event committed while a session is
 * disconnected is not replayed (its webhooks, if any, still get it).
 */
import type { Socket } from 'socket.io';
import type { AppContext } from '../../context.js';
import { ERROR_STATUS, type ErrorCode } from '../../errors.js';
import { isUuid } from '../../shared/ids.js';
import type { ProcessedOutboxEvent } from '../../shared/outbox.js';
import { environmentName, PAYMENT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '../../shared/schemas.js';
import { findKey } from '../keys/keys.repo.js';
import { findOrderPlacements } from '../orders/order-reads.repo.js';
import type { OrderPlacement } from '../orders/visibility.js';
import { buildEnvelope } from '../webhooks/envelope.js';
import { batchOrderCodes, eventDataFor, keysOfEvent } from '../webhooks/routing.js';
import { findListenKeys } from './listen.repo.js';

export const LISTEN_SUBSCRIBE = 'listen.subscribe';
export const LISTEN_UNSUBSCRIBE = 'listen.unsubscribe';
export const LISTEN_EVENT = 'listen.event';

export const listenRoom = (keyId: string, type: string) => `listen:${keyId}:${type}`;
/** Somebody listens to `type` for some key: the gate checked before anything is read. */
const anyListenRoom = (type: string) => `listen:*:${type}`;

interface ErrorEnvelope {
  statusCode: number;
  code: ErrorCode;
  message: string;
  details?: Array<{ field: string; messages: string[] }>;
}

type Ack = (answer: unknown) => void;

const refusal = (code: ErrorCode, message: string, details?: ErrorEnvelope['details']): { error: ErrorEnvelope } => ({
  error: { statusCode: ERROR_STATUS[code], code, message, ...(details ? { details } : {}) },
});

/** What listen sessions need of the hub: its audience, its rooms and its batched emit. */
export interface ListenHub {
  has(room: string): boolean;
  join(socket: Socket, room: string): void;
  leave(socket: Socket, room: string): void;
  emit(room: string, event: string, payload: unknown): void;
}

const invalidKeyId = () =>
  refusal('ERR_VALIDATION', 'apiKeyId must be the id (uuid) of one of your keys', [
    { field: 'apiKeyId', messages: ['must be a uuid'] },
  ]);

/** Validates a subscribe message: the key id and the event kinds (default: all of them). */
function parseSubscribe(
  payload: unknown,
): { apiKeyId: string; events: string[]; defaulted?: boolean } | { error: ErrorEnvelope } {
  const body = (typeof payload === 'object' && payload !== null ? payload : {}) as { apiKeyId?: unknown; events?: unknown };
  if (typeof body.apiKeyId !== 'string' || !isUuid(body.apiKeyId)) return invalidKeyId();
  if (body.events === undefined) return { apiKeyId: body.apiKeyId, events: [...WEBHOOK_EVENTS], defaulted: true };
  const events = body.events;
  const known = new Set<string>(WEBHOOK_EVENTS);
  const bad = Array.isArray(events)
    ? events.flatMap((e, i) =>
        typeof e === 'string' && known.has(e) && events.indexOf(e) === i
          ? []
          : [{ field: `events.${i}`, messages: [`must be one of ${WEBHOOK_EVENTS.join(', ')}, without repeats`] }],
      )
    : [{ field: 'events', messages: ['must be an array of event kinds'] }];
  if (Array.isArray(events) && events.length === 0)
    bad.push({ field: 'events', messages: ['must name at least one event kind'] });
  if (bad.length > 0) return refusal('ERR_VALIDATION', 'events must be event kinds of the catalog', bad);
  return { apiKeyId: body.apiKeyId, events: events as string[] };
}

export class ListenSessions {
  /** Batches are published one after another, so a session gets events in the order they were fanned out. */
  private publishing: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: Pick<AppContext, 'db' | 'clock' | 'log'>,
    private readonly hub: ListenHub,
  ) {}

  /** Serves `listen.subscribe` / `listen.unsubscribe` on a connected socket. */
  serve(socket: Socket, partnerId: string | null): void {
    /** This socket's subscriptions: key → the rooms it joined for it. */
    const joined = new Map<string, string[]>();
    const drop = (keyId: string) => {
      for (const room of joined.get(keyId) ?? []) this.hub.leave(socket, room);
      joined.delete(keyId);
    };
    socket.on(LISTEN_SUBSCRIBE, (payload: unknown, ack?: Ack) => {
      void this.subscribe(partnerId, payload)
        .then((answer) => {
          if ('subscription' in answer && socket.connected) {
            const { apiKeyId, events } = answer.subscription;
            drop(apiKeyId);
            const rooms = events.flatMap((type) => [listenRoom(apiKeyId, type), anyListenRoom(type)]);
            for (const room of rooms) this.hub.join(socket, room);
            joined.set(apiKeyId, rooms);
          }
          return answer;
        })
        .catch((err) => {
          this.ctx.log.error({ err }, 'listen.subscribe failed');
          return refusal('ERR_INTERNAL', 'The subscription could not be made; try again');
        })
        .then((answer) => typeof ack === 'function' && ack(answer));
    });
    socket.on(LISTEN_UNSUBSCRIBE, (payload: unknown, ack?: Ack) => {
      const { apiKeyId } = (typeof payload === 'object' && payload !== null ? payload : {}) as { apiKeyId?: unknown };
      if (typeof apiKeyId !== 'string' || !isUuid(apiKeyId)) {
        if (typeof ack === 'function') ack(invalidKeyId());
        return;
      }
      drop(apiKeyId);
      if (typeof ack === 'function') ack({ unsubscribed: apiKeyId });
    });
    socket.on('disconnect', () => {
      for (const keyId of [...joined.keys()]) drop(keyId);
    });
  }

  private async subscribe(
    partnerId: string | null,
    payload: unknown,
  ): Promise<
    { subscription: { apiKeyId: string; environment: 'live' | 'sandbox'; events: string[] } } | { error: ErrorEnvelope }
  > {
    if (!partnerId) return refusal('ERR_FORBIDDEN', 'Only PARTNER accounts can listen to a key’s events');
    const request = parseSubscribe(payload);
    if ('error' in request) return request;
    const key = await findKey(partnerId, request.apiKeyId, this.ctx.db);
    if (!key) return refusal('ERR_NOT_FOUND', `No key ${request.apiKeyId} among your keys`);
    if (key.revokedAt !== null) {
      const rotated = key.successorId !== null && key.revokedAt > this.ctx.clock.now();
      return refusal(
        'ERR_API_KEY_REVOKED',
        rotated ? `Key ${key.id} was rotated: listen to its successor ${key.successorId}` : `Key ${key.id} is revoked`,
      );
    }
    // The payment kinds need payments:read, as for webhooks (docs/payments.md): left out of the default
    // subscription of a key without it, refused when asked for.
    let events = request.events;
    if (!key.scopes.includes('payments:read')) {
      if (request.defaulted) events = events.filter((e) => !PAYMENT_WEBHOOK_EVENTS.has(e));
      else if (events.some((e) => PAYMENT_WEBHOOK_EVENTS.has(e))) {
        return refusal('ERR_API_KEY_SCOPE', `Key ${key.id} lacks the scope payments:read, which the payment kinds need`);
      }
    }
    return {
      subscription: {
        apiKeyId: key.id,
        environment: environmentName(key.environment),
        events,
      },
    };
  }

  /** A committed fan-out batch: its events to the listen sessions that may see them (see the top). */
  publish(rows: ProcessedOutboxEvent[]): Promise<void> {
    const wanted = rows.filter((r) => this.hub.has(anyListenRoom(r.type)));
    if (wanted.length === 0) return Promise.resolve();
    const done = this.publishing.then(() => this.send(wanted));
    this.publishing = done.catch(() => {});
    return done;
  }

  private async send(wanted: ProcessedOutboxEvent[]): Promise<void> {
    const orders: Map<string, OrderPlacement> = wanted.some((r) => r.type === 'batch.completed')
      ? await findOrderPlacements([...new Set(wanted.flatMap(batchOrderCodes))], this.ctx.db)
      : new Map();
    const keys = await findListenKeys(
      {
        keyIds: [...new Set(wanted.flatMap((r) => keysOfEvent(r, orders)))],
        environments: [...new Set(wanted.map((r) => r.environment))],
        partnerIds: [...new Set(wanted.flatMap((r) => (r.partnerId ? [r.partnerId] : [])))],
      },
      this.ctx.clock.now(),
      this.ctx.db,
    );
    for (const row of wanted) {
      const { createdAt } = row;
      for (const key of keys) {
        const room = listenRoom(key.id, row.type);
        if (!this.hub.has(room)) continue;
        const data = eventDataFor(row, { ...key, events: [row.type] }, orders);
        if (!data) continue;
        const event = buildEnvelope({ id: row.eventId, type: row.type, createdAt, environment: row.environment, data });
        this.hub.emit(room, LISTEN_EVENT, { apiKeyId: key.id, event });
      }
    }
  }
}
