/*
** store_analysis.c — MariaDB for the analysis brokerage (store_analysis.h): the
** state one analysis request is decided on (the owner's load, quota and
** share, the task's class, and per queue the owner's jobs, the number of
** owners, the to-running rate and the task's recent outcomes), and the
** replacement of the analysis tables from a grid file.
**
** Why aggregates in SQL: the jobs table holds every job of the life cycle,
** far more rows than queues. Each figure is one GROUP BY over an index of
** 0005 (idx_jobs_user / idx_jobs_group for the owner, idx_jobs_user again
** for the distinct owners per queue, idx_jobs_started for the starts,
** idx_jobs_task for the task's outcomes), so a decision reads one row per
** queue and figure, never the jobs themselves. The gshare's grid-wide
** counts (AJ-11) are one SUM over queue_counts, which holds a row per
** queue and gshare, not per job.
**
** The per-queue rows of the four queries are collected in one heap array,
** sorted by queue name and merged (each query fills its own fields, so
** merging is adding), then copied into the caller's arena: one
** gm_analysis_queue per queue that has any figure, names sorted.
**
** Which analysis_owners row counts for what (the README's choices): the
** load figures (AJ-01, AJ-02) come from the owner's row, the working
** group's when the request names one; the hi-site slots (AJ-04) and the
** disk quota (AJ-03) are the user's own (analysis.h: "the user's running
** slots", "the user's global disk quota"), so they always come from the
** user's row.
*/
#include "store/store_internal.h"
#include "store/store_analysis.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"

/* ---- statements ---------------------------------------------------------- */

enum sa_slot {
	SA_OWNER_USER = 0,
	SA_OWNER_GROUP,
	SA_OWNER_ROW,
	SA_HI_SLOTS,
	SA_SHARE,
	SA_CLASS,
	SA_NUSERS,
	SA_TRR,
	SA_TASK,
	SA_GRID,
	SA_DEL_OWNERS,
	SA_DEL_SHARES,
	SA_DEL_CLASSES,
	SA_INS_OWNER,
	SA_INS_SHARE,
	SA_INS_CLASS,
	SA_NSLOTS
};
_Static_assert(ST_SID_ANAL_BASE + SA_NSLOTS <= ST_SID_ANAL_LAST + 1,
	       "store_internal.h reserves too few analysis statement slots");
#define SA_SID(slot) ((enum st_sid)(ST_SID_ANAL_BASE + (slot)))

/* queued = these; running = running. pending and throttled jobs have no
** queue and count for nothing (store_analysis.h). */
#define SA_QUEUED "'defined', 'assigned', 'activated', 'sent', 'starting'"
#define SA_ACTIVE SA_QUEUED ", 'running'"
/* Per queue: running jobs, queued jobs, running cores, queued cores. */
#define SA_OWNER_SUMS                                                         \
	"SELECT queue, SUM(status = 'running'), SUM(status <> 'running'), "   \
	"SUM(IF(status = 'running', cores, 0)), "                             \
	"SUM(IF(status <> 'running', cores, 0)) FROM jobs WHERE "

static const char SQL_OWNER_USER[] =
	SA_OWNER_SUMS "user_name = ? AND status IN (" SA_ACTIVE ") "
		      "GROUP BY queue";
static const char SQL_OWNER_GROUP[] =
	SA_OWNER_SUMS "working_group = ? AND status IN (" SA_ACTIVE ") "
		      "GROUP BY queue";
static const char SQL_OWNER_ROW[] =
	"SELECT running_jobs, queued_jobs, running_cores, queued_cores, "
	"hi_site_slots, quota_used_gb, quota_gb FROM analysis_owners "
	"WHERE kind = ? AND name = ?";
static const char SQL_HI_SLOTS[] =
	"SELECT COALESCE(SUM(j.cores), 0) FROM jobs j JOIN queues q ON "
	"q.name = j.queue WHERE j.user_name = ? AND j.status = 'running' "
	"AND q.site_class = 'hi'";
static const char SQL_SHARE[] =
	"SELECT target, `usage` FROM share_usage WHERE gshare = ?";
static const char SQL_CLASS[] =
	"SELECT class FROM task_classes WHERE task_id = ?";
