/**
 * The one realtime connection of the portal: Socket.IO namespace '/realtime' at the same origin,
 * authenticated with the current access token (docs/decisions-log.md, 'Realtime channel'). Screens subscribe to events
 * ('delivery.updated', 'order.updated', 'order.tracking', 'payment_intent.updated', 'settlement.updated',
 * 'request.logged', 'webhook.updated', 'offer.created', 'offer.expired', 'offer.withdrawn') and to the
 * connection status.
 *
 * A refused handshake (connect_error 'ERR_UNAUTHORIZED', typically an expired access token) and a
 * server-side disconnect (the server ends a connection whose token expired) get a token refresh and a
 * reconnect; Socket.IO retries neither by itself. Transport failures are retried by Socket.IO with its
 * own backoff. Whenever the connection becomes live, the first time included, subscribers are told
 * (onReconnect) so they can reload what they may have missed while offline: a screen that loaded before
 * the first connection joined its rooms would otherwise miss the updates of that gap for good.
 */

import type {
  DeveloperDelivery,
  DeveloperRequest,
  DeveloperWebhook,
  OrderTracking,
  PaymentIntent,
  Schemas,
  Settlement,
} from '@partner-logistics/sdk/types';
import { io, type Socket } from 'socket.io-client';
import { freshAccessToken, refreshSession } from './client';
import { getSession, onSessionChange } from './session';

export type RealtimeStatus = 'off' | 'connecting' | 'live' | 'offline';

export interface RealtimeEvents {
  'delivery.updated': { delivery: DeveloperDelivery };
  'order.updated': { order: { code?: string } };
  'order.tracking': { tracking: OrderTracking };
  'payment_intent.updated': { paymentIntent: PaymentIntent };
  'settlement.updated': { settlement: Settlement };
  'request.logged': { request: DeveloperRequest };
  'webhook.updated': { webhook: DeveloperWebhook };
  'offer.created': { offer: Schemas['PartnerOffer'] };
  'offer.expired': { offer: Schemas['PartnerOffer'] };
  'offer.withdrawn': { offer: Schemas['PartnerOffer'] };
}

type Handler<E extends keyof RealtimeEvents> = (payload: RealtimeEvents[E]) => void;

let socket: Socket | null = null;
let status: RealtimeStatus = 'off';
let refusedInARow = 0;
const statusListeners = new Set<() => void>();
const reconnectListeners = new Set<() => void>();
const handlers = new Map<keyof RealtimeEvents, Set<(payload: never) => void>>();

function setStatus(next: RealtimeStatus): void {
  if (status === next) return;
  status = next;
  for (const l of statusListeners) l();
}

function start(): void {
  if (socket) return;
  refusedInARow = 0;
  setStatus('connecting');
  const s = io('/realtime', {
    // Read at every (re)connection attempt, so a reconnect carries the newest access token.
    auth: (cb) => {
      void freshAccessToken().then((token) => cb({ token }));
    },
    reconnectionDelayMax: 5_000,
  });
  s.on('connect', () => {
    refusedInARow = 0;
    setStatus('live');
    for (const l of reconnectListeners) l();
  });
  s.on('disconnect', (reason) => {
    if (reason === 'io client disconnect') return; // our own stop()
    setStatus('offline');
    // The server ends a connection when its access token expires, and Socket.IO does not reconnect
    // after a server-side disconnect: refresh the token, then reconnect. Other reasons (network) are
    // retried by Socket.IO itself.
    if (reason === 'io server disconnect') reconnectWithFreshToken(s);
  });
  s.on('connect_error', (err) => {
    setStatus('offline');
    if (err.message !== 'ERR_UNAUTHORIZED') return; // transport trouble: Socket.IO retries on its own
    refusedInARow++;
    if (refusedInARow > 1) return; // refreshed once already and still refused: stay offline
    reconnectWithFreshToken(s);
  });
  for (const [event, set] of handlers) {
    for (const h of set) s.on(event, h as (payload: unknown) => void);
  }
  socket = s;
}

function reconnectWithFreshToken(s: Socket): void {
  refreshSession()
    .then((ok) => {
      if (ok && socket === s && !s.connected) s.connect();
    })
    .catch(() => {
      // The refresh itself failed (network, server trouble): try again shortly.
      setTimeout(() => {
        if (socket === s && !s.connected) reconnectWithFreshToken(s);
      }, 5_000);
    });
}

function stop(): void {
  socket?.disconnect();
  socket?.removeAllListeners();
  socket = null;
  setStatus('off');
}

/** Connects while signed in as a partner, disconnects on sign-out. Call once at start-up. */
export function startRealtimeWithSession(): void {
  const sync = () => {
    const s = getSession();
    if (s && s.user.role === 'PARTNER') start();
    else stop();
  };
  sync();
  onSessionChange(sync);
}

export function subscribe<E extends keyof RealtimeEvents>(event: E, handler: Handler<E>): () => void {
  let set = handlers.get(event);
  if (!set) {
    set = new Set();
    handlers.set(event, set);
  }
  const h = handler as (payload: never) => void;
  set.add(h);
  // The socket's listener types are per event name; ours are checked by RealtimeEvents above.
  const name: string = event;
  const listener = h as (...args: unknown[]) => void;
  socket?.on(name, listener);
  return () => {
    set.delete(h);
    socket?.off(name, listener);
  };
}

export function getRealtimeStatus(): RealtimeStatus {
  return status;
}

export function onRealtimeStatus(listener: () => void): () => void {
  statusListeners.add(listener);
  return () => statusListeners.delete(listener);
}

/** Called after the connection comes back, not on the first connect. */
export function onReconnect(listener: () => void): () => void {
  reconnectListeners.add(listener);
  return () => reconnectListeners.delete(listener);
}
