/*
** store_tq_leader.c — the DIRAC store's slow path: the group shares and
** corrector settings that `gridbroker grid load` saves and every worker
** loads; the job records with their status, which feed the running-job
** history; and what the one leader does every couple of minutes — take
** its lease, save the recomputed priorities, sample and prune the
** history, and delete empty task queues. Shared machinery is in
** store_tq.c (store_tq_internal.h); tables in 0004_taskqueues.sql.
**
** Apart from a job status update (two statements, three when it is
** ignored or takes a waiting job out of its queue) nothing here runs per
** job or per pilot, so plain per-row statements are
** fine, with two exceptions sized for 500 TQs: the priority save writes
** 128 TQs per statement, and the cleanup deletes one TQ per short
** transaction (its locks must not be held across the whole sweep, where
** submissions would queue behind them).
**
** Lock order (see store_tq_match.c): the priority save and the cleanup
** lock task_queues rows in ascending tq_id order and tq_state last, like a
** submission, so the three never wait for each other in a cycle.
*/
#include "store/store_internal.h"
#include "store/store_tq.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_tq_internal.h"

#define STQ_PRIO_CHUNK 128 /* TQs per priority UPDATE (CASE arms) */
#define STQ_LEADER_BYTES 128 /* tq_state.leader is VARCHAR(128) */

/* ---- statements ---------------------------------------------------------- */

static const char *const SQL_CFG_WIPE[] = {
	"DELETE FROM tq_corrector_slices",
	"DELETE FROM tq_corrector_instances",
	"DELETE FROM tq_groups",
	"DELETE FROM tq_cpu_segments",
};
static const char SQL_CFG_INS_GROUP[] =
	"INSERT INTO tq_groups (name, share, job_sharing) VALUES (?, ?, ?)";
static const char SQL_CFG_INS_INST[] =
	"INSERT INTO tq_corrector_instances (name, pos, grp, max_global) "
	"VALUES (?, ?, ?, ?)";
static const char SQL_CFG_INS_SLICE[] =
	"INSERT INTO tq_corrector_slices (instance, name, pos, timespan, "
	"weight, max_correction) VALUES (?, ?, ?, ?, ?, ?)";
static const char SQL_CFG_INS_SEG[] =
	"INSERT INTO tq_cpu_segments (seconds) VALUES (?)";
static const char SQL_CFG_SETTINGS[] =
	"INSERT INTO tq_settings (id, corrections, default_share, updated_at) "
	"VALUES (1, ?, ?, ?) ON DUPLICATE KEY UPDATE "
	"corrections = VALUE(corrections), "
	"default_share = VALUE(default_share), updated_at = VALUE(updated_at)";
static const char SQL_CFG_GET_SETTINGS[] =
	"SELECT corrections, default_share FROM tq_settings WHERE id = 1";
static const char SQL_CFG_GET_GROUPS[] =
	"SELECT name, share, job_sharing FROM tq_groups ORDER BY name";
static const char SQL_CFG_GET_INST[] =
	"SELECT name, grp, max_global FROM tq_corrector_instances "
	"ORDER BY pos";
static const char SQL_CFG_GET_SLICES[] =
	"SELECT s.instance, s.name, s.timespan, s.weight, s.max_correction "
	"FROM tq_corrector_slices s JOIN tq_corrector_instances i "
	"ON i.name = s.instance ORDER BY i.pos, s.pos";
static const char SQL_CFG_GET_SEGS[] =
	"SELECT seconds FROM tq_cpu_segments ORDER BY seconds";
static const char SQL_LEASE[] =
	"UPDATE tq_state SET leader = ?, lease_until = ? WHERE id = 1 AND "
	"(leader IS NULL OR leader = ? OR lease_until < ?)";
static const char SQL_LEASE_RELEASE[] =
	"UPDATE tq_state SET lease_until = 0 WHERE id = 1 AND leader = ?";
static const char SQL_PRIO_STATE[] =
	"SELECT dirty, computed_dirty, computed_at, version FROM tq_state "
	"WHERE id = 1";
