/*
** store_tq_removed.c — the removal log of waiting jobs (store_tq.h, table
** tq_removed of 0008_tq_removals.sql): what every worker's task queue
** index follows to drop the jobs other workers claimed and the jobs a
** job.status ended while they waited.
**
** Why per TQ and under the TQ row lock: the log must never let a reader
** skip a committed removal. A global AUTO_INCREMENT id does (ids are handed
** out at insert, commits come in any order). A per-TQ number taken from
** task_queues.rm_next_seq while the row is locked until commit is handed
** out in commit order, exactly as st_tq_submit numbers jobs with next_seq;
** a reader that saw rm_next_seq = s has seen every removal below s.
**
** Lock order: the TQ rows are locked in ascending tq_id order, as the
** submission, the priority save and the cleanup do, and the caller logs
** after its tq_jobs and wms_jobs writes and before st_tq_mark_dirty (the
** tq_state row, always last), so no two of these wait in a cycle.
*/
#include "store/store_internal.h"
#include "store/store_tq.h"

#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "store/store_tq_internal.h"

#define STQ_RM_CHUNK 128    /* TQs per lock statement */
#define STQ_RM_PAGE 1024    /* rows per page of a removal scan: small
				** enough for malloc's heap, not a fresh mapping
				** per call */

static const char SQL_RM_LOCK[] =
	"SELECT tq_id, rm_next_seq FROM task_queues WHERE tq_id IN (" ST_LIST
	") ORDER BY tq_id FOR UPDATE";
/* Padding pairs are NULL: CASE x WHEN NULL never matches, nor IN (NULL). */
static const char SQL_RM_ADVANCE[] =
	"UPDATE task_queues SET rm_next_seq = CASE tq_id " ST_PAIRS
	"END WHERE tq_id IN (" ST_LIST ")";
static const char INS_REMOVED[] =
	"INSERT INTO tq_removed (tq_id, seq, job_id, cause, removed_at) "
	"VALUES " ST_ROWS;
#define NREMOVED 5
/* The removals of up to STQ_RM_ARMS TQs, each from its own seq, in one
** statement: a refresh reads every TQ another worker claimed from since
** the last one (tens of TQs), and a statement per TQ made the refresh
** the longest pause of the event loop. Each arm is a range of the primary
** key (tq_id, seq); unused arms have a NULL tq_id and match nothing. */
#define STQ_RM_ARM "(tq_id = ? AND seq >= ?)"
#define STQ_RM_ARM2 STQ_RM_ARM " OR " STQ_RM_ARM
#define STQ_RM_ARM4 STQ_RM_ARM2 " OR " STQ_RM_ARM2
#define STQ_RM_ARM8 STQ_RM_ARM4 " OR " STQ_RM_ARM4
#define STQ_RM_ARM16 STQ_RM_ARM8 " OR " STQ_RM_ARM8
#define STQ_RM_ARMS 31 /* 2 per arm and the limit: ST_ARGS_INLINE */
static const char SQL_RM_SCAN[] =
	"SELECT tq_id, seq, job_id FROM tq_removed WHERE " STQ_RM_ARM16
	" OR " STQ_RM_ARM8 " OR " STQ_RM_ARM4 " OR " STQ_RM_ARM2
	" OR " STQ_RM_ARM " ORDER BY tq_id, seq LIMIT ?";
_Static_assert(2 * STQ_RM_ARMS + 1 <= ST_ARGS_INLINE,
	       "the removal scan's parameters must fit a list without the "
	       "heap");
static const char SQL_RM_PRUNE[] =
	"DELETE FROM tq_removed WHERE removed_at < ? LIMIT ?";

/* A removal's sort key: rm[] is logged in (tq_id, job_id) order. */
struct rmkey {
	long long tq_id, job_id;
	size_t i; /* index into rm */
};

