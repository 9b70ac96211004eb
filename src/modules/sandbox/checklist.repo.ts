/**
 * The evidence behind the go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist'), read from what the keys really did: their
 * sandbox orders' timelines, their webhooks' deliveries and their logged requests. Every function takes
 * whole key lineages at once (see checklist.service.ts), so a partner's checklists cost the same few
 * statements as one key's. The partner id or the keys come first, the Queryable last.
 */
import type { Queryable } from '../../db/db.js';
import type { ApiKeyEnvironment, ApiKeyScope, OrderStatus, WebhookEvent } from '../../shared/schemas.js';

export interface PartnerKeyRow {
  id: string;
  environment: ApiKeyEnvironment;
  successorId: string | null;
  createdAt: Date;
  scopes: ApiKeyScope[];
}

/** The partner's keys, newest first; null when there is no such partner. One probe of each index. */
export async function listPartnerKeyLineage(partnerId: string, q: Queryable): Promise<PartnerKeyRow[] | null> {
  const rows = await q.query<{
    id: string | null;
    environment: ApiKeyEnvironment;
    successor_id: string | null;
    created_at: Date;
    scopes: ApiKeyScope[] | null;
  }>(
    `SELECT k.id, k.environment, k.successor_id, k.created_at, k.scopes
       FROM partners p LEFT JOIN api_keys k ON k.partner_id = p.id
      WHERE p.id = $1
      ORDER BY k.created_at DESC, k.id DESC`,
    [partnerId],
  );
  if (rows.length === 0) return null;
  return rows.flatMap((r) =>
    r.id === null
      ? []
      : [{ id: r.id, environment: r.environment, successorId: r.successor_id, createdAt: r.created_at, scopes: r.scopes ?? [] }],
  );
}

/** A key of a lineage, and the key the lineage acts for now (the newest of its rotation chain). */
export interface LineageMember {
  keyId: string;
  actsForKeyId: string;
}

/** The statuses partner events lead to (state-machine.ts), as the evidence query reads the timeline. */
export interface EventStatuses {
  pickedUp: OrderStatus;
  enRoute: OrderStatus;
  delivered: OrderStatus;
  failed: OrderStatus;
}

/** When each partner-event item was first met, per acts-for key. */
export interface EventEvidence {
  pickedUp: Date | null;
  enRoute: Date | null;
  deliveredExactCod: Date | null;
  deliveredCodVariance: Date | null;
  failedWithReason: Date | null;
  enRouteAfterFailed: Date | null;
}

/**
 * The partner events of the lineages' keys on the sandbox orders their acts-for keys hold (orders move
 * forward at every rotation), from the timelines: one statement, the orders by the key index and their
 * timelines by the order index. `previous_status` is the entry before, whoever made it.
 */
export async function partnerEventEvidence(
  members: LineageMember[],
  statuses: EventStatuses,
  q: Queryable,
): Promise<Map<string, EventEvidence>> {
  if (members.length === 0) return new Map();
  const rows = await q.query<{
    acts_for: string;
    picked_up: Date | null;
    en_route: Date | null;
    delivered_exact: Date | null;
    delivered_variance: Date | null;
    failed_reason: Date | null;
    en_route_after_failed: Date | null;
  }>(
    `WITH lineage AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS l(key_id, acts_for)
     ), ev AS (
       SELECT o.assigned_key_id AS acts_for, o.payment_method, o.cod_amount_qepik, e.actor, e.api_key_id, e.status, e.at,
              e.fail_reason, e.cod_collected_qepik, e.partner_note,
              lag(e.status) OVER (PARTITION BY e.order_id ORDER BY e.id) AS previous_status
         FROM orders o JOIN order_events e ON e.order_id = o.id
        WHERE o.assigned_key_id = ANY($2::uuid[]) AND o.environment = 'SANDBOX'
     )
     SELECT ev.acts_for,
            min(ev.at) FILTER (WHERE ev.status = $3) AS picked_up,
            min(ev.at) FILTER (WHERE ev.status = $4) AS en_route,
            min(ev.at) FILTER (WHERE ev.status = $5 AND ev.payment_method = 'COD'
                                 AND ev.cod_collected_qepik = ev.cod_amount_qepik) AS delivered_exact,
            min(ev.at) FILTER (WHERE ev.status = $5 AND ev.cod_collected_qepik <> ev.cod_amount_qepik
                                 AND btrim(coalesce(ev.partner_note, '')) <> '') AS delivered_variance,
            min(ev.at) FILTER (WHERE ev.status = $6 AND ev.fail_reason IS NOT NULL) AS failed_reason,
            min(ev.at) FILTER (WHERE ev.status = $4 AND ev.previous_status = $6) AS en_route_after_failed
       FROM ev JOIN lineage l ON l.key_id = ev.api_key_id AND l.acts_for = ev.acts_for
      WHERE ev.actor = 'PARTNER'
      GROUP BY ev.acts_for`,
    [
      members.map((m) => m.keyId),
      members.map((m) => m.actsForKeyId),
      statuses.pickedUp,
      statuses.enRoute,
      statuses.delivered,
      statuses.failed,
    ],
  );
  return new Map(
    rows.map((r) => [
      r.acts_for,
      {
        pickedUp: r.picked_up,
        enRoute: r.en_route,
        deliveredExactCod: r.delivered_exact,
        deliveredCodVariance: r.delivered_variance,
        failedWithReason: r.failed_reason,
        enRouteAfterFailed: r.en_route_after_failed,
      },
    ]),
  );
}