/* Every queue with active analysis jobs: a candidate needs its nusers
** whether or not the owner has jobs there. */
static const char SQL_NUSERS[] =
	"SELECT queue, COUNT(DISTINCT user_name) FROM jobs WHERE user_name "
	"IS NOT NULL AND status IN (" SA_ACTIVE ") GROUP BY queue";
/* A job reassigned after its start has no queue: its start is not
** anyone's any more. */
static const char SQL_TRR[] =
	"SELECT queue, COUNT(*) FROM jobs WHERE started_at > ? AND "
	"started_at <= ? AND queue IS NOT NULL GROUP BY queue";
static const char SQL_TASK[] =
	"SELECT queue, SUM(status = 'failed'), SUM(status = 'closed'), "
	"SUM(status = 'finished') FROM jobs WHERE task_id = ? AND status IN "
	"('failed', 'closed', 'finished') AND status_since > ? AND "
	"status_since <= ? AND queue IS NOT NULL GROUP BY queue";

/* AJ-11: the gshare at every queue of the grid, from the same
** queue_counts rows as the per-queue counts the engine compares. */
static const char SQL_GRID[] =
	"SELECT COALESCE(SUM(defined + assigned + activated + `starting`), 0), "
	"COALESCE(SUM(running), 0) FROM queue_counts WHERE gshare = ?";

static const char *const SQL_WIPE[] = {
	"DELETE FROM analysis_owners",
	"DELETE FROM share_usage",
	"DELETE FROM task_classes",
};
static const char SQL_INS_OWNER[] =
	"INSERT INTO analysis_owners (name, kind, running_jobs, queued_jobs, "
	"running_cores, queued_cores, hi_site_slots, quota_used_gb, quota_gb, "
	"updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char SQL_INS_SHARE[] =
	"INSERT INTO share_usage (gshare, target, `usage`, updated_at) "
	"VALUES (?, ?, ?, ?)";
static const char SQL_INS_CLASS[] =
	"INSERT INTO task_classes (task_id, class, updated_at) "
	"VALUES (?, ?, ?)";

#define SA_TMP_CAP (64u << 20) /* queue names while merging */
#define SA_HOUR 3600.0

/* ---- per-queue rows ------------------------------------------------------ */

/* The rows of every per-queue query, merged at the end. */
struct sa_vec {
	struct gm_analysis_queue *v;
	size_t n, cap;
	struct arena names; /* temporary: final names go to the caller's */
};

static int vec_push(struct st_db *db, struct sa_vec *x,
		    struct gm_analysis_queue **out)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		struct gm_analysis_queue *p = realloc(x->v, cap * sizeof(*p));
		if (p == NULL)
			return st_failf(db, GB_ENOMEM, "out of memory");
		x->v = p;
		x->cap = cap;
	}
	*out = &x->v[x->n++];
	memset(*out, 0, sizeof(**out));
	return GB_OK;
}

/*
** Run a per-queue query: column 0 the queue, then `n` numbers; number k
** goes to the double at offset off[k] of a new gm_analysis_queue (SIZE_MAX:
** not kept) and, when `tot` is given, is added to tot[k].
*/
static int per_queue(struct st_db *db, enum sa_slot slot, const char *sql,
		     struct st_args *args, const size_t *off, unsigned n,
		     struct sa_vec *x, double *tot)
{
	char spec[ST_MAX_COLS + 1] = "s";
	for (unsigned k = 0; k < n; k++)
		spec[1 + k] = 'd';
	spec[1 + n] = '\0';
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, spec);
	int rc = st_query(db, SA_SID(slot), sql, args, &c, &s);
	while (st_row(db, s, &rc)) {
		char *name = NULL;
		rc = st_col_str(db, s, &c, 0, &x->names, &name);
		if (rc == GB_ETOOBIG)
			rc = st_failf(db, GB_ENOMEM, "queue names: out of "
						     "memory");
		if (rc != GB_OK)
			break;
		struct gm_analysis_queue *q = NULL;
		if (name == NULL)
			rc = st_failf(db, GB_ERANGE,
				      "jobs: an active job has no queue");
		else
			rc = vec_push(db, x, &q);
		for (unsigned k = 0; rc == GB_OK && k < n; k++) {
			double v = st_col_isnull(&c, 1 + k)
					   ? 0
					   : st_col_dbl(&c, 1 + k);
			if (!st_finite_nonneg(v))
				rc = st_failf(db, GB_ERANGE,
					      "jobs at %s: a negative count "
					      "(cores?)",
					      name);
			else if (off[k] != SIZE_MAX)
				*(double *)((char *)q + off[k]) = v;
			if (tot)
				tot[k] += v;
		}
		if (rc == GB_OK)
			q->name = name;
	}
	st_done(s);
	return rc;
}

