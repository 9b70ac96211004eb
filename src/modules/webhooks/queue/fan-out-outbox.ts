/**
 * Queue: outbox rows turned into deliveries (the SQL of the worker's fan-out, src/worker/fanout.ts;
 * who gets what is routing.ts). The fan-out runs, in ONE transaction: lock a batch of unprocessed rows
 * (FOR UPDATE SKIP LOCKED: several workers fan out disjoint batches side by side), load the webhooks
 * that may get them, insert the deliveries (insert-deliveries.ts), mark the rows processed. A crash
 * before the commit leaves the rows unprocessed and nothing queued, so the batch is simply done again;
 * there is no window in which an event is marked done but not queued, or queued twice (webhook_id +
 * event_id is unique besides).
 */
import type { Queryable } from '../../../db/db.js';
import type { ProcessedOutboxEvent } from '../../../shared/outbox.js';
import type { ApiKeyEnvironment, ApiKeyScope } from '../../../shared/schemas.js';
import type { Subscriber } from '../routing.js';

/** An outbox row (src/shared/outbox.ts describes them). */
export interface OutboxRow extends ProcessedOutboxEvent {
  id: number;
}

/** Whether anything waits to be fanned out: one probe on the partial index (most polls find nothing). */
export async function hasUnprocessedOutbox(q: Queryable): Promise<boolean> {
  return (await q.query('SELECT 1 FROM outbox WHERE processed_at IS NULL LIMIT 1')).length > 0;
}

/** The oldest unprocessed rows, up to `limit`, locked; rows another worker holds are skipped. */
export async function lockUnprocessedOutbox(limit: number, q: Queryable): Promise<OutboxRow[]> {
  const rows = await q.query<{
    id: number;
    event_id: string;
    type: string;
    environment: ApiKeyEnvironment;
    order_id: string | null;
    assigned_key_id: string | null;
    partner_id: string | null;
    data: Record<string, unknown>;
    created_at: Date;
  }>(
    `SELECT id, event_id, type, environment, order_id, assigned_key_id, partner_id, data, created_at
       FROM outbox WHERE processed_at IS NULL
      ORDER BY id LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    type: r.type,
    environment: r.environment,
    orderId: r.order_id,
    assignedKeyId: r.assigned_key_id,
    partnerId: r.partner_id,
    data: currentShape(r.type, r.data),
    createdAt: r.created_at,
  }));
}

/**
 * An outbox row's `data` in the shape this version writes. The offer kinds' `data` is the PartnerOffer
 * itself (docs/offers.md, "Events"); a process of an earlier version, still running during a rolling
 * restart or stopped with rows not yet fanned out, wrote it as `{ offer }`: read as the PartnerOffer,
 * so that neither a webhook nor the realtime channel ever carries the old shape.
 */
function currentShape(type: string, data: Record<string, unknown>): Record<string, unknown> {
  if (!type.startsWith('offer.') || 'id' in data) return data;
  const offer = data.offer;
  return offer !== null && typeof offer === 'object' ? (offer as Record<string, unknown>) : data;
}

/**
 * The rotation chains of the keys in the uuid[] parameter `keysParam` (a WITH RECURSIVE item named
 * `chain`): a row (origin, key_id) for each of those keys and for every key that succeeded it by
 * rotation. Shared with the realtime channel's listen sessions (modules/realtime/listen.repo.ts).
 */
export function keyChainCte(keysParam: string): string {
  return `chain AS (
       SELECT k.id AS origin, k.id AS key_id, 0 AS depth FROM api_keys k WHERE k.id = ANY(${keysParam}::uuid[])
       UNION ALL
       SELECT c.origin, s.successor_id, c.depth + 1 FROM chain c JOIN api_keys s ON s.id = c.key_id
        WHERE s.successor_id IS NOT NULL AND c.depth < 100
     )`;
}

/** The keys of `chain` whose orders the key in `keyColumn` holds (itself and those it succeeded), as text[]. */
export function actsForSql(keyColumn: string): string {
  return `ARRAY(SELECT DISTINCT c.origin::text FROM chain c WHERE c.key_id = ${keyColumn})`;
}

/**
 * The webhooks that may get any of the events: active, subscribed to one of `types`, key usable at
 * `now` and of one of `environments`, and the key either receives all orders or is one of `keyIds` (the
 * keys the events' orders are assigned to) or a successor of one by rotation, or belongs to one of
 * `partnerIds` (the partners settlement events are addressed to). Only those are loaded,
 * however many webhooks exist. Each comes with the keys whose orders its key holds (the key and the
 * keys among `keyIds` it succeeded).
 */
export async function findSubscribers(
  events: { types: string[]; environments: ApiKeyEnvironment[]; keyIds: string[]; partnerIds?: string[] },
  now: Date,
  q: Queryable,
): Promise<Subscriber[]> {
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
    `WITH RECURSIVE ${keyChainCte('$4')}
     SELECT w.id, w.partner_id, w.api_key_id, w.events, k.environment, k.scopes, k.receives_all_orders,
            ${actsForSql('w.api_key_id')} AS acts_for
       FROM webhooks w JOIN api_keys k ON k.id = w.api_key_id
      WHERE w.is_active
        AND (k.revoked_at IS NULL OR k.revoked_at > $1)
        AND w.events && $2::text[]
        AND k.environment = ANY($3::text[])
        AND (k.receives_all_orders OR w.api_key_id IN (SELECT key_id FROM chain) OR w.partner_id = ANY($5::uuid[]))
      ORDER BY w.created_at, w.id`,
    [now, events.types, events.environments, events.keyIds, events.partnerIds ?? []],
  );
  return found.map((w) => ({
    webhookId: w.id,
    partnerId: w.partner_id,
    keyId: w.api_key_id,
    keyIds: w.acts_for,
    events: w.events,
    environment: w.environment,
    scopes: w.scopes,
    receivesAllOrders: w.receives_all_orders,
  }));
}

/** Marks the rows fanned out (in the transaction that queued their deliveries). */
export async function markOutboxProcessed(ids: number[], now: Date, q: Queryable): Promise<void> {
  await q.query('UPDATE outbox SET processed_at = $2 WHERE id = ANY($1::bigint[])', [ids, now]);
}
