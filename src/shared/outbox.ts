/**
 * The outbox (the domain events of every domain that has them) and its whole contract: how rows are
 * written, how consumers are woken, what a row carries. The one place for it; producers and consumers
 * import from here.
 *
 * Writing. Every change writes its events IN THE SAME TRANSACTION as the change (or in the same
 * statement), so an event exists exactly when its change committed. Rows are written only through an
 * `OutboxTx`, which only the unit of work (`commitChange`, unit-of-work.ts) hands out: the statements
 * that write rows (`appendOutbox` and `appendPartnerOutbox` here; the order, payment and tracking
 * statements, which build their rows with `OUTBOX_INSERT`) mark it, and after COMMIT the unit of work
 * wakes the consumers (`OutboxSignal`). That is the one wake-up protocol: nothing NOTIFYs inside a
 * transaction.
 *
 * Waking. In-process: `events.emit('outbox')`. Other processes (PostgreSQL server): NOTIFY
 * OUTBOX_CHANNEL after COMMIT, coalesced, but only from a process that runs no consumer of its own
 * (an `api` process): a process whose worker hears the in-process event fans its commits out itself,
 * and waking other processes' workers to compete for the same rows would only cost a round trip per
 * commit. A lost wake-up only delays: the worker also polls (400 ms).
 *
 * Rows (what consumers read):
 *  - order events (`order.placed`, `order.assigned_to_partner`, `order.status_changed`,
 *    `order.delivered`, `order.cancelled`): `data = { order, previousStatus? }`, `order` the full
 *    PartnerOrder WITH `customer` filled, `order_id` the order, `assigned_key_id` the order's key at that
 *    moment (null when unassigned). A consumer shows the order as the receiving key sees it
 *    (`orderAsSeenBy`, visibility.ts) and routes by keySeesOrder.
 *  - `batch.completed`: `data = { batch: { code, status, orderCodes } }`, `order_id` and
 *    `assigned_key_id` null, `environment` the environment of the batch's orders.
 *  - payment intent events (`payment_intent.*`): `data = { paymentIntent }`, `order_id` and
 *    `assigned_key_id` as for order events; settlement events (`settlement.*`): `data = { settlement }`,
 *    `partner_id` the settlement's partner, no order (docs/payments.md).
 *  - offer events (`offer.created`, `offer.accepted`, `offer.declined`, `offer.expired`,
 *    `offer.withdrawn`): `data` = the PartnerOffer itself, `order_id` the order, `assigned_key_id` the
 *    offered key (docs/offers.md).
 *
 * Consumed by the worker's fan-out (src/worker/fanout.ts), which routes rows to webhooks (docs/decisions-log.md, 'Webhooks',
 * src/modules/webhooks/routing.ts), marks them processed and, after each committed batch, emits
 * 'outbox.processed' with the rows (`ProcessedOutboxEvent[]`) for the realtime channel.
 */
import { randomInt } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { prepared } from '../db/prepared.js';
import type { ApiKeyEnvironment, WebhookEvent } from './schemas.js';

/** NOTIFY channel: outbox rows were committed; workers of other processes should fan out now. */
export const OUTBOX_CHANNEL = 'partner_api_outbox';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `evt_` + 24 base62 characters from a CSPRNG: stable across every delivery of the event. */
export function newEventId(): string {
  let id = 'evt_';
  for (let i = 0; i < 24; i++) id += BASE62[randomInt(62)];
  return id;
}

/** An event to append (appendOutbox). */
export interface NewOutboxEvent {
  type: WebhookEvent;
  environment: ApiKeyEnvironment;
  orderId: string | null;
  assignedKeyId: string | null;
  /** The row's `data` (see the top of the file for each event's). */
  data: Record<string, unknown>;
  /** From ctx.clock: the event's `createdAt`. */
  createdAt: Date;
}

/** One processed outbox row, as 'outbox.processed' carries it (the realtime channel). */
export interface ProcessedOutboxEvent {
  eventId: string;
  type: string;
  environment: ApiKeyEnvironment;
  orderId: string | null;
  assignedKeyId: string | null;
  /** The partner a settlement event is addressed to; null for every other event. */
  partnerId: string | null;
  data: Record<string, unknown>;
  /** When the event happened (the envelope's `createdAt`). */
  createdAt: Date;
}

