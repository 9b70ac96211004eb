-- The request log's filter indexes hold only the rows a filter on them is for (docs/paging.md, "Request
-- log"; docs/performance.md, "Request log"). Every logged request paid an entry in each of the six
-- indexes of migration 0021; most logged requests are successful reads (GET answered 200), and a filter
-- whose value is that common reads the partner's time index and checks the value on its rows instead:
-- it keeps most of them, so it reads about the page ÷ the value's share. A GET answered 200 now pays
-- three entries (the partner's time, the key, the path), which halves the log's database CPU per row.
--
-- Each predicate is written on the very expression the filter's WHERE clause uses, so that the planner
-- can prove a filter implies it (`status_code = 404` ⇒ `status_code <> 200`; `(status_code / 100) = 4`
-- ⇒ `(status_code / 100) <> 2`; `method = 'POST'` ⇒ `method <> 'GET'`): the service writes these three
-- filters as literals (validated values), never as parameters, so that this holds in every plan.

-- One status other than 200 (201, 204, 404, 503, …). status=200 reads the partner's time index.
DROP INDEX IF EXISTS request_log_partner_status_time;
CREATE INDEX request_log_partner_status_time ON request_log (partner_id, status_code, created_at DESC, id DESC)
  WHERE status_code <> 200;
-- A class other than 2xx. status=2xx reads the partner's time index.
DROP INDEX IF EXISTS request_log_partner_class_time;
CREATE INDEX request_log_partner_class_time ON request_log (partner_id, (status_code / 100), created_at DESC, id DESC)
  INCLUDE (status_code) WHERE (status_code / 100) <> 2;
-- A method other than GET. method=GET reads the partner's time index.
DROP INDEX IF EXISTS request_log_partner_method_time;
CREATE INDEX request_log_partner_method_time ON request_log (partner_id, method, created_at DESC, id DESC)
  WHERE method <> 'GET';
