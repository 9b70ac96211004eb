-- Orders: the partner read model as ready-to-send JSON text, one render per change, and counters
-- without a hot row.
--
-- 1. The partner reads answer the stored text itself. 0004 stored the PartnerOrder as jsonb: every
--    read made PostgreSQL print it, Node parse it and fast-json-stringify print it again (a page of 50
--    orders is ~50 KB of JSON each way), which dominated the list and single-order paths. Now every
--    order row carries its PartnerOrder as compact JSON text, keys in the schema's order, in three
--    pieces so that the customer can be left out without parsing anything:
--        pv_head || coalesce(pv_customer, 'null') || pv_tail    (a key with orders:pii)
--        pv_head || 'null' || pv_tail                           (a key without it)
--    A page is those texts joined in SQL inside the envelope. The pieces are rendered by the BEFORE
--    trigger below from the row and two stored sub-texts: pv_items (order_items) and pv_timeline
--    (order_events), each re-rendered by a trigger on its table. Writes by any module or by plain SQL
--    keep all of it exact, as before.
--
-- 2. One render per status change. 0004 re-rendered an order twice per partner event (once for the
--    UPDATE of the order, once more when the timeline entry was inserted, each an UPDATE touching all
--    of the order's indexes). The order service now inserts the timeline entry and updates the order
--    in ONE statement that also appends the entry to pv_timeline and sets pv_last_event to its id; the
--    order_events trigger skips orders whose pv_last_event already is the newest inserted id, and
--    re-renders from the table otherwise (plain inserts, and a writer that raced the order lock: the
--    render functions are VOLATILE so they read the latest committed rows, not the statement's
--    snapshot).
--
-- 3. order_counts is striped by backend (slot = pg_backend_pid() % 16). Every status change moves a
--    counter; with one row per (environment, key, status), every concurrent change of the same key's
--    orders waited on the same row lock until the previous transaction had committed (and flushed its
--    WAL), so partner events ran one at a time. Readers sum the slots (at most 16 rows per status).

-- Piece renderers. JSON strings through to_json (PostgreSQL escapes exactly what JSON requires);
-- instants as ISO 8601 UTC with milliseconds (iso_utc, 0004), like Date#toISOString.
CREATE FUNCTION json_text(v text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce(to_json(v)::text, 'null');

CREATE FUNCTION json_instant(ts timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN ts IS NULL THEN 'null' ELSE '"' || iso_utc(ts) || '"' END;

CREATE FUNCTION localized_text_json(t jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '{"az":' || json_text(t ->> 'az') || ',"ru":' || json_text(t ->> 'ru') || ',"en":' || json_text(t ->> 'en') || '}';

-- PartnerCustomer; SQL NULL for an order without a customer.
CREATE FUNCTION partner_customer_json(c jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN CASE WHEN c IS NULL OR jsonb_typeof(c) = 'null' THEN NULL ELSE
    '{"name":' || json_text(c ->> 'name') || ',"phone":' || json_text(c ->> 'phone')
    || ',"address":{"street":' || json_text(c #>> '{address,street}') || ',"details":' || json_text(c #>> '{address,details}')
    || ',"lat":' || coalesce((c #> '{address,lat}')::text, 'null') || ',"lng":' || coalesce((c #> '{address,lng}')::text, 'null')
    || '}}' END;

-- One PartnerOrderEvent of the timeline.
CREATE FUNCTION timeline_entry_json(status text, at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN '{"status":' || json_text(status) || ',"at":' || json_instant(at) || '}';

CREATE FUNCTION order_items_json(order_id uuid) RETURNS text
  LANGUAGE sql VOLATILE
  RETURN (SELECT '[' || coalesce(string_agg('{"name":' || localized_text_json(i.name) || ',"qty":' || i.qty
                                            || ',"unitPriceQepik":' || i.unit_price_qepik || '}', ',' ORDER BY i.position), '') || ']'
            FROM order_items i WHERE i.order_id = $1);

CREATE FUNCTION order_timeline_json(order_id uuid) RETURNS text
  LANGUAGE sql VOLATILE
  RETURN (SELECT '[' || coalesce(string_agg(timeline_entry_json(e.status, e.at), ',' ORDER BY e.id), '') || ']'
            FROM order_events e WHERE e.order_id = $1);

-- Retire the jsonb view of 0004 (nothing outside the orders module read it).
DROP TRIGGER orders_partner_view_insert ON orders;
DROP TRIGGER orders_partner_view_update ON orders;
DROP TRIGGER order_items_partner_view ON order_items;
DROP TRIGGER order_events_partner_view ON order_events;
DROP FUNCTION orders_refresh_partner_view();
DROP FUNCTION order_children_touch_orders();
DROP FUNCTION partner_order_view(orders);
ALTER TABLE orders DROP COLUMN partner_view;

ALTER TABLE orders
  ADD COLUMN pv_items text NOT NULL DEFAULT '[]',
  ADD COLUMN pv_timeline text NOT NULL DEFAULT '[]',
  ADD COLUMN pv_last_event bigint NOT NULL DEFAULT 0,
  ADD COLUMN pv_head text,
  ADD COLUMN pv_customer text,
  ADD COLUMN pv_tail text;

-- The PartnerOrder pieces of the row (the single definition of that JSON; field order = the schema's).
CREATE FUNCTION orders_render_partner_json() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  NEW.pv_head := '{"code":' || json_text(NEW.code)
    || ',"status":' || json_text(NEW.status)
    || ',"paymentMethod":' || json_text(NEW.payment_method)
    || ',"paymentStatus":' || json_text(NEW.payment_status)
    || ',"totalQepik":' || NEW.total_qepik
    || ',"codAmountQepik":' || NEW.cod_amount_qepik
    || ',"area":' || json_text(NEW.area)
    || ',"zone":' || coalesce((SELECT '{"id":"' || z.id || '","name":' || localized_text_json(z.name) || '}'
                                 FROM zones z WHERE z.id = NEW.zone_id), 'null')
    || ',"timeWindowStart":' || json_instant(NEW.time_window_start)
    || ',"timeWindowEnd":' || json_instant(NEW.time_window_end)
    || ',"items":' || NEW.pv_items
    || ',"timeline":' || NEW.pv_timeline
    || ',"customer":';
  NEW.pv_customer := partner_customer_json(NEW.customer);
  NEW.pv_tail := ',"batch":' || coalesce((SELECT '{"code":' || json_text(b.code) || ',"status":' || json_text(b.status) || '}'
                                            FROM batches b WHERE b.code = NEW.batch_code), 'null')
    || ',"partnerAssignedAt":' || json_instant(NEW.partner_assigned_at)
    || ',"updatedAt":' || json_instant(NEW.updated_at)
    || '}';
  RETURN NEW;
END
$$;

-- Only columns that appear in the view re-render it: moving orders to another key (rotation) does not.
CREATE TRIGGER orders_partner_json_insert BEFORE INSERT ON orders
  FOR EACH ROW EXECUTE FUNCTION orders_render_partner_json();
CREATE TRIGGER orders_partner_json_update
  BEFORE UPDATE OF code, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area, zone_id,
                   time_window_start, time_window_end, customer, batch_code, partner_assigned_at, updated_at,
                   pv_items, pv_timeline
  ON orders FOR EACH ROW EXECUTE FUNCTION orders_render_partner_json();

CREATE FUNCTION order_items_render_orders() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE orders o SET pv_items = order_items_json(o.id) WHERE o.id IN (SELECT DISTINCT order_id FROM changed_rows);
  RETURN NULL;
END
$$;
CREATE TRIGGER order_items_partner_json AFTER INSERT ON order_items
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION order_items_render_orders();

-- Skips an order whose pv_last_event is already the newest id this statement inserted for it (the
-- order service rendered the entry itself, in the same statement).
CREATE FUNCTION order_events_render_orders() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE orders o SET pv_timeline = order_timeline_json(o.id), pv_last_event = greatest(o.pv_last_event, n.last_id)
    FROM (SELECT order_id, max(id) AS last_id FROM changed_rows GROUP BY order_id) n
   WHERE o.id = n.order_id AND o.pv_last_event <> n.last_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER order_events_partner_json AFTER INSERT ON order_events
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION order_events_render_orders();

-- Orders written before this migration (batches_touch_orders and zones_touch_orders of 0004 still
-- re-render through the update trigger above).
UPDATE orders o
   SET pv_items = order_items_json(o.id),
       pv_timeline = order_timeline_json(o.id),
       pv_last_event = coalesce((SELECT max(e.id) FROM order_events e WHERE e.order_id = o.id), 0);

-- Striped counters (see 3.).
ALTER TABLE order_counts ADD COLUMN slot smallint NOT NULL DEFAULT 0;
ALTER TABLE order_counts DROP CONSTRAINT order_counts_pkey;
ALTER TABLE order_counts ADD PRIMARY KEY (environment, key_id, status, slot);

CREATE OR REPLACE FUNCTION order_counts_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, slot, n)
  SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, pg_backend_pid() % 16, count(*)
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION order_counts_after_update() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, slot, n)
  SELECT environment, key_id, status, pg_backend_pid() % 16, sum(delta)
    FROM (SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000') AS key_id, status, -1 AS delta
            FROM old_rows
          UNION ALL
          SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, 1
            FROM new_rows) d
   GROUP BY 1, 2, 3 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION order_counts_after_delete() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, slot, n)
  SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, pg_backend_pid() % 16, -count(*)
    FROM old_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status, slot) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;
