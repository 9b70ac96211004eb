-- The delivery queue's plans stay right whatever the statistics were when a session planned them
-- (guarded by src/worker/queue-scans.test.ts).
--
-- 1. The attempt log has no foreign key to its delivery any more. PostgreSQL checked it once per
--    attempt row with a plan each session made once and kept for its life: made while the queue held a
--    handful of rows (a new deployment, a fresh benchmark database), that plan was a sequential scan,
--    and it stayed one as the queue grew. Every recorded outcome then read the whole queue (a
--    one-endpoint burst fell to ~500 deliveries/s on 10,000 rows). The key guarded nothing the code
--    does not already ensure: an attempt row is only ever inserted by the statement that updates its
--    delivery, from that update's RETURNING, under the delivery's row lock. What the key also did,
--    taking the attempts with their delivery (retention purge, a webhook's deletion, which cascades to
--    its deliveries), is now a statement trigger on the deliveries: one DELETE per deleting statement,
--    planned each time (EXECUTE) for the rows it really removes.
ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_delivery_id_fkey;

CREATE FUNCTION webhook_delivery_attempts_follow_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE 'DELETE FROM webhook_delivery_attempts a USING gone_deliveries g WHERE a.delivery_id = g.id';
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_deliveries_attempts_follow AFTER DELETE ON webhook_deliveries
  REFERENCING OLD TABLE AS gone_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_delivery_attempts_follow_delete();

-- 2. Queue tables churn: every delivery is inserted, leased and finished (three row versions), every
--    outbox row inserted and marked. Autovacuum's defaults (a pass after 20 % of the table changed) let
--    dead versions and stale statistics pile up in a burst; these tables get a pass after 2 %.
ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02,
                                    autovacuum_vacuum_insert_scale_factor = 0.02);
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02,
                        autovacuum_vacuum_insert_scale_factor = 0.02);
