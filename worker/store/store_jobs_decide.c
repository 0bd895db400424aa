/*
** store_jobs_decide.c — the request side of the job brokerage's tables
** (0003_jobbrokerage.sql): a task's context, which jobs are already placed,
** recording a decision with its jobs, queue counts and pending request,
** reloading and closing pending requests, and a queue's counts. Split from
** store_jobs.c (the grid's save and load) to keep each file readable; the
** statement slots both use are in store_jobs_internal.h. A decision's up
** to 10,000 job rows go out as multi-row upserts (struct st_rows).
**
** Counts move with the decision and are derived from what was written: the
** jobs are upserted with the decision's id, except that a job that already
** has a queue keeps its row (the worker skips placed jobs, but two requests
** naming the same job can race), and queue_counts then grows by the rows
** carrying that id, so a count never runs ahead of the jobs table. The
** GROUP BY touches the count rows in queue order, so two decisions do not
** lock the same rows in opposite orders.
**
** The life-cycle columns of 0005 are written with the job: its share,
** owner, cores and priority (what the analysis brokerage and the timeout
** scan read later), the status times, and check_at, the first moment a
** timeout rule could fire for the new status (to_next_check), so the scan
** reads only the jobs that are due. A job without a queue is "pending",
** or "throttled" when the analysis throttle stopped its task; both count
** as not placed, so a later decision may still place them.
*/
#include "store/store_internal.h"
#include "store/store_decisions.h"
#include "store/store_jobs.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_jobs_internal.h"
#include "timeout.h"

/* ---- statements ---------------------------------------------------------- */

static const char SQL_TASK_INFO[] =
	"SELECT t.nucleus, t.gshare, t.full_chain, n.bare_nucleus "
	"FROM tasks t LEFT JOIN nuclei n ON n.name = t.nucleus "
	"WHERE t.task_id = ?";
static const char SQL_DONE_IN[] =
	"SELECT job_id FROM jobs WHERE job_id IN (" ST_LIST ") "
	"AND status NOT IN ('pending', 'throttled')";
/* A placed job keeps its row: a column takes the new value only while the
** stored status is pending or throttled (no queue). `status` comes last,
** because an assignment sees the columns assigned before it. created_at
** is never updated: it is the first decision's (TO-08 counts from it). */
#define SJ_FREE(col)                                                           \
	col " = IF(status IN ('pending', 'throttled'), VALUE(" col "), " col   \
	    "), "
static const char SQL_JOB_UPSERT[] =
	"INSERT INTO jobs (job_id, task_id, request_id, queue, status, "
	"nevents, input_mb, decision_id, updated_at, gshare, user_name, "
	"working_group, cores, current_priority, brokered_at, status_since, "
	"status_time, check_at, created_at) VALUES " ST_ROWS
	" ON DUPLICATE KEY UPDATE "
	SJ_FREE("task_id") SJ_FREE("request_id") SJ_FREE("queue")
	SJ_FREE("nevents") SJ_FREE("input_mb") SJ_FREE("decision_id")
	SJ_FREE("updated_at") SJ_FREE("gshare") SJ_FREE("user_name")
	SJ_FREE("working_group") SJ_FREE("cores") SJ_FREE("current_priority")
	SJ_FREE("brokered_at") SJ_FREE("status_since") SJ_FREE("status_time")
	SJ_FREE("check_at")
	"status = IF(status IN ('pending', 'throttled'), VALUE(status), "
	"status)";
#define NJOB_UPSERT 19 /* values per row */
static const char SQL_COUNTS_ADD[] =
	"INSERT INTO queue_counts (queue, gshare, assigned, activated) "
	"SELECT d.queue, ?, d.na, d.nc FROM (SELECT queue, "
	"SUM(status = 'assigned') AS na, SUM(status = 'activated') AS nc "
	"FROM jobs WHERE decision_id = ? AND queue IS NOT NULL "
	"GROUP BY queue) AS d ON DUPLICATE KEY UPDATE "
	"assigned = assigned + VALUE(assigned), "
	"activated = activated + VALUE(activated)";
