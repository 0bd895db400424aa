/*
** store_tq.h — MariaDB for the DIRAC side: groups and share-correction
** settings, task queues with their requirement rows, waiting jobs, the job
** records with their status, pilot match records (which are also the claim
** log the workers' indexes follow and the dedup of pilot.match), the
** running-job history, and the one-leader lease for priority recomputation.
** Tables: schemas/migrations/0004_taskqueues.sql.
**
** Same rules as store.h / store_jobs.h: one blocking connection, prepared
** statements with bound parameters only (variable-length IN lists and
** multi-row inserts are prepared per row count from placeholders, never
** from values), times are unix seconds passed in by the caller. Errors:
** GB_EINVAL for bad arguments, GB_EDUP for a duplicate (job id, request id),
** GB_ENOTFOUND, GB_ERANGE for a row read back out of range, GB_ESTATE when
** a function that must run inside the caller's transaction is called
** outside one (or the other way round), GB_ETOOBIG for the arena cap, and
** the store's GB_EDB / GB_EDBGONE / GB_EDBRETRY; st_error() has the text.
**
** How no job is given twice (TQ-09), across any number of workers: a
** waiting job is a row of tq_jobs; st_tq_claim deletes the candidates in
** the caller's transaction and reports which rows this transaction
** removed. A row can be removed once, so two transactions cannot both win
** it; the loser learns it at once and picks again. pilot_matches.job_id is
** UNIQUE as a second guard.
**
** How a TQ's requirement rows never go missing while it holds jobs: the TQ
** row and its requirement rows are created in one transaction, keyed by
** the UNIQUE signature hash (TQ-01), so concurrent identical submissions
** create one TQ; a TQ is deleted only by st_tq_cleanup, which locks the TQ
** row, checks that it holds no job and deletes it (requirements by ON
** DELETE CASCADE). A submission locks the same TQ row (SELECT ... FOR
** UPDATE) before adding jobs, so it either waits for the delete and then
** creates the TQ again, or makes the cleanup find jobs.
**
** How the workers' indexes stay fresh: submissions to one TQ are
** serialised by that row lock and number their jobs with the TQ's
** next_seq, so "jobs of TQ t with seq >= s" never skips a committed job.
** Removals are the mirror image (st_tq_log_removals): whatever takes a
** waiting job out of tq_jobs — a claim, a job.status that ends the wait —
** locks the TQ row in the same transaction and numbers the removal with the
** TQ's rm_next_seq, so "removals of TQ t with seq >= s" (tq_removed) never
** skips a committed one either. (Following pilot_matches ids did: an id is
** handed out at insert, so a claim committing after a higher id had been
** read was never seen.)
*/
#ifndef GB_STORE_TQ_H
#define GB_STORE_TQ_H

#include <stddef.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "priority.h"
#include "store/store.h"
#include "taskqueue.h"

#define ST_TQ_CLAIM_MAX 64  /* job ids per st_tq_claim */
#define ST_TQ_RECORD_MAX 256 /* records per st_tq_record */

/* ---- configuration (gridbroker grid load) -------------------------------- */

/*
** Replace the groups and the corrector settings, in a transaction of its
** own: groups (name, share, job_sharing), instances with their slices,
** whether corrections are on, the default share and the CPU segments
** (seg[0..nseg), must satisfy tq_segments_valid). Returns 0, GB_EINVAL
** (invalid config: pr_config_check, segments), GB_ESTATE inside a
** transaction, or a database error; on error nothing changed.
*/
int st_tq_config_save(struct st_db *db, const struct pr_config *cfg,
		      const long long *seg, size_t nseg, long long now);

/*
** Load what st_tq_config_save stored (defaults when never saved:
** corrections off, PR_DEFAULT_SHARE, no groups, tq_default_segments).
** Groups come by name, instances and their slices in the order saved.
** Strings and arrays live in `a`; *seg gets an array of *nseg values.
*/
int st_tq_config_load(struct st_db *db, struct arena *a, struct pr_config *out,
		      long long **seg, size_t *nseg);

/* ---- submission (TQ-01..03) ---------------------------------------------- */

struct st_tq_submitted {
	size_t tqs;      /* distinct task queues the jobs went to */
	size_t new_tqs;  /* of those, created by this call */
	long long *tq_of; /* per job (in `a`): its TQ id */
};

/*
** Inside the caller's transaction: put jobs[0..n) into task queues. Jobs
** are grouped by their canonical signature (tq_canon with the CPU segment
** of seg[0..nseg)); per group: find or create the TQ (with its requirement
** rows when created), lock it, insert the jobs into tq_jobs numbered from
** the TQ's next_seq, advance next_seq; insert one wms_jobs row per job
** (status waiting, request_id). A created TQ marks priorities dirty
** (PR-08). Multi-row statements, so thousands of jobs cost a handful of
** round trips. Returns 0, GB_EDUP when a job id already exists (st_error
** names it; the caller rolls back), GB_EINVAL, GB_ESTATE, or a database
** error.
*/
int st_tq_submit(struct st_db *db, const struct cdt_job *jobs, size_t n,
		 const long long *seg, size_t nseg, const char *request_id,
		 long long now, struct arena *a, struct st_tq_submitted *out);

