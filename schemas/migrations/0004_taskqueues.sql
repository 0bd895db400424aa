-- 0004_taskqueues.sql — the DIRAC side (rules TQ-*, PR-*): group shares and
-- the WMSHistory corrector's settings, task queues with their requirement
-- rows, the waiting jobs, every job's record and status, the pilot match
-- records, the running-job history and the leader's bookkeeping.
--
-- See 0001_core.sql for how migration files are written and the column
-- conventions; names are VARCHAR(256) like 0002/0003 (the decoder's
-- COD_MAX_STRING), message ids VARCHAR(191) like processed_messages.
--
-- How the tables keep the invariants DIRAC's TaskQueueDB loses
-- (worker/store/store_tq.h has the full argument):
--  - a task queue is identified by its canonical signature: the UNIQUE
--    sig_hash makes concurrent identical submissions create ONE row, and
--    the signature text stored next to it lets the store tell a genuine
--    match from a 64-bit hash collision;
--  - requirement rows are written in the transaction that creates the TQ
--    and go only with it (ON DELETE CASCADE), so a TQ holding jobs never
--    loses them; tq_jobs references the TQ WITHOUT cascade, so deleting a
--    TQ that still holds a job fails instead of orphaning the job;
--  - a waiting job is a row of tq_jobs and a claim deletes it: a row can be
--    deleted once, so a job is claimed once; pilot_matches.job_id is UNIQUE
--    as a second guard (TQ-09);
--  - jobs of a TQ are numbered by the TQ's next_seq under the TQ row lock,
--    so a reader that saw next_seq = s has seen every job below s.
--
-- wms_jobs, pilot_matches and wms_history outlive task queues, so they
-- reference TQs by id only, without foreign keys.