static const char SQL_REQUEST_UPSERT[] =
	"INSERT INTO job_requests (request_id, task_id, body, status, "
	"pending_until, attempts, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, ?, 1, ?, ?) ON DUPLICATE KEY UPDATE "
	"task_id = VALUE(task_id), body = VALUE(body), status = VALUE(status), "
	"pending_until = VALUE(pending_until), attempts = attempts + 1, "
	"updated_at = VALUE(updated_at)";
static const char SQL_PENDING_DUE[] =
	"SELECT id FROM job_requests WHERE status = 'pending' AND "
	"pending_until <= ? ORDER BY pending_until, id LIMIT ? "
	"FOR UPDATE SKIP LOCKED";
static const char SQL_REQUEST_LOAD[] =
	"SELECT request_id, body FROM job_requests WHERE id = ?";
static const char SQL_REQUEST_CLOSE[] =
	"UPDATE job_requests SET status = 'done', pending_until = NULL, "
	"updated_at = ? WHERE id = ?";
/* 0010_broker_lock.sql says why; UPDATE takes the row lock and says when. */
static const char SQL_LOCK[] =
	"UPDATE broker_locks SET held_at = ? WHERE name = 'jobs'";
static const char SQL_COUNTS_GET[] =
	"SELECT running, defined, assigned, activated, `starting`, "
	"transferring, nbatchjob FROM queue_counts WHERE queue = ? AND "
	"gshare = ?";

/* ---- task context -------------------------------------------------------- */

int st_jobs_task_info(struct st_db *db, long long task_id, struct arena *a,
		      const char **nucleus, const char **gshare,
		      enum tb_job_scope *scope)
{
	if (db == NULL || a == NULL || nucleus == NULL || gshare == NULL ||
	    scope == NULL)
		return GB_EINVAL;
	*nucleus = NULL;
	*gshare = NULL;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SJ_SID(SJ_TASK_INFO), SQL_TASK_INFO,
			      ST_ID(task_id), "ssss", &c, &s);
	int got = st_row(db, s, &rc);
	const char *v[4] = {NULL, NULL, NULL, NULL};
	for (unsigned i = 0; rc == GB_OK && got && i < 4; i++)
		rc = st_col_cstr(db, s, &c, i, a, &v[i]);
	st_done(s);
	if (rc != GB_OK)
		return rc;
	if (!got || v[0] == NULL)
		return st_failf(db, GB_ENOTFOUND,
				"task %lld is unknown or has no nucleus",
				task_id);
	int f = tb_fullchain_parse(v[2] ? v[2] : "");
	/* A nucleus since dropped from the grid counts as a normal one. */
	int b = v[3] ? tb_bare_parse(v[3]) : (int)TB_BARE_NO;
	if (v[1] == NULL || f < 0 || b < 0)
		return st_failf(
			db, GB_ERANGE,
			"task %lld: bad gshare, full_chain or bare_nucleus",
			task_id);
	*nucleus = v[0];
	*gshare = v[1];
	*scope = tb_job_scope((enum tb_fullchain)f, (enum tb_bare)b);
	return GB_OK;
}

/* ---- jobs ---------------------------------------------------------------- */

int st_jobs_done(struct st_db *db, const long long *job_ids, size_t n,
		 unsigned char *done)
{
	if (db == NULL || (n && (job_ids == NULL || done == NULL)))
		return GB_EINVAL;
	if (n)
		memset(done, 0, n);
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, n, SJ_IN_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		struct st_cols c;
		MYSQL_STMT *s;
		st_arg_ids(&ch.a, job_ids + ch.off, ch.k, SJ_IN_CHUNK);
		st_cols_init(&c, "l");
		rc = st_run_n(db, SJ_SID(SJ_DONE_IN), SQL_DONE_IN, SJ_IN_CHUNK,
			      &ch.a, &c, &s);
		while (st_row(db, s, &rc)) {
			/* Ids may repeat: mark every position of this one. */
			for (size_t i = 0; i < ch.k; i++)
				if (job_ids[ch.off + i] == st_col_ll(&c, 0))
					done[ch.off + i] = 1;
		}
		st_done(s);
	}
	st_chunks_free(&ch);
	return rc;
}