static int cmp_rm(const void *a, const void *b)
{
	const struct rmkey *x = a, *y = b;
	if (x->tq_id != y->tq_id)
		return x->tq_id < y->tq_id ? -1 : 1;
	return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

/*
** Lock the distinct TQs of ord (sorted) chunk by chunk and give each
** removal its seq; the TQs' new rm_next_seq go to ids[]/next[] (ntq).
*/
static int number(struct st_db *db, struct st_tq_removal *rm,
		  const struct rmkey *ord, size_t n, long long *ids,
		  long long *next, size_t *ntq)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || ids[k - 1] != ord[i].tq_id)
			ids[k++] = ord[i].tq_id;
	/* next[j] = -1 until the TQ's row is seen (gone otherwise). */
	for (size_t j = 0; j < k; j++)
		next[j] = -1;
	struct st_chunks ch;
	int rc = GB_OK;
	st_chunks_init(&ch, k, STQ_RM_CHUNK);
	while (st_chunks_next(&ch, &rc)) {
		for (size_t i = 0; i < ch.k; i++)
			st_arg_ll(&ch.a, ids[ch.off + i]);
		st_arg_nulls(&ch.a, STQ_RM_CHUNK - ch.k);
		struct st_cols c;
		MYSQL_STMT *s;
		st_cols_init(&c, "ll");
		rc = st_run_n(db, STQ_SID(STQ_RM_LOCK), SQL_RM_LOCK,
			      STQ_RM_CHUNK, &ch.a, &c, &s);
		size_t j = ch.off;
		while (st_row(db, s, &rc)) {
			long long id = st_col_ll(&c, 0), seq = st_col_ll(&c, 1);
			while (j < ch.off + ch.k && ids[j] < id)
				j++;
			if (j < ch.off + ch.k && ids[j] == id)
				next[j] = seq;
		}
		st_done(s);
	}
	st_chunks_free(&ch);
	if (rc != GB_OK)
		return rc;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		struct st_tq_removal *r = &rm[ord[i].i];
		while (ids[j] != r->tq_id)
			j++;
		if (next[j] < 0) {
			r->seq = -1;
			continue;
		}
		r->seq = next[j]++;
	}
	*ntq = k;
	return GB_OK;
}

int st_tq_log_removals(struct st_db *db, struct st_tq_removal *rm, size_t n,
		       const char *cause, long long now)
{
	if (db == NULL || (n && rm == NULL) || cause == NULL ||
	    cause[0] == '\0' || strlen(cause) >= ST_TQ_CAUSE_MAX)
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++) {
		rm[i].seq = -1;
		if (rm[i].tq_id <= 0 || rm[i].job_id <= 0)
			return st_failf(db, GB_EINVAL,
					"removal of job %lld from TQ %lld: "
					"bad id",
					rm[i].job_id, rm[i].tq_id);
	}
	int rc = st_need_txn(db, 1, "st_tq_log_removals");
	if (rc != GB_OK || n == 0)
		return rc;
	struct rmkey *ord = malloc(n * sizeof(*ord));
	long long *ids = malloc(n * sizeof(*ids));
	long long *next = malloc(n * sizeof(*next));
	if (ord == NULL || ids == NULL || next == NULL) {
		free(ord);
		free(ids);
		free(next);
		return st_failf(db, GB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct rmkey){rm[i].tq_id, rm[i].job_id, i};
	qsort(ord, n, sizeof(*ord), cmp_rm);
	for (size_t i = 1; rc == GB_OK && i < n; i++)
		if (ord[i].job_id == ord[i - 1].job_id)
			rc = st_failf(db, GB_EINVAL,
				      "job %lld removed twice in one call",
				      ord[i].job_id);
	size_t k = 0;
	if (rc == GB_OK)
		rc = number(db, rm, ord, n, ids, next, &k);
	/* The locked TQs' advanced rm_next_seq (a TQ gone has none). */
	size_t m = 0;
	for (size_t j = 0; j < k; j++)
		if (next[j] >= 0) {
			ids[m] = ids[j];
			next[m++] = next[j];
		}
	if (rc == GB_OK)
		rc = stq_set_per_tq(db, STQ_RM_ADVANCE, SQL_RM_ADVANCE, ids,
				    next, m);
	if (rc == GB_OK) {
		struct st_rows t;
		st_rows_init(&t, STQ_SID(STQ_INS_REMOVED), INS_REMOVED,
			     NREMOVED);
		for (size_t i = 0; rc == GB_OK && i < n; i++) {
			const struct st_tq_removal *r = &rm[ord[i].i];
			if (r->seq < 0)
				continue;
			st_arg_ll(&t.a, r->tq_id);
			st_arg_ll(&t.a, r->seq);
			st_arg_ll(&t.a, r->job_id);
			st_arg_str(&t.a, cause);
			st_arg_ll(&t.a, now);
			rc = st_rows_end(db, &t);
		}
		if (rc == GB_OK)
			rc = st_rows_flush(db, &t);
		st_rows_free(&t);
	}
	free(ord);
	free(ids);
	free(next);
	return rc;
}

