/**
 * Outbox fan-out: turns committed domain events into queued deliveries (decisions §6 routing).
 *
 * A batch of unprocessed outbox rows is locked with FOR UPDATE SKIP LOCKED (several workers fan out
 * disjoint batches side by side), the deliveries for every webhook that should get each event are
 * inserted, and the rows are marked processed, all in ONE transaction: a crash before the commit
 * leaves the rows unprocessed and nothing queued, so the batch is simply done again; there is no
 * window in which an event is marked done but not queued, or queued twice (webhook_id + event_id is
 * unique besides).
 *
 * Who gets an event: the webhook is active and subscribes to the type; its key is usable (not revoked,
 * or still in its rotation grace) and of the event's environment; and the key may see the order
 * (it is the key the order was assigned to when the event happened or a successor of that key by
 * rotation, or the key receives all orders). Successors count because a rotation moves the old key's
 * orders and webhooks forward: an event raised before a rotation and fanned out after it must still
 * reach the webhook, which by then hangs on the new key.
 * For batch.completed, the key must see at least one order of the batch, and the orderCodes it gets
 * are only those it sees. Order snapshots lose `customer` unless the key has orders:pii.
 */
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/db.js';
import { Batch, PartnerOrder } from '../modules/orders/orders.schemas.js';
import type { DeliveryRow, NewDelivery } from '../modules/webhooks/deliveries.repo.js';
import { insertDeliveries, toDeveloperDelivery } from '../modules/webhooks/deliveries.repo.js';
import { serializeEnvelope } from '../modules/webhooks/envelope.js';
import { inSchemaOrder } from '../modules/webhooks/schema-order.js';
import {
  emitDeliveryUpdated,
  notifyDeliveriesDue,
  OUTBOX_PROCESSED_EVENT,
  type OutboxEvent,
  signalDeliveriesDue,
} from '../modules/webhooks/signals.js';
import { newId } from '../shared/ids.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../shared/schemas.js';