/* The plan must be what jb_broker makes; *placed counts jobs with a queue. */
static int decide_check(struct st_db *db, const struct gm_request *r,
			const struct dec_decision *d,
			const struct jb_plan *plan, size_t *placed)
{
	*placed = 0;
	if (d->outcome != DEC_ASSIGNED && d->outcome != DEC_PENDING)
		return st_failf(db, GB_EINVAL, "task %lld: unknown outcome %d",
				r->t.task_id, (int)d->outcome);
	if (d->outcome == DEC_ASSIGNED &&
	    (plan->nbest == 0 || plan->best[0] < 0))
		return st_failf(db, GB_EINVAL,
				"task %lld: assigned without a best queue",
				r->t.task_id);
	/* jobs.cores and jobs.current_priority are INT. */
	if (r->t.core_count < 0 || r->t.core_count > INT_MAX ||
	    r->t.priority < INT_MIN || r->t.priority > INT_MAX)
		return st_failf(db, GB_EINVAL,
				"task %lld: coreCount %ld or priority %ld out "
				"of range",
				r->t.task_id, r->t.core_count, r->t.priority);
	if (r->njobs && (plan->job_queue == NULL || plan->job_status == NULL))
		return st_failf(db, GB_EINVAL, "task %lld: plan has no jobs",
				r->t.task_id);
	for (size_t i = 0; i < r->njobs; i++) {
		long k = plan->job_queue[i];
		enum jb_job_status st = plan->job_status[i];
		int ok =
			k < 0 ? st == JB_JOB_UNASSIGNED
			      : st == JB_JOB_ASSIGNED || st == JB_JOB_ACTIVATED;
		if (!ok || r->jobs[i].nevents < 0)
			return st_failf(db, GB_EINVAL,
					"task %lld: job %lld: queue %ld with "
					"status %d, nEvents %ld",
					r->t.task_id, r->jobs[i].job_id, k,
					(int)st, r->jobs[i].nevents);
		*placed += k >= 0;
	}
	return GB_OK;
}

/*
** check_at of a job entering `status` now at queue `k` (-1: none), into
** `a`: when a timeout rule can first fire, or SQL NULL when none can.
*/
static int check_at(struct st_db *db, const struct gm_request *r,
		    const struct jb_queue *queues, long k,
		    enum to_status status, const struct prm_set *set,
		    long long now, struct st_args *a)
{
	const struct to_job j = {
		.job_id = 0,
		.status = status,
		.status_since = now,
		.created_at = now,
		.current_priority = (int)r->t.priority,
	};
	struct to_queue q = {0};
	if (k >= 0) {
		q.last_start = queues[k].last_start;
		q.paused = queues[k].status &&
			   strcmp(queues[k].status, "paused") == 0;
	}
	long long at = 0;
	int rc = to_next_check(&j, k >= 0 ? &q : NULL, set, now, &at);
	if (rc < 0)
		return st_failf(db, rc, "task %lld: no timeout for status %d",
				r->t.task_id, (int)status);
	if (rc == 1)
		st_arg_ll(a, at);
	else
		st_arg_null(a);
	return GB_OK;
}