/* Padding pairs are NULL: CASE x WHEN NULL never matches, nor IN (NULL). */
static const char SQL_PRIO_UPDATE[] =
	"UPDATE task_queues SET priority = CASE tq_id " ST_PAIRS
	"END WHERE tq_id IN (" ST_LIST ")";
static const char SQL_PRIO_DONE[] =
	"UPDATE tq_state SET computed_dirty = ?, computed_at = ?, "
	"version = version + 1 WHERE id = 1";
static const char SQL_HIST_SAMPLE[] =
	"INSERT INTO wms_history (t, owner_group, owner, running) "
	"SELECT ?, owner_group, owner, COUNT(*) FROM wms_jobs WHERE status = ? "
	"GROUP BY owner_group, owner "
	"ON DUPLICATE KEY UPDATE running = VALUE(running)";
static const char SQL_HIST_LOAD[] =
	"SELECT t, owner_group, owner, running FROM wms_history WHERE t > ? "
	"ORDER BY t, owner_group, owner";
static const char SQL_HIST_PRUNE[] = "DELETE FROM wms_history WHERE t <= ?";
/* A scalar subquery with LIMIT: one index probe per TQ. NOT EXISTS may be
** rewritten into a materialised NOT IN, which reads every waiting job. */
static const char SQL_CLEAN_CANDIDATES[] =
	"SELECT t.tq_id FROM task_queues t WHERE t.created_at <= ? AND "
	"(SELECT j.job_id FROM tq_jobs j WHERE j.tq_id = t.tq_id LIMIT 1) "
	"IS NULL ORDER BY t.tq_id LIMIT ?";
static const char SQL_CLEAN_LOCK[] =
	"SELECT tq_id FROM task_queues WHERE tq_id = ? AND created_at <= ? "
	"FOR UPDATE";
/* A locking read: it waits for a submission's uncommitted jobs. */
static const char SQL_CLEAN_HAS_JOB[] =
	"SELECT job_id FROM tq_jobs WHERE tq_id = ? LIMIT 1 FOR UPDATE";
static const char SQL_CLEAN_DELETE[] = "DELETE FROM task_queues WHERE tq_id = ?";
static const char SQL_DIRTY_BUMP_ONE[] =
	"UPDATE tq_state SET dirty = dirty + 1 WHERE id = 1";

/* The rank test is in the WHERE clause, so the assignments never read a
** column an earlier assignment of the same row changed. */
static const char SQL_JOB_STATUS[] =
	"UPDATE wms_jobs SET status = ?, status_rank = ?, status_at = ?, "
	"site = COALESCE(?, site), updated_at = ? WHERE job_id = ? AND "
	"(status_rank < ? OR (status_rank = ? AND status_at <= ? AND "
	"status_rank < ?))";
/* The job's waiting row goes first, so a status update takes tq_jobs then
** wms_jobs, the order of a claim (st_tq_claim, then st_tq_record). */
static const char SQL_JOB_UNQUEUE[] =
	"DELETE FROM tq_jobs WHERE job_id = ? RETURNING tq_id";
static const char SQL_JOB_EXISTS[] =
	"SELECT job_id FROM wms_jobs WHERE job_id = ?";
static const char SQL_JOB_GET[] =
	"SELECT job_id, tq_id, owner, owner_group, status, site, pilot_id, "
	"match_request, submitted_at, matched_at, status_at FROM wms_jobs "
	"WHERE job_id = ?";

/* ---- small helpers ------------------------------------------------------- */

static int exec1(struct st_db *db, enum stq_slot slot, const char *sql,
		 struct st_args *a)
{
	MYSQL_STMT *s;
	return st_exec(db, STQ_SID(slot), sql, a, &s);
}

/* A statement returning one row of integers; *got 0 when no row. */
static int query_row(struct st_db *db, enum stq_slot slot, const char *sql,
		     struct st_args *a, const char *spec, long long *v,
		     int *got)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, spec);
	int rc = st_query(db, STQ_SID(slot), sql, a, &c, &s);
	*got = st_row(db, s, &rc);
	for (unsigned i = 0; rc == GB_OK && *got && i < c.n; i++)
		v[i] = st_col_ll(&c, i);
	st_done(s);
	return rc;
}

