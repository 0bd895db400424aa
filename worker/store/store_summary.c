/*
** store_summary.c — the read-only queries of `gridbroker summary`
** (store_summary.h).
**
** The window is "decided at or after `since`": tasks and jobs by their
** updated_at (the time of the decision that last changed them), pilots and
** explanations by decided_at. All of them are the workers' clock, which is
** what `since` must be in too.
*/
#include "store/store_internal.h"
#include "store/store_summary.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "gb_error.h"

enum {
	SID_TASKS = ST_SID_SUMMARY_BASE,
	SID_JOBS,
	SID_PILOTS,
	SID_DETAILS,
	SID_PILOT_DETAILS,
	SID_BACKLOG,
};

static const char SQL_TASKS[] =
	"SELECT nucleus, status, COUNT(*) AS n FROM tasks "
	"WHERE updated_at >= ? GROUP BY nucleus, status ORDER BY n DESC, "
	"nucleus";
static const char SQL_JOBS[] =
	"SELECT queue, status, COUNT(*) AS n FROM jobs "
	"WHERE updated_at >= ? GROUP BY queue, status ORDER BY n DESC, queue";
static const char SQL_PILOTS[] =
	"SELECT outcome, code, COUNT(*) AS n FROM pilot_matches "
	"WHERE decided_at >= ? GROUP BY outcome, code ORDER BY n DESC, code";
static const char SQL_DETAILS[] =
	"SELECT kind, detail FROM decisions WHERE decided_at >= ? "
	"ORDER BY id DESC LIMIT ?";
static const char SQL_PILOT_DETAILS[] =
	"SELECT 'pilot', detail FROM pilot_matches WHERE decided_at >= ? "
	"AND detail IS NOT NULL ORDER BY id DESC LIMIT ?";

static const char SQL_BACKLOG[] =
	"SELECT (SELECT COUNT(*) FROM tasks WHERE status = 'pending'), "
	"(SELECT COUNT(*) FROM job_requests WHERE status = 'pending'), "
	"(SELECT COUNT(*) FROM jobs WHERE status = 'pending'), "
	"(SELECT COUNT(DISTINCT task_id) FROM jobs WHERE status = 'throttled'), "
	"(SELECT COUNT(*) FROM jobs WHERE status = 'throttled'), "
	/* FORCE INDEX: with few rows (a fresh database) the optimizer picks
	** a scan; with millions of sent rows that scan is what must never
	** run every backlog interval. The index finds the unsent rows only. */
	"(SELECT COALESCE(MIN(created_at), 0) FROM outbox "
	"FORCE INDEX (idx_outbox_due) WHERE sent_at IS NULL)";

int st_summary_groups(struct st_db *db, enum ss_kind kind, long long since,
		      ss_group_cb cb, void *ud)
{
	static const struct {
		int sid;
		const char *sql;
	} q[SS_NKIND] = {
		[SS_TASKS] = {SID_TASKS, SQL_TASKS},
		[SS_JOBS] = {SID_JOBS, SQL_JOBS},
		[SS_PILOTS] = {SID_PILOTS, SQL_PILOTS},
	};
	if ((unsigned)kind >= SS_NKIND)
		return GB_EINVAL;
	struct st_cols cols;
	MYSQL_STMT *s = NULL;
	int rc = st_query_key(db, (enum st_sid)q[kind].sid, q[kind].sql,
			      ST_ID(since), "ssl", &cols, &s);
	while (st_row(db, s, &rc)) {
		/* a VARCHAR(256) of utf8mb4 may outgrow the column buffer:
		** st_col_str fetches it whole, into a per-row arena */
		struct arena a;
		arena_init(&a, 4096);
		char *k1 = NULL, *k2 = NULL;
		rc = st_col_str(db, s, &cols, 0, &a, &k1);
		if (rc == GB_OK)
			rc = st_col_str(db, s, &cols, 1, &a, &k2);
		if (rc == GB_OK)
			rc = cb(ud, k1, k2 ? k2 : "", st_col_ll(&cols, 2));
		arena_free(&a);
	}
	st_done(s);
	return rc;
}

/* One of the two detail queries, each row handed to `cb`. */
static int scan_details(struct st_db *db, int sid, const char *sql,
			long long since, long long limit, ss_detail_cb cb,
			void *ud)
{
	struct st_args args;
	st_args_init(&args);
	st_arg_ll(&args, since);
	st_arg_ll(&args, limit);
	struct st_cols cols;
	st_cols_init(&cols, "sb");
	MYSQL_STMT *s = NULL;
	int rc = st_query(db, (enum st_sid)sid, sql, &args, &cols, &s);
	while (st_row(db, s, &rc)) {
		if (st_col_isnull(&cols, 1))
			continue;
		/* a detail is up to a MEDIUMTEXT: one row at a time in an
		** arena of its own size, freed before the next */
		struct arena a;
		arena_init(&a, 2 * (size_t)cols.len[1] + 256);
		void *p = NULL;
		size_t n = 0;
		rc = st_col_blob(db, s, &cols, 1, &a, &p, &n);
		char *text = rc == GB_OK ? arena_alloc(&a, n + 1) : NULL;
		if (rc == GB_OK && text == NULL)
			rc = GB_ENOMEM;
		if (rc == GB_OK) {
			memcpy(text, p, n);
			text[n] = '\0';
			/* the kind is a short word ('task', 'pilot', ...) */
			rc = cb(ud, cols.s[0], text);
		}
		arena_free(&a);
	}
	st_done(s);
	return rc;
}

int st_summary_details(struct st_db *db, long long since, long long limit,
		       ss_detail_cb cb, void *ud)
{
	int rc = scan_details(db, SID_DETAILS, SQL_DETAILS, since, limit, cb,
			      ud);
	if (rc == GB_OK)
		rc = scan_details(db, SID_PILOT_DETAILS, SQL_PILOT_DETAILS,
				  since, limit, cb, ud);
	return rc;
}

int st_backlog(struct st_db *db, struct st_backlog *out)
{
	struct st_cols cols;
	st_cols_init(&cols, "llllll");
	MYSQL_STMT *s = NULL;
	int rc = st_query(db, (enum st_sid)SID_BACKLOG, SQL_BACKLOG, NULL,
			  &cols, &s);
	if (!st_row(db, s, &rc) && rc == GB_OK)
		rc = st_failf(db, GB_EDB, "backlog: the count returned no row");
	if (rc == GB_OK) {
		out->tasks_pending = st_col_ll(&cols, 0);
		out->job_requests_pending = st_col_ll(&cols, 1);
		out->jobs_pending = st_col_ll(&cols, 2);
		out->tasks_throttled = st_col_ll(&cols, 3);
		out->jobs_throttled = st_col_ll(&cols, 4);
		out->outbox_oldest = st_col_ll(&cols, 5);
	}
	st_done(s);
	return rc;
}

const char *st_backlog_sql(void)
{
	return SQL_BACKLOG;
}
