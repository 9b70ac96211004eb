-- An over-remitted statement (SETTLED with outstanding below 0) has its overpayment carried to the
-- partner's next statement in the same environment, as an ADJUSTMENT line (docs/payments.md,
-- "Overpayment"): the id of the statement it was carried to; null while it is still a credit.
ALTER TABLE settlements ADD COLUMN overpayment_carried_to text;
-- The credits not carried yet, for the next creation and the balance.
CREATE INDEX settlements_overpayment_idx ON settlements (partner_id, environment)
  WHERE overpayment_carried_to IS NULL AND status = 'SETTLED' AND collected_qepik + adjustments_qepik - remitted_qepik < 0;