static int cmp_aq(const void *a, const void *b)
{
	const struct gm_analysis_queue *x = a, *y = b;
	return strcmp(x->name, y->name);
}

/* Sort, merge the rows of one queue, and copy the result into `a`. */
static int vec_finish(struct st_db *db, struct sa_vec *x, struct arena *a,
		      struct gm_analysis_state *out)
{
	size_t m = 0;
	if (x->n)
		qsort(x->v, x->n, sizeof(*x->v), cmp_aq);
	for (size_t i = 0; i < x->n; i++) {
		struct gm_analysis_queue *q = &x->v[i];
		if (m && strcmp(x->v[m - 1].name, q->name) == 0) {
			struct gm_analysis_queue *p = &x->v[m - 1];
			p->trr += q->trr;
			p->nq_user += q->nq_user;
			p->nr_user += q->nr_user;
			p->nusers += q->nusers;
			p->task_failed += q->task_failed;
			p->task_closed += q->task_closed;
			p->task_finished += q->task_finished;
		} else {
			x->v[m++] = *q;
		}
	}
	struct gm_analysis_queue *r = m ? arena_alloc(a, m * sizeof(*r)) : NULL;
	if (m && r == NULL)
		return st_failf(db, GB_ETOOBIG,
				"%zu analysis queues do not fit the request's "
				"memory",
				m);
	for (size_t i = 0; i < m; i++) {
		r[i] = x->v[i];
		/* The query counted starts; trr is per hour (AJ-21). */
		r[i].trr /= AN_TRR_WINDOW_H;
		r[i].name = arena_strdup(a, x->v[i].name);
		if (r[i].name == NULL)
			return st_failf(db, GB_ETOOBIG,
					"analysis queue names do not fit the "
					"request's memory");
	}
	out->queues = r;
	out->nqueues = m;
	return GB_OK;
}

/* ---- owner, share, class ------------------------------------------------- */

/* The analysis_owners row of (kind, name) into v[0..6] (quota_gb NAN when
** unlimited); all zero and quota NAN without a row. */
static int owner_row(struct st_db *db, const char *kind, const char *name,
		     double *v)
{
	static const char *const what[] = {
		"running_jobs",	 "queued_jobs",	  "running_cores",
		"queued_cores",	 "hi_site_slots", "quota_used_gb",
		"quota_gb"};
	struct st_args args;
	struct st_cols c;
	MYSQL_STMT *s;
	memset(v, 0, 7 * sizeof(*v));
	v[6] = NAN;
	st_args_init(&args);
	st_arg_str(&args, kind);
	st_arg_str(&args, name);
	st_cols_init(&c, "ddddddd");
	int rc = st_query(db, SA_SID(SA_OWNER_ROW), SQL_OWNER_ROW, &args, &c,
			  &s);
	int got = st_row(db, s, &rc);
	for (unsigned i = 0; rc == GB_OK && got && i < 7; i++) {
		v[i] = i == 6 && st_col_isnull(&c, i) ? NAN : st_col_dbl(&c, i);
		if (!(st_finite_nonneg(v[i]) || (i == 6 && isnan(v[i]))))
			rc = st_failf(db, GB_ERANGE,
				      "analysis_owners row %s %s: %s out of "
				      "range",
				      kind, name, what[i]);
	}
	st_done(s);
	return rc;
}