/**
 * When a webhook of each acts-for key (webhooks move forward at every rotation too) first answered 2xx
 * to each of `types`: the attempts recorded DELIVERED (migration 0015; a delivery redelivered later
 * keeps them), test samples (`evt_test_…`) left out. One statement: the keys' webhooks by the key
 * index, their successful attempts by the partial index of successes, each attempt's delivery by its
 * primary key.
 */
export async function webhookEvidence(
  partnerId: string,
  actsForKeyIds: string[],
  types: readonly WebhookEvent[],
  q: Queryable,
): Promise<Map<string, Map<string, Date>>> {
  if (actsForKeyIds.length === 0) return new Map();
  const rows = await q.query<{ acts_for: string; event_type: string; at: Date }>(
    `SELECT w.api_key_id AS acts_for, d.event_type, min(a.at) AS at
       FROM webhooks w
       JOIN webhook_delivery_attempts a ON a.webhook_id = w.id AND a.outcome = 'DELIVERED'
       JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE w.partner_id = $1 AND w.api_key_id = ANY($2::uuid[])
        AND d.event_type = ANY($3::text[]) AND d.event_id NOT LIKE 'evt\\_test\\_%'
      GROUP BY w.api_key_id, d.event_type`,
    [partnerId, actsForKeyIds, types],
  );
  const out = new Map<string, Map<string, Date>>();
  for (const r of rows) {
    let byType = out.get(r.acts_for);
    if (!byType) {
      byType = new Map();
      out.set(r.acts_for, byType);
    }
    byType.set(r.event_type, r.at);
  }
  return out;
}

/** The items recorded done for any of `keyIds` (sandbox_checklist_marks, migration 0017). */
export async function readMarks(keyIds: string[], q: Queryable): Promise<Array<{ keyId: string; item: string; doneAt: Date }>> {
  if (keyIds.length === 0) return [];
  const rows = await q.query<{ api_key_id: string; item: string; done_at: Date }>(
    'SELECT api_key_id, item, done_at FROM sandbox_checklist_marks WHERE api_key_id = ANY($1::uuid[])',
    [keyIds],
  );
  return rows.map((r) => ({ keyId: r.api_key_id, item: r.item, doneAt: r.done_at }));
}

/** Records items found done (a concurrent checklist may have recorded them first: kept as they are). */
export async function writeMarks(marks: Array<{ keyId: string; item: string; doneAt: Date }>, q: Queryable): Promise<void> {
  if (marks.length === 0) return;
  await q.query(
    `INSERT INTO sandbox_checklist_marks (api_key_id, item, done_at)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[])
     ON CONFLICT (api_key_id, item) DO NOTHING`,
    [marks.map((m) => m.keyId), marks.map((m) => m.item), marks.map((m) => m.doneAt)],
  );
}