/* ---- reading, for the workers' index ------------------------------------- */

struct st_tq_row {
	long long tq_id;
	char *owner, *owner_group, *setup;
	long long cpu_time;
	double priority;
	long long next_seq; /* jobs with seq < next_seq are committed */
	long long rm_next_seq; /* removals with seq < it are committed */
	char *signature;    /* tq_canon text */
	/* requirements (filled by st_tq_list when want_reqs) */
	struct tq_strset set[TQ_NFIELDS];
};

/*
** Every task queue, ordered by tq_id, in `a`; with requirement sets
** (sorted, unique) when want_reqs. Not inside a transaction required.
*/
int st_tq_list(struct st_db *db, int want_reqs, struct arena *a,
	       struct st_tq_row **rows, size_t *n);

/* One task queue with its requirements; GB_ENOTFOUND when gone. */
int st_tq_get(struct st_db *db, long long tq_id, struct arena *a,
	      struct st_tq_row *out);

struct st_tq_jobrow {
	long long job_id;
	long long tq_id;
	int user_priority;
	long long seq;
};

/*
** Call fn for every waiting job of TQ tq_id with seq >= from_seq (tq_id 0:
** every TQ, from_seq ignored), in (tq_id, seq) order. Stops and returns
** fn's value when it is non-zero. Rows are streamed, not kept.
*/
int st_tq_jobs_scan(struct st_db *db, long long tq_id, long long from_seq,
		    int (*fn)(void *ud, const struct st_tq_jobrow *r),
		    void *ud);

/* ---- the removal log ----------------------------------------------------- */

/* One waiting job leaving its task queue. */
struct st_tq_removal {
	long long tq_id, job_id; /* in */
	long long seq; /* out: its place in the TQ's removal log; -1 when the
			  TQ row is gone (nothing logged: the TQ left every
			  index with it) */
};

#define ST_TQ_CAUSE_MAX 16 /* tq_removed.cause is VARCHAR(16) */

/*
** Inside the caller's transaction, after the rows left tq_jobs and before
** st_tq_mark_dirty: log rm[0..n) (distinct job ids) as removed for
** `cause` ("matched", or the job.status name that ended the wait). Per TQ,
** in ascending tq_id order (the lock order of store_tq_match.c): lock the
** TQ row, number its removals from rm_next_seq in job id order, advance
** it. Each rm[i].seq is written. Returns 0, GB_EINVAL (bad arguments, a
** job listed twice, cause empty or longer than ST_TQ_CAUSE_MAX - 1),
** GB_ESTATE outside a transaction, or a database error.
*/
int st_tq_log_removals(struct st_db *db, struct st_tq_removal *rm, size_t n,
		       const char *cause, long long now);

struct st_tq_rmrow {
	long long tq_id, seq, job_id;
};

/*
** Call fn for every logged removal of TQ tq_id with seq >= from_seq, in seq
** order (paged; rows are not kept). Stops and returns fn's value when it
** is non-zero. A first row above from_seq means the rows between were
** pruned (st_tq_removals_prune): the caller reloads the TQ.
*/
int st_tq_removals_scan(struct st_db *db, long long tq_id, long long from_seq,
			int (*fn)(void *ud, const struct st_tq_rmrow *r),
			void *ud);

/* One TQ of st_tq_removals_scan_many and the seq to read it from. */
struct st_tq_rmfrom {
	long long tq_id, from_seq;
};

/*
** st_tq_removals_scan for the TQs from[0..n) (ascending tq_id, each once,
** else GB_EINVAL), a few dozen TQs per statement: fn gets their removals in
** (tq_id, seq) order. What an index refresh calls, so that it costs a
** statement per few dozen TQs another worker claimed from, not one per
** TQ. Stops and returns fn's value when it is non-zero.
*/
int st_tq_removals_scan_many(struct st_db *db, const struct st_tq_rmfrom *from,
			     size_t n,
			     int (*fn)(void *ud, const struct st_tq_rmrow *r),
			     void *ud);

/*
** Autocommit: delete at most max removal rows logged before `before`
** (unix s); *deleted counts them. A worker whose index is further behind
** reloads the TQs concerned.
*/
int st_tq_removals_prune(struct st_db *db, long long before, size_t max,
			 size_t *deleted);

/* ---- matching (TQ-09) ---------------------------------------------------- */

/*
** Inside the caller's transaction: remove job_ids[0..n) (n <=
** ST_TQ_CLAIM_MAX, distinct) from the waiting jobs; claimed[i] = 1 for the
** rows this transaction removed, 0 for those already gone (another worker
** won them). One statement.
*/
int st_tq_claim(struct st_db *db, const long long *job_ids, size_t n,
		int *claimed);

