/**
 * What the realtime hub offers the domains that publish on the channel, and what a domain gives it.
 * The hub keeps rooms and audiences only: each domain turns its own events into updates, beside their
 * producer (orders/order-realtime.ts, payments/payment-realtime.ts, tracking/tracking-realtime.ts,
 * webhooks/webhook-realtime.ts, request-log/request-log-realtime.ts), and createContext hands the hub
 * the list. An update for a room nobody is in is dropped by the hub; a publisher asks `hasPartner`
 * first when building the update costs something.
 */
import type { AppEventBus } from '../../events.js';
import type { ProcessedOutboxEvent } from '../../shared/outbox.js';
import type { ApiKeyScope } from '../../shared/schemas.js';

/** The partner owning a key, and the key's scopes (what of an order it may see). */
export interface KeyOwner {
  partnerId: string;
  scopes: ApiKeyScope[];
}

export interface RealtimeRooms {
  /** Sends to every ADMIN user. */
  toAdmins(event: string, payload: unknown): void;
  /** Sends to every PARTNER user of `partnerId`. */
  toPartner(partnerId: string, event: string, payload: unknown): void;
  /** Whether a user of `partnerId` is connected somewhere. */
  hasPartner(partnerId: string): boolean;
  /** Whether nobody at all is connected (nothing need be built). */
  isEmpty(): boolean;
  /** The partner owning a key, or null (remembered: a key's partner and scopes never change). */
  ownerOfKey(keyId: string): Promise<KeyOwner | null>;
  /** Logs a publisher's failure (`realtime <what> fan-out failed`). */
  failed(what: string, err: unknown): void;
}

export interface RealtimePublisher {
  /**
   * One outbox row the worker fanned out and committed, in row order (the hub awaits each, so updates
   * keep the order of their rows). Called only while someone is connected.
   */
  outboxRow?(row: ProcessedOutboxEvent, rooms: RealtimeRooms): Promise<void> | void;
  /** Subscribes to the domain's own in-process events; returns how to unsubscribe. */
  subscribe?(events: AppEventBus, rooms: RealtimeRooms): () => void;
}
