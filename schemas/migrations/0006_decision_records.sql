-- 0006_decision_records.sql — what `gridbroker why` and the decision
-- retention need: the record format itself lives in the detail JSON
-- (worker/report/decrec.h: digest, stage cuts, size bound), so no column changes;
-- only indexes.
--
-- `why pilot ID` finds a pilot's decisions by the id the pilot sent.
CREATE INDEX IF NOT EXISTS idx_pilot_matches_pilot ON pilot_matches (pilot_id(191), decided_at);
-- The retention step deletes the oldest rows in batches of
-- `[worker] decision_retention_batch` by decided_at: without these
-- indexes each batch would scan the whole table.
CREATE INDEX IF NOT EXISTS idx_decisions_decided ON decisions (decided_at);
CREATE INDEX IF NOT EXISTS idx_pilot_matches_decided ON pilot_matches (decided_at);
