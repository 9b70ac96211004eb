/**
 * Payment intent SQL (docs/payments.md). Partner reads go through the key's order scope (visibility.ts):
 * an intent is seen exactly when its order is, and is reached through the order's indexes. Writes lock
 * the order row and then its intent (the order statements lock in that order too), so a capture or
 * refund and a status change of the same order never wait for each other in a cycle. The Queryable (or
 * OutboxTx) comes LAST.
 */
import type { Queryable } from '../../db/db.js';
import { OUTBOX_INSERT, type OutboxTx } from '../../shared/outbox.js';
import type { ApiKeyEnvironment, PaymentMethod } from '../../shared/schemas.js';
import { orderPaymentStatusSql } from '../orders/order-writes.repo.js';
import { type PartnerOrderScope, scopeConditions, scopeKind } from '../orders/visibility.js';
import type { PaymentIntent, PaymentIntentStatus } from './payments.schemas.js';

export interface IntentFilters {
  status?: PaymentIntentStatus;
  method?: PaymentMethod;
  orderCode?: string;
  updatedSince?: string;
}

/**
 * The intents the scope sees, newest first (an intent is created with its order, at the same instant:
 * the order's creation index gives the order), with the number of all that match.
 */
export async function listVisibleIntents(
  scope: PartnerOrderScope,
  filters: IntentFilters,
  page: { page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: PaymentIntent[] }> {
  const kind = scopeKind(scope);
  const where = [
    ...scopeConditions(kind, { environment: '$1', keyId: '$2' }, 'range'),
    // The all-orders scope has no key: its parameter is still typed.
    ...(kind === 'all' ? ['$2::uuid IS NULL'] : []),
    '($3::text IS NULL OR p.status = $3)',
    '($4::text IS NULL OR p.method = $4)',
    '($5::text IS NULL OR o.code = $5)',
    '($6::timestamptz IS NULL OR p.updated_at >= $6)',
  ];
  const params = [
    scope.environment,
    scope.keyId,
    filters.status ?? null,
    filters.method ?? null,
    filters.orderCode ?? null,
    filters.updatedSince ?? null,
  ];
  // Planned per call (not prepared): the optional filters make very different plans.
  const rows = await q.query<{ total: string; items: PaymentIntent[] | null }>(
    `WITH m AS (
       SELECT p, o.created_at, o.id FROM orders o JOIN payment_intents p ON p.order_id = o.id
        WHERE ${where.join(' AND ')}
     ), pg AS (
       SELECT payment_intent_json(m.p) AS j FROM m ORDER BY m.created_at DESC, m.id DESC LIMIT $7 OFFSET $8
     )
     SELECT (SELECT count(*) FROM m) AS total, (SELECT jsonb_agg(j) FROM pg) AS items`,
    [...params, page.pageSize, (page.page - 1) * page.pageSize],
  );
  return { total: Number(rows[0].total), items: rows[0].items ?? [] };
}

/**
 * The intents of the orders assigned to any key of the partner in one environment, newest first, with the
 * number of all that match (the portal's Payments page: a partner's users see every key's orders).
 */
export async function listPartnerIntents(
  partnerId: string,
  environment: ApiKeyEnvironment,
  filters: IntentFilters,
  page: { page: number; pageSize: number },
  q: Queryable,
): Promise<{ total: number; items: PaymentIntent[] }> {
  const rows = await q.query<{ total: string; items: PaymentIntent[] | null }>(
    `WITH m AS (
       SELECT p, o.created_at, o.id FROM orders o JOIN payment_intents p ON p.order_id = o.id
        WHERE o.assigned_key_id IN (SELECT k.id FROM api_keys k WHERE k.partner_id = $1 AND k.environment = $2)
          AND ($3::text IS NULL OR p.status = $3)
          AND ($4::text IS NULL OR p.method = $4)
          AND ($5::text IS NULL OR o.code = $5)
          AND ($6::timestamptz IS NULL OR p.updated_at >= $6)
     ), pg AS (
       SELECT payment_intent_json(m.p) AS j FROM m ORDER BY m.created_at DESC, m.id DESC LIMIT $7 OFFSET $8
     )
     SELECT (SELECT count(*) FROM m) AS total, (SELECT jsonb_agg(j) FROM pg) AS items`,
    [
      partnerId,
      environment,
      filters.status ?? null,
      filters.method ?? null,
      filters.orderCode ?? null,
      filters.updatedSince ?? null,
      page.pageSize,
      (page.page - 1) * page.pageSize,
    ],
  );
  return { total: Number(rows[0].total), items: rows[0].items ?? [] };
}

/** The refunds of an intent, oldest first. */
export async function listRefunds(
  intentId: string,
  q: Queryable,
): Promise<Array<{ id: string; amountQepik: number; reason: string | null; createdAt: string }>> {
  const rows = await q.query<{ id: string; amount_qepik: string; reason: string | null; created_at: Date }>(
    'SELECT id, amount_qepik, reason, created_at FROM payment_refunds WHERE payment_intent_id = $1 ORDER BY created_at, id',
    [intentId],
  );
  return rows.map((r) => ({
    id: r.id,
    amountQepik: Number(r.amount_qepik),
    reason: r.reason,
    createdAt: r.created_at.toISOString(),
  }));
}

/** One intent the scope sees (its order's rule), or null. */
export async function findVisibleIntent(scope: PartnerOrderScope, id: string, q: Queryable): Promise<PaymentIntent | null> {
  // The order is probed by its primary key (a scalar subquery): joined freely, a plan may read the
  // key's whole range of orders instead (write-scans.test.ts saw it).
  const conditions = [
    'o.id = (SELECT order_id FROM payment_intents WHERE id = $1)',
    'p.id = $1',
    ...scopeConditions(scopeKind(scope), { environment: '$2', keyId: '$3' }, 'probe'),
  ];
  const rows = await q.query<{ j: PaymentIntent }>(
    `SELECT payment_intent_json(p) AS j FROM orders o JOIN payment_intents p ON p.order_id = o.id WHERE ${conditions.join(' AND ')}`,
    scope.keyId === null ? [id, scope.environment] : [id, scope.environment, scope.keyId],
  );
  return rows[0]?.j ?? null;
}

/** The order's intent (operator reads). */
export async function findIntentByOrderCode(code: string, q: Queryable): Promise<PaymentIntent | null> {
  const rows = await q.query<{ j: PaymentIntent }>(
    'SELECT payment_intent_json(p) AS j FROM orders o JOIN payment_intents p ON p.order_id = o.id WHERE o.code = $1',
    [code],
  );
  return rows[0]?.j ?? null;
}

/** The intent of an order assigned to any key of the partner, in either environment (the portal's read). */
export async function findPartnerIntentByOrderCode(partnerId: string, code: string, q: Queryable): Promise<PaymentIntent | null> {
  const rows = await q.query<{ j: PaymentIntent }>(
    `SELECT payment_intent_json(p) AS j FROM orders o JOIN payment_intents p ON p.order_id = o.id
      WHERE o.code = $2 AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = o.assigned_key_id AND k.partner_id = $1)`,
    [partnerId, code],
  );
  return rows[0]?.j ?? null;
}

/** An intent with its order, both locked for a capture or refund. */
export interface LockedIntent {
  id: string;
  orderId: string;
  environment: ApiKeyEnvironment;
  assignedKeyId: string | null;
  method: PaymentMethod;
  status: PaymentIntentStatus;
  amountQepik: number;
  receivedQepik: number;
  refundedQepik: number;
}

/**
 * Locks the order `code` and its intent (the order first, as every order statement does). `scope`: the
 * sandbox's key scope (null for the operator, who reaches every order).
 */
export async function lockIntentByOrderCode(
  code: string,
  scope: PartnerOrderScope | null,
  q: Queryable,
): Promise<LockedIntent | null> {
  const conditions = [
    'o.code = $1',
    ...(scope ? scopeConditions(scopeKind(scope), { environment: '$2', keyId: '$3' }, 'probe') : []),
  ];
  const params =
    scope === null ? [code] : scope.keyId === null ? [code, scope.environment] : [code, scope.environment, scope.keyId];
  const rows = await q.query<{
    id: string;
    order_id: string;
    environment: ApiKeyEnvironment;
    assigned_key_id: string | null;
    method: PaymentMethod;
    status: PaymentIntentStatus;
    amount_qepik: string;
    amount_received_qepik: string;
    amount_refunded_qepik: string;
  }>(
    `SELECT p.id, o.id AS order_id, o.environment, o.assigned_key_id, p.method, p.status, p.amount_qepik,
            p.amount_received_qepik, p.amount_refunded_qepik
       FROM orders o JOIN payment_intents p ON p.order_id = o.id
      WHERE ${conditions.join(' AND ')}
        FOR UPDATE OF o, p`,
    params,
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    orderId: r.order_id,
    environment: r.environment,
    assignedKeyId: r.assigned_key_id,
    method: r.method,
    status: r.status,
    amountQepik: Number(r.amount_qepik),
    receivedQepik: Number(r.amount_received_qepik),
    refundedQepik: Number(r.amount_refunded_qepik),
  };
}

/**
 * Captures a locked card intent: the intent SUCCEEDED with its whole amount received, the order PAID,
 * and the `payment_intent.succeeded` event, in one statement.
 */
export async function captureIntent(intent: LockedIntent, eventId: string, now: Date, tx: OutboxTx): Promise<PaymentIntent> {
  const rows = await tx.query<{ j: PaymentIntent }>(
    `WITH p AS (
       UPDATE payment_intents p SET status = 'SUCCEEDED', amount_received_qepik = amount_qepik, captured_at = $2, updated_at = $2
        WHERE id = $1 RETURNING payment_intent_json(p) AS j
     ), ${orderPaymentStatusSql('o', { orderId: '$3', status: "'PAID'", at: '$2' })}, ev AS (
       ${OUTBOX_INSERT}
       SELECT $4, 'payment_intent.succeeded', $5, o.id, $6, jsonb_build_object('paymentIntent', p.j), $2 FROM p, o
     )
     SELECT j FROM p`,
    [intent.id, now, intent.orderId, eventId, intent.environment, intent.assignedKeyId],
  );
  tx.wroteOutbox();
  return rows[0].j;
}

/**
 * Refunds `amount` of a locked, succeeded card intent (the caller checked it is at most received −
 * refunded): the refund's record, the intent's refunded sum, the order PARTIALLY_REFUNDED or REFUNDED,
 * and the `payment_intent.refunded` event, in one statement.
 */
export async function refundIntent(
  intent: LockedIntent,
  refund: { id: string; amountQepik: number; reason: string | null },
  eventId: string,
  now: Date,
  tx: OutboxTx,
): Promise<PaymentIntent> {
  const rows = await tx.query<{ j: PaymentIntent }>(
    `WITH r AS (
       INSERT INTO payment_refunds (id, payment_intent_id, amount_qepik, reason, created_at) VALUES ($7, $1, $8, $9, $2)
     ), p AS (
       UPDATE payment_intents p SET amount_refunded_qepik = amount_refunded_qepik + $8, updated_at = $2
        WHERE id = $1
       RETURNING payment_intent_json(p) AS j, amount_refunded_qepik = amount_received_qepik AS all_refunded
     ), ${orderPaymentStatusSql('o', {
       orderId: '$3',
       status: "CASE WHEN p.all_refunded THEN 'REFUNDED' ELSE 'PARTIALLY_REFUNDED' END",
       at: '$2',
       from: 'p',
     })}, ev AS (
       ${OUTBOX_INSERT}
       SELECT $4, 'payment_intent.refunded', $5, o.id, $6, jsonb_build_object('paymentIntent', p.j), $2 FROM p, o
     )
     SELECT j FROM p`,
    [
      intent.id,
      now,
      intent.orderId,
      eventId,
      intent.environment,
      intent.assignedKeyId,
      refund.id,
      refund.amountQepik,
      refund.reason,
    ],
  );
  tx.wroteOutbox();
  return rows[0].j;
}

/** The partner's cash on hand: collections on no settlement yet (partial index), and what its settlements await. */
export async function partnerBalance(
  partnerId: string,
  environment: ApiKeyEnvironment,
  q: Queryable,
): Promise<{ onHand: number; count: number; oldest: string | null; awaiting: number; credit: number }> {
  const rows = await q.query<{ on_hand: string; n: string; oldest: string | null; awaiting: string; credit: string }>(
    `SELECT (SELECT coalesce(sum(amount_received_qepik), 0) FROM payment_intents
              WHERE partner_id = $1 AND environment = $2 AND status = 'COLLECTED' AND settlement_id IS NULL) AS on_hand,
            (SELECT count(*) FROM payment_intents
              WHERE partner_id = $1 AND environment = $2 AND status = 'COLLECTED' AND settlement_id IS NULL) AS n,
            (SELECT iso_utc(min(captured_at)) FROM payment_intents
              WHERE partner_id = $1 AND environment = $2 AND status = 'COLLECTED' AND settlement_id IS NULL) AS oldest,
            (SELECT coalesce(sum(outstanding_qepik), 0) FROM settlements
              WHERE partner_id = $1 AND environment = $2 AND status <> 'SETTLED') AS awaiting,
            (SELECT coalesce(sum(remitted_qepik - collected_qepik - adjustments_qepik), 0) FROM settlements
              WHERE partner_id = $1 AND environment = $2 AND status = 'SETTLED' AND overpayment_carried_to IS NULL
                AND collected_qepik + adjustments_qepik - remitted_qepik < 0) AS credit`,
    [partnerId, environment],
  );
  const r = rows[0];
  return {
    onHand: Number(r.on_hand),
    count: Number(r.n),
    oldest: r.oldest,
    awaiting: Number(r.awaiting),
    credit: Number(r.credit),
  };
}