/* The one row of a query by one key, its columns left in `c`; *got 0
** without a row. */
static int one_value(struct st_db *db, enum sa_slot slot, const char *sql,
		     struct st_key key, const char *spec, struct st_cols *c,
		     int *got)
{
	MYSQL_STMT *s;
	int rc = st_query_key(db, SA_SID(slot), sql, key, spec, c, &s);
	*got = st_row(db, s, &rc);
	st_done(s);
	return rc;
}

/* The owner's totals, quota, hi-site slots, share and the task's class. */
static int user_state(struct st_db *db, const struct gm_request *r,
		      const double *tot, struct an_user_load *u,
		      enum an_task_class *tclass)
{
	const char *group = r->an.working_group;
	int is_group = group && group[0];
	double own[7], usr[7];
	int rc = owner_row(db, "user", r->an.user, usr);
	if (rc == GB_OK && is_group)
		rc = owner_row(db, "group", group, own);
	if (rc != GB_OK)
		return rc;
	const double *row = is_group ? own : usr;
	u->working_group = is_group;
	u->running_jobs = tot[0] + row[0];
	u->queued_jobs = tot[1] + row[1];
	u->running_cores = tot[2] + row[2];
	u->queued_cores = tot[3] + row[3];
	u->quota_exceeded = !isnan(usr[6]) && usr[5] > usr[6];

	struct st_cols c;
	int got = 0;
	rc = one_value(db, SA_HI_SLOTS, SQL_HI_SLOTS, ST_TEXT(r->an.user), "d",
		       &c, &got);
	double hi = got && !st_col_isnull(&c, 0) ? st_col_dbl(&c, 0) : 0;
	if (rc == GB_OK && !st_finite_nonneg(hi))
		rc = st_failf(db, GB_ERANGE, "jobs of %s: negative cores",
			      r->an.user);
	u->hi_site_slots = hi + usr[4];

	/* AJ-04 reads the User Analysis share only; without a row the task
	** is immune (the caller logs it). */
	if (rc == GB_OK && strcmp(r->t.gshare, "User Analysis") == 0)
		rc = one_value(db, SA_SHARE, SQL_SHARE, ST_TEXT(r->t.gshare),
			       "dd", &c, &got);
	else
		got = 0;
	if (rc == GB_OK && got) {
		double target = st_col_dbl(&c, 0), use = st_col_dbl(&c, 1);
		if (!(isfinite(target) && target > 0) || !st_finite_nonneg(use))
			return st_failf(db, GB_ERANGE,
					"share_usage row %s: out of range",
					r->t.gshare);
		u->user_analysis = 1;
		u->share_target = target;
		u->share_usage = use;
	}

	if (rc == GB_OK)
		rc = one_value(db, SA_CLASS, SQL_CLASS, ST_ID(r->t.task_id),
			       "s", &c, &got);
	if (rc != GB_OK)
		return rc;
	/* An ENUM word: always within the fixed buffer. */
	char word[8] = "";
	if (got && !st_col_isnull(&c, 0))
		snprintf(word, sizeof(word), "%.*s",
			 (int)(c.len[0] < sizeof(word) ? c.len[0] : 0),
			 c.s[0]);
	int cls = got ? gm_task_class_parse(word) : (int)AN_CLASS_B;
	if (cls < 0)
		return st_failf(db, GB_ERANGE, "task_classes row %lld: bad "
					       "class",
				r->t.task_id);
	*tclass = (enum an_task_class)cls;
	u->task_class = *tclass;
	return GB_OK;
}

/* AJ-11: the gshare's grid-wide queued and running jobs. */
static int grid_state(struct st_db *db, const char *gshare,
		      struct gm_analysis_state *out)
{
	struct st_cols c;
	int got = 0;
	int rc = one_value(db, SA_GRID, SQL_GRID, ST_TEXT(gshare), "dd", &c,
			   &got);
	if (rc != GB_OK)
		return rc;
	out->grid_queued = got && !st_col_isnull(&c, 0) ? st_col_dbl(&c, 0) : 0;
	out->grid_running = got && !st_col_isnull(&c, 1) ? st_col_dbl(&c, 1) : 0;
	if (!st_finite_nonneg(out->grid_queued) ||
	    !st_finite_nonneg(out->grid_running))
		return st_failf(db, GB_ERANGE,
				"queue_counts of %s: a negative sum", gshare);
	return GB_OK;
}