/* ---- configuration ------------------------------------------------------- */

static int cfg_write(struct st_db *db, const struct pr_config *cfg,
		     const long long *seg, size_t nseg, long long now)
{
	int rc = GB_OK;
	for (size_t i = 0; rc == GB_OK && i < 4; i++) {
		MYSQL_STMT *s;
		rc = st_exec(db, STQ_SID(STQ_CFG_DEL_SLICES + i),
			     SQL_CFG_WIPE[i], NULL, &s);
	}
	for (size_t i = 0; rc == GB_OK && i < cfg->ngroups; i++) {
		struct st_args a;
		st_args_init(&a);
		st_arg_str(&a, cfg->groups[i].name);
		st_arg_dbl(&a, cfg->groups[i].share);
		st_arg_ll(&a, cfg->groups[i].job_sharing != 0);
		rc = exec1(db, STQ_CFG_INS_GROUP, SQL_CFG_INS_GROUP, &a);
	}
	for (size_t i = 0; rc == GB_OK && i < cfg->ninst; i++) {
		const struct pr_instance *in = &cfg->inst[i];
		struct st_args a;
		st_args_init(&a);
		st_arg_str(&a, in->name);
		st_arg_ll(&a, (long long)i);
		st_arg_str(&a, in->group);
		st_arg_dbl(&a, in->max_global);
		rc = exec1(db, STQ_CFG_INS_INST, SQL_CFG_INS_INST, &a);
		for (size_t k = 0; rc == GB_OK && k < in->nslices; k++) {
			const struct pr_slice *sl = &in->slices[k];
			st_args_init(&a);
			st_arg_str(&a, in->name);
			st_arg_str(&a, sl->name);
			st_arg_ll(&a, (long long)k);
			st_arg_ll(&a, sl->timespan);
			st_arg_dbl(&a, sl->weight);
			st_arg_dbl(&a, sl->max_correction);
			rc = exec1(db, STQ_CFG_INS_SLICE, SQL_CFG_INS_SLICE,
				   &a);
		}
	}
	for (size_t i = 0; rc == GB_OK && i < nseg; i++) {
		struct st_args a;
		st_args_init(&a);
		st_arg_ll(&a, seg[i]);
		rc = exec1(db, STQ_CFG_INS_SEG, SQL_CFG_INS_SEG, &a);
	}
	if (rc == GB_OK) {
		struct st_args a;
		st_args_init(&a);
		st_arg_ll(&a, cfg->corrections != 0);
		st_arg_dbl(&a, cfg->default_share);
		st_arg_ll(&a, now);
		rc = exec1(db, STQ_CFG_SETTINGS, SQL_CFG_SETTINGS, &a);
	}
	return rc;
}

int st_tq_config_save(struct st_db *db, const struct pr_config *cfg,
		      const long long *seg, size_t nseg, long long now)
{
	if (db == NULL || cfg == NULL)
		return GB_EINVAL;
	char err[256] = "";
	if (pr_config_check(cfg, err, sizeof(err)) != GB_OK)
		return st_failf(db, GB_EINVAL, "priority configuration: %s",
				err);
	if (!tq_segments_valid(seg, nseg))
		return st_failf(db, GB_EINVAL, "invalid CPU time segments");
	for (size_t i = 0; i < cfg->ngroups; i++)
		if (!stq_name_ok(cfg->groups[i].name))
			return st_failf(db, GB_EINVAL, "group %zu: bad name", i);
	for (size_t i = 0; i < cfg->ninst; i++) {
		const struct pr_instance *in = &cfg->inst[i];
		int bad = !stq_name_ok(in->name) ||
			  (in->group && !stq_name_ok(in->group));
		for (size_t k = 0; !bad && k < in->nslices; k++)
			bad = !stq_name_ok(in->slices[k].name);
		if (bad)
			return st_failf(db, GB_EINVAL,
					"corrector instance %zu: bad name", i);
	}
	int rc = st_need_txn(db, 0, "st_tq_config_save");
	if (rc != GB_OK)
		return rc;
	rc = st_begin(db);
	if (rc == GB_OK)
		rc = cfg_write(db, cfg, seg, nseg, now);
	/* A repeated name is the configuration's fault too. */
	return st_end(db, st_input_error(db, rc, 1));
}

