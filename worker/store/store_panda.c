/*
** store_panda.c — MariaDB for the PanDA job life cycle (store_panda.h):
** job.status intake, the timeout scan (TO-01..TO-12, TO-14) and fast
** rebrokerage (TO-13) over the jobs, queues, queue_counts and
** job_requests tables (0003 with the columns of 0005).
**
** Locking, and why in this order: a job row is locked first (FOR UPDATE,
** or FOR UPDATE SKIP LOCKED by the scans), then its queue_counts row (the
** counts upsert), then the queue row when last_start moves, then the
** job_requests row; st_jobs_decide takes jobs, counts and requests in the
** same order. The queue's timeout attributes are read with a plain,
** non-locking SELECT after the job is locked: a locking join would lock
** the queue row too, and every job.status of a busy queue would then wait
** for every other. Fast rebrokerage locks queue_counts before its jobs,
** the other way round, but it takes the jobs with SKIP LOCKED and so never
** waits for a job a status update holds.
**
** The counts move with one upsert per status change: the row is created
** when missing with the new column at 1, otherwise each of the six
** columns gets GREATEST(col + delta, 0) (grid loads overwrite the counts,
** so a decrement can meet a 0 that must not turn negative).
**
** The schema's ck_jobs_queue ties "no queue" to pending and throttled and
** "a queue" to every active status; a final status may have either (a
** throttled job killed by TO-04, a pending job cancelled, never had one).
** A status that would break it cannot be stored: job.status treats such
** an update (a pending job reported running) as stale, nothing written.
*/
#include "store/store_internal.h"
#include "store/store_decisions.h"
#include "store/store_panda.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"

/* ---- statements ---------------------------------------------------------- */

enum sp_slot {
	SP_JOB_LOCK = 0,
	SP_QUEUE_ONE,
	SP_JOB_WRITE,
	SP_COUNTS_MOVE,
	SP_LAST_START,
	SP_DUE,
	SP_QUEUES_IN,
	SP_RECHECK,
	SP_APPLY_LOCK,
	SP_REASSIGN,
	SP_FINISH,
	SP_REQUEST_PENDING,
	SP_LOADS,
	SP_LOAD_LOCK,
	SP_LOAD_TOTAL,
	SP_REBRO_CAND,
	SP_REBRO_LOCK,
	SP_NSLOTS
};
_Static_assert(ST_SID_PANDA_BASE + SP_NSLOTS <= ST_SID_PANDA_LAST + 1,
	       "store_internal.h reserves too few PanDA statement slots");
#define SP_SID(slot) ((enum st_sid)(ST_SID_PANDA_BASE + (slot)))

#define SP_IN_CHUNK 32 /* queue names or job ids per IN list */
_Static_assert(SP_IN_CHUNK + 2 <= ST_ARGS_INLINE,
	       "an IN list and two more fit a list without the heap");

#define SP_TMP_CAP ((size_t)16 << 20) /* scratch of one call */
#define SP_SUB_STATUS_MAX 64	      /* jobs.job_sub_status VARCHAR(64) */

static const char SQL_JOB_LOCK[] =
	"SELECT status, status_since, status_time, brokered_at, queue, "
	"gshare, current_priority, created_at, last_heartbeat, "
	"job_sub_status, check_at FROM jobs WHERE job_id = ? FOR UPDATE";
static const char SQL_QUEUE_ONE[] =
	"SELECT status, last_start, disable_reassign, transtimehi, "
	"transtimelo, workflow FROM queues WHERE name = ?";
static const char SQL_JOB_WRITE[] =
	"UPDATE jobs SET status = ?, status_since = ?, status_time = ?, "
	"job_sub_status = COALESCE(?, job_sub_status), "
	"started_at = COALESCE(started_at, ?), "
	"last_heartbeat = COALESCE(?, last_heartbeat), check_at = ?, "
	"updated_at = ? WHERE job_id = ?";
/* Insert values are the increments (0 or 1); the update applies the
** deltas, never below 0. */
static const char SQL_COUNTS_MOVE[] =
	"INSERT INTO queue_counts (queue, gshare, defined, assigned, "
	"activated, `starting`, running, transferring) "
	"VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE "
	"defined = GREATEST(defined + ?, 0), "
	"assigned = GREATEST(assigned + ?, 0), "
	"activated = GREATEST(activated + ?, 0), "
	"`starting` = GREATEST(`starting` + ?, 0), "
	"running = GREATEST(running + ?, 0), "
	"transferring = GREATEST(transferring + ?, 0)";
static const char SQL_LAST_START[] =
	"UPDATE queues SET last_start = GREATEST(COALESCE(last_start, 0), ?) "
	"WHERE name = ?";
/* The columns of struct sp_job, shared by the scan and the rebro pick.
** FORCE INDEX: the scan must read the due range in check_at order and
** stop at LIMIT, locking only the rows it returns; a small table's
** statistics could otherwise pick a scan that locks every due row. When
** fewer than LIMIT rows are due, InnoDB (READ COMMITTED included) also
** keeps its lock on the first index record past the range: a wider scan
** skips that job, and a job.status moving its check_at waits, until this
** transaction ends; keep the scan's transaction short. */
#define SP_JOB_COLS                                                         \
	"SELECT job_id, task_id, request_id, queue, gshare, status, "       \
	"status_since, created_at, last_heartbeat, current_priority, "      \
	"job_sub_status, attempt FROM jobs "
