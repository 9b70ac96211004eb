-- Traces (docs/operating.md, "Traces"): each outbox row keeps the W3C traceparent of the transaction
-- that wrote it, so a webhook attempt's span can link to the partner event behind it. The traced database
-- sets `partner_api.trace_parent` for each transaction it runs; untraced, the setting is absent (or empty
-- once a session has used it) and the column stays NULL. Added without a default first, so existing rows
-- are not rewritten, then given its default.
ALTER TABLE outbox ADD COLUMN trace_parent text;
ALTER TABLE outbox ALTER COLUMN trace_parent SET DEFAULT NULLIF(current_setting('partner_api.trace_parent', true), '');