static int load_groups(struct st_db *db, struct arena *a, struct pr_config *o)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "sdl");
	int rc = st_query(db, STQ_SID(STQ_CFG_GET_GROUPS), SQL_CFG_GET_GROUPS,
			  NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, n = 0;
	struct pr_group *g =
		st_result_array(db, s, a, sizeof(*g), "groups", &rows, &rc);
	while (n < rows && st_row(db, s, &rc)) {
		char *name = NULL;
		rc = st_col_str(db, s, &c, 0, a, &name);
		g[n] = (struct pr_group){name, st_col_dbl(&c, 1),
					 st_col_ll(&c, 2) != 0};
		n += rc == GB_OK;
	}
	st_done(s);
	o->groups = g;
	o->ngroups = n;
	return rc;
}

static int load_instances(struct st_db *db, struct arena *a,
			  struct pr_config *o)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "ssd");
	int rc = st_query(db, STQ_SID(STQ_CFG_GET_INST), SQL_CFG_GET_INST,
			  NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s), n = 0;
	if (rows > PR_MAX_INSTANCES) {
		st_done(s);
		return st_failf(db, GB_ERANGE, "%zu corrector instances stored",
				rows);
	}
	struct pr_instance *in = st_result_array(
		db, s, a, sizeof(*in), "corrector instances", &rows, &rc);
	while (n < rows && st_row(db, s, &rc)) {
		char *name = NULL, *grp = NULL;
		rc = st_col_str(db, s, &c, 0, a, &name);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 1, a, &grp);
		in[n].name = name;
		in[n].group = grp;
		in[n].max_global = st_col_dbl(&c, 2);
		in[n].nslices = 0;
		n += rc == GB_OK;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	st_cols_init(&c, "ssldd");
	rc = st_query(db, STQ_SID(STQ_CFG_GET_SLICES), SQL_CFG_GET_SLICES, NULL,
		      &c, &s);
	for (size_t i = 0; st_row(db, s, &rc);) {
		char *inst = NULL, *name = NULL;
		rc = st_col_str(db, s, &c, 0, a, &inst);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 1, a, &name);
		/* Slices come in instance order: find this one's owner. */
		while (rc == GB_OK && i < n && inst &&
		       strcmp(in[i].name, inst) != 0)
			i++;
		if (rc == GB_OK &&
		    (i == n || in[i].nslices == PR_MAX_SLICES))
			rc = st_failf(db, GB_ERANGE,
				      "corrector slice %s of %s out of range",
				      name ? name : "?", inst ? inst : "?");
		if (rc != GB_OK)
			break;
		in[i].slices[in[i].nslices++] = (struct pr_slice){
			name, st_col_ll(&c, 2), st_col_dbl(&c, 3),
			st_col_dbl(&c, 4)};
	}
	st_done(s);
	o->inst = in;
	o->ninst = n;
	return rc;
}

static int load_segments(struct st_db *db, struct arena *a, long long **seg,
			 size_t *nseg)
{
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "l");
	int rc = st_query(db, STQ_SID(STQ_CFG_GET_SEGS), SQL_CFG_GET_SEGS,
			  NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s), n = 0;
	const long long *src = tq_default_segments;
	size_t nsrc = sizeof(tq_default_segments) /
		      sizeof(tq_default_segments[0]);
	size_t cap = rows ? rows : nsrc;
	long long *v = arena_alloc(a, cap * sizeof(*v));
	if (v == NULL)
		rc = st_too_big(db, "segments", cap);
	while (n < rows && st_row(db, s, &rc))
		v[n++] = st_col_ll(&c, 0);
	st_done(s);
	if (rc != GB_OK)
		return rc;
	if (rows == 0) {
		memcpy(v, src, nsrc * sizeof(*v));
		n = nsrc;
	}
	if (!tq_segments_valid(v, n))
		return st_failf(db, GB_ERANGE, "stored CPU segments invalid");
	*seg = v;
	*nseg = n;
	return GB_OK;
}

