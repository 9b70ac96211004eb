-- The signature timestamp `t` of a delivery's latest attempt (unix seconds, wall clock). A claim signs
-- with max(now, previous t + 1), so every attempt of a delivery, a redelivery within the same second
-- of the previous attempt included, carries a signature of its own (docs/decisions-log.md, 'Webhooks': "fresh signature").
ALTER TABLE webhook_deliveries ADD COLUMN signed_at_sec bigint;
