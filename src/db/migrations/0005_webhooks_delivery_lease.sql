-- Webhook delivery queue: a fencing token per claim, and the indexes the claim and the fan-out need.

-- Each claim writes a fresh token beside locked_until; an attempt records its result only while the
-- token is still the one it claimed with. A worker whose lease expired (it hung, or died and came
-- back) therefore can never overwrite the result of the worker that took the row over.
ALTER TABLE webhook_deliveries ADD COLUMN lease_token uuid;

-- In-flight rows per webhook (the per-endpoint concurrency cap). Leases are cleared when an attempt
-- ends, so this index only ever holds the handful of rows being sent right now.
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (webhook_id, locked_until) WHERE locked_until IS NOT NULL;

-- One delivery per event and webhook: a fan-out that is retried after a crash can never queue an
-- event twice for the same endpoint (redeliver reuses the row; a ping has its own event id).
CREATE UNIQUE INDEX webhook_deliveries_webhook_event_idx ON webhook_deliveries (webhook_id, event_id);