int st_tq_config_load(struct st_db *db, struct arena *a, struct pr_config *out,
		      long long **seg, size_t *nseg)
{
	if (db == NULL || a == NULL || out == NULL || seg == NULL ||
	    nseg == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	*seg = NULL;
	*nseg = 0;
	out->default_share = PR_DEFAULT_SHARE;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "ld");
	int rc = st_query(db, STQ_SID(STQ_CFG_GET_SETTINGS),
			  SQL_CFG_GET_SETTINGS, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	if (st_row(db, s, &rc)) {
		out->corrections = st_col_ll(&c, 0) != 0;
		out->default_share = st_col_dbl(&c, 1);
	}
	st_done(s);
	if (rc == GB_OK)
		rc = load_groups(db, a, out);
	if (rc == GB_OK)
		rc = load_instances(db, a, out);
	if (rc == GB_OK)
		rc = load_segments(db, a, seg, nseg);
	char err[256] = "";
	if (rc == GB_OK && pr_config_check(out, err, sizeof(err)) != GB_OK)
		rc = st_failf(db, GB_ERANGE,
			      "stored priority configuration: %s", err);
	if (rc != GB_OK) {
		memset(out, 0, sizeof(*out));
		*seg = NULL;
		*nseg = 0;
	}
	return rc;
}

/* ---- job records --------------------------------------------------------- */

/* The highest rank: a status there is final. */
static int final_rank(void)
{
	int m = 0;
	for (int i = 0; i < CDT_NSTATUS; i++) {
		int r = cdt_status_rank((enum cdt_job_status)i);
		m = r > m ? r : m;
	}
	return m;
}

/* TQ-09: a job that stops waiting leaves its task queue. *tq_id gets the
** TQ when its waiting row was there (0 otherwise). */
static int unqueue(struct st_db *db, long long job_id, long long *tq_id)
{
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s;
	*tq_id = 0;
	st_args_init(&a);
	st_arg_ll(&a, job_id);
	st_cols_init(&c, "l");
	int rc = st_query(db, STQ_SID(STQ_JOB_UNQUEUE), SQL_JOB_UNQUEUE, &a,
			  &c, &s);
	if (st_row(db, s, &rc))
		*tq_id = st_col_ll(&c, 0);
	st_done(s);
	return rc;
}

int st_tq_job_status(struct st_db *db, const struct cdt_status *s,
		     long long now, int *found, int *applied)
{
	if (db == NULL || s == NULL || found == NULL || applied == NULL)
		return GB_EINVAL;
	*found = 0;
	*applied = 0;
	const char *name = cdt_status_name(s->status);
	int rank = cdt_status_rank(s->status);
	if (s->job_id <= 0 || name == NULL || rank < 0 || s->time < 0 ||
	    (s->site && !stq_name_ok(s->site)))
		return st_failf(db, GB_EINVAL, "job.status for job %lld: bad "
					       "status, time or site",
				s->job_id);
	/* The removal and the status must commit together: alone, a crash
	** in between would leave a waiting record without its queue row, or
	** a killed job a pilot can still get. */
	int rc = st_need_txn(db, 1, "st_tq_job_status");
	if (rc != GB_OK)
		return rc;
	/* A status above waiting's rank always applies to a waiting job, so
	** its queue row can go before the record changes. */
	long long tq_id = 0;
	if (rank > cdt_status_rank(CDT_ST_WAITING))
		rc = unqueue(db, s->job_id, &tq_id);
	if (rc != GB_OK)
		return rc;
	int fin = final_rank();
	struct st_args args;
	MYSQL_STMT *st;
	st_args_init(&args);
	st_arg_str(&args, name);
	st_arg_ll(&args, rank);
	st_arg_ll(&args, s->time);
	st_arg_str(&args, s->site);
	st_arg_ll(&args, now);
	st_arg_ll(&args, s->job_id);
	st_arg_ll(&args, rank);
	st_arg_ll(&args, rank);
	st_arg_ll(&args, s->time);
	st_arg_ll(&args, fin);
	rc = st_exec(db, STQ_SID(STQ_JOB_STATUS), SQL_JOB_STATUS, &args, &st);
	if (rc != GB_OK)
		return st_input_error(db, rc, 0);
	/* CLIENT_FOUND_ROWS: 1 whenever the WHERE clause held. */
	*applied = mysql_stmt_affected_rows(st) > 0;
	*found = *applied;
	/* Logged even when the record refused the status: a queue row of a
	** job whose record is past waiting should not have been there, and
	** taking it away is the safe direction. */
	if (tq_id > 0) {
		struct st_tq_removal r = {.tq_id = tq_id, .job_id = s->job_id};
		rc = st_tq_log_removals(db, &r, 1, name, now);
	}
	if (rc != GB_OK || *found)
		return rc;
	struct st_cols c;
	rc = st_query_key(db, STQ_SID(STQ_JOB_EXISTS), SQL_JOB_EXISTS,
			  ST_ID(s->job_id), "l", &c, &st);
	*found = st_row(db, st, &rc);
	st_done(st);
	return rc;
}

int st_tq_job_get(struct st_db *db, long long job_id, struct arena *a,
		  struct st_tq_jobinfo *out)
{
	if (db == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, STQ_SID(STQ_JOB_GET), SQL_JOB_GET,
			      ST_ID(job_id), "llsssssslll", &c, &s);
	int got = st_row(db, s, &rc);
	char **str[6] = {&out->owner,	 &out->owner_group, &out->status,
			 &out->site,	 &out->pilot_id,    &out->match_request};
	for (unsigned i = 0; rc == GB_OK && got && i < 6; i++)
		rc = st_col_str(db, s, &c, 2 + i, a, str[i]);
	if (rc == GB_OK && got) {
		out->job_id = st_col_ll(&c, 0);
		out->tq_id = st_col_ll(&c, 1);
		out->submitted_at = st_col_ll(&c, 8);
		out->matched_at = st_col_ll(&c, 9);
		out->status_at = st_col_ll(&c, 10);
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	if (!got)
		return st_failf(db, GB_ENOTFOUND, "job %lld is unknown",
				job_id);
	if (out->owner == NULL || out->owner_group == NULL ||
	    cdt_status_parse(out->status) < 0)
		return st_failf(db, GB_ERANGE, "wms_jobs row %lld out of range",
				job_id);
	return GB_OK;
}

/* ---- the lease ----------------------------------------------------------- */

/*
** Run lease statement `slot` with `a` (*s gets it), never inside a
** transaction (`fn` names the caller): there the lease row would stay
** locked, and the lease would not be visible to the others, until the
** commit.
*/
static int lease_exec(struct st_db *db, const char *fn, enum stq_slot slot,
		      const char *sql, struct st_args *a, MYSQL_STMT **s)
{
	int rc = st_need_txn(db, 0, fn);
	if (rc == GB_OK)
		rc = st_exec(db, STQ_SID(slot), sql, a, s);
	return rc;
}

int st_tq_lease(struct st_db *db, const char *owner, long long now,
		int lease_s, int *leader)
{
	if (db == NULL || owner == NULL || owner[0] == '\0' ||
	    strlen(owner) > STQ_LEADER_BYTES || lease_s <= 0 || leader == NULL)
		return GB_EINVAL;
	*leader = 0;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, owner);
	st_arg_ll(&a, now + lease_s);
	st_arg_str(&a, owner);
	st_arg_ll(&a, now);
	int rc = lease_exec(db, "st_tq_lease", STQ_LEASE, SQL_LEASE, &a, &s);
	if (rc != GB_OK)
		return st_input_error(db, rc, 0);
	/* CLIENT_FOUND_ROWS: 1 whenever the WHERE clause held, also for a
	** renewal within the same second. */
	*leader = mysql_stmt_affected_rows(s) == 1;
	return GB_OK;
}

int st_tq_lease_release(struct st_db *db, const char *owner)
{
	if (db == NULL || owner == NULL || owner[0] == '\0')
		return GB_EINVAL;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, owner);
	return lease_exec(db, "st_tq_lease_release", STQ_LEASE_RELEASE,
			  SQL_LEASE_RELEASE, &a, &s);
}

