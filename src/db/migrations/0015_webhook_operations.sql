-- Webhook operations (docs/decisions-log.md, 'Webhook operations'): every attempt recorded, signing-secret rotation with a grace,
-- recoveries of a time window fed to the queue in batches.

-- Every attempt of a delivery, written by the statement that records its outcome (no extra round trip).
-- `number` runs on across redeliveries (1, 2, … for the delivery's whole life), so the history of a
-- delivery that was redelivered keeps every attempt in order. Gone with their delivery (CASCADE: the
-- retention purge and a webhook's deletion take them too).
ALTER TABLE webhook_deliveries ADD COLUMN attempt_seq integer NOT NULL DEFAULT 0;

CREATE TABLE webhook_delivery_attempts (
  delivery_id       uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  number            integer NOT NULL,
  webhook_id        uuid NOT NULL,
  at                timestamptz NOT NULL,                 -- service clock, when the attempt started
  duration_ms       integer NOT NULL,
  outcome           text NOT NULL CHECK (outcome IN ('DELIVERED', 'FAILED', 'DEAD')),
  status_code       integer,
  error             text,
  request_headers   jsonb NOT NULL,                       -- Content-Type and the X-Partner-* headers sent
  response_headers  jsonb,
  response_body     text,                                 -- the first 4 KiB, as text; binary: a short note
  PRIMARY KEY (delivery_id, number)
);
-- Endpoint health (GET …/webhooks/{id}/health): the last 24 h of a webhook's attempts are two index
-- ranges (successes, failures), and its last success and last failure one probe each, however long the
-- webhook has been failing. Never a scan of deliveries or of other webhooks' attempts.
CREATE INDEX webhook_delivery_attempts_ok_idx ON webhook_delivery_attempts (webhook_id, at) INCLUDE (duration_ms)
  WHERE outcome = 'DELIVERED';
CREATE INDEX webhook_delivery_attempts_failed_idx ON webhook_delivery_attempts (webhook_id, at) INCLUDE (duration_ms, outcome)
  WHERE outcome <> 'DELIVERED';

-- Signing-secret rotation: the previous secret keeps signing (as a second v1) until it expires.
ALTER TABLE webhooks ADD COLUMN previous_secret_ciphertext text;
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at timestamptz;

-- A recovery (POST …/webhooks/{id}/recover) in progress: FAILED and DEAD deliveries of the window are
-- queued again a batch at a time, oldest first, after (cursor_created_at, cursor_id); the row goes
-- once the window is exhausted.
CREATE TABLE webhook_recoveries (
  id                 uuid PRIMARY KEY,
  webhook_id         uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  partner_id         uuid NOT NULL,
  since              timestamptz NOT NULL,
  until              timestamptz NOT NULL,
  cursor_created_at  timestamptz,
  cursor_id          uuid,
  created_at         timestamptz NOT NULL
);
CREATE INDEX webhook_recoveries_webhook_idx ON webhook_recoveries (webhook_id);
