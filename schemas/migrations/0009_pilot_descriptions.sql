-- 0009_pilot_descriptions.sql — task queues keep DIRAC's JobTypes and Tags
-- (issue 17, point 5: pilot descriptions as DIRAC's TaskQueueDB reads them).
--
-- A job's jobTypes and tags are part of its task queue's identity, stored
-- like the other multi-valued requirements: one tq_requirements row per
-- value. The field ENUM gets the two names of tq_field_names appended
-- (TQ_F_JOB_TYPES, TQ_F_TAGS), after the existing values and in their
-- order, so the rows already stored keep their meaning. Idempotent:
-- MODIFY COLUMN to the same definition is a no-op, and it does not depend
-- on any other migration's changes to other tables.
ALTER TABLE tq_requirements
  MODIFY COLUMN field ENUM('sites','bannedSites','gridCEs','platforms','pilotTypes','submitPools','gridMiddlewares','jobTypes','tags') NOT NULL COMMENT 'tq_field_names, in enum tq_field order';
