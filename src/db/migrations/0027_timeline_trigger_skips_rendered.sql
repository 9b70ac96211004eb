-- Orders: the timeline trigger looks before it updates.
--
-- A partner event's statement (order-writes.repo.ts, recordStatusChanges) inserts the timeline entry and
-- renders it into its order itself, setting `pv_last_event` to the entry's id, so the timeline trigger
-- finds nothing to do for that order. It found that out by running its UPDATE (`… WHERE id = $1 AND
-- pv_last_event <> $2`), which matched no row but is still an UPDATE statement of `orders`: the
-- table's statement-level trigger (orders_counts_update, the order counters, with its two transition
-- tables) ran once per order of the group, for nothing.
--
-- The trigger now first reads whether the order needs the render, with the very condition of its
-- UPDATE (one probe of the primary key), and runs the UPDATE only then, exactly as before (same
-- statement, same key order, same row locks). What it skips changes nothing anyone reads: an UPDATE
-- that matches no row writes nothing, and the counters' trigger over empty transition tables adds
-- nothing. The check cannot go stale before the UPDATE would have run: an order is skipped only when
-- its `pv_last_event` is the id this very statement inserted, which only this transaction can have
-- written, so it holds that order's row lock.
CREATE OR REPLACE FUNCTION order_events_render_orders() RETURNS trigger
  LANGUAGE plpgsql
  SET enable_seqscan = off
AS $$
DECLARE
  changed record;
BEGIN
  FOR changed IN SELECT order_id, max(id) AS last_id FROM changed_rows GROUP BY order_id ORDER BY order_id LOOP
    PERFORM 1 FROM orders WHERE id = changed.order_id AND pv_last_event <> changed.last_id;
    IF FOUND THEN
      UPDATE orders
         SET pv_timeline = order_timeline_json(changed.order_id), pv_last_event = greatest(pv_last_event, changed.last_id)
       WHERE id = changed.order_id AND pv_last_event <> changed.last_id;
    END IF;
  END LOOP;
  RETURN NULL;
END
$$;