/* One page of removals of the TQs f[0..n) (n <= STQ_RM_ARMS), each from
** its from_seq, in (tq_id, seq) order. */
static int scan_page(struct st_db *db, const struct st_tq_rmfrom *f, size_t n,
		     struct st_tq_rmrow *page, size_t *got)
{
	struct st_args a;
	struct st_cols c;
	MYSQL_STMT *s;
	st_args_init(&a);
	for (size_t i = 0; i < n; i++) {
		st_arg_ll(&a, f[i].tq_id);
		st_arg_ll(&a, f[i].from_seq > 0 ? f[i].from_seq : 0);
	}
	st_arg_nulls(&a, 2 * (STQ_RM_ARMS - n));
	st_arg_ll(&a, st_limit(STQ_RM_PAGE));
	st_cols_init(&c, "lll");
	int rc = st_query(db, STQ_SID(STQ_RM_SCAN), SQL_RM_SCAN, &a, &c, &s);
	*got = 0;
	size_t j = 0; /* the arm of the last row: rows come in tq_id order */
	while (*got < STQ_RM_PAGE && st_row(db, s, &rc)) {
		struct st_tq_rmrow *r = &page[(*got)++];
		r->tq_id = st_col_ll(&c, 0);
		r->seq = st_col_ll(&c, 1);
		r->job_id = st_col_ll(&c, 2);
		while (j < n && f[j].tq_id < r->tq_id)
			j++;
		if (j == n || f[j].tq_id != r->tq_id ||
		    r->seq < f[j].from_seq || r->job_id <= 0)
			rc = st_failf(db, GB_ERANGE,
				      "tq_removed row (%lld, %lld) out of "
				      "range",
				      r->tq_id, r->seq);
	}
	st_done(s);
	return rc;
}

int st_tq_removals_scan_many(struct st_db *db, const struct st_tq_rmfrom *from,
			     size_t n,
			     int (*fn)(void *ud, const struct st_tq_rmrow *r),
			     void *ud)
{
	if (db == NULL || fn == NULL || (n && from == NULL))
		return GB_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (from[i].tq_id <= 0 || (i && from[i].tq_id <= from[i - 1].tq_id))
			return GB_EINVAL;
	if (n == 0)
		return GB_OK;
	struct st_tq_rmrow *page = malloc(STQ_RM_PAGE * sizeof(*page));
	if (page == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	/* f: this statement's arms; a full page resumes at its last row's TQ
	** (the TQs before it are complete), from the seq after that row. */
	struct st_tq_rmfrom f[STQ_RM_ARMS];
	size_t next = 0, k = 0;
	int rc = GB_OK;
	while (rc == GB_OK && (k > 0 || next < n)) {
		while (k < STQ_RM_ARMS && next < n)
			f[k++] = from[next++];
		size_t got = 0;
		rc = scan_page(db, f, k, page, &got);
		for (size_t i = 0; rc == GB_OK && i < got; i++)
			rc = fn(ud, &page[i]);
		if (rc != GB_OK)
			break;
		if (got < STQ_RM_PAGE) {
			k = 0; /* every arm read to its end */
			continue;
		}
		const struct st_tq_rmrow *last = &page[got - 1];
		size_t j = 0;
		while (f[j].tq_id != last->tq_id)
			j++; /* scan_page checked that it is there */
		memmove(f, f + j, (k - j) * sizeof(*f));
		k -= j;
		f[0].from_seq = last->seq + 1;
	}
	free(page);
	return rc;
}

int st_tq_removals_scan(struct st_db *db, long long tq_id, long long from_seq,
			int (*fn)(void *ud, const struct st_tq_rmrow *r),
			void *ud)
{
	if (db == NULL || fn == NULL || tq_id <= 0)
		return GB_EINVAL;
	const struct st_tq_rmfrom one = {tq_id, from_seq};
	return st_tq_removals_scan_many(db, &one, 1, fn, ud);
}

int st_tq_removals_prune(struct st_db *db, long long before, size_t max,
			 size_t *deleted)
{
	if (db == NULL || deleted == NULL)
		return GB_EINVAL;
	*deleted = 0;
	if (max == 0)
		return GB_OK;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, before);
	st_arg_ll(&a, st_limit(max));
	int rc = st_exec(db, STQ_SID(STQ_RM_PRUNE), SQL_RM_PRUNE, &a, &s);
	if (rc == GB_OK)
		*deleted = (size_t)mysql_stmt_affected_rows(s);
	return rc;
}
