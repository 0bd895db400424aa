/*
** store_panda.h — MariaDB for the PanDA job life cycle: job.status intake
** for PanDA jobs, the timeout scan (TO-01..TO-12, with its job.timeout
** events, TO-14) and fast rebrokerage (TO-13). Tables: jobs, queues,
** queue_counts, job_requests (0003) with the columns of 0005.
**
** Same rules as store.h: one blocking connection, prepared statements
** with bound parameters only, times are unix seconds from the caller's
** clock (the worker's clk_now, which tests move through the clock seam).
** "Inside a transaction" functions neither begin nor commit; they return
** GB_ESTATE when called outside one.
**
** The life cycle (schemas/messages/job.status.md, "PanDA jobs"):
**   rank 0 pending, 1 defined, 2 assigned and throttled, 3 activated,
**   4 sent, 5 starting, 6 running, 7 holding, 8 transferring, 9 finished,
**   failed, closed and cancelled (final).
** An update applies when its time >= the job's brokered_at (older ones
** belong to an attempt before a reassignment) and its rank is higher, or
** equal with time >= status_time (running after running: the newer
** wins); a final status is never left. Ages are measured on the worker's
** clock: a change sets status_since = now.
**
** Counts: a job counts in queue_counts(queue, gshare) in the column of its
** status when there is one (defined, assigned, activated, starting,
** running, transferring). Every status change here moves the job from
** its old column to the new one in the same transaction (a row is
** created when missing; a column never goes below 0, since grid loads
** set the counts too).
**
** check_at: each change stores to_next_check() of the job's new state at
** its queue (NULL for a final status), so the timeout scan reads only
** due jobs.
*/
#ifndef GB_STORE_PANDA_H
#define GB_STORE_PANDA_H

#include <stddef.h>

#include "base/arena.h"
#include "params.h"
#include "store/store.h"
#include "timeout.h"

/* Rank of a status in the life cycle above; -1 out of range. */
int sp_rank(enum to_status s);

/* ---- job.status ----------------------------------------------------- */

struct sp_update {
	long long job_id;
	int heartbeat;              /* 1: only a sign of life */
	enum to_status status;      /* when !heartbeat; never TO_ST_PENDING */
	long long time;             /* producer's unix s */
	const char *job_sub_status; /* NULL = leave as is; "" clears */
};

enum sp_outcome {
	SP_APPLIED = 0,   /* status changed */
	SP_HEARTBEAT,     /* a heartbeat (or same-status update) recorded */
	SP_STALE,         /* older than the job's state: nothing changed */
	SP_UNKNOWN_JOB,   /* no such job: nothing changed */
};

/* What an applied update did, for the log line and the caller's counts. */
struct sp_result {
	enum sp_outcome outcome;
	enum to_status old_status, new_status;
	char queue[257];            /* "" when the job has none */
	long long check_at;         /* 0 = none (final) */
};

/*
** Inside a transaction: apply `u` to its job (row locked FOR UPDATE).
**  - a status change: status, status_since = now, status_time = u->time,
**    job_sub_status when given, started_at = now the first time the job
**    is running, last_heartbeat = now for starting/running/transferring/
**    holding, the queue's last_start = GREATEST(last_start, now) when it
**    becomes running (PJ-09, TO-06 read it), the counts moved, check_at;
**  - a heartbeat, or the same status again (time >= status_time): for a
**    job in starting, running, transferring or holding, last_heartbeat =
**    now and check_at again (job_sub_status applied when given); for any
**    other status nothing but the outcome SP_HEARTBEAT;
**  - anything else: SP_STALE, nothing written.
** `set` gives the parameters for check_at (NULL = catalogue defaults).
** Returns 0 (out filled), GB_EINVAL (NULL u/out, a status out of range or
** pending), GB_ESTATE, GB_ERANGE (a row out of range) or a database error.
*/
int st_panda_status(struct st_db *db, const struct sp_update *u,
		    const struct prm_set *set, long long now,
		    struct sp_result *out);

/* ---- the timeout scan (TO-01..TO-12, TO-14) -------------------------- */

