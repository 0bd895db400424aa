-- 0010_broker_lock.sql — the row job brokerage decisions lock, so that they
-- are taken one transaction at a time across every worker (issue 19: caps
-- hold while batching).
--
-- Why: a job decision reads its queues' counts without locking them and
-- adds its own jobs when it commits. Two workers deciding for one queue at
-- once could each see room under the PJ-33/PJ-34/PJ-36 cap and together
-- pass it, and a group commit (a transaction of many decisions) would
-- widen that window to a whole group. A transaction that decides a job
-- request first locks this row (SELECT ... FOR UPDATE) and holds it to its
-- commit, so every job decision reads the counts every earlier one
-- committed: the cap is never passed by decisions racing each other. Task
-- brokerage and the DIRAC side do not take it.
--
-- Idempotent: CREATE TABLE IF NOT EXISTS and INSERT IGNORE.
CREATE TABLE IF NOT EXISTS broker_locks (
  name VARCHAR(32) NOT NULL PRIMARY KEY COMMENT 'jobs: job brokerage decisions',
  held_at BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s (worker clock) the last holder took it; for operators'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='rows that serialise the decisions of one brokerage across workers';

INSERT IGNORE INTO broker_locks (name, held_at) VALUES ('jobs', 0);