#define SP_JOB_SPEC "llssssllllsl"
static const char SQL_DUE[] = SP_JOB_COLS
	"FORCE INDEX (idx_jobs_check) WHERE check_at <= ? "
	"ORDER BY check_at, job_id LIMIT ? FOR UPDATE SKIP LOCKED";
/* TO-13 takes the oldest jobs: candidates are read without locks (the
** four status ranges of idx_jobs_queue need a sort, and a locking read
** would lock every queued job of the queue before the sort), then locked
** by primary key, SKIP LOCKED, re-checking the conditions, so only the
** jobs returned are held. */
#define SP_QUEUED "status IN ('defined', 'assigned', 'activated', 'starting')"
static const char SQL_REBRO_CAND[] =
	"SELECT job_id FROM jobs WHERE queue = ? AND gshare = ? AND " SP_QUEUED
	" AND job_id > ? ORDER BY job_id LIMIT ?";
static const char SQL_REBRO_LOCK[] = SP_JOB_COLS
	"FORCE INDEX (PRIMARY) WHERE job_id IN (" ST_LIST ") AND queue = ? "
	"AND gshare = ? AND " SP_QUEUED " ORDER BY job_id "
	"FOR UPDATE SKIP LOCKED";
/* Padding binds NULL, which IN never matches. */
static const char SQL_QUEUES_IN[] =
	"SELECT name, status, last_start, disable_reassign, transtimehi, "
	"transtimelo, workflow FROM queues WHERE name IN (" ST_LIST ")";
static const char SQL_RECHECK[] =
	"UPDATE jobs SET check_at = ? WHERE job_id = ?";
static const char SQL_APPLY_LOCK[] =
	"SELECT status, queue, gshare, attempt, request_id FROM jobs "
	"WHERE job_id = ? FOR UPDATE";
static const char SQL_REASSIGN[] =
	"UPDATE jobs SET status = 'pending', queue = NULL, "
	"attempt = attempt + 1, brokered_at = ?, status_since = ?, "
	"status_time = ?, last_heartbeat = NULL, check_at = ?, "
	"decision_id = ?, updated_at = ? WHERE job_id = ?";
static const char SQL_FINISH[] =
	"UPDATE jobs SET status = ?, status_since = ?, status_time = ?, "
	"check_at = NULL, decision_id = ?, updated_at = ? WHERE job_id = ?";
static const char SQL_REQUEST_PENDING[] =
	"UPDATE job_requests SET status = 'pending', pending_until = ?, "
	"updated_at = ? WHERE request_id = ?";
static const char SQL_LOADS[] =
	"SELECT c.queue, c.gshare, "
	"c.defined + c.assigned + c.activated + c.`starting`, c.running, "
	"COALESCE(q.num_slots >= 0, 0), "
	"COALESCE(q.status = 'paused' OR q.disable_reassign <> 0, 0), "
	"q.name IS NOT NULL FROM queue_counts c "
	"LEFT JOIN queues q ON q.name = c.queue ORDER BY c.gshare, c.queue";
static const char SQL_LOAD_LOCK[] =
	"SELECT defined + assigned + activated + `starting`, running "
	"FROM queue_counts WHERE queue = ? AND gshare = ? FOR UPDATE";
static const char SQL_LOAD_TOTAL[] =
	"SELECT COALESCE(SUM(defined + assigned + activated + `starting`), 0) "
	"FROM queue_counts WHERE gshare = ?";

/* ---- the life cycle ------------------------------------------------------ */

int sp_rank(enum to_status s)
{
	static const signed char rank[TO_NSTATUS] = {
		[TO_ST_PENDING] = 0,   [TO_ST_DEFINED] = 1,
		[TO_ST_ASSIGNED] = 2,  [TO_ST_THROTTLED] = 2,
		[TO_ST_ACTIVATED] = 3, [TO_ST_SENT] = 4,
		[TO_ST_STARTING] = 5,  [TO_ST_RUNNING] = 6,
		[TO_ST_HOLDING] = 7,   [TO_ST_TRANSFERRING] = 8,
		[TO_ST_FINISHED] = 9,  [TO_ST_FAILED] = 9,
		[TO_ST_CLOSED] = 9,    [TO_ST_CANCELLED] = 9,
	};
	if ((int)s < 0 || (int)s >= TO_NSTATUS)
		return -1;
	return rank[s];
}

static int is_final(enum to_status s)
{
	return sp_rank(s) == 9;
}

/* Statuses whose jobs send heartbeats (and get last_heartbeat). */
static int is_alive(enum to_status s)
{
	return s == TO_ST_STARTING || s == TO_ST_RUNNING ||
	       s == TO_ST_TRANSFERRING || s == TO_ST_HOLDING;
}

/* What ck_jobs_queue accepts: no queue when pending or throttled, a
** queue when active, either when final. */
static int queue_fits(enum to_status s, int has_queue)
{
	if (s >= TO_ST_FINISHED)
		return 1;
	return (s == TO_ST_PENDING || s == TO_ST_THROTTLED) == !has_queue;
}

