-- 0001_core.sql — the tables every brokerage shares: tunable parameters,
-- request dedup, the event outbox and the decision record.
--
-- How migration files are written (the runner is st_migrate in
-- worker/store/store.c; `gridbroker db migrate` calls it):
--  - files run in the order of their NNNN prefix, each recorded in
--    schema_migrations (version, name, applied_at), a table the runner
--    creates itself before reading the first file;
--  - a statement ends on a line whose last character is ';', and lines
--    starting with '--' are comments; keep ';' out of the ends of other lines;
--  - every statement must be safe to run twice (IF NOT EXISTS ...): a file
--    that fails half-way is not recorded and runs again from its top.
--
-- Conventions of every table:
--  - InnoDB, utf8mb4 with the utf8mb4_nopad_bin collation: grid names and
--    message ids are case-sensitive, and without PAD SPACE 'X' and 'X ' are
--    different keys, so the database compares names exactly as the C code
--    (strcmp) does;
--  - times are BIGINT unix seconds supplied by the worker's clock, never
--    NOW(), so the test clock moves every rule the same way;
--  - sizes are DOUBLE in GB, IO intensity in kB/s, like the engine.

CREATE TABLE IF NOT EXISTS params (
  component VARCHAR(64) NOT NULL COMMENT 'gdpconfig component, e.g. taskbrokerage',
  name VARCHAR(191) NOT NULL COMMENT 'key, with its _<gshare>/_<workflow> suffix if any',
  value DOUBLE NULL COMMENT 'in the unit of the catalogue row; NULL = unset, the rule is off',
  PRIMARY KEY (component, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='tunable parameters; seeded from the catalogue (engine/params.c) by db migrate, edited by operators';

CREATE TABLE IF NOT EXISTS processed_messages (
  message_id VARCHAR(191) NOT NULL PRIMARY KEY COMMENT 'AMQP message id of the request',
  kind VARCHAR(32) NOT NULL COMMENT 'request type, e.g. task.broker',
  processed_at BIGINT NOT NULL COMMENT 'unix s when its decision committed',
  INDEX idx_processed_at (processed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='requests already decided; inserted in the decision transaction so a redelivery changes nothing twice';

CREATE TABLE IF NOT EXISTS outbox (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  message_id VARCHAR(191) NOT NULL COMMENT 'AMQP message id of the event',
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the request that caused it',
  exchange VARCHAR(255) NOT NULL,
  routing_key VARCHAR(255) NOT NULL,
  type VARCHAR(255) NOT NULL COMMENT 'AMQP type property, e.g. task.assigned',
  body MEDIUMBLOB NOT NULL COMMENT 'msgpack payload',
  created_at BIGINT NOT NULL COMMENT 'unix s',
  owner VARCHAR(128) NULL COMMENT 'worker id allowed to publish it until lease_until',
  lease_until BIGINT NULL COMMENT 'unix s; after it any relay may claim the row',
  sent_at BIGINT NULL COMMENT 'unix s of the broker confirm; NULL = still to publish',
  UNIQUE KEY uk_outbox_message (message_id),
  INDEX idx_outbox_request (request_id),
  INDEX idx_outbox_due (sent_at, lease_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='events written with their decision and published after commit (transactional outbox)';

CREATE TABLE IF NOT EXISTS decisions (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind VARCHAR(16) NOT NULL COMMENT 'what was decided: task, ...',
  subject VARCHAR(191) NOT NULL COMMENT 'what it was decided about (the task id as text)',
  request_id VARCHAR(191) NOT NULL COMMENT 'message id of the request, or gb-retry-... for a pending retry',
  outcome VARCHAR(16) NOT NULL COMMENT 'assigned or pending',
  chosen VARCHAR(256) NULL COMMENT 'the chosen candidate; NULL when pending',
  decided_at BIGINT NOT NULL COMMENT 'unix s',
  detail MEDIUMTEXT NOT NULL COMMENT 'JSON: candidates with weights or reasons, stage counts',
  INDEX idx_decisions_subject (kind, subject, decided_at),
  INDEX idx_decisions_request (request_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='every brokerage decision with its explanation';
