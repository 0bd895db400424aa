-- 0002_taskbrokerage.sql — the production task brokerage (rules TB-*, FC-*):
-- the grid it chooses from (nuclei, their storages, the dataset replicas
-- they hold) and the tasks with their input datasets.
--
-- See 0001_core.sql for how migration files are written and the column
-- conventions. Name columns are VARCHAR(256), the longest string the
-- message decoder accepts (COD_MAX_STRING), so a valid request can never
-- fail on a column that is too narrow. CHECK constraints hold the signs
-- the engine relies on, so a hand edit cannot feed it a negative size.

CREATE TABLE IF NOT EXISTS nuclei (
  name VARCHAR(256) NOT NULL PRIMARY KEY,
  status VARCHAR(32) NOT NULL COMMENT 'ACTIVE, OFFLINE, ... (TB-01 keeps ACTIVE)',
  bare_nucleus ENUM('','only','allow') NOT NULL DEFAULT '' COMMENT 'FC-01 bareNucleus',
  transfer_backlog BIGINT NOT NULL DEFAULT 0 COMMENT 'files queued towards the nucleus (TB-02)',
  rw DOUBLE NOT NULL DEFAULT 0 COMMENT 'remaining work already assigned (TB-04, TB-10, TB-11)',
  updated_at BIGINT NOT NULL COMMENT 'unix s of the last grid load',
  CONSTRAINT ck_nuclei_backlog CHECK (transfer_backlog >= 0),
  CONSTRAINT ck_nuclei_rw CHECK (rw >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='nuclei: the sites a task can be assigned to';

CREATE TABLE IF NOT EXISTS storages (
  name VARCHAR(256) NOT NULL PRIMARY KEY COMMENT 'storage endpoint; belongs to one nucleus',
  nucleus VARCHAR(256) NOT NULL,
  space_free DOUBLE NOT NULL COMMENT 'GB',
  space_expired DOUBLE NOT NULL COMMENT 'GB of secondary data that may be deleted',
  space_total DOUBLE NOT NULL COMMENT 'GB',
  tape BOOL NOT NULL DEFAULT 0 COMMENT 'a tape endpoint, not an output disk',
  blacklisted BOOL NOT NULL DEFAULT 0 COMMENT 'unusable for writing',
  INDEX idx_storages_nucleus (nucleus),
  CONSTRAINT fk_storages_nucleus FOREIGN KEY (nucleus) REFERENCES nuclei (name) ON DELETE CASCADE,
  CONSTRAINT ck_storages_space CHECK (space_free >= 0 AND space_expired >= 0 AND space_total >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='storage endpoints of the nuclei (TB-03, TB-04)';

CREATE TABLE IF NOT EXISTS replicas (
  nucleus VARCHAR(256) NOT NULL,
  dataset VARCHAR(256) NOT NULL,
  size DOUBLE NOT NULL COMMENT 'GB of the dataset available at the nucleus',
  files BIGINT NOT NULL COMMENT 'files of the dataset available at the nucleus',
  PRIMARY KEY (nucleus, dataset),
  INDEX idx_replicas_dataset (dataset),
  CONSTRAINT fk_replicas_nucleus FOREIGN KEY (nucleus) REFERENCES nuclei (name) ON DELETE CASCADE,
  CONSTRAINT ck_replicas_amount CHECK (size >= 0 AND files >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='dataset replicas per nucleus: the locality checks (TB-05..TB-09) and weight (TB-10)';

CREATE TABLE IF NOT EXISTS tasks (
  task_id BIGINT NOT NULL PRIMARY KEY,
  gshare VARCHAR(256) NOT NULL COMMENT 'global share; suffix of DISK_THRESHOLD_<gshare>',
  task_priority BIGINT NOT NULL COMMENT 'taskPriority',
  io_intensity DOUBLE NOT NULL COMMENT 'kB/s',
  t1_weight DOUBLE NOT NULL COMMENT 't1Weight; < 0 ignores the backlog cap (TB-02)',
  input_prestaging BOOL NOT NULL COMMENT 'inputPreStaging (TB-06)',
  broker_on_master BOOL NOT NULL COMMENT 'taskBrokerOnMaster (TB-05)',
  full_chain ENUM('','only','require','capable') NOT NULL DEFAULT '' COMMENT 'fullChain; empty = a normal task',
  parent_nucleus VARCHAR(256) NULL COMMENT 'nucleus of the parent task (FC-04)',
  norm_exp_out_size DOUBLE NOT NULL COMMENT 'normalizedExpOutSize, GB (TB-04)',
  status ENUM('brokering','assigned','pending') NOT NULL,
  nucleus VARCHAR(256) NULL COMMENT 'the chosen nucleus when assigned',
  pending_until BIGINT NULL COMMENT 'unix s when a pending task is retried (TB-13)',
  attempts INT NOT NULL DEFAULT 0 COMMENT 'decisions made for the task',
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the latest request',
  created_at BIGINT NOT NULL COMMENT 'unix s',
  updated_at BIGINT NOT NULL COMMENT 'unix s',
  INDEX idx_tasks_pending (status, pending_until),
  CONSTRAINT ck_tasks_sizes CHECK (io_intensity >= 0 AND norm_exp_out_size >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='production tasks with their brokerage inputs and state';

CREATE TABLE IF NOT EXISTS task_datasets (
  task_id BIGINT NOT NULL,
  position INT NOT NULL COMMENT 'order in the request',
  name VARCHAR(256) NOT NULL,
  is_primary BOOL NOT NULL COMMENT 'the primary (master) input (TB-05)',
  size DOUBLE NOT NULL COMMENT 'GB',
  files BIGINT NOT NULL,
  on_tape BOOL NOT NULL COMMENT 'tape input: weight x 0.001 (TB-10, TB-11)',
  PRIMARY KEY (task_id, position),
  CONSTRAINT fk_task_datasets_task FOREIGN KEY (task_id) REFERENCES tasks (task_id) ON DELETE CASCADE,
  CONSTRAINT ck_task_datasets_amount CHECK (size >= 0 AND files >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='input datasets of a task';