/* queue_counts columns in the order of SQL_COUNTS_MOVE; -1 = none. */
enum { CC_DEFINED = 0, CC_ASSIGNED, CC_ACTIVATED, CC_STARTING, CC_RUNNING,
       CC_TRANSFERRING, CC_N };

static int count_col(enum to_status s)
{
	switch (s) {
	case TO_ST_DEFINED: return CC_DEFINED;
	case TO_ST_ASSIGNED: return CC_ASSIGNED;
	case TO_ST_ACTIVATED: return CC_ACTIVATED;
	case TO_ST_STARTING: return CC_STARTING;
	case TO_ST_RUNNING: return CC_RUNNING;
	case TO_ST_TRANSFERRING: return CC_TRANSFERRING;
	default: return -1;
	}
}

/* ---- small helpers ------------------------------------------------------- */

/* With autocommit on, FOR UPDATE locks nothing, and a status could
** commit without its counts. */
static int need_txn(struct st_db *db, const char *fn)
{
	return st_need_txn(db, 1, fn);
}

/* A status column (an ENUM: short ASCII); -1 when unknown. */
static int col_status(const struct st_cols *c, unsigned i)
{
	if (st_col_isnull(c, i) || c->len[i] >= 32)
		return -1;
	char buf[32];
	memcpy(buf, c->s[i], c->len[i]);
	buf[c->len[i]] = '\0';
	return to_status_parse(buf);
}

/* An INT column as int; 0 with *bad set when out of range. */
static int col_int(const struct st_cols *c, unsigned i, int *bad)
{
	long long v = st_col_ll(c, i);
	if (v < INT_MIN || v > INT_MAX) {
		*bad = 1;
		return 0;
	}
	return (int)v;
}

/* Characters of a UTF-8 string (continuation bytes not counted). */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Fill q and *workflow (in `a`) from the queue columns starting at `i`:
** status, last_start, disable_reassign, transtimehi, transtimelo,
** workflow. */
static int queue_attrs(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		       unsigned i, struct arena *a, struct to_queue *q,
		       const char **workflow)
{
	q->paused = !st_col_isnull(c, i) && c->len[i] == 6 &&
		    memcmp(c->s[i], "paused", 6) == 0;
	q->last_start = st_col_ll(c, i + 1); /* NULL = never = 0 */
	q->disable_reassign = st_col_ll(c, i + 2) != 0;
	q->transtimehi = st_col_dbl(c, i + 3);
	q->transtimelo = st_col_dbl(c, i + 4);
	char *w = NULL;
	int rc = st_col_str(db, s, c, i + 5, a, &w);
	*workflow = w ? w : "";
	return rc;
}

/* Move one job from the column of `from` to that of `to` at queue/gshare
** (either may be a status without a column). */
static int counts_move(struct st_db *db, const char *queue, const char *gshare,
		       int from, int to)
{
	/* No queue: it counts nowhere; no gshare: ck_queue_counts_gshare
	** allows no row for it. */
	if (queue == NULL || gshare == NULL || gshare[0] == '\0')
		return GB_OK;
	int fc = from >= 0 ? count_col((enum to_status)from) : -1;
	int tc = to >= 0 ? count_col((enum to_status)to) : -1;
	if (fc == tc)
		return GB_OK;
	long long d[CC_N] = {0};
	if (fc >= 0)
		d[fc] -= 1;
	if (tc >= 0)
		d[tc] += 1;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, queue);
	st_arg_str(&a, gshare);
	for (int i = 0; i < CC_N; i++)
		st_arg_ll(&a, d[i] > 0 ? d[i] : 0);
	for (int i = 0; i < CC_N; i++)
		st_arg_ll(&a, d[i]);
	return st_exec(db, SP_SID(SP_COUNTS_MOVE), SQL_COUNTS_MOVE, &a, &s);
}

/* ---- job.status ---------------------------------------------------------- */

/* The locked job row as st_panda_status reads it. */
struct locked_job {
	enum to_status status;
	long long status_since, status_time, brokered_at;
	char *queue, *gshare, *sub;
	int prio;
	long long created_at, last_heartbeat, check_at;
};

/* Lock job `id`; *found 0 when there is none. Strings in `a`. */
static int job_lock(struct st_db *db, long long id, struct arena *a,
		    struct locked_job *j, int *found)
{
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SP_SID(SP_JOB_LOCK), SQL_JOB_LOCK, ST_ID(id),
			      "slllsslllsl", &c, &s);
	*found = st_row(db, s, &rc);
	if (*found) {
		int st = col_status(&c, 0), bad = 0;
		j->status = (enum to_status)st;
		j->status_since = st_col_ll(&c, 1);
		j->status_time = st_col_ll(&c, 2);
		j->brokered_at = st_col_ll(&c, 3);
		j->prio = col_int(&c, 6, &bad);
		j->created_at = st_col_ll(&c, 7);
		j->last_heartbeat = st_col_ll(&c, 8);
		j->check_at = st_col_ll(&c, 10);
		rc = st_col_str(db, s, &c, 4, a, &j->queue);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 5, a, &j->gshare);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 9, a, &j->sub);
		if (rc == GB_OK && (st < 0 || bad))
			rc = st_failf(db, GB_ERANGE,
				      "job %lld: status or priority out of "
				      "range",
				      id);
	}
	st_done(s);
	return rc;
}

