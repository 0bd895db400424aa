-- 0005_analysis_timeouts.sql — the state the analysis brokerage (AJ-*),
-- the job timeouts (TO-01..TO-12), fast rebrokerage (TO-13) and the PanDA
-- job.status intake read and write.
--
-- See 0001_core.sql for how migration files are written. Every ALTER uses
-- IF NOT EXISTS (MariaDB), so the file can run again after a failure.
--
-- jobs: the job brokerage's table grows into the jobs' life cycle. A job
-- is created by a job.broker decision (pending, assigned or activated) and
-- then moved by job.status updates and the timeout scan. The per-queue
-- counts (queue_counts) move in the same transaction as the status, so
-- the brokerages read counts that agree with the jobs.
--
-- Why check_at: the timeout scan must not read every active job at every
-- pass. Each status change stores the earliest time a timeout rule could
-- fire for the job (to_next_check in engine/timeout.h); the scan claims
-- only rows with check_at <= now, FOR UPDATE SKIP LOCKED, so several
-- workers scan at once without taking the same job. A final status has
-- check_at NULL.
--
-- Why brokered_at: a reassigned job goes back to 'pending'. An update
-- sent before that (time < brokered_at) belongs to the earlier attempt and
-- must not move the job again (a stale update never moves a job back).

ALTER TABLE jobs MODIFY COLUMN status ENUM('pending','defined','assigned','activated','throttled','sent','starting','running','holding','transferring','finished','failed','closed','cancelled') NOT NULL COMMENT 'PanDA job status; pending = no queue yet';

-- A throttled analysis task's jobs wait without a queue, like pending ones;
-- an active job has one; a final job may have none (a throttled job killed
-- by TO-04 never had one).
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS ck_jobs_queue;

ALTER TABLE jobs ADD CONSTRAINT IF NOT EXISTS ck_jobs_queue CHECK (status IN ('finished','failed','closed','cancelled') OR (status IN ('pending','throttled')) = (queue IS NULL));

ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS gshare VARCHAR(256) NOT NULL DEFAULT '' COMMENT 'global share: the queue_counts row the job counts in',
  ADD COLUMN IF NOT EXISTS user_name VARCHAR(256) NULL COMMENT 'owner of an analysis job (AJ-01); NULL for production',
  ADD COLUMN IF NOT EXISTS working_group VARCHAR(256) NULL COMMENT 'workingGroup of an analysis task (AJ-01); NULL = none',
  ADD COLUMN IF NOT EXISTS cores INT NOT NULL DEFAULT 1 COMMENT 'cores the job uses (AJ-01 core counts)',
  ADD COLUMN IF NOT EXISTS current_priority INT NOT NULL DEFAULT 0 COMMENT 'currentPriority (TO-06, TO-10, TO-11)',
  ADD COLUMN IF NOT EXISTS job_sub_status VARCHAR(64) NOT NULL DEFAULT '' COMMENT 'jobSubStatus; set = own stage-out (TO-09 for transferring)',
  ADD COLUMN IF NOT EXISTS created_at BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s of the first decision (TO-08)',
  ADD COLUMN IF NOT EXISTS status_since BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s of the last status change',
  ADD COLUMN IF NOT EXISTS status_time BIGINT NOT NULL DEFAULT 0 COMMENT 'the producer time of the update that set the status (orders updates of one rank)',
  ADD COLUMN IF NOT EXISTS brokered_at BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s of the last (re)brokerage; updates older than it are stale',
  ADD COLUMN IF NOT EXISTS last_heartbeat BIGINT NULL COMMENT 'unix s of the last heartbeat; NULL = none yet (TO-09)',
  ADD COLUMN IF NOT EXISTS started_at BIGINT NULL COMMENT 'unix s it started running (AJ-21 trr)',
  ADD COLUMN IF NOT EXISTS attempt INT NOT NULL DEFAULT 0 COMMENT 'times it was reassigned by a timeout or fast rebrokerage',
  ADD COLUMN IF NOT EXISTS check_at BIGINT NULL COMMENT 'unix s when a timeout rule may fire; NULL = final';

