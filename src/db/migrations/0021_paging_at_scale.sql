-- Paged lists at any size (docs/paging.md): every list answers from an index range that ends where its
-- page ends, however many rows the partner has, and counts come from counters, not from the rows.

-- 1. The request log. Each filter of GET /v1/developer/requests has an index whose leading columns are
--    the partner and the filter's value and whose tail is the list's order (created_at DESC, id DESC):
--    a page, a capped count (LIMIT 10,001) and a cursor (`(created_at, id) < (…)`) are then one range
--    of that index, in order, whatever the log holds. A filter that is only a condition on the rows of
--    another index (the old method filter) or an index in another order (the old status and path
--    ones: rows of every status, then sorted) reads rows in proportion to the log, not to the page.
--    Combined filters use the index of one of them and check the others on its rows.
--    The key index leads with the partner too: an apiKeyId of another partner's key is then an empty
--    range, not a walk through that key's rows.
DROP INDEX IF EXISTS request_log_key_time;
CREATE INDEX request_log_partner_key_time ON request_log (partner_id, api_key_id, created_at DESC, id DESC);
-- status=404: one status.
DROP INDEX IF EXISTS request_log_partner_errors;
CREATE INDEX request_log_partner_status_time ON request_log (partner_id, status_code, created_at DESC, id DESC);
-- status=4xx: one class (the service writes the filter as `status_code / 100 = 4`). status_code is
-- included so that the count and the page's ids are index-only reads (PostgreSQL reads an expression's
-- column from the table unless the index holds that column too).
CREATE INDEX request_log_partner_class_time ON request_log (partner_id, (status_code / 100), created_at DESC, id DESC)
  INCLUDE (status_code);
-- code=ERR_…: only error answers carry a code, so only they pay for this one.
CREATE INDEX request_log_partner_code_time ON request_log (partner_id, error_code, created_at DESC, id DESC)
  WHERE error_code IS NOT NULL;
-- method=POST.
CREATE INDEX request_log_partner_method_time ON request_log (partner_id, method, created_at DESC, id DESC);
-- path: exact (an ordered range) or a prefix (`LIKE 'prefix%'`, the pattern operator class).
DROP INDEX IF EXISTS request_log_partner_path;
CREATE INDEX request_log_partner_path_time ON request_log (partner_id, path text_pattern_ops, created_at DESC, id DESC);

-- 2. The deliveries of a webhook: how many it has in each status, kept exact by statement triggers in
--    the same transaction as every insert, status change and delete (the manner of order_counts,
--    migration 0004). A list's `total` is then the sum of at most four counter rows instead of a count
--    of up to millions of rows. Each statement applies its net change per counter row in one upsert in
--    primary-key order, so two transactions lock shared counters in the same order and cannot deadlock;
--    an update that changes no status (a lease, a retry time) writes nothing.
--    No foreign key: a webhook's deletion cascades to its deliveries, whose delete trigger then brings
--    the webhook's counters to zero (rows of zeros for a deleted webhook are left behind, four at most).
CREATE TABLE webhook_delivery_counts (
  webhook_id  uuid NOT NULL,
  status      text NOT NULL,
  n           bigint NOT NULL,
  PRIMARY KEY (webhook_id, status)
);

CREATE FUNCTION webhook_delivery_counts_after_insert() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_delivery_counts AS c (webhook_id, status, n)
  SELECT webhook_id, status, count(*) FROM new_rows GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (webhook_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE FUNCTION webhook_delivery_counts_after_update() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_delivery_counts AS c (webhook_id, status, n)
  SELECT webhook_id, status, sum(delta)
    FROM (SELECT webhook_id, status, -1 AS delta FROM old_rows
          UNION ALL
          SELECT webhook_id, status, 1 FROM new_rows) d
   GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2
  ON CONFLICT (webhook_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE FUNCTION webhook_delivery_counts_after_delete() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_delivery_counts AS c (webhook_id, status, n)
  SELECT webhook_id, status, -count(*) FROM old_rows GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (webhook_id, status) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_deliveries_counts_insert AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_after_insert();
CREATE TRIGGER webhook_deliveries_counts_update AFTER UPDATE ON webhook_deliveries
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_after_update();
CREATE TRIGGER webhook_deliveries_counts_delete AFTER DELETE ON webhook_deliveries
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_counts_after_delete();

INSERT INTO webhook_delivery_counts (webhook_id, status, n)
SELECT webhook_id, status, count(*) FROM webhook_deliveries GROUP BY 1, 2;