CREATE TABLE IF NOT EXISTS tq_settings (
  id TINYINT NOT NULL DEFAULT 1 PRIMARY KEY COMMENT 'always 1: one set of settings',
  corrections BOOL NOT NULL COMMENT 'apply the WMSHistory corrector instances (PR-04)',
  default_share DOUBLE NOT NULL COMMENT 'share of groups not in tq_groups (DIRAC DEFAULT_GROUP_SHARE)',
  updated_at BIGINT NOT NULL COMMENT 'unix s of the last grid load',
  CONSTRAINT ck_tq_settings_one CHECK (id = 1),
  CONSTRAINT ck_tq_settings_share CHECK (default_share > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='priority settings; no row = never saved, the built-in defaults apply';

CREATE TABLE IF NOT EXISTS tq_cpu_segments (
  seconds BIGINT NOT NULL PRIMARY KEY COMMENT 'upper bound of one CPU time segment (TQ-02)',
  CONSTRAINT ck_tq_cpu_segments_positive CHECK (seconds > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='CPU time segments in increasing order; empty = the built-in defaults';

CREATE TABLE IF NOT EXISTS tq_groups (
  name VARCHAR(256) NOT NULL PRIMARY KEY COMMENT 'DIRAC group, e.g. lhcb_user',
  share DOUBLE NOT NULL COMMENT 'JobShare (PR-01)',
  job_sharing BOOL NOT NULL DEFAULT 0 COMMENT 'JOB_SHARING property: the group is one entity (PR-01, PR-02)',
  CONSTRAINT ck_tq_groups_name CHECK (name <> ''),
  CONSTRAINT ck_tq_groups_share CHECK (share > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='group shares for the priorities (PR-01..PR-03)';

CREATE TABLE IF NOT EXISTS tq_corrector_instances (
  name VARCHAR(256) NOT NULL PRIMARY KEY COMMENT 'instance, e.g. GroupsInstance',
  pos INT NOT NULL COMMENT 'order of the instance in the configuration',
  grp VARCHAR(256) NULL COMMENT 'NULL: corrects between groups; else between the owners of this group (PR-07)',
  max_global DOUBLE NOT NULL COMMENT 'MaxGlobalCorrectionFactor (PR-06)',
  UNIQUE KEY uk_tq_corrector_instances_pos (pos),
  CONSTRAINT ck_tq_corrector_instances_name CHECK (name <> '' AND (grp IS NULL OR grp <> '')),
  CONSTRAINT ck_tq_corrector_instances_max CHECK (max_global >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='WMSHistory corrector instances (PR-04, PR-07)';

CREATE TABLE IF NOT EXISTS tq_corrector_slices (
  instance VARCHAR(256) NOT NULL,
  name VARCHAR(256) NOT NULL COMMENT 'slice, e.g. WeekSlice',
  pos INT NOT NULL COMMENT 'order of the slice in its instance',
  timespan BIGINT NOT NULL COMMENT 'seconds of history the slice looks at',
  weight DOUBLE NOT NULL COMMENT 'weight in the final correction (normalised over the slices)',
  max_correction DOUBLE NOT NULL COMMENT 'MaxCorrection of this slice (PR-05)',
  PRIMARY KEY (instance, name),
  UNIQUE KEY uk_tq_corrector_slices_pos (instance, pos),
  CONSTRAINT fk_tq_corrector_slices_instance FOREIGN KEY (instance)
    REFERENCES tq_corrector_instances (name) ON DELETE CASCADE,
  CONSTRAINT ck_tq_corrector_slices_numbers CHECK (name <> '' AND timespan > 0 AND weight > 0 AND max_correction >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='timespans of the corrector instances (PR-05, PR-06)';

CREATE TABLE IF NOT EXISTS task_queues (
  tq_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  sig_hash BIGINT UNSIGNED NOT NULL COMMENT '64-bit hash of signature: one TQ per requirement set (TQ-01)',
  signature MEDIUMTEXT NOT NULL COMMENT 'canonical signature (tq_canon): compared on every lookup, a hash match is not enough',
  owner VARCHAR(256) NOT NULL COMMENT 'owner DN',
  owner_group VARCHAR(256) NOT NULL,
  setup VARCHAR(256) NOT NULL,
  cpu_time BIGINT NOT NULL COMMENT 'the CPU time segment, s (TQ-02)',
  priority DOUBLE NOT NULL DEFAULT 0 COMMENT 'PR-01..PR-07 result; 0 until the first recomputation',
  next_seq BIGINT NOT NULL DEFAULT 0 COMMENT 'seq the next job of this TQ gets; jobs below it are committed',
  created_at BIGINT NOT NULL COMMENT 'unix s; the cleanup spares young TQs',
  UNIQUE KEY uk_task_queues_sig (sig_hash),
  INDEX idx_task_queues_created (created_at),
  CONSTRAINT ck_task_queues_names CHECK (owner <> '' AND owner_group <> '' AND setup <> ''),
  CONSTRAINT ck_task_queues_numbers CHECK (cpu_time > 0 AND priority >= 0 AND next_seq >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='task queues: jobs with identical requirements (TQ-01..TQ-03)';

CREATE TABLE IF NOT EXISTS tq_requirements (
  tq_id BIGINT NOT NULL,
  field ENUM('sites','bannedSites','gridCEs','platforms','pilotTypes','submitPools','gridMiddlewares') NOT NULL COMMENT 'tq_field_names, in enum tq_field order',
  value VARCHAR(256) NOT NULL,
  PRIMARY KEY (tq_id, field, value),
  CONSTRAINT fk_tq_requirements_tq FOREIGN KEY (tq_id)
    REFERENCES task_queues (tq_id) ON DELETE CASCADE,
  CONSTRAINT ck_tq_requirements_value CHECK (value <> '')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='multi-valued requirements of a TQ (TQ-03); no row for a field = no requirement';

CREATE TABLE IF NOT EXISTS tq_jobs (
  job_id BIGINT NOT NULL PRIMARY KEY,
  tq_id BIGINT NOT NULL,
  user_priority INT NOT NULL COMMENT 'UserPriority (TQ-08, PR-03)',
  seq BIGINT NOT NULL COMMENT 'position in its TQ, from task_queues.next_seq',
  submitted_at BIGINT NOT NULL COMMENT 'unix s',
  UNIQUE KEY uk_tq_jobs_seq (tq_id, seq),
  CONSTRAINT fk_tq_jobs_tq FOREIGN KEY (tq_id) REFERENCES task_queues (tq_id),
  CONSTRAINT ck_tq_jobs_numbers CHECK (job_id > 0 AND user_priority >= 0 AND seq >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='waiting jobs; a claim deletes the row (TQ-09)';

CREATE TABLE IF NOT EXISTS wms_jobs (
  job_id BIGINT NOT NULL PRIMARY KEY,
  owner VARCHAR(256) NOT NULL COMMENT 'owner DN',
  owner_group VARCHAR(256) NOT NULL,
  setup VARCHAR(256) NOT NULL,
  cpu_time BIGINT NOT NULL COMMENT 'CPU time as submitted, s (not the segment)',
  user_priority INT NOT NULL,
  tq_id BIGINT NOT NULL COMMENT 'the TQ it was queued in (the TQ may be gone since)',
  status ENUM('waiting','matched','running','stalled','completing','done','failed','killed') NOT NULL COMMENT 'cdt_status_name values, lifecycle order',
  status_rank TINYINT NOT NULL COMMENT 'cdt_status_rank of status: a status never moves to a lower rank',
  site VARCHAR(256) NULL COMMENT 'where it was matched or runs; NULL before',
  pilot_id VARCHAR(256) NULL COMMENT 'pilot it was matched to; NULL before',
  submit_request VARCHAR(191) NULL COMMENT 'message id of the job.submit',
  match_request VARCHAR(191) NULL COMMENT 'message id of the pilot.match that got it',
  submitted_at BIGINT NOT NULL COMMENT 'unix s',
  matched_at BIGINT NULL COMMENT 'unix s; NULL before the match',
  status_at BIGINT NOT NULL COMMENT 'unix s of the status, as reported',
  updated_at BIGINT NOT NULL COMMENT 'unix s of the last change, worker clock',
  INDEX idx_wms_jobs_status (status, owner_group, owner),
  CONSTRAINT ck_wms_jobs_numbers CHECK (job_id > 0 AND cpu_time > 0 AND user_priority >= 0 AND status_rank >= 0 AND status_at >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='every submitted job with its status (the history sampler counts the running ones)';

CREATE TABLE IF NOT EXISTS pilot_matches (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY COMMENT 'decision id; workers follow claims by it',
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the pilot.match',
  pilot_id VARCHAR(256) NOT NULL,
  site VARCHAR(256) NOT NULL COMMENT 'the pilot''s site',
  outcome ENUM('matched','nomatch') NOT NULL,
  code VARCHAR(64) NOT NULL COMMENT 'matched, no_tq_matched, all_empty, claim_conflict (TQ-10)',
  reason TEXT NULL COMMENT 'one line: why this outcome (TQ-10)',
  job_id BIGINT NULL COMMENT 'the job given; NULL for nomatch',
  tq_id BIGINT NULL COMMENT 'its TQ; NULL for nomatch',
  tq_cpu_time BIGINT NULL COMMENT 'that TQ''s CPU time segment, s',
  decided_at BIGINT NOT NULL COMMENT 'unix s',
  detail MEDIUMTEXT NULL COMMENT 'JSON explanation (explain/why); NULL = none',
  UNIQUE KEY uk_pilot_matches_request (request_id),
  UNIQUE KEY uk_pilot_matches_job (job_id),
  CONSTRAINT ck_pilot_matches_outcome CHECK ((outcome = 'matched') = (job_id IS NOT NULL) AND (job_id IS NULL) = (tq_id IS NULL))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='pilot.match decisions: the dedup of pilot.match and the claim log the workers follow';

CREATE TABLE IF NOT EXISTS wms_history (
  t BIGINT NOT NULL COMMENT 'unix s of the sample',
  owner_group VARCHAR(256) NOT NULL,
  owner VARCHAR(256) NOT NULL COMMENT 'owner DN',
  running DOUBLE NOT NULL COMMENT 'running jobs of (group, owner) at t',
  PRIMARY KEY (t, owner_group, owner),
  CONSTRAINT ck_wms_history_running CHECK (running >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='running-job samples, the WMSHistory corrector''s input (PR-04..PR-06)';

CREATE TABLE IF NOT EXISTS tq_state (
  id TINYINT NOT NULL DEFAULT 1 PRIMARY KEY COMMENT 'always 1',
  leader VARCHAR(128) NULL COMMENT 'worker id holding the leader lease; NULL = nobody yet',
  lease_until BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s; after it any worker may take the lease',
  dirty BIGINT NOT NULL DEFAULT 0 COMMENT 'TQ creations and deletions so far (PR-08)',
  computed_dirty BIGINT NOT NULL DEFAULT 0 COMMENT 'dirty as seen by the last priority recomputation',
  computed_at BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s of that recomputation; 0 = never',
  version BIGINT NOT NULL DEFAULT 0 COMMENT 'bumped by every priority save',
  CONSTRAINT ck_tq_state_one CHECK (id = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='the priority leader lease and recomputation bookkeeping';

INSERT IGNORE INTO tq_state (id) VALUES (1);