interface OutboxRow {
  id: number;
  event_id: string;
  type: string;
  environment: ApiKeyEnvironment;
  order_id: string | null;
  assigned_key_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

interface Subscriber {
  webhookId: string;
  partnerId: string;
  keyId: string;
  /** The keys whose orders this webhook's key holds: itself and the keys it succeeded by rotation. */
  actsFor: string[];
  events: string[];
  environment: ApiKeyEnvironment;
  scopes: ApiKeyScope[];
  receivesAllOrders: boolean;
}

interface BatchOrder {
  code: string;
  assignedKeyId: string | null;
  environment: ApiKeyEnvironment;
}

/**
 * The webhooks that may get any of `rows`: active, subscribed to one of the types, key usable and of
 * one of the environments, and the key either receives all orders or is one of `keyIds` (the keys the
 * events' orders are assigned to) or a successor of one by rotation. Only those are loaded, however
 * many webhooks exist.
 */
async function subscribersFor(rows: OutboxRow[], keyIds: string[], now: Date, q: Queryable): Promise<Subscriber[]> {
  const found = await q.query<{
    id: string;
    partner_id: string;
    api_key_id: string;
    events: string[];
    environment: ApiKeyEnvironment;
    scopes: ApiKeyScope[];
    receives_all_orders: boolean;
    acts_for: string[];
  }>(
    `WITH RECURSIVE chain AS (
       SELECT k.id AS origin, k.id AS key_id, 0 AS depth FROM api_keys k WHERE k.id = ANY($4::uuid[])
       UNION ALL
       SELECT c.origin, s.successor_id, c.depth + 1 FROM chain c JOIN api_keys s ON s.id = c.key_id
        WHERE s.successor_id IS NOT NULL AND c.depth < 100
     )
     SELECT w.id, w.partner_id, w.api_key_id, w.events, k.environment, k.scopes, k.receives_all_orders,
            ARRAY(SELECT DISTINCT c.origin::text FROM chain c WHERE c.key_id = w.api_key_id) AS acts_for
       FROM webhooks w JOIN api_keys k ON k.id = w.api_key_id
      WHERE w.is_active
        AND (k.revoked_at IS NULL OR k.revoked_at > $1)
        AND w.events && $2::text[]
        AND k.environment = ANY($3::text[])
        AND (k.receives_all_orders OR w.api_key_id IN (SELECT key_id FROM chain))
      ORDER BY w.created_at, w.id`,
    [now, [...new Set(rows.map((r) => r.type))], [...new Set(rows.map((r) => r.environment))], keyIds],
  );
  return found.map((w) => ({
    webhookId: w.id,
    partnerId: w.partner_id,
    keyId: w.api_key_id,
    actsFor: w.acts_for,
    events: w.events,
    environment: w.environment,
    scopes: w.scopes,
    receivesAllOrders: w.receives_all_orders,
  }));
}

function batchOf(row: OutboxRow): { code?: unknown; status?: unknown; orderCodes?: unknown } | null {
  const batch = row.data.batch;
  return batch && typeof batch === 'object' ? (batch as { code?: unknown; status?: unknown; orderCodes?: unknown }) : null;
}

function orderCodesOf(row: OutboxRow): string[] {
  const codes = batchOf(row)?.orderCodes;
  return Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
}

async function batchOrders(rows: OutboxRow[], q: Queryable): Promise<Map<string, BatchOrder>> {
  const codes = [...new Set(rows.flatMap(orderCodesOf))];
  if (codes.length === 0) return new Map();
  const found = await q.query<{ code: string; assigned_key_id: string | null; environment: ApiKeyEnvironment }>(
    'SELECT code, assigned_key_id, environment FROM orders WHERE code = ANY($1::text[])',
    [codes],
  );
  return new Map(found.map((o) => [o.code, { code: o.code, assignedKeyId: o.assigned_key_id, environment: o.environment }]));
}

/** The event data as this subscriber may see it, or null when the event is not for it. */
function dataFor(row: OutboxRow, sub: Subscriber, orders: Map<string, BatchOrder>): Record<string, unknown> | null {
  if (row.type === 'batch.completed') {
    const batch = batchOf(row);
    if (!batch) return null;
    const visible = orderCodesOf(row).filter((code) => {
      const order = orders.get(code);
      if (!order) return false;
      return (
        (order.assignedKeyId !== null && sub.actsFor.includes(order.assignedKeyId)) ||
        (sub.receivesAllOrders && order.environment === sub.environment)
      );
    });
    if (visible.length === 0) return null;
    return { ...row.data, batch: inSchemaOrder(Batch, { ...batch, orderCodes: visible }) };
  }
  const visible = (row.assigned_key_id !== null && sub.actsFor.includes(row.assigned_key_id)) || sub.receivesAllOrders;
  if (!visible) return null;
  const order = row.data.order;
  if (!order || typeof order !== 'object') return row.data;
  const customer = sub.scopes.includes('orders:pii') ? ((order as { customer?: unknown }).customer ?? null) : null;
  return { ...row.data, order: inSchemaOrder(PartnerOrder, { ...(order as Record<string, unknown>), customer }) };
}

export interface FanOutResult {
  /** Outbox rows processed in this batch (0: the outbox is drained). */
  processed: number;
  queued: number;
}

/** Fans out one batch of the outbox. */
export async function fanOutBatch(ctx: AppContext, batchSize: number): Promise<FanOutResult> {
  const now = ctx.clock.now();
  // Most polls find nothing to do: one probe on the partial index instead of a transaction.
  const pending = await ctx.db.query('SELECT 1 FROM outbox WHERE processed_at IS NULL LIMIT 1');
  if (pending.length === 0) return { processed: 0, queued: 0 };
  const outcome = await ctx.db.tx(async (q) => {
    const rows = await q.query<OutboxRow>(
      `SELECT id, event_id, type, environment, order_id, assigned_key_id, data, created_at
         FROM outbox WHERE processed_at IS NULL
        ORDER BY id LIMIT $1
        FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    if (rows.length === 0) return { rows, queued: [] as DeliveryRow[] };
    const orders: Map<string, BatchOrder> = rows.some((r) => r.type === 'batch.completed')
      ? await batchOrders(rows, q)
      : new Map();
    const keyIds = new Set<string>();
    for (const r of rows) if (r.assigned_key_id) keyIds.add(r.assigned_key_id);
    for (const o of orders.values()) if (o.assignedKeyId) keyIds.add(o.assignedKeyId);
    const subscribers = await subscribersFor(rows, [...keyIds], now, q);

    const deliveries: NewDelivery[] = [];
    for (const row of rows) {
      for (const sub of subscribers) {
        if (sub.environment !== row.environment || !sub.events.includes(row.type)) continue;
        const data = dataFor(row, sub, orders);
        if (!data) continue;
        deliveries.push({
          id: newId(),
          webhookId: sub.webhookId,
          partnerId: sub.partnerId,
          eventId: row.event_id,
          eventType: row.type,
          body: serializeEnvelope({
            id: row.event_id,
            type: row.type,
            createdAt: row.created_at,
            environment: row.environment,
            data,
          }),
        });
      }
    }
    const queued = await insertDeliveries(deliveries, now, q);
    await q.query('UPDATE outbox SET processed_at = $2 WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id), now]);
    if (queued.length > 0) await notifyDeliveriesDue(ctx.db, q);
    return { rows, queued };
  });

  // Only now, after the commit, may anyone hear about it.
  if (outcome.rows.length > 0) {
    const events: OutboxEvent[] = outcome.rows.map((r) => ({
      eventId: r.event_id,
      type: r.type,
      environment: r.environment,
      orderId: r.order_id,
      assignedKeyId: r.assigned_key_id,
      data: r.data,
    }));
    ctx.events.emit(OUTBOX_PROCESSED_EVENT, events);
  }
  for (const row of outcome.queued) emitDeliveryUpdated(ctx.events, row.partner_id, toDeveloperDelivery(row));
  if (outcome.queued.length > 0) signalDeliveriesDue(ctx.events);
  return { processed: outcome.rows.length, queued: outcome.queued.length };
}