static int jobs_upsert(struct st_db *db, const struct gm_request *r,
		       const struct jb_queue *queues,
		       const struct jb_plan *plan, const char *request_id,
		       long long decision_id, long long now,
		       const struct prm_set *set, int unplaced_throttled)
{
	/* Production jobs have no owner (the analysis counts skip them). */
	const char *user = r->an.is_analysis ? r->an.user : NULL;
	const char *group = r->an.is_analysis ? r->an.working_group : NULL;
	struct st_rows b;
	st_rows_init(&b, SJ_SID(SJ_JOB_UPSERT), SQL_JOB_UPSERT, NJOB_UPSERT);
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < r->njobs; i++) {
		const struct gm_job *j = &r->jobs[i];
		long k = plan->job_queue[i];
		enum to_status st =
			k < 0 ? (unplaced_throttled ? TO_ST_THROTTLED
						    : TO_ST_PENDING)
			: plan->job_status[i] == JB_JOB_ACTIVATED
				? TO_ST_ACTIVATED
				: TO_ST_ASSIGNED;
		double mb = 0;
		for (size_t f = 0; f < j->ninputs; f++)
			if (isfinite(j->inputs[f].size_mb) &&
			    j->inputs[f].size_mb > 0)
				mb += j->inputs[f].size_mb;
		struct st_args *a = &b.a;
		st_arg_ll(a, j->job_id);
		st_arg_ll(a, r->t.task_id);
		st_arg_str(a, request_id);
		st_arg_str(a, k >= 0 ? queues[k].name : NULL);
		st_arg_str(a, to_status_name(st));
		st_arg_ll(a, j->nevents);
		st_arg_dbl(a, mb);
		st_arg_ll(a, decision_id);
		st_arg_ll(a, now);
		st_arg_str(a, r->t.gshare);
		st_arg_str(a, user);
		st_arg_str(a, group);
		st_arg_ll(a, r->t.core_count);
		st_arg_ll(a, r->t.priority);
		st_arg_ll(a, now); /* brokered_at */
		st_arg_ll(a, now); /* status_since */
		st_arg_ll(a, now); /* status_time */
		rc = check_at(db, r, queues, k, st, set, now, a);
		st_arg_ll(a, now); /* created_at, on insert only */
		if (rc == GB_OK)
			rc = st_rows_end(db, &b);
	}
	if (rc == GB_OK)
		rc = st_rows_flush(db, &b);
	st_rows_free(&b);
	return rc;
}

int st_jobs_decide(struct st_db *db, const struct gm_request *r,
		   const struct jb_queue *queues, const struct dec_decision *d,
		   const struct jb_plan *plan, const char *request_id,
		   const void *body, size_t len, long long now,
		   long long retry_at, const char *detail_json,
		   const struct prm_set *set, int unplaced_throttled,
		   long long *decision_id)
{
	if (db == NULL || r == NULL || d == NULL || plan == NULL ||
	    request_id == NULL || request_id[0] == '\0' ||
	    (len && body == NULL) || detail_json == NULL ||
	    decision_id == NULL || r->t.gshare == NULL ||
	    (r->njobs && (r->jobs == NULL || queues == NULL)))
		return GB_EINVAL;
	*decision_id = 0;
	if (len > ST_MEDIUM_MAX)
		return st_failf(db, GB_ETOOBIG,
				"request %s: %zu bytes exceed a MEDIUMBLOB",
				request_id, len);
	/* Outside a transaction the jobs could commit without their counts
	** or their event. */
	int rc = st_need_txn(db, 1, "st_jobs_decide");
	if (rc != GB_OK)
		return rc;
	size_t placed = 0;
	rc = decide_check(db, r, d, plan, &placed);
	if (rc != GB_OK)
		return rc;
	int assigned = d->outcome == DEC_ASSIGNED;
	char subject[32];
	snprintf(subject, sizeof(subject), "%lld", r->t.task_id);
	struct st_dec_row row = {
		.kind = "jobs",
		.subject = subject,
		.request_id = request_id,
		.outcome = dec_outcome_name(d->outcome),
		.chosen = assigned ? queues[plan->best[0]].name : NULL,
		.decided_at = now,
		.detail = detail_json,
	};
	rc = st_dec_write(db, &row);
	if (rc != GB_OK)
		return rc;
	long long id = row.id;
	struct st_args a;
	MYSQL_STMT *s;
	rc = jobs_upsert(db, r, queues, plan, request_id, id, now, set,
			 unplaced_throttled);
	if (rc == GB_OK && placed) {
		st_args_init(&a);
		st_arg_str(&a, r->t.gshare);
		st_arg_ll(&a, id);
		rc = st_exec(db, SJ_SID(SJ_COUNTS_ADD), SQL_COUNTS_ADD, &a, &s);
	}
	if (rc != GB_OK)
		return rc;
	int pending = !assigned || placed < r->njobs;
	st_args_init(&a);
	st_arg_str(&a, request_id);
	st_arg_ll(&a, r->t.task_id);
	st_arg_blob(&a, body, len);
	st_arg_str(&a, pending ? "pending" : "done");
	if (pending)
		st_arg_ll(&a, retry_at);
	else
		st_arg_null(&a);
	st_arg_ll(&a, now);
	st_arg_ll(&a, now);
	rc = st_exec(db, SJ_SID(SJ_REQUEST_UPSERT), SQL_REQUEST_UPSERT, &a, &s);
	if (rc == GB_OK)
		*decision_id = id;
	return rc;
}

