-- Payments (docs/payments.md): one payment intent per order, cash-on-delivery settlements and their lines.
-- Every amount is an integer number of qəpik (bigint); sums are exact.

-- A public id: prefix + 24 base62 characters, drawn from two random UUIDs (skipping their fixed
-- version and variant bytes). Ids are not secrets; they only have to be unique and opaque.
CREATE FUNCTION public_id(prefix text) RETURNS text
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  b bytea := uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid());
  out text := prefix;
  i int;
BEGIN
  FOREACH i IN ARRAY ARRAY[0,1,2,3,4,5,7,9,10,11,12,13,14,15,16,17,18,19,20,21,23,25,26,27] LOOP
    out := out || substr(alphabet, get_byte(b, i) % 62 + 1, 1);
  END LOOP;
  RETURN out;
END $$;

CREATE TABLE settlements (
  id                 text PRIMARY KEY,
  partner_id         uuid NOT NULL REFERENCES partners (id),
  environment        text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  period_start       timestamptz NOT NULL,
  period_end         timestamptz NOT NULL,
  status             text NOT NULL CHECK (status IN ('AWAITING_REMITTANCE', 'PARTIALLY_REMITTED', 'SETTLED')),
  collections_count  integer NOT NULL DEFAULT 0,
  expected_qepik     bigint NOT NULL DEFAULT 0,
  collected_qepik    bigint NOT NULL DEFAULT 0,
  adjustments_qepik  bigint NOT NULL DEFAULT 0,
  remitted_qepik     bigint NOT NULL DEFAULT 0,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  settled_at         timestamptz,
  -- One statement per partner, environment and period end: the backstop of the creation lock.
  UNIQUE (partner_id, environment, period_end)
);
-- Partner lists (newest first), the latest period of a partner, and the operator's list by status.
CREATE INDEX settlements_partner_created_idx ON settlements (partner_id, environment, created_at DESC, id DESC);
CREATE INDEX settlements_status_created_idx ON settlements (status, created_at DESC, id DESC);

CREATE TABLE payment_intents (
  id                     text PRIMARY KEY,
  order_id               uuid NOT NULL UNIQUE REFERENCES orders (id) ON DELETE CASCADE,
  order_code             text NOT NULL,
  environment            text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  method                 text NOT NULL CHECK (method IN ('COD', 'CARD')),
  status                 text NOT NULL CHECK (status IN ('REQUIRES_CAPTURE', 'SUCCEEDED', 'AWAITING_COLLECTION', 'COLLECTED', 'SETTLED', 'CANCELED')),
  amount_qepik           bigint NOT NULL CHECK (amount_qepik >= 0),
  amount_received_qepik  bigint NOT NULL DEFAULT 0 CHECK (amount_received_qepik >= 0),
  amount_refunded_qepik  bigint NOT NULL DEFAULT 0 CHECK (amount_refunded_qepik >= 0 AND amount_refunded_qepik <= amount_received_qepik),
  -- The partner whose courier collected the cash (set with the collection): whose settlement takes it.
  partner_id             uuid,
  -- The delivery event's note when the cash collected differs from the COD amount.
  collection_note        text,
  -- No foreign key: a settlement takes its collections in the statement that creates it, and a key
  -- checked once per row cost most of a 100,000-collection settlement (docs/performance.md).
  settlement_id          text,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  captured_at            timestamptz,
  canceled_at            timestamptz
);
-- Collections on no settlement yet, by partner and time: what a settlement takes and the balance reads.
CREATE INDEX payment_intents_on_hand_idx ON payment_intents (partner_id, environment, captured_at)
  WHERE status = 'COLLECTED' AND settlement_id IS NULL;
CREATE INDEX payment_intents_settlement_idx ON payment_intents (settlement_id) WHERE settlement_id IS NOT NULL;
CREATE INDEX payment_intents_env_updated_idx ON payment_intents (environment, updated_at);

CREATE TABLE settlement_lines (
  n                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id                 text NOT NULL UNIQUE,
  settlement_id      text NOT NULL,  -- no foreign key, as payment_intents.settlement_id
  type               text NOT NULL CHECK (type IN ('COD_COLLECTION', 'ADJUSTMENT', 'REMITTANCE')),
  order_code         text,
  payment_intent_id  text,
  expected_qepik     bigint,
  amount_qepik       bigint NOT NULL,
  note               text,
  reference          text,
  at                 timestamptz NOT NULL
);
-- A statement's lines, oldest first.
CREATE INDEX settlement_lines_settlement_idx ON settlement_lines (settlement_id, at, n);

