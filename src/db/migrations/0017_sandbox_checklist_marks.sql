-- The go-live checklist (docs/decisions-log.md, 'Sandbox simulator and go-live checklist') keeps what it once saw: an item found done from the evidence
-- (order timelines, webhook deliveries, the request log) is recorded here with the time it was first
-- met, so it stays done after the evidence is purged (deliveries and the request log last 35 days) and
-- a checklist already seen costs no evidence query for it. Written only by the checklist itself
-- (src/modules/sandbox/checklist.service.ts), never before the evidence shows the condition met.
CREATE TABLE sandbox_checklist_marks (
  -- The key the lineage acted for when the item was seen (a checklist reads the marks of every key of
  -- its rotation chain, so a rotation keeps them).
  api_key_id  uuid NOT NULL,
  item        text NOT NULL,
  done_at     timestamptz NOT NULL,
  PRIMARY KEY (api_key_id, item)
);