/* ---- the state of one request -------------------------------------------- */

#define AQ(f) offsetof(struct gm_analysis_queue, f)

int st_analysis_state(struct st_db *db, const struct gm_request *r,
		  const struct prm_set *set, long long now, struct arena *a,
		  struct gm_analysis_state *out, enum an_task_class *tclass)
{
	if (db == NULL || r == NULL || a == NULL || out == NULL ||
	    tclass == NULL || !r->an.is_analysis || r->an.user == NULL ||
	    r->t.gshare == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	*tclass = AN_CLASS_B;
	double tw = prm_get(set, "TW_DONE_JOB_STAT");
	if (!st_finite_nonneg(tw))
		return st_failf(db, GB_EINVAL, "TW_DONE_JOB_STAT %g", tw);
	/* Integer seconds: t > floor(x) is t > x for an integer t. A window
	** longer than the clock's past is simply everything. */
	double lo = floor((double)now - tw * SA_HOUR);
	long long tw_lo = lo < -4e18 ? LLONG_MIN / 2 : (long long)lo;

	struct sa_vec x;
	memset(&x, 0, sizeof(x));
	arena_init(&x.names, SA_TMP_CAP);
	const char *group = r->an.working_group;
	int is_group = group && group[0];
	double tot[4] = {0, 0, 0, 0};
	struct st_args args;

	static const size_t off_owner[] = {AQ(nr_user), AQ(nq_user), SIZE_MAX,
					   SIZE_MAX};
	st_args_init(&args);
	st_arg_str(&args, is_group ? group : r->an.user);
	int rc = per_queue(db, is_group ? SA_OWNER_GROUP : SA_OWNER_USER,
			   is_group ? SQL_OWNER_GROUP : SQL_OWNER_USER, &args,
			   off_owner, 4, &x, tot);

	static const size_t off_nusers[] = {AQ(nusers)};
	if (rc == GB_OK)
		rc = per_queue(db, SA_NUSERS, SQL_NUSERS, NULL, off_nusers, 1,
			       &x, NULL);

	static const size_t off_trr[] = {AQ(trr)};
	st_args_init(&args);
	st_arg_ll(&args, now - (long long)(AN_TRR_WINDOW_H * SA_HOUR));
	st_arg_ll(&args, now);
	if (rc == GB_OK)
		rc = per_queue(db, SA_TRR, SQL_TRR, &args, off_trr, 1, &x,
			       NULL);

	static const size_t off_task[] = {AQ(task_failed), AQ(task_closed),
					  AQ(task_finished)};
	st_args_init(&args);
	st_arg_ll(&args, r->t.task_id);
	st_arg_ll(&args, tw_lo);
	st_arg_ll(&args, now);
	if (rc == GB_OK)
		rc = per_queue(db, SA_TASK, SQL_TASK, &args, off_task, 3, &x,
			       NULL);

	if (rc == GB_OK)
		rc = grid_state(db, r->t.gshare, out);
	if (rc == GB_OK)
		rc = user_state(db, r, tot, &out->user, tclass);
	if (rc == GB_OK)
		rc = vec_finish(db, &x, a, out);
	free(x.v);
	arena_free(&x.names);
	if (rc != GB_OK) {
		memset(out, 0, sizeof(*out));
		*tclass = AN_CLASS_B;
	}
	return rc;
}

/* ---- replacing the analysis tables --------------------------------------- */

/* Everything st_analysis_save refuses before touching the tables. */
static int save_check(struct st_db *db, const struct gm_analysis_grid *g)
{
	for (size_t i = 0; i < g->nowners; i++) {
		const struct gm_owner *o = &g->owners[i];
		if (o->name == NULL || o->name[0] == '\0')
			return st_failf(db, GB_EINVAL,
					"analysis owner %zu: no name", i);
		const double v[] = {o->running_jobs, o->running_cores,
				    o->queued_jobs,  o->queued_cores,
				    o->hi_site_slots, o->quota_used_gb};
		int ok = isnan(o->quota_gb) || st_finite_nonneg(o->quota_gb);
		for (size_t k = 0; k < sizeof(v) / sizeof(*v); k++)
			ok = ok && st_finite_nonneg(v[k]);
		if (!ok)
			return st_failf(db, GB_EINVAL,
					"analysis %s %s: a negative or NaN "
					"number",
					o->is_group ? "group" : "user",
					o->name);
	}
	for (size_t i = 0; i < g->nshares; i++) {
		const struct gm_share *sh = &g->shares[i];
		if (sh->gshare == NULL || sh->gshare[0] == '\0')
			return st_failf(db, GB_EINVAL,
					"analysis share %zu: no name", i);
		if (!(isfinite(sh->target) && sh->target > 0) ||
		    !st_finite_nonneg(sh->usage))
			return st_failf(db, GB_EINVAL,
					"analysis share %s: target must be > "
					"0, usage >= 0",
					sh->gshare);
	}
	for (size_t i = 0; i < g->nclasses; i++)
		if (gm_task_class_name(g->classes[i].cls) == NULL)
			return st_failf(db, GB_EINVAL,
					"task class of %lld: out of range",
					g->classes[i].task_id);
	return GB_OK;
}

static int save_rows(struct st_db *db, const struct gm_analysis_grid *g,
		     long long now)
{
	struct st_args a;
	MYSQL_STMT *s;
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < 3; i++)
		rc = st_exec(db, SA_SID(SA_DEL_OWNERS + i), SQL_WIPE[i], NULL,
			     &s);
	for (size_t i = 0; rc == GB_OK && i < g->nowners; i++) {
		const struct gm_owner *o = &g->owners[i];
		st_args_init(&a);
		st_arg_str(&a, o->name);
		st_arg_str(&a, o->is_group ? "group" : "user");
		st_arg_dbl(&a, o->running_jobs);
		st_arg_dbl(&a, o->queued_jobs);
		st_arg_dbl(&a, o->running_cores);
		st_arg_dbl(&a, o->queued_cores);
		st_arg_dbl(&a, o->hi_site_slots);
		st_arg_dbl(&a, o->quota_used_gb);
		if (isnan(o->quota_gb))
			st_arg_null(&a);
		else
			st_arg_dbl(&a, o->quota_gb);
		st_arg_ll(&a, now);
		rc = st_exec(db, SA_SID(SA_INS_OWNER), SQL_INS_OWNER, &a, &s);
	}
	for (size_t i = 0; rc == GB_OK && i < g->nshares; i++) {
		st_args_init(&a);
		st_arg_str(&a, g->shares[i].gshare);
		st_arg_dbl(&a, g->shares[i].target);
		st_arg_dbl(&a, g->shares[i].usage);
		st_arg_ll(&a, now);
		rc = st_exec(db, SA_SID(SA_INS_SHARE), SQL_INS_SHARE, &a, &s);
	}
	for (size_t i = 0; rc == GB_OK && i < g->nclasses; i++) {
		st_args_init(&a);
		st_arg_ll(&a, g->classes[i].task_id);
		st_arg_str(&a, gm_task_class_name(g->classes[i].cls));
		st_arg_ll(&a, now);
		rc = st_exec(db, SA_SID(SA_INS_CLASS), SQL_INS_CLASS, &a, &s);
	}
	return rc;
}

int st_analysis_save(struct st_db *db, const struct gm_analysis_grid *g,
		 long long now)
{
	if (db == NULL || g == NULL || (g->nowners && g->owners == NULL) ||
	    (g->nshares && g->shares == NULL) ||
	    (g->nclasses && g->classes == NULL))
		return GB_EINVAL;
	int rc = save_check(db, g);
	if (rc != GB_OK)
		return rc;
	/* START TRANSACTION would silently commit the caller's. */
	rc = st_need_txn(db, 0, "st_analysis_save");
	if (rc != GB_OK)
		return rc;
	rc = st_begin(db);
	if (rc == GB_OK)
		rc = save_rows(db, g, now);
	/* A row the tables refuse (a name twice, a name too long, a CHECK)
	** is the grid file's fault, not the server's. */
	return st_end(db, st_input_error(db, rc, 1));
}
