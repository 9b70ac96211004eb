/**
 * The payment intent's part of the order statements (docs/payments.md, "The state machine"): SQL that
 * order-writes.repo.ts splices into the statements it already runs, so an order and its intent change
 * together, in the same statement, with no extra round trip.
 *
 *  - `newOrderIntentSql`: the intent of a new order, inserted by the order's own INSERT statement.
 *  - `statusChangeIntentSql`: what a status change does to the intent — DELIVERED collects a COD
 *    intent (`codCollectedQepik`, or the whole COD amount), CANCELLED cancels an intent awaiting
 *    capture or collection, RETURNED cancels a COD intent awaiting collection — and the
 *    `payment_intent.collected` / `payment_intent.canceled` outbox events with the intent after it.
 */
import { OUTBOX_INSERT } from '../../shared/outbox.js';

/**
 * A WITH item (`payment_intent`) inserting the intent of the order inserted by the WITH item `order`,
 * given SQL expressions for the order's columns. A card order created already paid has succeeded (the
 * card was captured at checkout); otherwise a card intent awaits capture and a COD intent collection.
 */
export function newOrderIntentSql(e: {
  order: string;
  code: string;
  environment: string;
  method: string;
  paymentStatus: string;
  totalQepik: string;
  codAmountQepik: string;
  createdAt: string;
}): string {
  const paid = `(${e.method} = 'CARD' AND ${e.paymentStatus} IN ('PAID', 'PARTIALLY_REFUNDED', 'REFUNDED'))`;
  const amount = `CASE WHEN ${e.method} = 'CARD' THEN ${e.totalQepik} ELSE ${e.codAmountQepik} END`;
  return `payment_intent AS (
       INSERT INTO payment_intents (id, order_id, order_code, environment, method, status, amount_qepik, amount_received_qepik,
                                    amount_refunded_qepik, created_at, updated_at, captured_at)
       SELECT public_id('pi_'), ${e.order}.id, ${e.code}, ${e.environment}, ${e.method},
              CASE WHEN ${paid} THEN 'SUCCEEDED' WHEN ${e.method} = 'CARD' THEN 'REQUIRES_CAPTURE' ELSE 'AWAITING_COLLECTION' END,
              ${amount}, CASE WHEN ${paid} THEN ${amount} ELSE 0 END,
              CASE WHEN ${paid} AND ${e.paymentStatus} = 'REFUNDED' THEN ${amount} ELSE 0 END,
              ${e.createdAt}, ${e.createdAt}, CASE WHEN ${paid} THEN ${e.createdAt} END
         FROM ${e.order}
     )`;
}

/**
 * Two WITH items (`intent_moves`, `intent_events`) moving the intents of the status changes in the WITH
 * item `input` (columns order_id, status, at, api_key_id, assigned_key_id, environment,
 * cod_collected_qepik, partner_note), and writing their outbox events. Only the statuses that move an
 * intent touch one: the other changes cost a filter on `input`, no probe. The collecting partner is the
 * partner of the event's key (the order's key for an operator's change).
 */
export function statusChangeIntentSql(input: string): string {
  return `intent_moves AS (
       UPDATE payment_intents p
          SET status = CASE WHEN i.status = 'DELIVERED' THEN 'COLLECTED' ELSE 'CANCELED' END,
              amount_received_qepik = CASE WHEN i.status = 'DELIVERED' THEN coalesce(i.cod_collected_qepik, p.amount_qepik)
                                           ELSE p.amount_received_qepik END,
              partner_id = CASE WHEN i.status = 'DELIVERED'
                                THEN (SELECT k.partner_id FROM api_keys k WHERE k.id = coalesce(i.api_key_id, i.assigned_key_id))
                                ELSE p.partner_id END,
              collection_note = CASE WHEN i.status = 'DELIVERED' AND coalesce(i.cod_collected_qepik, p.amount_qepik) <> p.amount_qepik
                                     THEN i.partner_note END,
              captured_at = CASE WHEN i.status = 'DELIVERED' THEN i.at ELSE p.captured_at END,
              canceled_at = CASE WHEN i.status = 'DELIVERED' THEN p.canceled_at ELSE i.at END,
              updated_at = i.at
         FROM ${input} i
        WHERE i.status IN ('DELIVERED', 'CANCELLED', 'RETURNED')
          AND p.order_id = i.order_id
          AND CASE i.status
                WHEN 'DELIVERED' THEN p.method = 'COD' AND p.status = 'AWAITING_COLLECTION'
                WHEN 'CANCELLED' THEN p.status IN ('REQUIRES_CAPTURE', 'AWAITING_COLLECTION')
                ELSE p.method = 'COD' AND p.status = 'AWAITING_COLLECTION' END
       RETURNING p.order_id, p.status, p.environment, i.assigned_key_id, i.at, payment_intent_json(p) AS j
     ), intent_events AS (
       ${OUTBOX_INSERT}
       SELECT public_id('evt_'), CASE WHEN m.status = 'COLLECTED' THEN 'payment_intent.collected' ELSE 'payment_intent.canceled' END,
              m.environment, m.order_id, m.assigned_key_id, jsonb_build_object('paymentIntent', m.j), m.at
         FROM intent_moves m
     )`;
}
