-- Offers: the PartnerOffer's JSON built by PL/pgSQL functions, same output.
--
-- Both functions were SQL functions with a FROM clause, which the planner cannot inline: each statement
-- that called them planned their bodies again when it ran (an accept calls partner_offer_json twice,
-- once reading the offer and once in the RETURNING of its conditional update). A PL/pgSQL function's
-- expressions are planned once per session and kept, so a pooled connection pays that once.
CREATE OR REPLACE FUNCTION partner_offer_order_json(o orders) RETURNS jsonb
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  v jsonb := (o.pv_head || 'null' || o.pv_tail)::jsonb;
BEGIN
  RETURN jsonb_build_object(
           'code', v->'code', 'status', v->'status', 'paymentMethod', v->'paymentMethod',
           'totalQepik', v->'totalQepik', 'codAmountQepik', v->'codAmountQepik', 'area', v->'area',
           'zone', v->'zone', 'timeWindowStart', v->'timeWindowStart', 'timeWindowEnd', v->'timeWindowEnd',
           'items', v->'items',
           'dropoff', CASE
             WHEN jsonb_typeof(o.customer->'address'->'lat') = 'number' AND jsonb_typeof(o.customer->'address'->'lng') = 'number'
             THEN jsonb_build_object('lat', round((o.customer->'address'->>'lat')::numeric, 2),
                                     'lng', round((o.customer->'address'->>'lng')::numeric, 2))
             ELSE 'null'::jsonb END);
END
$$;

-- The PartnerOffer as of `at` (the service clock): PENDING past its deadline reads EXPIRED.
CREATE OR REPLACE FUNCTION partner_offer_json(f offers, o orders, at timestamptz) RETURNS jsonb
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  due boolean := f.status = 'PENDING' AND f.expires_at <= at;
BEGIN
  RETURN jsonb_build_object(
           'id', f.id, 'orderCode', f.order_code, 'apiKeyId', f.api_key_id,
           'status', CASE WHEN due THEN 'EXPIRED' ELSE f.status END,
           'createdAt', iso_utc(f.created_at), 'expiresAt', iso_utc(f.expires_at),
           'decidedAt', CASE WHEN due THEN iso_utc(f.expires_at) ELSE iso_utc(f.decided_at) END,
           'declineReason', f.decline_reason, 'note', f.note,
           'order', partner_offer_order_json(o));
END
$$;
