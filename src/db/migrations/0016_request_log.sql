-- The request log (docs/decisions-log.md, 'Request log'): one row per partner-API request made with an identifiable key,
-- written in batches off the request path (src/modules/request-log/request-recorder.ts).
--
-- Partitioned by UTC day on created_at: retention (35 days) drops whole days (a DROP TABLE of a
-- partition, no row-by-row DELETE, no bloat left behind). Partitions are created on demand by the
-- writer (request_log_ensure_day, for the days of a batch and the day after) and dropped by the
-- worker's periodic purge (request_log_drop_days_before).
--
-- No foreign keys: each would cost every inserted row an index probe into partners or api_keys, and
-- the log is history (a row outlives nothing it points to by more than 35 days).
--
-- No primary key index either. The id is unique by construction (req_ + the arrival time in ms + a
-- per-process sequence + 56 random bits, src/modules/request-log/request-id.ts), and a unique index
-- of a partitioned table must hold the partition key, so (id, created_at) would not even enforce it
-- across days; it would only cost every row one more index entry (about a sixth of the insert's
-- database CPU, measured). A request is found by (partner_id, created_at, id) in the first index
-- below: its created_at comes from its id.
CREATE TABLE request_log (
  -- req_<12 hex: created_at in ms><6 hex: sequence><14 hex: random>.
  id text NOT NULL,
  created_at timestamptz NOT NULL,
  partner_id uuid NOT NULL,
  api_key_id uuid NOT NULL,
  environment text NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  query text,
  status_code smallint NOT NULL,
  error_code text,
  duration_ms real NOT NULL,
  ip text NOT NULL,
  user_agent text,
  idempotency_key text,
  request_body text,
  response_body text
) PARTITION BY RANGE (created_at);

-- Indexes for the filters of GET /v1/developer/requests and nothing more (every index is paid by every
-- logged request). Newest first within the partner, since/until, method (a filter on the rows of
-- this index), and the detail route (partner, created_at and id exactly):
CREATE INDEX request_log_partner_time ON request_log (partner_id, created_at DESC, id DESC);
-- apiKeyId:
CREATE INDEX request_log_key_time ON request_log (api_key_id, created_at DESC, id DESC);
-- status 4xx/5xx/4NN/5NN and code (an error code implies an error status): only the error rows,
-- so successful requests pay nothing for it. `status=2xx` reads the first index (most rows match).
CREATE INDEX request_log_partner_errors ON request_log (partner_id, status_code, created_at DESC) WHERE status_code >= 400;
-- path (exact, or a prefix: `LIKE 'prefix%'` needs the pattern operator class):
CREATE INDEX request_log_partner_path ON request_log (partner_id, path text_pattern_ops, created_at DESC);

-- Per partner and minute: requests left out of the log under overload, and log entries not sent on
-- the realtime channel (over 50 a second). Few rows (only minutes that had any); purged by DELETE.
CREATE TABLE request_log_minutes (
  partner_id uuid NOT NULL,
  minute timestamptz NOT NULL,
  dropped integer NOT NULL DEFAULT 0,
  not_streamed integer NOT NULL DEFAULT 0,
  PRIMARY KEY (partner_id, minute)
);

-- Creates the partition of one UTC day unless it exists. Several processes may race to create the
-- same day: the loser's error is swallowed (the partition exists, which is all it wanted). Creating a
-- partition locks the parent table; lock_timeout keeps a writer from queueing behind a long read (it
-- retries on its next flush instead).
CREATE FUNCTION request_log_ensure_day(day date) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  part text := 'request_log_d' || to_char(day, 'YYYYMMDD');
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN;
  END IF;
  PERFORM set_config('lock_timeout', '2s', true);
  EXECUTE format(
    'CREATE TABLE IF NOT EXISTS %I PARTITION OF request_log FOR VALUES FROM (%L) TO (%L)',
    part,
    to_char(day, 'YYYY-MM-DD') || 'T00:00:00Z',
    to_char(day + 1, 'YYYY-MM-DD') || 'T00:00:00Z'
  );
EXCEPTION WHEN duplicate_table OR unique_violation THEN
  NULL;
END $$;

-- Drops the partitions of the days before first_kept (whole days); returns how many went.
CREATE FUNCTION request_log_drop_days_before(first_kept date) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  part record;
  dropped integer := 0;
BEGIN
  PERFORM set_config('lock_timeout', '5s', true);
  FOR part IN
    SELECT c.relname
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'request_log'::regclass
       AND c.relname ~ '^request_log_d[0-9]{8}$'
       AND to_date(substr(c.relname, 14), 'YYYYMMDD') < first_kept
  LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I', part.relname);
    dropped := dropped + 1;
  END LOOP;
  RETURN dropped;
END $$;
