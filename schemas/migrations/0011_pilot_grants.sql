-- 0011_pilot_grants.sql — which RabbitMQ accounts may speak for which
-- DIRAC groups and owners in a pilot.match (issue 20, point 5).
--
-- Why: a private pilot's ownerGroup and ownerDN make it match only that
-- group's (and owner's) task queues (TQ-04), and until now they were
-- believed as written, so any pilot could take any group's jobs. RabbitMQ
-- checks a message's AMQP user_id property against the user that
-- published it (validated user-id), so the worker knows which account
-- sent a request; this table says what that account may claim. A worker
-- checks a pilot.match against it ([dirac] owner_check; README
-- "Security") and dead-letters one that claims a group or owner its
-- account was not granted.
--
-- A row grants `account` the pilots of `owner_group` with `owner_dn`:
--   owner_group '*'  any group, and generic pilots (no ownerGroup), as
--                    DIRAC's GenericPilot property does
--   owner_dn '*'     any owner of the group, and pilots that name no DN
-- Filled with `gridbroker pilot grant|revoke`, read with `pilot grants`.
--
-- Idempotent: CREATE TABLE IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS pilot_grants (
  account VARCHAR(64) NOT NULL COMMENT 'RabbitMQ user name (the user_id of its messages)',
  owner_group VARCHAR(255) NOT NULL COMMENT 'a DIRAC group, or * for any group and generic pilots',
  owner_dn VARCHAR(255) NOT NULL DEFAULT '*' COMMENT 'an owner DN of that group, or * for any owner',
  granted_at BIGINT NOT NULL DEFAULT 0 COMMENT 'unix s the row was written; for operators',
  PRIMARY KEY (account, owner_group, owner_dn)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='what each RabbitMQ account may claim as a pilot''s ownerGroup and ownerDN';