/* The queue's timeout attributes (plain read); *found 0 without a row. */
static int queue_read(struct st_db *db, const char *name, struct arena *a,
		      struct to_queue *q, const char **workflow, int *found)
{
	memset(q, 0, sizeof(*q));
	*workflow = "";
	*found = 0;
	if (name == NULL)
		return GB_OK;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SP_SID(SP_QUEUE_ONE), SQL_QUEUE_ONE,
			      ST_TEXT(name), "slldds", &c, &s);
	*found = st_row(db, s, &rc);
	if (*found)
		rc = queue_attrs(db, s, &c, 0, a, q, workflow);
	st_done(s);
	return rc;
}

/* check_at of a job in state `tj` at `q` (NULL = no queue row); 0 = none
** (a final status, or no rule can fire). */
static int next_check(const struct to_job *tj, const struct to_queue *q,
		      const struct prm_set *set, long long now, long long *at)
{
	*at = 0;
	if (is_final(tj->status))
		return GB_OK;
	int rc = to_next_check(tj, q, set, now, at);
	if (rc < 0)
		return rc;
	if (rc == 0)
		*at = 0;
	return GB_OK;
}

static void bind_check(struct st_args *a, long long at)
{
	if (at)
		st_arg_ll(a, at);
	else
		st_arg_null(a);
}

/* Write the job's new state: a status change (`change`), or a heartbeat
** of an alive job (status, status_since and status_time kept). */
static int job_write(struct st_db *db, long long job_id,
		     const struct locked_job *j, const struct sp_update *u,
		     int change, const struct prm_set *set, long long now,
		     struct arena *a, long long *check_at)
{
	enum to_status ns = change ? u->status : j->status;
	int running = change && ns == TO_ST_RUNNING;
	struct to_queue q;
	const char *workflow;
	int has_row = 0;
	int rc = queue_read(db, j->queue, a, &q, &workflow, &has_row);
	if (rc != GB_OK)
		return rc;
	if (running && has_row && q.last_start < now)
		q.last_start = now;
	const char *sub = u->job_sub_status ? u->job_sub_status : j->sub;
	struct to_job tj = {
		.job_id = job_id,
		.status = ns,
		.status_since = change ? now : j->status_since,
		.created_at = j->created_at,
		.last_heartbeat = is_alive(ns) ? now : j->last_heartbeat,
		.current_priority = j->prio,
		.workflow = workflow,
		.own_stageout = sub && sub[0] != '\0',
	};
	rc = next_check(&tj, has_row ? &q : NULL, set, now, check_at);
	if (rc != GB_OK)
		return st_failf(db, rc, "job %lld: no check time", job_id);
	struct st_args args;
	MYSQL_STMT *s;
	st_args_init(&args);
	st_arg_str(&args, to_status_name(ns));
	st_arg_ll(&args, tj.status_since);
	st_arg_ll(&args, change ? u->time : j->status_time);
	st_arg_str(&args, u->job_sub_status);
	if (running)
		st_arg_ll(&args, now);
	else
		st_arg_null(&args);
	if (is_alive(ns))
		st_arg_ll(&args, now);
	else
		st_arg_null(&args);
	bind_check(&args, *check_at);
	st_arg_ll(&args, now);
	st_arg_ll(&args, job_id);
	rc = st_exec(db, SP_SID(SP_JOB_WRITE), SQL_JOB_WRITE, &args, &s);
	if (rc == GB_OK && change)
		rc = counts_move(db, j->queue, j->gshare, (int)j->status,
				 (int)ns);
	/* Last: the queue row is the most contended lock taken here. */
	if (rc == GB_OK && running && j->queue) {
		st_args_init(&args);
		st_arg_ll(&args, now);
		st_arg_str(&args, j->queue);
		rc = st_exec(db, SP_SID(SP_LAST_START), SQL_LAST_START, &args,
			     &s);
	}
	return rc;
}

