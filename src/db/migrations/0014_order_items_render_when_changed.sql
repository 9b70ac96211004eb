-- Orders: the items trigger re-renders an order only when its stored items text is not already right.
--
-- An order is now created by ONE statement (orders.repo.ts, insertNewOrderRow) that inserts the order
-- with its items' text already rendered by the read model's own function, then its items. The items
-- trigger of 0013 re-rendered the order all the same: a second render and a second version of the
-- row (with the foreign-key checks and counters that an UPDATE brings) for nothing. It now computes
-- the text (order_items_json, as before) and updates the order only if it differs: a plain INSERT of
-- items by any other writer still re-renders its order, as before. (The timeline trigger already skips
-- an order whose pv_last_event is its newest entry; the same statement sets it.)
CREATE OR REPLACE FUNCTION order_items_render_orders() RETURNS trigger
  LANGUAGE plpgsql
  SET enable_seqscan = off
AS $$
DECLARE
  changed record;
  items text;
BEGIN
  FOR changed IN SELECT DISTINCT order_id FROM changed_rows ORDER BY order_id LOOP
    items := order_items_json(changed.order_id);
    UPDATE orders SET pv_items = items WHERE id = changed.order_id AND pv_items IS DISTINCT FROM items;
  END LOOP;
  RETURN NULL;
END
$$;
