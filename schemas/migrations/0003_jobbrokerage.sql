-- 0003_jobbrokerage.sql — the production job brokerage (rules PJ-*, RC-*,
-- NW-*): the queues it chooses from with their job counts per global share,
-- the network links from queue sites to nuclei, the software the queues
-- publish, where input files have replicas, and the jobs with the requests
-- that placed them.
--
-- See 0001_core.sql for how migration files are written and the column
-- conventions. Name columns are VARCHAR(256) like 0002 (the decoder's
-- COD_MAX_STRING), so a valid request never fails on a narrow column.
--
-- No foreign keys between these tables, on purpose: `gridbroker grid load`
-- replaces the whole job grid in one transaction (st_jobs_grid_save), and a
-- decision committing at the same time must not fail because the reload
-- dropped a queue its jobs went to; the next reload replaces the counts
-- anyway. jobs and job_requests outlive grid reloads, so they reference
-- queues by name only.
--
-- The CHECK constraints are the grid's validation on the way in: a grid
-- load that breaks one fails as a whole with the constraint's name.
--
-- Job counts are DOUBLE like the engine's jb_counts: the grid file gives
-- numbers, and a count read back must be the number that was loaded.

CREATE TABLE IF NOT EXISTS queues (
  name VARCHAR(256) NOT NULL PRIMARY KEY COMMENT 'PanDA queue (CRIC panda resource)',
  status VARCHAR(32) NOT NULL COMMENT 'online, offline, brokeroff, test, standby, paused (PJ-04)',
  site VARCHAR(256) NOT NULL COMMENT 'ATLAS site; links are per site (PJ-05..PJ-07, NW-*)',
  nucleus VARCHAR(256) NOT NULL DEFAULT '' COMMENT 'nucleus it is associated with, empty = none (PJ-03)',
  core_count INT NOT NULL DEFAULT 0 COMMENT 'coreCount; 0 = unified, any core count (PJ-13)',
  corepower DOUBLE NOT NULL DEFAULT 10 COMMENT 'HS06 per core (PJ-21)',
  min_rss DOUBLE NOT NULL DEFAULT 0 COMMENT 'minrss, MB per core, 0 = no lower limit (PJ-15)',
  max_rss DOUBLE NOT NULL DEFAULT 0 COMMENT 'maxrss, MB per core, 0 = no upper limit (PJ-15)',
  maxwdir DOUBLE NOT NULL DEFAULT 0 COMMENT 'MB of scratch per job slot, 0 = unknown (PJ-17)',
  mintime DOUBLE NOT NULL DEFAULT 0 COMMENT 's, 0 = none (PJ-21)',
  maxtime DOUBLE NOT NULL DEFAULT 0 COMMENT 's, 0 = unlimited (PJ-20, PJ-21)',
  releases ENUM('ANY','AUTO','LIST') NOT NULL DEFAULT 'ANY' COMMENT 'ANY = no check, AUTO = RC-* against sw_json, LIST = release_list (PJ-14)',
  release_list MEDIUMTEXT NULL COMMENT 'JSON array of the releases installed, when releases is LIST; else NULL',
  direct_access BOOL NOT NULL DEFAULT 0 COMMENT 'reads input directly from local storage (PJ-16, PJ-17)',
  wnconnectivity VARCHAR(256) NOT NULL DEFAULT '' COMMENT 'e.g. full#IPv4 (PJ-22)',
  max_diskio DOUBLE NULL COMMENT 'maxDiskIO, kB/s per core; NULL = MAX_DISKIO_DEFAULT (PJ-12)',
  diskio_avg DOUBLE NOT NULL DEFAULT 0 COMMENT 'kB/s per core of its running jobs (PJ-12)',
  fairsharepolicy TEXT NOT NULL COMMENT 'e.g. type=evgensimul:100%, empty = none (PJ-10)',
  event_service ENUM('none','allowed','only') NOT NULL DEFAULT 'none' COMMENT 'event service jobs (PJ-23)',
  dynamic_nevents BOOL NOT NULL DEFAULT 0 COMMENT 'supports a dynamic number of events (PJ-23)',
  transferring_limit DOUBLE NOT NULL DEFAULT 0 COMMENT 'transferring jobs allowed, 0 = 2000 (PJ-24)',
  num_slots BIGINT NOT NULL DEFAULT -1 COMMENT '-1 unset, 0 = use starting, > 0 slots (PJ-28)',
  last_pilot BIGINT NULL COMMENT 'unix s of the last pilot request; NULL = never (PJ-26)',
  last_start BIGINT NULL COMMENT 'unix s of the last job start; NULL = never (PJ-09)',
  storage VARCHAR(256) NOT NULL COMMENT 'local storage endpoint (PJ-11, PJ-18, PJ-19, input locality)',
  storage_free DOUBLE NOT NULL COMMENT 'GB free on the storage (PJ-18)',
  storage_blacklisted BOOL NOT NULL DEFAULT 0 COMMENT 'storage unusable for writing (PJ-19)',
  sw_json MEDIUMTEXT NULL COMMENT 'RC-01 dictionary as compact JSON (cmtconfigs, containers, cvmfs, architectures, tags); NULL = publishes none',
  updated_at BIGINT NOT NULL COMMENT 'unix s of the grid load',
  INDEX idx_queues_site (site),
  CONSTRAINT ck_queues_names CHECK (name <> '' AND status <> '' AND site <> '' AND storage <> ''),
  CONSTRAINT ck_queues_numbers CHECK (core_count >= 0 AND corepower > 0 AND min_rss >= 0 AND max_rss >= 0 AND maxwdir >= 0 AND mintime >= 0 AND maxtime >= 0 AND diskio_avg >= 0 AND transferring_limit >= 0 AND storage_free >= 0),
  CONSTRAINT ck_queues_diskio CHECK (max_diskio IS NULL OR max_diskio >= 0),
  CONSTRAINT ck_queues_slots CHECK (num_slots >= -1),
  CONSTRAINT ck_queues_times CHECK ((last_pilot IS NULL OR last_pilot >= 0) AND (last_start IS NULL OR last_start >= 0))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='queues the job brokerage chooses from, with every static attribute its rules read';

CREATE TABLE IF NOT EXISTS queue_counts (
  queue VARCHAR(256) NOT NULL,
  gshare VARCHAR(256) NOT NULL COMMENT 'global share the jobs belong to',
  running DOUBLE NOT NULL DEFAULT 0,
  defined DOUBLE NOT NULL DEFAULT 0,
  assigned DOUBLE NOT NULL DEFAULT 0 COMMENT 'jobs waiting for their input to arrive',
  activated DOUBLE NOT NULL DEFAULT 0 COMMENT 'jobs ready for a pilot',
  `starting` DOUBLE NOT NULL DEFAULT 0,
  transferring DOUBLE NOT NULL DEFAULT 0 COMMENT 'jobs whose output is being transferred (PJ-24)',
  nbatchjob DOUBLE NOT NULL DEFAULT 0 COMMENT 'running + submitted batch workers (PJ-28 bootstrap)',
  PRIMARY KEY (queue, gshare),
  CONSTRAINT ck_queue_counts_gshare CHECK (gshare <> ''),
  CONSTRAINT ck_queue_counts_sign CHECK (running >= 0 AND defined >= 0 AND assigned >= 0 AND activated >= 0 AND `starting` >= 0 AND transferring >= 0 AND nbatchjob >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='jobs per queue, global share and status (PJ-24, PJ-28..PJ-34); decisions add their jobs in their own transaction';

CREATE TABLE IF NOT EXISTS links (
  site VARCHAR(256) NOT NULL COMMENT 'satellite site',
  nucleus VARCHAR(256) NOT NULL,
  blocked BOOL NOT NULL DEFAULT 0 COMMENT 'transfers from the nucleus blocked (PJ-05)',
  queued_files DOUBLE NOT NULL DEFAULT 0 COMMENT 'files queued on the link (PJ-06, PJ-07, NW-01)',
  mbps_1h DOUBLE NULL COMMENT 'FTS throughput, last hour; NULL = no figure (NW-02)',
  mbps_1d DOUBLE NULL COMMENT 'FTS throughput, last day; NULL = no figure',
  mbps_1w DOUBLE NULL COMMENT 'FTS throughput, last week; NULL = no figure',
  closeness DOUBLE NULL COMMENT '0 best .. 11 worst, -1 = blocked; NULL = unknown (NW-03)',
  PRIMARY KEY (site, nucleus),
  INDEX idx_links_nucleus (nucleus),
  CONSTRAINT ck_links_names CHECK (site <> '' AND nucleus <> ''),
  CONSTRAINT ck_links_numbers CHECK (queued_files >= 0 AND (mbps_1h IS NULL OR mbps_1h >= 0) AND (mbps_1d IS NULL OR mbps_1d >= 0) AND (mbps_1w IS NULL OR mbps_1w >= 0) AND (closeness IS NULL OR closeness >= -1))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='network links from satellite sites to nuclei (PJ-05..PJ-07, NW-01..NW-04)';

CREATE TABLE IF NOT EXISTS sw_all (
  id TINYINT NOT NULL DEFAULT 1 PRIMARY KEY COMMENT 'always 1: there is one ALL dictionary',
  sw_json MEDIUMTEXT NOT NULL COMMENT 'RC-01 dictionary of the ALL pseudo-queue as compact JSON',
  CONSTRAINT ck_sw_all_one CHECK (id = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='software published for ALL queues; RC-05 resolves container names through its tags';

CREATE TABLE IF NOT EXISTS file_replicas (
  lfn VARCHAR(256) NOT NULL COMMENT 'logical file name of an input file',
  storage VARCHAR(256) NOT NULL COMMENT 'storage endpoint holding a replica',
  PRIMARY KEY (lfn, storage),
  CONSTRAINT ck_file_replicas_names CHECK (lfn <> '' AND storage <> '')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='file-level input locality: a job input is local at a queue whose storage holds a replica (PJ-11, PJ-29, PJ-31)';

CREATE TABLE IF NOT EXISTS jobs (
  job_id BIGINT NOT NULL PRIMARY KEY COMMENT 'PandaID',
  task_id BIGINT NOT NULL,
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the job.broker request that last decided it',
  queue VARCHAR(256) NULL COMMENT 'the queue it was given; NULL while pending',
  status ENUM('pending','assigned','activated') NOT NULL COMMENT 'assigned: input to transfer first; activated: input local (PJ-36)',
  nevents BIGINT NOT NULL,
  input_mb DOUBLE NOT NULL COMMENT 'size of its input files, MB',
  decision_id BIGINT NOT NULL COMMENT 'decisions.id of the decision that last changed it',
  updated_at BIGINT NOT NULL COMMENT 'unix s',
  INDEX idx_jobs_task (task_id),
  INDEX idx_jobs_decision (decision_id),
  CONSTRAINT ck_jobs_amount CHECK (nevents >= 0 AND input_mb >= 0),
  CONSTRAINT ck_jobs_queue CHECK ((status = 'pending') = (queue IS NULL))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='jobs the job brokerage placed (or could not place yet)';

CREATE TABLE IF NOT EXISTS job_requests (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the job.broker request',
  task_id BIGINT NOT NULL,
  body MEDIUMBLOB NOT NULL COMMENT 'the msgpack request, replayed for a pending retry (bounded by worker.max_message_bytes)',
  status ENUM('done','pending') NOT NULL COMMENT 'pending: some jobs have no queue yet',
  pending_until BIGINT NULL COMMENT 'unix s when a pending request is retried (PJ-35); NULL when done',
  attempts INT NOT NULL DEFAULT 0 COMMENT 'decisions made for the request',
  created_at BIGINT NOT NULL COMMENT 'unix s',
  updated_at BIGINT NOT NULL COMMENT 'unix s',
  UNIQUE KEY uk_job_requests_request (request_id),
  INDEX idx_job_requests_due (status, pending_until),
  INDEX idx_job_requests_task (task_id),
  CONSTRAINT ck_job_requests_pending CHECK ((status = 'pending') = (pending_until IS NOT NULL))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='job.broker requests with their outcome; pending ones are retried by the pending scan';