int st_panda_status(struct st_db *db, const struct sp_update *u,
		    const struct prm_set *set, long long now,
		    struct sp_result *out)
{
	if (db == NULL || u == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!u->heartbeat &&
	    (sp_rank(u->status) < 0 || u->status == TO_ST_PENDING))
		return GB_EINVAL;
	if (u->job_sub_status &&
	    utf8_chars(u->job_sub_status) > SP_SUB_STATUS_MAX)
		return st_failf(db, GB_EINVAL,
				"job %lld: jobSubStatus longer than %d",
				u->job_id, SP_SUB_STATUS_MAX);
	int rc = need_txn(db, "st_panda_status");
	if (rc != GB_OK)
		return rc;
	struct arena a;
	arena_init(&a, SP_TMP_CAP);
	struct locked_job j;
	memset(&j, 0, sizeof(j));
	int found = 0;
	rc = job_lock(db, u->job_id, &a, &j, &found);
	if (rc != GB_OK || !found) {
		out->outcome = SP_UNKNOWN_JOB;
		goto done;
	}
	out->old_status = out->new_status = j.status;
	out->check_at = j.check_at;
	if (j.queue) {
		if (strlen(j.queue) >= sizeof(out->queue)) {
			rc = st_failf(db, GB_ERANGE,
				      "job %lld: queue name too long",
				      u->job_id);
			goto done;
		}
		strcpy(out->queue, j.queue);
	}
	/* Ranks decide, then the producer's time for equal ranks; an update
	** older than the last brokerage belongs to an earlier attempt. */
	int orank = sp_rank(j.status);
	int nrank = u->heartbeat ? orank : sp_rank(u->status);
	int same = u->heartbeat || u->status == j.status;
	out->outcome = SP_STALE;
	if (u->time < j.brokered_at)
		goto done;
	if (same) {
		if (!u->heartbeat && u->time < j.status_time)
			goto done;
		out->outcome = SP_HEARTBEAT;
		if (is_alive(j.status))
			rc = job_write(db, u->job_id, &j, u, 0, set, now, &a,
				       &out->check_at);
		goto done;
	}
	if (is_final(j.status) || nrank < orank ||
	    (nrank == orank && u->time < j.status_time))
		goto done;
	/* ck_jobs_queue could not store it (see the file header). */
	if (!queue_fits(u->status, j.queue != NULL))
		goto done;
	rc = job_write(db, u->job_id, &j, u, 1, set, now, &a,
		       &out->check_at);
	if (rc == GB_OK) {
		out->outcome = SP_APPLIED;
		out->new_status = u->status;
	}
done:
	arena_free(&a);
	if (rc != GB_OK)
		out->outcome = SP_STALE;
	return rc;
}

/* ---- the timeout scan ---------------------------------------------------- */

/* One distinct queue of a batch of jobs, with what `queues` says. */
struct qinfo {
	const char *name;
	int found;
	struct to_queue q;
	const char *workflow;
};

static int cmp_qinfo(const void *x, const void *y)
{
	return strcmp(((const struct qinfo *)x)->name,
		      ((const struct qinfo *)y)->name);
}

/* Read the queues of jobs[0..n) (no locks) and fill their q, workflow and
** has_queue_row. */
static int fill_queues(struct st_db *db, struct arena *a, struct sp_job *jobs,
		       size_t n)
{
	size_t nq = 0;
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	struct qinfo *qi = malloc((n ? n : 1) * sizeof(*qi));
	struct arena tmp;
	arena_init(&tmp, SP_TMP_CAP);
	int rc = names && qi ? GB_OK : st_failf(db, GB_ENOMEM, "out of memory");
	for (size_t i = 0; rc == GB_OK && i < n; i++)
		if (jobs[i].queue)
			names[nq++] = jobs[i].queue;
	size_t nu = rc == GB_OK ? st_distinct(names, nq) : 0;
	for (size_t i = 0; i < nu; i++)
		qi[i] = (struct qinfo){names[i], 0, {0}, ""};
	struct st_chunks ch;
	st_chunks_init(&ch, nu, SP_IN_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		struct st_cols c;
		MYSQL_STMT *s;
		for (size_t i = 0; i < ch.k; i++)
			st_arg_str(&ch.a, names[ch.off + i]);
		st_arg_nulls(&ch.a, SP_IN_CHUNK - ch.k);
		st_cols_init(&c, "sslldds");
		rc = st_run_n(db, SP_SID(SP_QUEUES_IN), SQL_QUEUES_IN,
			      SP_IN_CHUNK, &ch.a, &c, &s);
		while (st_row(db, s, &rc)) {
			char *name = NULL;
			rc = st_col_str(db, s, &c, 0, &tmp, &name);
			if (rc != GB_OK || name == NULL)
				continue;
			struct qinfo key = {.name = name};
			struct qinfo *hit = bsearch(&key, qi, nu, sizeof(*qi),
						    cmp_qinfo);
			if (hit == NULL)
				continue;
			hit->found = 1;
			rc = queue_attrs(db, s, &c, 1, a, &hit->q,
					 &hit->workflow);
		}
		st_done(s);
	}
	st_chunks_free(&ch);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		struct sp_job *j = &jobs[i];
		j->j.workflow = "";
		if (j->queue == NULL)
			continue;
		struct qinfo key = {.name = j->queue};
		struct qinfo *hit =
			bsearch(&key, qi, nu, sizeof(*qi), cmp_qinfo);
		if (hit && hit->found) {
			j->has_queue_row = 1;
			j->q = hit->q;
			j->j.workflow = hit->workflow;
		}
	}
	arena_free(&tmp);
	free(names);
	free(qi);
	return rc;
}

