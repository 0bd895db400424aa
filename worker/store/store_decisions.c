/*
** store_decisions.c — decision records: written for every kind that keeps
** them in `decisions` (st_dec_write: task, jobs, timeout and rebro, one
** statement for all), read back for `gridbroker why` and deleted by the
** retention step (see store_decisions.h). Prepared statements only: the
** ids come from the command line.
*/
#include "store/store_decisions.h"

#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_internal.h"

enum {
	SD_FIND_TASK,
	SD_FIND_JOB,
	SD_FIND_PILOT,
	SD_EXPIRE_DECISIONS,
	SD_EXPIRE_PILOTS,
	SD_EXPIRE_INPUTS,
	SD_NSLOTS
};
_Static_assert(ST_SID_DEC_BASE + SD_NSLOTS <= ST_SID_DEC_LAST + 1,
	       "store_decisions.c needs more statement slots");
#define SD_SID(slot) ((enum st_sid)(ST_SID_DEC_BASE + (slot)))

#define SD_COLS "id, kind, subject, request_id, outcome, chosen, decided_at, detail"

static const char SQL_DECISION_INSERT[] =
	"INSERT INTO decisions (kind, subject, request_id, outcome, chosen, "
	"decided_at, detail) VALUES (?, ?, ?, ?, ?, ?, ?)";

static const char SQL_FIND_TASK[] =
	"SELECT " SD_COLS " FROM decisions WHERE kind = 'task' AND "
	"subject = ? ORDER BY decided_at DESC, id DESC";
/* UNION (not OR): each branch uses its own index (idx_decisions_subject,
** the primary key, idx_decisions_request) instead of a scan. */
/* Rows written before the record format (detail NULL) still explain
** themselves by their TQ-10 code and reason. */
#define SD_PILOT_COLS                                                        \
	"id, 'pilot', pilot_id, request_id, outcome, "                       \
	"IF(job_id IS NULL, NULL, CONCAT('job ', job_id, ' (TQ ', tq_id, "   \
	"')')), decided_at, "                                                \
	"COALESCE(detail, JSON_OBJECT('code', code, 'reason', reason))"
/* A PanDA job's timeouts, rebrokerages and brokerage decisions, or a
** DIRAC job's match (the pilot that got it: uk_pilot_matches_job). */
static const char SQL_FIND_JOB[] =
	"SELECT " SD_COLS " FROM decisions WHERE kind IN ('timeout', 'rebro') "
	"AND subject = ? "
	"UNION SELECT d.id, d.kind, d.subject, d.request_id, d.outcome, "
	"d.chosen, d.decided_at, d.detail FROM jobs j JOIN decisions d ON "
	"d.id = j.decision_id WHERE j.job_id = ? "
	"UNION SELECT d.id, d.kind, d.subject, d.request_id, d.outcome, "
	"d.chosen, d.decided_at, d.detail FROM jobs j JOIN decisions d ON "
	"d.request_id = j.request_id AND d.kind = 'jobs' WHERE j.job_id = ? "
	"UNION SELECT " SD_PILOT_COLS " FROM pilot_matches WHERE job_id = ? "
	"ORDER BY 7 DESC, 1 DESC";
static const char SQL_FIND_PILOT[] =
	"SELECT " SD_PILOT_COLS " FROM pilot_matches WHERE pilot_id = ? "
	"UNION SELECT " SD_PILOT_COLS " FROM pilot_matches WHERE "
	"request_id = ? ORDER BY 7 DESC, 1 DESC";

/* The outbox's oldest unsent event bounds what may go: its decision was
** written in the same transaction, with the same clock reading. */
#define SD_KEEP_UNSENT                                                       \
	"decided_at < LEAST(?, COALESCE((SELECT MIN(created_at) FROM outbox " \
	"WHERE sent_at IS NULL), ?)) ORDER BY decided_at LIMIT "

#define SD_STR(x) #x
#define SD_XSTR(x) SD_STR(x)
static const char SQL_EXPIRE_DECISIONS[] =
	"DELETE FROM decisions WHERE " SD_KEEP_UNSENT SD_XSTR(
		ST_DEC_EXPIRE_BATCH);
static const char SQL_EXPIRE_PILOTS[] =
	"DELETE FROM pilot_matches WHERE " SD_KEEP_UNSENT SD_XSTR(
		ST_DEC_EXPIRE_BATCH);
/* Each decision's inputs (store_inputs.h) go by the same rule: decided_at
** is the decision's own. */
static const char SQL_EXPIRE_INPUTS[] =
	"DELETE FROM decision_inputs WHERE " SD_KEEP_UNSENT SD_XSTR(
		ST_DEC_EXPIRE_BATCH);