-- Refunds of card payments (the operator's), kept for the record.
CREATE TABLE payment_refunds (
  id                 text PRIMARY KEY,
  payment_intent_id  text NOT NULL REFERENCES payment_intents (id),
  amount_qepik       bigint NOT NULL CHECK (amount_qepik > 0),
  reason             text,
  created_at         timestamptz NOT NULL
);
CREATE INDEX payment_refunds_intent_idx ON payment_refunds (payment_intent_id);

-- Settlement events go to the partner's webhooks: the outbox row names the partner.
ALTER TABLE outbox ADD COLUMN partner_id uuid;

-- The PaymentIntent of a row (docs/payments.md), as jsonb.
CREATE FUNCTION payment_intent_json(p payment_intents) RETURNS jsonb
  LANGUAGE sql STABLE
  RETURN jsonb_build_object(
    'id', p.id, 'orderCode', p.order_code, 'environment', lower(p.environment), 'method', p.method, 'status', p.status,
    'currency', 'AZN', 'amountQepik', p.amount_qepik, 'amountReceivedQepik', p.amount_received_qepik,
    'amountRefundedQepik', p.amount_refunded_qepik, 'settlementId', p.settlement_id,
    'createdAt', iso_utc(p.created_at), 'updatedAt', iso_utc(p.updated_at),
    'capturedAt', CASE WHEN p.captured_at IS NULL THEN NULL ELSE iso_utc(p.captured_at) END,
    'canceledAt', CASE WHEN p.canceled_at IS NULL THEN NULL ELSE iso_utc(p.canceled_at) END);

-- The Settlement of a row, as jsonb (due, variance and outstanding derived, never stored).
CREATE FUNCTION settlement_json(s settlements) RETURNS jsonb
  LANGUAGE sql STABLE
  RETURN jsonb_build_object(
    'id', s.id, 'environment', lower(s.environment), 'periodStart', iso_utc(s.period_start), 'periodEnd', iso_utc(s.period_end),
    'status', s.status, 'collectionsCount', s.collections_count, 'expectedQepik', s.expected_qepik,
    'collectedQepik', s.collected_qepik, 'varianceQepik', s.collected_qepik - s.expected_qepik,
    'adjustmentsQepik', s.adjustments_qepik, 'dueQepik', s.collected_qepik + s.adjustments_qepik,
    'remittedQepik', s.remitted_qepik, 'outstandingQepik', s.collected_qepik + s.adjustments_qepik - s.remitted_qepik,
    'createdAt', iso_utc(s.created_at),
    'settledAt', CASE WHEN s.settled_at IS NULL THEN NULL ELSE iso_utc(s.settled_at) END);

-- Intents of the orders that exist: card orders already paid have succeeded; cancelled or returned
-- orders' intents are canceled; COD orders delivered before payments existed count as collected in
-- full at their delivery (their partner: the key's), ready for their first settlement.
INSERT INTO payment_intents (id, order_id, order_code, environment, method, status, amount_qepik, amount_received_qepik,
                             amount_refunded_qepik, partner_id, created_at, updated_at, captured_at, canceled_at)
SELECT public_id('pi_'), o.id, o.code, o.environment, o.payment_method, s.status,
       CASE WHEN o.payment_method = 'CARD' THEN o.total_qepik ELSE o.cod_amount_qepik END,
       CASE WHEN s.status IN ('SUCCEEDED', 'COLLECTED') THEN CASE WHEN o.payment_method = 'CARD' THEN o.total_qepik ELSE o.cod_amount_qepik END ELSE 0 END,
       CASE WHEN o.payment_method = 'CARD' AND o.payment_status = 'REFUNDED' THEN o.total_qepik ELSE 0 END,
       CASE WHEN s.status = 'COLLECTED' THEN (SELECT k.partner_id FROM api_keys k WHERE k.id = o.assigned_key_id) END,
       o.created_at, o.updated_at,
       CASE WHEN s.status IN ('SUCCEEDED', 'COLLECTED') THEN o.updated_at END,
       CASE WHEN s.status = 'CANCELED' THEN o.updated_at END
  FROM orders o,
       LATERAL (SELECT CASE
         WHEN o.payment_method = 'CARD' AND o.payment_status IN ('PAID', 'PARTIALLY_REFUNDED', 'REFUNDED') THEN 'SUCCEEDED'
         WHEN o.status = 'CANCELLED' OR (o.payment_method = 'COD' AND o.status = 'RETURNED') THEN 'CANCELED'
         WHEN o.payment_method = 'CARD' THEN 'REQUIRES_CAPTURE'
         WHEN o.status = 'DELIVERED' THEN 'COLLECTED'
         ELSE 'AWAITING_COLLECTION' END AS status) s;