/* Run prepared job query `s` (SP_JOB_COLS) and read its rows into an
** arena array (queues not filled). */
static int jobs_read(struct st_db *db, MYSQL_STMT *s, struct st_args *args,
		     struct arena *a, struct sp_job **out, size_t *n)
{
	struct st_cols c;
	st_cols_init(&c, SP_JOB_SPEC);
	int rc = st_run(db, s, args, &c);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, k = 0;
	struct sp_job *v =
		st_result_array(db, s, a, sizeof(*v), "jobs", &rows, &rc);
	while (k < rows && st_row(db, s, &rc)) {
		struct sp_job *j = &v[k];
		char *rid = NULL, *queue = NULL, *gshare = NULL;
		int st = col_status(&c, 5), bad = 0;
		j->j.job_id = st_col_ll(&c, 0);
		j->task_id = st_col_ll(&c, 1);
		j->j.status = (enum to_status)st;
		j->j.status_since = st_col_ll(&c, 6);
		j->j.created_at = st_col_ll(&c, 7);
		j->j.last_heartbeat = st_col_ll(&c, 8);
		j->j.current_priority = col_int(&c, 9, &bad);
		j->j.own_stageout = !st_col_isnull(&c, 10) && c.len[10] > 0;
		j->attempt = col_int(&c, 11, &bad);
		rc = st_col_str(db, s, &c, 2, a, &rid);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 3, a, &queue);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 4, a, &gshare);
		if (rc == GB_OK && (st < 0 || bad))
			rc = st_failf(db, GB_ERANGE,
				      "job %lld: status or a number out of "
				      "range",
				      j->j.job_id);
		j->request_id = rid;
		j->queue = queue;
		j->gshare = gshare;
		k++;
	}
	st_done(s);
	if (rc == GB_OK) {
		*out = v;
		*n = k;
	}
	return rc;
}

int st_panda_due(struct st_db *db, long long now, size_t max,
		 struct arena *a, struct sp_job **out, size_t *n)
{
	if (db == NULL || a == NULL || out == NULL || n == NULL)
		return GB_EINVAL;
	*out = NULL;
	*n = 0;
	int rc = need_txn(db, "st_panda_due");
	if (rc != GB_OK || max == 0)
		return rc;
	struct st_args args;
	st_args_init(&args);
	st_arg_ll(&args, now);
	st_arg_ll(&args, st_limit(max));
	MYSQL_STMT *s;
	rc = st_prepared(db, SP_SID(SP_DUE), SQL_DUE, &s);
	if (rc == GB_OK)
		rc = jobs_read(db, s, &args, a, out, n);
	if (rc == GB_OK)
		rc = fill_queues(db, a, *out, *n);
	return rc;
}

int st_panda_recheck(struct st_db *db, long long job_id, long long at)
{
	if (db == NULL)
		return GB_EINVAL;
	int rc = need_txn(db, "st_panda_recheck");
	/* An unchanged time counts as found. */
	if (rc == GB_OK)
		rc = st_update_id(db, SP_SID(SP_RECHECK), SQL_RECHECK, at,
				  job_id, "job");
	return rc;
}

/* The job's row as timeout_apply needs it (already locked by the scan;
** locked again here to read what is stored, not what the caller holds). */
struct apply_row {
	enum to_status status;
	char *queue, *gshare, *request_id;
	int attempt;
};

static int apply_lock(struct st_db *db, long long id, struct arena *a,
		      struct apply_row *r)
{
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, SP_SID(SP_APPLY_LOCK), SQL_APPLY_LOCK,
			      ST_ID(id), "sssls", &c, &s);
	int got = st_row(db, s, &rc), bad = 0;
	if (!got && rc == GB_OK)
		rc = st_failf(db, GB_ENOTFOUND, "job %lld not found", id);
	int st = got ? col_status(&c, 0) : -1;
	if (rc == GB_OK) {
		r->status = (enum to_status)st;
		r->attempt = col_int(&c, 3, &bad);
		rc = st_col_str(db, s, &c, 1, a, &r->queue);
	}
	if (rc == GB_OK)
		rc = st_col_str(db, s, &c, 2, a, &r->gshare);
	if (rc == GB_OK)
		rc = st_col_str(db, s, &c, 4, a, &r->request_id);
	if (rc == GB_OK && (st < 0 || bad || r->request_id == NULL))
		rc = st_failf(db, GB_ERANGE, "job %lld: row out of range", id);
	st_done(s);
	return rc;
}