ALTER TABLE jobs
  ADD INDEX IF NOT EXISTS idx_jobs_check (check_at),
  ADD INDEX IF NOT EXISTS idx_jobs_user (user_name, status, queue),
  ADD INDEX IF NOT EXISTS idx_jobs_group (working_group, status, queue),
  ADD INDEX IF NOT EXISTS idx_jobs_queue (queue, gshare, status, job_id),
  ADD INDEX IF NOT EXISTS idx_jobs_started (started_at, queue);

ALTER TABLE queues
  ADD COLUMN IF NOT EXISTS queue_type ENUM('analysis','unified','production','other') NOT NULL DEFAULT 'unified' COMMENT 'AJ-05: analysis and unified queues take analysis jobs',
  ADD COLUMN IF NOT EXISTS is_vp BOOL NOT NULL DEFAULT 0 COMMENT 'virtual placement queue (AJ-11)',
  ADD COLUMN IF NOT EXISTS site_class ENUM('hi','mid','lo') NOT NULL DEFAULT 'mid' COMMENT 'analysis site class (AJ-04 hi-site slots, AJ-25)',
  ADD COLUMN IF NOT EXISTS disable_reassign BOOL NOT NULL DEFAULT 0 COMMENT 'catchall disableReassign (TO-12)',
  ADD COLUMN IF NOT EXISTS transtimehi DOUBLE NOT NULL DEFAULT 0 COMMENT 'days, transferring timeout at priority >= 800; 0 = 2 (TO-11)',
  ADD COLUMN IF NOT EXISTS transtimelo DOUBLE NOT NULL DEFAULT 0 COMMENT 'days, transferring timeout below 800; 0 = 6 (TO-11)',
  ADD COLUMN IF NOT EXISTS workflow VARCHAR(64) NOT NULL DEFAULT '' COMMENT 'pilot workflow; selects HEARTBEAT_TIMEOUT_<workflow> (TO-09)';

CREATE TABLE IF NOT EXISTS analysis_owners (
  name VARCHAR(256) NOT NULL COMMENT 'user name, or working group name',
  kind ENUM('user','group') NOT NULL,
  running_jobs DOUBLE NOT NULL DEFAULT 0 COMMENT 'jobs running outside gridbroker''s jobs table, added to the counted ones (AJ-01)',
  queued_jobs DOUBLE NOT NULL DEFAULT 0,
  running_cores DOUBLE NOT NULL DEFAULT 0,
  queued_cores DOUBLE NOT NULL DEFAULT 0,
  hi_site_slots DOUBLE NOT NULL DEFAULT 0 COMMENT 'running slots at hi-sites outside the jobs table (AJ-04)',
  quota_used_gb DOUBLE NOT NULL DEFAULT 0 COMMENT 'global disk quota in use (AJ-03)',
  quota_gb DOUBLE NULL COMMENT 'global disk quota; NULL = unlimited (AJ-03)',
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (kind, name),
  CONSTRAINT ck_analysis_owners_name CHECK (name <> ''),
  CONSTRAINT ck_analysis_owners_numbers CHECK (running_jobs >= 0 AND queued_jobs >= 0 AND running_cores >= 0 AND queued_cores >= 0 AND hi_site_slots >= 0 AND quota_used_gb >= 0 AND (quota_gb IS NULL OR quota_gb >= 0))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='analysis users and working groups: disk quota and the load the grid reports besides gridbroker''s own jobs (AJ-01..AJ-04)';

CREATE TABLE IF NOT EXISTS share_usage (
  gshare VARCHAR(256) NOT NULL PRIMARY KEY,
  target DOUBLE NOT NULL COMMENT 'the share''s target (any unit, the same as usage)',
  `usage` DOUBLE NOT NULL DEFAULT 0 COMMENT 'the share''s current usage',
  updated_at BIGINT NOT NULL,
  CONSTRAINT ck_share_usage CHECK (gshare <> '' AND target > 0 AND `usage` >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='global share targets and usage (AJ-04 reads User Analysis)';

CREATE TABLE IF NOT EXISTS task_classes (
  task_id BIGINT NOT NULL PRIMARY KEY,
  class ENUM('S','A','B','C') NOT NULL COMMENT 'site & task classification (AJ-04, AJ-25)',
  updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='analysis task classes; a task without a row is class B';
