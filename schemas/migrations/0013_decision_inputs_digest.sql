-- 0013_decision_inputs_digest.sql — the record digest of the decision made
-- from each stored scenario, beside the scenario (issue 21).
--
-- Why: `gridbroker replay` with no change re-decides every stored
-- decision and compares the new record's digest with the stored one's.
-- The digest was read from the stored record (decisions.detail, tens of
-- kB, kept off the row by InnoDB), and reading those records was most of
-- the database's time in a replay; with the digest here, a record is read
-- only for a decision that came out differently. Written by the worker in
-- the decision's transaction with the inputs; the rows stored before
-- this migration get theirs from their record below. NULL: the record
-- has no digest (not JSON), and replay reads the record.
--
-- Idempotent: ADD COLUMN IF NOT EXISTS; the backfill sets only NULLs.
ALTER TABLE decision_inputs
  ADD COLUMN IF NOT EXISTS digest CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL
  COMMENT 'record.digest of the decision''s stored record (report/decrec.h)';

UPDATE decision_inputs i JOIN decisions d ON d.id = i.decision_id
  SET i.digest = JSON_VALUE(d.detail, '$.record.digest')
  WHERE i.src = 'd' AND i.digest IS NULL;

UPDATE decision_inputs i JOIN pilot_matches p ON p.id = i.decision_id
  SET i.digest = JSON_VALUE(p.detail, '$.record.digest')
  WHERE i.src = 'p' AND i.digest IS NULL;