int st_panda_timeout_apply(struct st_db *db, const struct sp_job *j,
			   const struct to_verdict *v, const char *request_id,
			   const char *detail_json, const struct prm_set *set,
			   long long now, long long *decision_id,
			   const char **new_status, int *attempt,
			   int *no_request)
{
	if (db == NULL || j == NULL || v == NULL || request_id == NULL ||
	    detail_json == NULL || decision_id == NULL ||
	    new_status == NULL || attempt == NULL || no_request == NULL)
		return GB_EINVAL;
	*decision_id = 0;
	*new_status = NULL;
	*attempt = 0;
	*no_request = 0;
	enum to_status ns;
	switch (v->action) {
	case TO_ACT_REASSIGN: ns = TO_ST_PENDING; break;
	case TO_ACT_FAIL: ns = TO_ST_FAILED; break;
	case TO_ACT_KILL: ns = TO_ST_CANCELLED; break;
	default: return GB_EINVAL;
	}
	int rebro = v->rule && strcmp(v->rule, "TO-13") == 0;
	long long id = j->j.job_id;
	int rc = need_txn(db, "st_panda_timeout_apply");
	if (rc != GB_OK)
		return rc;
	struct arena a;
	arena_init(&a, SP_TMP_CAP);
	struct apply_row r;
	memset(&r, 0, sizeof(r));
	rc = apply_lock(db, id, &a, &r);
	/* The verdict was made for the status the caller locked; anything
	** else means the caller's row is not this transaction's. */
	if (rc == GB_OK && r.status != j->j.status)
		rc = st_failf(db, GB_ESTATE,
			      "job %lld is %s, the verdict was for %s", id,
			      to_status_name(r.status),
			      to_status_name(j->j.status));
	if (rc == GB_OK && is_final(r.status))
		rc = st_failf(db, GB_ESTATE, "job %lld is already %s", id,
			      to_status_name(r.status));
	/* Checked before any write: the caller may skip the job and go on. */
	if (rc == GB_OK && ns != TO_ST_PENDING && !queue_fits(ns, r.queue != NULL))
		rc = st_failf(db, GB_ESTATE,
			      "job %lld: ck_jobs_queue allows no %s job "
			      "without a queue",
			      id, to_status_name(ns));
	char subject[32];
	snprintf(subject, sizeof(subject), "%lld", id);
	struct st_args args;
	MYSQL_STMT *s;
	long long did = 0;
	if (rc == GB_OK) {
		struct st_dec_row row = {
			.kind = rebro ? "rebro" : "timeout",
			.subject = subject,
			.request_id = request_id,
			.outcome = to_action_name(v->action),
			.chosen = to_status_name(ns),
			.decided_at = now,
			.detail = detail_json,
		};
		rc = st_dec_write(db, &row);
		did = row.id;
	}
	if (rc == GB_OK && ns == TO_ST_PENDING) {
		struct to_job tj = {
			.job_id = id,
			.status = TO_ST_PENDING,
			.status_since = now,
			.created_at = j->j.created_at,
			.current_priority = j->j.current_priority,
		};
		long long at = 0;
		rc = next_check(&tj, NULL, set, now, &at);
		if (rc != GB_OK)
			rc = st_failf(db, rc, "job %lld: no check time", id);
		if (rc == GB_OK) {
			st_args_init(&args);
			st_arg_ll(&args, now);
			st_arg_ll(&args, now);
			st_arg_ll(&args, now);
			bind_check(&args, at);
			st_arg_ll(&args, did);
			st_arg_ll(&args, now);
			st_arg_ll(&args, id);
			rc = st_exec(db, SP_SID(SP_REASSIGN), SQL_REASSIGN,
				     &args, &s);
		}
		if (rc == GB_OK) {
			st_args_init(&args);
			st_arg_ll(&args, now);
			st_arg_ll(&args, now);
			st_arg_str(&args, r.request_id);
			rc = st_exec(db, SP_SID(SP_REQUEST_PENDING),
				     SQL_REQUEST_PENDING, &args, &s);
			if (rc == GB_OK && mysql_stmt_affected_rows(s) == 0)
				*no_request = 1;
		}
	} else if (rc == GB_OK) {
		st_args_init(&args);
		st_arg_str(&args, to_status_name(ns));
		st_arg_ll(&args, now);
		st_arg_ll(&args, now);
		st_arg_ll(&args, did);
		st_arg_ll(&args, now);
		st_arg_ll(&args, id);
		rc = st_exec(db, SP_SID(SP_FINISH), SQL_FINISH, &args, &s);
	}
	if (rc == GB_OK)
		rc = counts_move(db, r.queue, r.gshare, (int)r.status, -1);
	if (rc == GB_OK) {
		*decision_id = did;
		*new_status = to_status_name(ns);
		*attempt = r.attempt + (ns == TO_ST_PENDING);
	} else {
		*no_request = 0;
	}
	arena_free(&a);
	return rc;
}

/* ---- fast rebrokerage ---------------------------------------------------- */

int st_panda_loads(struct st_db *db, struct arena *a, struct sp_load **out,
		   size_t *n)
{
	if (db == NULL || a == NULL || out == NULL || n == NULL)
		return GB_EINVAL;
	*out = NULL;
	*n = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "ssddlll");
	int rc = st_query(db, SP_SID(SP_LOADS), SQL_LOADS, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, k = 0;
	struct sp_load *v =
		st_result_array(db, s, a, sizeof(*v), "loads", &rows, &rc);
	while (k < rows && st_row(db, s, &rc)) {
		struct sp_load *l = &v[k];
		char *queue = NULL, *gshare = NULL;
		rc = st_col_str(db, s, &c, 0, a, &queue);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 1, a, &gshare);
		l->queue = queue;
		l->gshare = gshare;
		l->nqueue = st_col_dbl(&c, 2);
		l->nrun = st_col_dbl(&c, 3);
		l->has_nslots = st_col_ll(&c, 4) != 0;
		l->exempt = st_col_ll(&c, 5) != 0;
		l->known = st_col_ll(&c, 6) != 0;
		k++;
	}
	st_done(s);
	if (rc == GB_OK) {
		*out = v;
		*n = k;
	}
	return rc;
}

