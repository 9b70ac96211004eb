-- Order offers (docs/offers.md): the operator offers an unassigned order to one key with a deadline;
-- the key accepts (the order becomes its own) or declines with a reason. A PENDING row past its
-- expires_at reads as EXPIRED at once (partner_offer_json); the sweep records it a moment later.
CREATE TABLE offers (
  id              text PRIMARY KEY,                  -- ofr_ + 24 base62
  order_id        uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
  order_code      text NOT NULL,
  api_key_id      uuid NOT NULL REFERENCES api_keys (id),
  partner_id      uuid NOT NULL,                     -- the key's partner (operator list, statistics)
  environment     text NOT NULL CHECK (environment IN ('LIVE', 'SANDBOX')),
  status          text NOT NULL CHECK (status IN ('PENDING', 'ACCEPTED', 'DECLINED', 'EXPIRED', 'WITHDRAWN')),
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  -- When the offer left PENDING: accepted, declined or withdrawn then; for EXPIRED its expires_at.
  decided_at      timestamptz,
  decline_reason  text CHECK (decline_reason IN ('NO_CAPACITY', 'OUT_OF_AREA', 'TIME_WINDOW', 'OTHER')),
  note            text CHECK (char_length(note) <= 500),
  CHECK ((status = 'DECLINED') = (decline_reason IS NOT NULL))
);

-- At most one open offer per order: the backstop of the order row lock every offer change takes.
CREATE UNIQUE INDEX offers_one_pending_idx ON offers (order_id) WHERE status = 'PENDING';
-- A key's offers, newest first (the partner's list and the portal's list of one key).
CREATE INDEX offers_key_created_idx ON offers (api_key_id, created_at DESC, id DESC);
-- The operator's list, newest first, and the order's offers.
CREATE INDEX offers_created_idx ON offers (created_at DESC, id DESC);
CREATE INDEX offers_order_code_idx ON offers (order_code, created_at DESC);
-- The expiry sweep: only the open offers, by deadline, so a tick reads only the due ones.
CREATE INDEX offers_due_idx ON offers (expires_at) WHERE status = 'PENDING';
-- A partner's offers by time (the portal's list, the operator's filter by partner) and its statistics:
-- the columns they count are in the index, so the statistics are one index-only range read.
CREATE INDEX offers_partner_created_idx ON offers (partner_id, created_at DESC, id DESC)
  INCLUDE (environment, status, expires_at, decided_at, decline_reason);

-- What an offer shows of its order before acceptance: enough to decide, never the customer's name,
-- phone or street; the drop-off point rounded to 2 decimals (about a kilometre).
CREATE FUNCTION partner_offer_order_json(o orders) RETURNS jsonb
  LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
           'code', v->'code', 'status', v->'status', 'paymentMethod', v->'paymentMethod',
           'totalQepik', v->'totalQepik', 'codAmountQepik', v->'codAmountQepik', 'area', v->'area',
           'zone', v->'zone', 'timeWindowStart', v->'timeWindowStart', 'timeWindowEnd', v->'timeWindowEnd',
           'items', v->'items',
           'dropoff', CASE
             WHEN jsonb_typeof(o.customer->'address'->'lat') = 'number' AND jsonb_typeof(o.customer->'address'->'lng') = 'number'
             THEN jsonb_build_object('lat', round((o.customer->'address'->>'lat')::numeric, 2),
                                     'lng', round((o.customer->'address'->>'lng')::numeric, 2))
             ELSE 'null'::jsonb END)
    FROM (SELECT (o.pv_head || 'null' || o.pv_tail)::jsonb AS v) s
$$;

-- The PartnerOffer as of `at` (the service clock): PENDING past its deadline reads EXPIRED.
CREATE FUNCTION partner_offer_json(f offers, o orders, at timestamptz) RETURNS jsonb
  LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
           'id', f.id, 'orderCode', f.order_code, 'apiKeyId', f.api_key_id,
           'status', CASE WHEN due THEN 'EXPIRED' ELSE f.status END,
           'createdAt', iso_utc(f.created_at), 'expiresAt', iso_utc(f.expires_at),
           'decidedAt', CASE WHEN due THEN iso_utc(f.expires_at) ELSE iso_utc(f.decided_at) END,
           'declineReason', f.decline_reason, 'note', f.note,
           'order', partner_offer_order_json(o))
    FROM (SELECT f.status = 'PENDING' AND f.expires_at <= at AS due) s
$$;