/* ---- pending requests ---------------------------------------------------- */

int st_jobs_pending_due(struct st_db *db, long long now, size_t max,
			long long *ids, size_t *n)
{
	return st_due_ids(db, SJ_SID(SJ_PENDING_DUE), SQL_PENDING_DUE,
			  "st_jobs_pending_due", now, max, ids, n);
}

int st_jobs_request_load(struct st_db *db, long long id, struct arena *a,
			 char **request_id, void **body, size_t *len)
{
	if (db == NULL || a == NULL || request_id == NULL || body == NULL ||
	    len == NULL)
		return GB_EINVAL;
	*request_id = NULL;
	*body = NULL;
	*len = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SJ_SID(SJ_REQUEST_LOAD), SQL_REQUEST_LOAD,
			      ST_ID(id), "sb", &c, &s);
	if (!st_row(db, s, &rc) && rc == GB_OK)
		rc = st_failf(db, GB_ENOTFOUND, "job request %lld not found",
			      id);
	if (rc == GB_OK)
		rc = st_col_str(db, s, &c, 0, a, request_id);
	if (rc == GB_OK)
		rc = st_col_blob(db, s, &c, 1, a, body, len);
	st_done(s);
	if (rc == GB_OK && *request_id == NULL)
		rc = st_failf(db, GB_ERANGE, "job request %lld: no request id",
			      id);
	return rc;
}

int st_jobs_request_close(struct st_db *db, long long id, long long now)
{
	if (db == NULL)
		return GB_EINVAL;
	/* A row already done counts as found. */
	return st_update_id(db, SJ_SID(SJ_REQUEST_CLOSE), SQL_REQUEST_CLOSE,
			    now, id, "job request");
}

int st_jobs_lock(struct st_db *db, long long now)
{
	if (db == NULL)
		return GB_EINVAL;
	int rc = st_need_txn(db, 1, "st_jobs_lock");
	if (rc != GB_OK)
		return rc;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, now);
	rc = st_exec(db, SJ_SID(SJ_LOCK), SQL_LOCK, &a, &s);
	if (rc == GB_OK && mysql_stmt_affected_rows(s) == 0)
		rc = st_failf(db, GB_ESTATE,
			      "broker_locks has no 'jobs' row: run gridbroker "
			      "db migrate");
	return rc;
}

int st_jobs_counts(struct st_db *db, const char *queue, const char *gshare,
		   struct jb_counts *out)
{
	if (db == NULL || queue == NULL || gshare == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, queue);
	st_arg_str(&a, gshare);
	st_cols_init(&c, "ddddddd");
	int rc =
		st_query(db, SJ_SID(SJ_COUNTS_GET), SQL_COUNTS_GET, &a, &c, &s);
	if (!st_row(db, s, &rc) && rc == GB_OK)
		rc = st_failf(db, GB_ENOTFOUND, "no counts for %s/%s", queue,
			      gshare);
	double *v[SJ_NCOUNTS] = {&out->running,	 &out->defined,
				 &out->assigned, &out->activated,
				 &out->starting, &out->transferring,
				 &out->nbatchjob};
	for (unsigned i = 0; rc == GB_OK && i < SJ_NCOUNTS; i++) {
		*v[i] = st_col_dbl(&c, i);
		if (!st_finite_nonneg(*v[i]))
			rc = st_failf(db, GB_ERANGE,
				      "counts of %s/%s: negative", queue,
				      gshare);
	}
	st_done(s);
	return rc;
}