/* ---- priorities ---------------------------------------------------------- */

int st_tq_prio_state(struct st_db *db, long long *dirty,
		     long long *computed_dirty, long long *computed_at,
		     long long *version)
{
	if (db == NULL || dirty == NULL || computed_dirty == NULL ||
	    computed_at == NULL || version == NULL)
		return GB_EINVAL;
	long long v[4] = {0, 0, 0, 0};
	int got = 0;
	int rc = query_row(db, STQ_PRIO_STATE, SQL_PRIO_STATE, NULL, "llll", v,
			   &got);
	if (rc != GB_OK)
		return rc;
	if (!got)
		return st_failf(db, GB_ENOTFOUND,
				"tq_state has no row (run db migrate)");
	*dirty = v[0];
	*computed_dirty = v[1];
	*computed_at = v[2];
	*version = v[3];
	return GB_OK;
}

struct prio {
	long long id;
	double p;
};

static int cmp_prio(const void *a, const void *b)
{
	long long x = ((const struct prio *)a)->id;
	long long y = ((const struct prio *)b)->id;
	return (x > y) - (x < y);
}

static int prio_write(struct st_db *db, const struct prio *v, size_t n,
		      long long dirty_seen, long long now)
{
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, n, STQ_PRIO_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		const struct prio *p = v + ch.off;
		for (size_t i = 0; i < ch.k; i++) {
			st_arg_ll(&ch.a, p[i].id);
			st_arg_dbl(&ch.a, p[i].p);
		}
		st_arg_nulls(&ch.a, 2 * (STQ_PRIO_CHUNK - ch.k));
		for (size_t i = 0; i < ch.k; i++)
			st_arg_ll(&ch.a, p[i].id);
		st_arg_nulls(&ch.a, STQ_PRIO_CHUNK - ch.k);
		MYSQL_STMT *s;
		rc = st_run_n(db, STQ_SID(STQ_PRIO_UPDATE), SQL_PRIO_UPDATE,
			      STQ_PRIO_CHUNK, &ch.a, NULL, &s);
	}
	st_chunks_free(&ch);
	if (rc == GB_OK) {
		struct st_args a;
		st_args_init(&a);
		st_arg_ll(&a, dirty_seen);
		st_arg_ll(&a, now);
		rc = exec1(db, STQ_PRIO_DONE, SQL_PRIO_DONE, &a);
	}
	return rc;
}