/* One pilot.match decision to record. */
struct st_tq_match_rec {
	struct cdt_match m;      /* decision_id is written back */
	const char *detail_json; /* the full explanation; NULL = none */
};

/*
** Inside the caller's transaction: insert recs[0..n) (n <=
** ST_TQ_RECORD_MAX) into pilot_matches (kind of a decision record: request
** id UNIQUE, pilot, site, outcome, code, reason, job, TQ, detail) and, for
** the matched ones, set their wms_jobs rows to status matched with the
** pilot, site, request and time. Writes each rec's m.decision_id. Returns
** GB_EDUP when a request id was recorded before (nothing of this call is
** kept; the caller rolls back and handles the requests one by one).
*/
int st_tq_record(struct st_db *db, struct st_tq_match_rec *recs, size_t n,
		 long long now);

/*
** The match recorded for request_id (a redelivered pilot.match): *found 0
** when none. Strings in `a`; counts are 0 (kept only in the detail).
*/
int st_tq_match_get(struct st_db *db, const char *request_id,
		    struct arena *a, struct cdt_match *out, int *found);

/* The detail JSON of a recorded match (explain/why); NULL when none. */
int st_tq_match_detail(struct st_db *db, const char *request_id,
		       struct arena *a, char **json);

/* ---- job status (PR-04 history input) ------------------------------------ */

/*
** Inside the caller's transaction: apply job.status `s`. *found 0 when
** the job is unknown. *applied 1 when the row changed: the new status
** ranks higher (cdt_status_rank), or ranks the same and s->time is not
** older than the current status time; never out of a final rank. A job
** still waiting that gets any other status leaves its task queue in the
** same transaction, logged with the status name as cause (TQ-09: a killed,
** deleted, failed or done job is never handed to a pilot).
*/
int st_tq_job_status(struct st_db *db, const struct cdt_status *s,
		     long long now, int *found, int *applied);

struct st_tq_jobinfo {
	long long job_id, tq_id;
	char *owner, *owner_group, *status, *site, *pilot_id, *match_request;
	long long submitted_at, matched_at, status_at;
};
/* A job record; GB_ENOTFOUND when unknown. */
int st_tq_job_get(struct st_db *db, long long job_id, struct arena *a,
		  struct st_tq_jobinfo *out);

/* ---- the leader: priorities, history, cleanup (PR-04..08) ---------------- */

/*
** Autocommit: take or renew the single leader lease for `owner` until
** now + lease_s. *leader = 1 when owner holds it after the call.
*/
int st_tq_lease(struct st_db *db, const char *owner, long long now,
		int lease_s, int *leader);

/* Autocommit: give the lease up now if `owner` holds it (a worker that
** stops), so another worker takes over at its next try, not after the
** lease runs out. */
int st_tq_lease_release(struct st_db *db, const char *owner);

/*
** Inside the caller's transaction, as its last statement (it then holds
** the tq_state row and waits for no other lock, the order st_tq_submit
** keeps): `n` task queues changed in a way their priorities must follow
** (PR-08: the matching emptied them), so the leader recomputes at once.
** n 0 does nothing. Returns 0, GB_ESTATE outside a transaction, or a
** database error.
*/
int st_tq_mark_dirty(struct st_db *db, size_t n);

/*
** Priority bookkeeping: *dirty counts TQ creations and deletions (bumped by
** st_tq_submit and st_tq_cleanup) and the task queues matching emptied
** (st_tq_mark_dirty), *computed_dirty the value the last
** recomputation saw, *computed_at its time, *version the priorities'
** version (bumped by every save).
*/
int st_tq_prio_state(struct st_db *db, long long *dirty,
		     long long *computed_dirty, long long *computed_at,
		     long long *version);

/*
** In a transaction of its own: write t[i].priority to each TQ still
** present, record dirty_seen as computed_dirty, now as computed_at, bump
** the version.
*/
int st_tq_prio_save(struct st_db *db, const struct pr_tq *t, size_t n,
		    long long dirty_seen, long long now);

/*
** Autocommit: append one history sample at `now`: running jobs per
** (owner_group, owner) from wms_jobs (status running), one row each, plus
** nothing when none run.
*/
int st_tq_history_sample(struct st_db *db, long long now);

/* Samples with t > since, in `a`. */
int st_tq_history_load(struct st_db *db, long long since, struct arena *a,
		       struct pr_sample **out, size_t *n);

/* Delete samples with t <= before. */
int st_tq_history_prune(struct st_db *db, long long before);

/*
** Each TQ without waiting jobs created at or before older_than is deleted,
** at most max, each in a short transaction of its own with the locking
** described above; *deleted counts them. Bumps dirty when any went.
*/
int st_tq_cleanup(struct st_db *db, long long older_than, size_t max,
		  size_t *deleted);

#endif
