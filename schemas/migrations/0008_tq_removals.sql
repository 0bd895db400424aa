-- 0008_tq_removals.sql — how every worker's task queue index learns that a
-- waiting job left its task queue (TQ-09), whoever removed it: a claim by
-- any worker, or a job.status that ended the job while it was waiting.
--
-- Before this, workers followed claims by the highest pilot_matches id they
-- had read. AUTO_INCREMENT ids are handed out at insert, not at commit, so a
-- claim that committed after a higher id had been read was never applied,
-- and a job removed by a status update had no log at all. Now removals are
-- numbered per task queue exactly like additions (task_queues.next_seq): a
-- transaction that removes jobs of a TQ locks the TQ row, numbers its
-- removals from rm_next_seq and advances it, so seqs are committed in
-- order, and a reader that saw rm_next_seq = s has seen every removal below
-- s. A reader that falls further behind than the log is kept (the leader
-- prunes rows older than [dirac] removal_log_keep) finds the gap and
-- reloads that TQ (worker/pipeline/tqsync.c).
--
-- 'deleted' joins the job statuses: DIRAC's JobDB has it, and a deleted job
-- leaves its task queue like a killed one.
ALTER TABLE task_queues
  ADD COLUMN IF NOT EXISTS rm_next_seq BIGINT NOT NULL DEFAULT 0
  COMMENT 'seq the next removal of a job of this TQ gets (tq_removed); removals below it are committed';

CREATE TABLE IF NOT EXISTS tq_removed (
  tq_id BIGINT NOT NULL,
  seq BIGINT NOT NULL COMMENT 'position in the TQ''s removals, from task_queues.rm_next_seq',
  job_id BIGINT NOT NULL,
  cause VARCHAR(16) NOT NULL COMMENT 'matched (a pilot claimed it) or the job.status that ended its wait',
  removed_at BIGINT NOT NULL COMMENT 'unix s; the leader prunes old rows',
  PRIMARY KEY (tq_id, seq),
  INDEX idx_tq_removed_at (removed_at),
  CONSTRAINT fk_tq_removed_tq FOREIGN KEY (tq_id)
    REFERENCES task_queues (tq_id) ON DELETE CASCADE,
  CONSTRAINT ck_tq_removed_numbers CHECK (seq >= 0 AND job_id > 0 AND cause <> '')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin
  COMMENT='waiting jobs that left their task queue, in commit order per TQ: what the workers'' indexes follow';

ALTER TABLE wms_jobs
  MODIFY COLUMN status ENUM('waiting','matched','running','stalled','completing','done','failed','killed','deleted') NOT NULL
  COMMENT 'cdt_status_name values, lifecycle order';
