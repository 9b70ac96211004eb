-- Orders: the read-model triggers reach the orders they re-render by key, one index probe per order,
-- whatever the planner believed about the table when a session first ran them.
--
-- The statement triggers of 0006 (items, timeline) and 0009 (batches) re-rendered their orders with
-- one UPDATE joining the transition table to `orders` (`WHERE o.id IN (SELECT … FROM changed_rows)`).
-- PL/pgSQL plans such a statement once per session, on its first run, and keeps the plan for the
-- session's life (until something invalidates it, such as an ANALYZE of the table). A session that
-- first ran it while `orders` had never been analysed and was nearly empty (a new deployment: the
-- planner then assumes ~130 rows) with two or more rows in the transition table (an order of two
-- items, a group of partner events) chose a hash join over a SEQUENTIAL SCAN of `orders`, cheaper
-- than two index probes into 130 rows, and kept it while the table grew. With autovacuum off (or
-- behind), every order created by that session then read the whole table: creation cost grew with the
-- number of orders (measured: 44,691 scans reading 276 million rows over 44,000 operator writes).
-- Orders of one item planned a nested loop (one probe was the cheaper guess), which is why the
-- simple orders never showed it; the zone had nothing to do with it.
--
-- Now each trigger loops over the distinct keys of its transition table (in key order, so concurrent
-- writers lock orders in the same order) and updates by equality on an indexed column: a plan with no
-- join, whose only alternatives are an index probe and a scan. `enable_seqscan = off` for the
-- duration of the trigger rules out the scan even where a tiny, analysed table would have made it the
-- cheaper guess (this also covers the statements these triggers cause: the render trigger's lookups,
-- the foreign-key checks, the counters). A trigger that fires for many orders at once (a bulk insert
-- by plain SQL) pays one probe per order, which is what the join's index plan cost too.
--
-- zones_touch_orders (0009) is left as it is: it runs only when a zone row is updated, which no route
-- does, and `orders.zone_id` has no index (one would cost every order write an index entry).

CREATE OR REPLACE FUNCTION order_items_render_orders() RETURNS trigger
  LANGUAGE plpgsql
  SET enable_seqscan = off
AS $$
DECLARE
  changed record;
BEGIN
  FOR changed IN SELECT DISTINCT order_id FROM changed_rows ORDER BY order_id LOOP
    UPDATE orders SET pv_items = order_items_json(changed.order_id) WHERE id = changed.order_id;
  END LOOP;
  RETURN NULL;
END
$$;

-- Skips an order whose pv_last_event is already the newest id this statement inserted for it (the
-- order service rendered the entry itself, in the same statement): one probe, no write.
CREATE OR REPLACE FUNCTION order_events_render_orders() RETURNS trigger
  LANGUAGE plpgsql
  SET enable_seqscan = off
AS $$
DECLARE
  changed record;
BEGIN
  FOR changed IN SELECT order_id, max(id) AS last_id FROM changed_rows GROUP BY order_id ORDER BY order_id LOOP
    UPDATE orders
       SET pv_timeline = order_timeline_json(changed.order_id), pv_last_event = greatest(pv_last_event, changed.last_id)
     WHERE id = changed.order_id AND pv_last_event <> changed.last_id;
  END LOOP;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION batches_touch_orders() RETURNS trigger
  LANGUAGE plpgsql
  SET enable_seqscan = off
AS $$
DECLARE
  changed record;
BEGIN
  FOR changed IN SELECT DISTINCT code FROM changed_rows ORDER BY code LOOP
    UPDATE orders SET pv_batch = NULL WHERE batch_code = changed.code;
  END LOOP;
  RETURN NULL;
END
$$;