int st_tq_prio_save(struct st_db *db, const struct pr_tq *t, size_t n,
		    long long dirty_seen, long long now)
{
	if (db == NULL || (n && t == NULL))
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (t[i].tq_id <= 0 || !isfinite(t[i].priority) ||
		    t[i].priority < 0)
			return st_failf(db, GB_EINVAL,
					"TQ %lld: priority %g out of range",
					t[i].tq_id, t[i].priority);
	int rc = st_need_txn(db, 0, "st_tq_prio_save");
	if (rc != GB_OK)
		return rc;
	struct prio *v = malloc((n ? n : 1) * sizeof(*v));
	if (v == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = (struct prio){t[i].tq_id, t[i].priority};
	/* Ascending tq_id: the lock order every task_queues writer keeps. */
	qsort(v, n, sizeof(*v), cmp_prio);
	rc = st_begin(db);
	if (rc == GB_OK)
		rc = prio_write(db, v, n, dirty_seen, now);
	free(v);
	return st_end(db, st_input_error(db, rc, 0));
}

/* ---- history ------------------------------------------------------------- */

int st_tq_history_sample(struct st_db *db, long long now)
{
	if (db == NULL)
		return GB_EINVAL;
	int rc = st_need_txn(db, 0, "st_tq_history_sample");
	if (rc != GB_OK)
		return rc;
	struct st_args a;
	st_args_init(&a);
	st_arg_ll(&a, now);
	st_arg_str(&a, cdt_status_name(CDT_ST_RUNNING));
	return exec1(db, STQ_HIST_SAMPLE, SQL_HIST_SAMPLE, &a);
}

int st_tq_history_load(struct st_db *db, long long since, struct arena *a,
		       struct pr_sample **out, size_t *n)
{
	if (db == NULL || a == NULL || out == NULL || n == NULL)
		return GB_EINVAL;
	*out = NULL;
	*n = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, STQ_SID(STQ_HIST_LOAD), SQL_HIST_LOAD,
			      ST_ID(since), "lssd", &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, k = 0;
	struct pr_sample *v = st_result_array(db, s, a, sizeof(*v),
					      "history samples", &rows, &rc);
	while (k < rows && st_row(db, s, &rc)) {
		char *grp = NULL, *owner = NULL;
		rc = st_col_str(db, s, &c, 1, a, &grp);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &c, 2, a, &owner);
		double running = st_col_dbl(&c, 3);
		if (rc == GB_OK &&
		    (!grp || !owner || !isfinite(running) || running < 0))
			rc = st_failf(db, GB_ERANGE,
				      "wms_history row out of range");
		if (rc != GB_OK)
			break;
		v[k++] = (struct pr_sample){st_col_ll(&c, 0), grp, owner,
					    running};
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	*out = v;
	*n = k;
	return GB_OK;
}

int st_tq_history_prune(struct st_db *db, long long before)
{
	if (db == NULL)
		return GB_EINVAL;
	struct st_args a;
	st_args_init(&a);
	st_arg_ll(&a, before);
	return exec1(db, STQ_HIST_PRUNE, SQL_HIST_PRUNE, &a);
}

/* ---- cleanup ------------------------------------------------------------- */

/*
** Delete TQ `id` if it is still there, old enough and empty, in the open
** transaction. The TQ row lock comes first: a submission adding jobs
** holds it until its commit, so the job check below sees those jobs, and
** a submission arriving later waits for this delete and creates the TQ
** again with its requirement rows.
*/
static int clean_one(struct st_db *db, long long id, long long older_than,
		     int *gone)
{
	long long v[1];
	int got = 0;
	struct st_args a;
	*gone = 0;
	st_args_init(&a);
	st_arg_ll(&a, id);
	st_arg_ll(&a, older_than);
	int rc = query_row(db, STQ_CLEAN_LOCK, SQL_CLEAN_LOCK, &a, "l", v,
			   &got);
	if (rc != GB_OK || !got)
		return rc;
	st_args_init(&a);
	st_arg_ll(&a, id);
	rc = query_row(db, STQ_CLEAN_HAS_JOB, SQL_CLEAN_HAS_JOB, &a, "l", v,
		       &got);
	if (rc != GB_OK || got)
		return rc;
	st_args_init(&a);
	st_arg_ll(&a, id);
	rc = exec1(db, STQ_CLEAN_DELETE, SQL_CLEAN_DELETE, &a);
	if (rc == GB_OK)
		rc = exec1(db, STQ_CLEAN_DIRTY, SQL_DIRTY_BUMP_ONE, NULL);
	*gone = rc == GB_OK;
	return rc;
}

int st_tq_cleanup(struct st_db *db, long long older_than, size_t max,
		  size_t *deleted)
{
	if (db == NULL || deleted == NULL)
		return GB_EINVAL;
	*deleted = 0;
	int rc = st_need_txn(db, 0, "st_tq_cleanup");
	if (rc != GB_OK || max == 0)
		return rc;
	/* Candidates without locks; each is checked again under its lock. */
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, older_than);
	st_arg_ll(&a, st_limit(max));
	st_cols_init(&c, "l");
	rc = st_query(db, STQ_SID(STQ_CLEAN_CANDIDATES), SQL_CLEAN_CANDIDATES,
		      &a, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = (size_t)mysql_stmt_num_rows(s), n = 0;
	long long *ids = malloc((rows ? rows : 1) * sizeof(*ids));
	if (ids == NULL)
		rc = st_failf(db, GB_ENOMEM, "out of memory");
	while (n < rows && st_row(db, s, &rc))
		ids[n++] = st_col_ll(&c, 0);
	st_done(s);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		int gone = 0;
		rc = st_begin(db);
		if (rc == GB_OK)
			rc = clean_one(db, ids[i], older_than, &gone);
		if (rc == GB_OK)
			rc = st_commit(db);
		if (rc != GB_OK) {
			st_rollback(db);
			break;
		}
		*deleted += gone != 0;
	}
	free(ids);
	return rc;
}