/* A job the scan looks at, with its queue's timeout attributes. */
struct sp_job {
	struct to_job j;            /* workflow in the arena (the queue's) */
	long long task_id;
	const char *queue;          /* NULL when none (pending, throttled) */
	const char *gshare;
	const char *request_id;     /* job.broker request that placed it */
	int attempt;
	int has_queue_row;          /* the queue exists in `queues` */
	struct to_queue q;          /* paused = status 'paused' */
};

/*
** Inside a transaction: up to `max` jobs with check_at <= now, oldest
** check_at first, locked FOR UPDATE SKIP LOCKED (a job another worker
** holds is skipped, never waited for), with their queues' attributes read
** after the lock (queue rows are not locked). `out` gets an arena array.
** Returns 0, GB_ESTATE, GB_ETOOBIG (arena cap), GB_ERANGE or a database
** error.
*/
int st_panda_due(struct st_db *db, long long now, size_t max,
		 struct arena *a, struct sp_job **out, size_t *n);

/*
** Inside a transaction, for a due job where nothing fired: store the
** next check time `at` (the caller's to_next_check, or its own re-check
** time for an exempt queue). Returns 0, GB_ENOTFOUND or a database error.
*/
int st_panda_recheck(struct st_db *db, long long job_id, long long at);

/*
** Inside a transaction: apply verdict `v` (or a fast rebrokerage when
** v->rule is "TO-13") to job `j` (locked by st_panda_due or
** st_panda_rebro_pick):
**  - a decisions row: kind "timeout" (TO-01..TO-12) or "rebro" (TO-13),
**    subject the job id, outcome the action name, chosen the new status,
**    request_id = `request_id`, detail `detail_json`; *decision_id;
**  - reassign: status pending, queue NULL, attempt + 1, brokered_at =
**    status_since = status_time = now, last_heartbeat NULL, check_at =
**    to_next_check of a pending job; the job_requests row of the job's
**    request_id becomes pending with pending_until = now (the pending
**    scan places the job again; a job whose request row is gone stays
**    pending, and *no_request is set to 1);
**  - fail: status failed; kill: status cancelled; both check_at NULL;
**  - the counts: the job leaves its old status's column.
** *new_status gets "pending", "failed" or "cancelled"; *attempt the job's
** attempt after the change. Returns 0, GB_EINVAL (NULL arguments, action
** none), GB_ESTATE, GB_ENOTFOUND (the job is gone) or a database error.
*/
int st_panda_timeout_apply(struct st_db *db, const struct sp_job *j,
			   const struct to_verdict *v, const char *request_id,
			   const char *detail_json, const struct prm_set *set,
			   long long now, long long *decision_id,
			   const char **new_status, int *attempt,
			   int *no_request);

/* ---- fast rebrokerage (TO-13) ---------------------------------------- */

/* One queue_counts row as TO-13 reads it. */
struct sp_load {
	const char *queue, *gshare;
	double nqueue;          /* defined + assigned + activated + starting */
	double nrun;            /* running */
	int has_nslots;         /* the queue's num_slots is set (>= 0) */
	int exempt;             /* the queue is paused or disableReassign */
	int known;              /* the queue has a queues row */
};

/*
** Reads (no locks): every queue_counts row with its queue's flags, ordered
** by gshare then queue, in `a`. Returns 0, GB_ETOOBIG or a database error.
*/
int st_panda_loads(struct st_db *db, struct arena *a, struct sp_load **out,
		   size_t *n);

/*
** Inside a transaction: lock queue_counts(queue, gshare) FOR UPDATE (two
** workers rebrokering one queue run one after the other, the second
** seeing the first's decrements) and return its nqueue/nrun now, and the
** gshare's nqueue over every queue. GB_ENOTFOUND when the row is gone.
*/
int st_panda_load_lock(struct st_db *db, const char *queue,
		       const char *gshare, double *nqueue, double *nrun,
		       double *nqueue_total);

/*
** Inside a transaction: the `max` oldest (lowest job_id) jobs at `queue`
** of `gshare` in defined, assigned, activated or starting, locked FOR
** UPDATE SKIP LOCKED, as sp_job rows (q filled like st_panda_due).
*/
int st_panda_rebro_pick(struct st_db *db, const char *queue,
			const char *gshare, size_t max, struct arena *a,
			struct sp_job **out, size_t *n);

#endif