int st_panda_load_lock(struct st_db *db, const char *queue,
		       const char *gshare, double *nqueue, double *nrun,
		       double *nqueue_total)
{
	if (db == NULL || queue == NULL || gshare == NULL || nqueue == NULL ||
	    nrun == NULL || nqueue_total == NULL)
		return GB_EINVAL;
	*nqueue = *nrun = *nqueue_total = 0;
	int rc = need_txn(db, "st_panda_load_lock");
	if (rc != GB_OK)
		return rc;
	struct st_args args;
	struct st_cols c;
	MYSQL_STMT *s;
	st_args_init(&args);
	st_arg_str(&args, queue);
	st_arg_str(&args, gshare);
	st_cols_init(&c, "dd");
	rc = st_query(db, SP_SID(SP_LOAD_LOCK), SQL_LOAD_LOCK, &args, &c, &s);
	if (!st_row(db, s, &rc) && rc == GB_OK)
		rc = st_failf(db, GB_ENOTFOUND, "no counts for %s/%s", queue,
			      gshare);
	if (rc == GB_OK) {
		*nqueue = st_col_dbl(&c, 0);
		*nrun = st_col_dbl(&c, 1);
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	/* Read after the lock, so this queue's part is the locked value. */
	rc = st_query_key(db, SP_SID(SP_LOAD_TOTAL), SQL_LOAD_TOTAL,
			  ST_TEXT(gshare), "d", &c, &s);
	if (st_row(db, s, &rc))
		*nqueue_total = st_col_dbl(&c, 0);
	st_done(s);
	return rc;
}

/* Up to `want` candidate ids after `after`, oldest first (no locks). */
static int rebro_cands(struct st_db *db, const char *queue,
		       const char *gshare, long long after, size_t want,
		       long long *ids, size_t *n)
{
	struct st_args args;
	st_args_init(&args);
	st_arg_str(&args, queue);
	st_arg_str(&args, gshare);
	st_arg_ll(&args, after);
	st_arg_ll(&args, (long long)want);
	return st_query_ids(db, SP_SID(SP_REBRO_CAND), SQL_REBRO_CAND, &args,
			    want, ids, n);
}

#define SP_PICK_BATCH 1024 /* candidates read per round */

int st_panda_rebro_pick(struct st_db *db, const char *queue,
			const char *gshare, size_t max, struct arena *a,
			struct sp_job **out, size_t *n)
{
	if (db == NULL || queue == NULL || gshare == NULL || a == NULL ||
	    out == NULL || n == NULL)
		return GB_EINVAL;
	*out = NULL;
	*n = 0;
	int rc = need_txn(db, "st_panda_rebro_pick");
	if (rc != GB_OK || max == 0)
		return rc;
	long long *ids = malloc(SP_PICK_BATCH * sizeof(*ids));
	struct sp_job *acc = NULL;
	size_t got = 0, cap = 0;
	long long after = LLONG_MIN;
	if (ids == NULL)
		rc = st_failf(db, GB_ENOMEM, "out of memory");
	for (int more = 1; rc == GB_OK && more && got < max;) {
		size_t want = max - got < SP_PICK_BATCH ? max - got
							: SP_PICK_BATCH;
		size_t nc = 0;
		rc = rebro_cands(db, queue, gshare, after, want, ids, &nc);
		more = nc == want;
		if (nc)
			after = ids[nc - 1];
		/* Lock no more ids than still wanted: each may be returned. */
		for (size_t i = 0, k; rc == GB_OK && i < nc && got < max;
		     i += k) {
			k = nc - i;
			if (k > SP_IN_CHUNK)
				k = SP_IN_CHUNK;
			if (k > max - got)
				k = max - got;
			struct st_args args;
			st_args_init(&args);
			st_arg_ids(&args, ids + i, k, SP_IN_CHUNK);
			st_arg_str(&args, queue);
			st_arg_str(&args, gshare);
			struct sp_job *v = NULL;
			size_t nv = 0;
			MYSQL_STMT *s;
			rc = st_prepared_n(db, SP_SID(SP_REBRO_LOCK),
					   SQL_REBRO_LOCK, SP_IN_CHUNK, 0, &s);
			if (rc == GB_OK)
				rc = jobs_read(db, s, &args, a, &v, &nv);
			if (rc == GB_OK && got + nv > cap) {
				size_t nc2 = cap ? 2 * cap : 64;
				while (nc2 < got + nv)
					nc2 *= 2;
				struct sp_job *p =
					realloc(acc, nc2 * sizeof(*acc));
				if (p == NULL)
					rc = st_failf(db, GB_ENOMEM,
						      "out of memory");
				else
					acc = p, cap = nc2;
			}
			if (rc == GB_OK && nv)
				memcpy(acc + got, v, nv * sizeof(*v));
			got += rc == GB_OK ? nv : 0;
		}
	}
	struct sp_job *res = NULL;
	if (rc == GB_OK && got) {
		res = arena_alloc(a, got * sizeof(*res));
		if (res == NULL)
			rc = st_failf(db, GB_ETOOBIG,
				      "%zu jobs do not fit the arena", got);
		else
			memcpy(res, acc, got * sizeof(*res));
	}
	if (rc == GB_OK)
		rc = fill_queues(db, a, res, got);
	if (rc == GB_OK) {
		*out = res;
		*n = got;
	}
	free(acc);
	free(ids);
	return rc;
}
