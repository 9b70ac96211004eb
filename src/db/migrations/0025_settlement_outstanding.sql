-- What a settlement still owes, in one place: outstanding = collected + adjustments − remitted, a
-- generated column every read and rule uses (the settlement's JSON, the remittance limit, settling, the
-- partner's balance) instead of writing the sum again. The settlement's JSON function depends on the
-- row type, so it is made again around the new column.
DROP FUNCTION settlement_json(settlements);

ALTER TABLE settlements
  ADD COLUMN outstanding_qepik bigint GENERATED ALWAYS AS (collected_qepik + adjustments_qepik - remitted_qepik) STORED;

CREATE FUNCTION settlement_json(s settlements) RETURNS jsonb
  LANGUAGE sql STABLE
  RETURN jsonb_build_object(
    'id', s.id, 'environment', lower(s.environment), 'periodStart', iso_utc(s.period_start), 'periodEnd', iso_utc(s.period_end),
    'status', s.status, 'collectionsCount', s.collections_count, 'expectedQepik', s.expected_qepik,
    'collectedQepik', s.collected_qepik, 'varianceQepik', s.collected_qepik - s.expected_qepik,
    'adjustmentsQepik', s.adjustments_qepik, 'dueQepik', s.collected_qepik + s.adjustments_qepik,
    'remittedQepik', s.remitted_qepik, 'outstandingQepik', s.outstanding_qepik,
    'createdAt', iso_utc(s.created_at),
    'settledAt', CASE WHEN s.settled_at IS NULL THEN NULL ELSE iso_utc(s.settled_at) END);
