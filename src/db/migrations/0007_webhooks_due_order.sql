-- Webhook delivery queue: the due index carries the claim's whole sort key (next_attempt_at, id).
--
-- The claim takes the oldest due rows, ORDER BY next_attempt_at, id LIMIT n. A fan-out queues
-- hundreds of deliveries with the same next_attempt_at, and with the index on next_attempt_at alone
-- every claim read all of them and sorted them to return a handful. With id in the key the scan is
-- already in claim order and stops after n rows.
DROP INDEX webhook_deliveries_due_idx;
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status IN ('PENDING', 'FAILED');
