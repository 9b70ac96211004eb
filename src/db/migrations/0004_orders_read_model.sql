-- Orders: batch order, the partner read model, and order counters.
--
-- 1. A batch keeps its orders in the order the operator listed them (batch_position): every answer
--    about the batch (creation, status changes, batch.completed) lists orderCodes in that order.
--
-- 2. orders.partner_view holds the order's PartnerOrder JSON (docs/decisions-log.md, 'Orders'; customer included), kept
--    current by the triggers below in the same transaction as every change to the order, its items,
--    its timeline, its batch or its zone. The partner reads are hot paths: reading one stored value
--    per order instead of assembling items, timeline, zone and batch with correlated subqueries on
--    every request makes a page of 50 orders several times cheaper, on the embedded database above
--    all. Because triggers maintain it, a write from any module (or plain SQL) keeps it right.
--    Readers without orders:pii get it with customer set to null.
--
-- 3. order_counts keeps how many orders each key (or no key) has per environment and status, kept
--    exact by statement triggers in the same transaction as every insert, update and delete. A full
--    page of a partner list must report `total`, all matching rows: counting tens of thousands of rows
--    per request would dominate the hot path, summing at most a few counter rows does not. (Lists
--    filtered by time still count the orders themselves, over the range their index gives.)
ALTER TABLE orders ADD COLUMN batch_position integer;
ALTER TABLE orders ADD COLUMN partner_view jsonb;

-- ISO 8601 in UTC with milliseconds, exactly like JavaScript's Date#toISOString.
CREATE FUNCTION iso_utc(ts timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

-- The PartnerOrder of one order row (the single definition of that JSON).
CREATE FUNCTION partner_order_view(o orders) RETURNS jsonb
  LANGUAGE sql STABLE
  RETURN jsonb_build_object(
    'code', o.code,
    'status', o.status,
    'paymentMethod', o.payment_method,
    'paymentStatus', o.payment_status,
    'totalQepik', o.total_qepik,
    'codAmountQepik', o.cod_amount_qepik,
    'area', o.area,
    'zone', (SELECT jsonb_build_object('id', z.id, 'name', z.name) FROM zones z WHERE z.id = o.zone_id),
    'timeWindowStart', iso_utc(o.time_window_start),
    'timeWindowEnd', iso_utc(o.time_window_end),
    'items', coalesce((SELECT jsonb_agg(jsonb_build_object('name', i.name, 'qty', i.qty, 'unitPriceQepik', i.unit_price_qepik)
                                        ORDER BY i.position)
                         FROM order_items i WHERE i.order_id = o.id), '[]'::jsonb),
    'timeline', coalesce((SELECT jsonb_agg(jsonb_build_object('status', e.status, 'at', iso_utc(e.at)) ORDER BY e.id)
                            FROM order_events e WHERE e.order_id = o.id), '[]'::jsonb),
    'customer', o.customer,
    'batch', (SELECT jsonb_build_object('code', b.code, 'status', b.status) FROM batches b WHERE b.code = o.batch_code),
    'partnerAssignedAt', iso_utc(o.partner_assigned_at),
    'updatedAt', iso_utc(o.updated_at)
  );

CREATE FUNCTION orders_refresh_partner_view() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  NEW.partner_view := partner_order_view(NEW);
  RETURN NEW;
END
$$;

-- Only columns that appear in the view re-render it: moving orders to another key (rotation) does not.
CREATE TRIGGER orders_partner_view_insert BEFORE INSERT ON orders
  FOR EACH ROW EXECUTE FUNCTION orders_refresh_partner_view();
CREATE TRIGGER orders_partner_view_update
  BEFORE UPDATE OF code, status, payment_method, payment_status, total_qepik, cod_amount_qepik, area, zone_id,
                   time_window_start, time_window_end, customer, batch_code, partner_assigned_at, updated_at
  ON orders FOR EACH ROW EXECUTE FUNCTION orders_refresh_partner_view();

-- Items, timeline entries, batches and zones live in other tables: a change there re-renders the
-- orders it touches (once per statement, through the orders trigger above).
CREATE FUNCTION order_children_touch_orders() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE orders o SET updated_at = o.updated_at WHERE o.id IN (SELECT DISTINCT order_id FROM changed_rows);
  RETURN NULL;
END
$$;
CREATE TRIGGER order_items_partner_view AFTER INSERT ON order_items
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION order_children_touch_orders();
CREATE TRIGGER order_events_partner_view AFTER INSERT ON order_events
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION order_children_touch_orders();

CREATE FUNCTION batches_touch_orders() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE orders o SET updated_at = o.updated_at WHERE o.batch_code IN (SELECT code FROM changed_rows);
  RETURN NULL;
END
$$;
CREATE TRIGGER batches_partner_view AFTER UPDATE ON batches
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION batches_touch_orders();

CREATE FUNCTION zones_touch_orders() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE orders o SET updated_at = o.updated_at WHERE o.zone_id IN (SELECT id FROM changed_rows);
  RETURN NULL;
END
$$;
CREATE TRIGGER zones_partner_view AFTER UPDATE ON zones
  REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION zones_touch_orders();

-- Orders written before this migration.
UPDATE orders SET updated_at = updated_at;

-- Counters. key_id is the nil UUID for orders assigned to no key (a primary key column cannot be null).
CREATE TABLE order_counts (
  environment  text NOT NULL,
  key_id       uuid NOT NULL,
  status       text NOT NULL,
  n            bigint NOT NULL,
  PRIMARY KEY (environment, key_id, status)
);

-- Each statement applies its net change per counter row in one upsert, in primary-key order, so two
-- transactions touching the same counters lock them in the same order and cannot deadlock. An update
-- that changes neither key, status nor environment (most do not) writes nothing.
CREATE FUNCTION order_counts_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, n)
  SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, count(*)
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE FUNCTION order_counts_after_update() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, n)
  SELECT environment, key_id, status, sum(delta)
    FROM (SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000') AS key_id, status, -1 AS delta
            FROM old_rows
          UNION ALL
          SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, 1
            FROM new_rows) d
   GROUP BY 1, 2, 3 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE FUNCTION order_counts_after_delete() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO order_counts AS c (environment, key_id, status, n)
  SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, -count(*)
    FROM old_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (environment, key_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE TRIGGER orders_counts_insert AFTER INSERT ON orders
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_after_insert();
CREATE TRIGGER orders_counts_update AFTER UPDATE ON orders
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_after_update();
CREATE TRIGGER orders_counts_delete AFTER DELETE ON orders
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION order_counts_after_delete();

INSERT INTO order_counts (environment, key_id, status, n)
SELECT environment, coalesce(assigned_key_id, '00000000-0000-0000-0000-000000000000'), status, count(*)
  FROM orders GROUP BY 1, 2, 3;