int st_dec_write(struct st_db *db, struct st_dec_row *row)
{
	struct st_args a;
	MYSQL_STMT *s;
	row->id = 0;
	st_args_init(&a);
	st_arg_str(&a, row->kind);
	st_arg_str(&a, row->subject);
	st_arg_str(&a, row->request_id);
	st_arg_str(&a, row->outcome);
	st_arg_str(&a, row->chosen);
	st_arg_ll(&a, row->decided_at);
	st_arg_str(&a, row->detail);
	int rc = st_exec(db, ST_SID_DECISION_INSERT, SQL_DECISION_INSERT, &a,
			 &s);
	if (rc == GB_OK)
		row->id = (long long)mysql_stmt_insert_id(s);
	return rc;
}

int st_dec_find(struct st_db *db, enum st_dec_what what, const char *id,
		size_t max, struct arena *a, struct st_dec_row **rows,
		size_t *n)
{
	if (db == NULL || id == NULL || a == NULL || rows == NULL ||
	    n == NULL || max == 0)
		return GB_EINVAL;
	*rows = NULL;
	*n = 0;
	struct st_args args;
	st_args_init(&args);
	const char *sql;
	int slot;
	switch (what) {
	case ST_DEC_TASK:
		sql = SQL_FIND_TASK;
		slot = SD_FIND_TASK;
		st_arg_str(&args, id);
		break;
	case ST_DEC_JOB: {
		/* jobs.job_id is a BIGINT: compare numbers, not text. */
		char *end = NULL;
		long long jid = strtoll(id, &end, 10);
		if (end == id || *end != '\0')
			return GB_OK; /* not a job id: no decision */
		sql = SQL_FIND_JOB;
		slot = SD_FIND_JOB;
		st_arg_str(&args, id);
		st_arg_ll(&args, jid);
		st_arg_ll(&args, jid);
		st_arg_ll(&args, jid);
		break;
	}
	case ST_DEC_PILOT:
		sql = SQL_FIND_PILOT;
		slot = SD_FIND_PILOT;
		st_arg_str(&args, id);
		st_arg_str(&args, id);
		break;
	default:
		return GB_EINVAL;
	}
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "lsssssls");
	int rc = st_query(db, SD_SID(slot), sql, &args, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t total = 0, k = 0;
	struct st_dec_row *r =
		st_result_array(db, s, a, sizeof(*r), "decisions", &total, &rc);
	while (k < total && st_row(db, s, &rc)) {
		struct st_dec_row *x = &r[k];
		memset(x, 0, sizeof(*x));
		char *v[5] = {NULL};
		x->id = st_col_ll(&c, 0);
		for (unsigned i = 0; rc == GB_OK && i < 5; i++)
			rc = st_col_str(db, s, &c, 1 + i, a, &v[i]);
		x->kind = v[0];
		x->subject = v[1];
		x->request_id = v[2];
		x->outcome = v[3];
		x->chosen = v[4];
		x->decided_at = st_col_ll(&c, 6);
		char *d = NULL;
		if (rc == GB_OK && k < max)
			rc = st_col_str(db, s, &c, 7, a, &d);
		x->detail = d;
		if (rc != GB_OK)
			break;
		k++;
	}
	st_done(s);
	if (rc != GB_OK)
		return rc;
	*rows = r;
	*n = k;
	return GB_OK;
}

int st_dec_expire(struct st_db *db, long long before, size_t *deleted)
{
	if (db == NULL || deleted == NULL)
		return GB_EINVAL;
	*deleted = 0;
	static const struct {
		int slot;
		const char *sql;
	} del[] = {{SD_EXPIRE_DECISIONS, SQL_EXPIRE_DECISIONS},
		   {SD_EXPIRE_PILOTS, SQL_EXPIRE_PILOTS},
		   {SD_EXPIRE_INPUTS, SQL_EXPIRE_INPUTS}};
	for (size_t i = 0; i < sizeof(del) / sizeof(del[0]); i++) {
		struct st_args args;
		MYSQL_STMT *s;
		st_args_init(&args);
		st_arg_ll(&args, before);
		st_arg_ll(&args, before);
		int rc = st_exec(db, SD_SID(del[i].slot), del[i].sql, &args, &s);
		if (rc != GB_OK)
			return rc;
		*deleted += (size_t)mysql_stmt_affected_rows(s);
	}
	return GB_OK;
}
