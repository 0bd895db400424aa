-- 0012_decision_inputs.sql — each decision's inputs, so that any stored
-- decision can be turned back into a scenario (`gridbroker why ...
-- --scenario`), re-decided with a parameter changed (`explain --set`) and
-- replayed in bulk (`gridbroker replay`) (issue 21).
--
-- One row per decision whose inputs a scenario can hold: the scenario file
-- `explain` reads (compact JSON, keys sorted, doubles to 17 digits), zlib
-- compressed (worker/base/zbuf.h). Written in the decision's own
-- transaction, so a committed decision has its inputs and a rolled-back
-- one leaves none. `src` says which table `decision_id` points into:
-- 'd' decisions (task, jobs, analysis, timeout), 'p' pilot_matches. The
-- retention step deletes these rows with their decisions'.
--
-- Idempotent: CREATE TABLE IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS decision_inputs (
  src CHAR(1) NOT NULL COMMENT 'd: decisions.id, p: pilot_matches.id',
  decision_id BIGINT NOT NULL,
  kind VARCHAR(16) NOT NULL COMMENT 'task, jobs, analysis, pilot or timeout: the scenario''s kind',
  decided_at BIGINT NOT NULL COMMENT 'unix s, as the decision''s row; retention and replay windows',
  raw_bytes INT UNSIGNED NOT NULL COMMENT 'length of the scenario JSON before compression',
  body MEDIUMBLOB NOT NULL COMMENT 'the scenario JSON, zlib (RFC 1950)',
  PRIMARY KEY (src, decision_id),
  INDEX idx_decision_inputs_decided (decided_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='the inputs each decision saw, as a compressed scenario file';