// --- Writing ---------------------------------------------------------------------------------------

/**
 * A transaction (or, for a change made by one statement, the pool) that may write outbox rows: a
 * statement that wrote some calls `wroteOutbox()`, and the consumers are woken after COMMIT. Only
 * the unit of work (`commitChange`, unit-of-work.ts) makes one, so no outbox row can be written without its wake-up.
 */
export interface OutboxTx extends Queryable {
  wroteOutbox(): void;
}

/** The start of every statement that writes outbox rows (the rows' columns, in this order). */
export const OUTBOX_INSERT = 'INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at)';

/** Appends one event in the transaction of the change it describes (batch completion). */
export async function appendOutbox(event: NewOutboxEvent, tx: OutboxTx): Promise<string> {
  const eventId = newEventId();
  await tx.query(`${OUTBOX_INSERT} VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    eventId,
    event.type,
    event.environment,
    event.orderId,
    event.assignedKeyId,
    JSON.stringify(event.data),
    event.createdAt,
  ]);
  tx.wroteOutbox();
  return eventId;
}

// --- Waking ----------------------------------------------------------------------------------------

/**
 * Wakes outbox consumers after the COMMIT of outbox rows (the unit of work calls `committed`): in-process
 * at once, and on a PostgreSQL server other processes through one NOTIFY OUTBOX_CHANNEL, coalesced: while
 * one is in flight, further commits only ask for one more after it. One per process (createContext).
 *
 * Why not NOTIFY inside the change's transaction: PostgreSQL serialises the commits of all transactions
 * that NOTIFY (a database-wide lock held from pre-commit until the commit record is flushed), so every
 * partner event waited for the previous one's WAL flush. The wake-up carries no data, needs no
 * durability (synchronous_commit off for it) and may be lost in a crash between COMMIT and NOTIFY: the
 * worker's poll then picks the rows up a little later.
 *
 * No NOTIFY while a consumer runs in this process (`consumedHere`, the worker's fan-out from its start
 * to its stop): it is woken in-process, and the rows are its to fan out (docs/performance.md, "Partner
 * events").
 */
export class OutboxSignal {
  /** A wake-up NOTIFY is in flight, and whether another commit happened meanwhile. */
  private pending: { again: boolean } | null = null;
  /** Consumers running in this process (started and not yet stopped). */
  private consumers = 0;

  constructor(
    private readonly db: { kind?: 'embedded' | 'server'; query: Queryable['query'] },
    private readonly events: { emit(event: 'outbox'): boolean },
  ) {}

  /** A consumer that wakes on the in-process event runs here from now on; returns its release. */
  consumedHere(): () => void {
    this.consumers++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.consumers--;
    };
  }

  committed(): void {
    this.events.emit('outbox');
    if (this.db.kind !== 'server' || this.consumers > 0) return;
    if (this.pending) {
      this.pending.again = true;
      return;
    }
    const state = { again: false };
    this.pending = state;
    const send = (): void => {
      // Prepared: planning this statement took three times its execution (17 µs against 6).
      prepared("SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, '')", [OUTBOX_CHANNEL], this.db)
        .catch(() => {}) // the worker's poll covers a lost wake-up (database closing, connection lost)
        .finally(() => {
          if (state.again) {
            state.again = false;
            send();
          } else this.pending = null;
        });
    };
    send();
  }
}

/**
 * Appends events addressed to a partner rather than to an order's key (`settlement.*`), in order, all
 * with the same `data`, in the transaction of the change they describe.
 */
export async function appendPartnerOutbox(
  partnerId: string,
  environment: ApiKeyEnvironment,
  events: Array<{ eventId: string; type: WebhookEvent }>,
  data: Record<string, unknown>,
  createdAt: Date,
  tx: OutboxTx,
): Promise<void> {
  await tx.query(
    `INSERT INTO outbox (event_id, type, environment, order_id, assigned_key_id, data, created_at, partner_id)
     SELECT e.event_id, e.type, $3, NULL, NULL, $4::jsonb, $5, $6
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e(event_id, type, n) ORDER BY e.n`,
    [events.map((e) => e.eventId), events.map((e) => e.type), environment, JSON.stringify(data), createdAt, partnerId],
  );
  tx.wroteOutbox();
}
