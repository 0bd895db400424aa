/*
** store_jobs_internal.h — what store_jobs.c (saving and loading the job
** grid) and store_jobs_decide.c (task context, decisions, pending requests,
** counts) share: the job statements' slots, the IN-list and wide-row query
** helper, and the array-bound row writer. Only those two files include it.
**
** The statement slots are one enum for both files because they index one
** range of the connection's statement cache (ST_SID_JOBS_BASE ..
** ST_SID_JOBS_LAST of store_internal.h): two enums could hand out the same
** slot to two statements, and the cache would then run the wrong SQL.
**
** The array-bound writer (struct sj_bulk) collects the rows of one INSERT
** column by column and sends them in chunks: MariaDB executes a prepared
** statement over an array of rows in one round trip (STMT_ATTR_ARRAY_SIZE,
** column-wise binding, NULLs through indicator arrays). A grid reload and a
** decision's up to 10,000 job rows both write that way; the writer lives in
** store_jobs_decide.c next to its largest per-request user.
*/
#ifndef GB_STORE_JOBS_INTERNAL_H
#define GB_STORE_JOBS_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include <mysql.h>

#include "base/arena.h"
#include "store/store_internal.h"

/* ---- statements ---------------------------------------------------------- */

enum sj_slot {
	SJ_DEL_QUEUES = 0,
	SJ_DEL_COUNTS,
	SJ_DEL_LINKS,
	SJ_DEL_SW_ALL,
	SJ_DEL_REPLICAS,
	SJ_INS_QUEUE,
	SJ_INS_COUNT,
	SJ_INS_LINK,
	SJ_INS_SW_ALL,
	SJ_INS_REPLICA,
	SJ_QUEUES,
	SJ_LINKS,
	SJ_SW_ALL,
	SJ_REPLICAS_IN,
	SJ_TASK_INFO,
	SJ_DONE_IN,
	SJ_DECISION,
	SJ_JOB_UPSERT,
	SJ_COUNTS_ADD,
	SJ_REQUEST_UPSERT,
	SJ_PENDING_DUE,
	SJ_REQUEST_LOAD,
	SJ_REQUEST_CLOSE,
	SJ_COUNTS_GET,
	SJ_NSLOTS
};
_Static_assert(ST_SID_JOBS_BASE + SJ_NSLOTS <= ST_SID_JOBS_LAST + 1,
	       "store_internal.h reserves too few job statement slots");
/* The statement-cache slot of job statement `slot`. */
#define SJ_SID(slot) ((enum st_sid)(ST_SID_JOBS_BASE + (slot)))

#define SJ_IN_CHUNK 128 /* placeholders of the IN lists */
#define SJ_Q4 "?,?,?,?"
#define SJ_Q16 SJ_Q4 "," SJ_Q4 "," SJ_Q4 "," SJ_Q4
#define SJ_Q64 SJ_Q16 "," SJ_Q16 "," SJ_Q16 "," SJ_Q16
#define SJ_Q128 SJ_Q64 "," SJ_Q64
_Static_assert(sizeof(SJ_Q128) == 2 * SJ_IN_CHUNK,
	       "the IN list must have SJ_IN_CHUNK placeholders");

/* Count columns of queue_counts: running, defined, assigned, activated,
** starting, transferring, nbatchjob (struct jb_counts, in that order). */
#define SJ_NCOUNTS 7

/* ---- small helpers ------------------------------------------------------- */

/* A stored figure that must be a real number >= 0. */
static inline int sj_finite_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

/* st_col_str into a const pointer: text column `i` of the current row of
** `s`, copied into `a` (NULL for SQL NULL). Returns st_col_str's code. */
static inline int sj_col_cstr(struct st_db *db, MYSQL_STMT *s,
			      struct st_cols *c, unsigned i, struct arena *a,
			      const char **out)
{
	char *p = NULL;
	int rc = st_col_str(db, s, c, i, a, &p);
	*out = p;
	return rc;
}

/*
** As st_query, with parameter and result binds given as arrays: for the IN
** lists (more placeholders than ST_MAX_ARGS) and the queue row (more
** columns than ST_MAX_COLS). `pb` has `np` binds, `rb` `nr`; both must
** match the statement or GB_EINVAL is recorded. On GB_OK *out is the
** statement with its result buffered (owned by the cache): fetch with
** st_fetch, end with st_done. Otherwise *out is NULL and the code is a
** store error (st_error says more).
*/
int sj_query(struct st_db *db, enum st_sid id, const char *sql, MYSQL_BIND *pb,
	     unsigned np, MYSQL_BIND *rb, unsigned nr, MYSQL_STMT **out);

/* One IN list of SJ_IN_CHUNK parameters, strings or ids, unused ones NULL. */
struct sj_in_list {
	MYSQL_BIND b[SJ_IN_CHUNK];
	unsigned long len[SJ_IN_CHUNK];
	long long ll[SJ_IN_CHUNK];
};

/*
** Fill `l` with the first `n` (<= SJ_IN_CHUNK) of `str` (strings, bound by
** pointer: they must outlive the execute) or, when `str` is NULL, of `ids`;
** the remaining slots bind SQL NULL, which an IN list never matches.
*/
void sj_in_fill(struct sj_in_list *l, const char *const *str,
		const long long *ids, size_t n);

/* ---- array-bound writes -------------------------------------------------- */

#define SJ_BK_MAX_COLS 32

/*
** The rows of one INSERT, column by column: kind 'l' (long long), 'd'
** (double) or 's' (string by pointer; the data outlives the execute), any
** value possibly NULL. Buffers live in the bulk's arena `mem`, which a
** caller may also use for values that must live until the execute; all of
** it goes with sj_bk_free.
*/
struct sj_bulk {
	unsigned ncols, col; /* col: next column of row `rows` */
	char kind[SJ_BK_MAX_COLS];
	size_t rows, cap;
	const char *bad; /* why a row was refused, NULL while all is well */
	void *val[SJ_BK_MAX_COLS];
	unsigned long *len[SJ_BK_MAX_COLS];
	char *ind[SJ_BK_MAX_COLS];
	struct arena mem;
};

/*
** Prepare `b` for up to `cap` rows of the columns in `spec` (one kind
** letter per column, at most SJ_BK_MAX_COLS). Returns GB_OK, GB_ENOMEM
** when the buffers do not fit, or GB_EINVAL for too many columns (both
** recorded on db). Call sj_bk_free afterwards in every case.
*/
int sj_bk_init(struct st_db *db, struct sj_bulk *b, const char *spec,
	       size_t cap);

/* Release everything `b` allocated (its arena). */
void sj_bk_free(struct sj_bulk *b);

/*
** Append one value to the current row, in column order. A value of the
** wrong kind, one row too many, or a NaN/infinite double marks the bulk bad;
** sj_bk_exec then refuses it, so callers need not check each append.
*/
void sj_bk_ll(struct sj_bulk *b, long long v);
void sj_bk_dbl(struct sj_bulk *b, double v);
/* `s` by pointer; NULL binds SQL NULL. */
void sj_bk_str(struct sj_bulk *b, const char *s);
/* SQL NULL in a column of `kind`. */
void sj_bk_null(struct sj_bulk *b, char kind);
/* A missing figure (NAN) is stored as NULL. */
void sj_bk_dbl_or_null(struct sj_bulk *b, double v);

/* Close the current row; a row with too few values marks the bulk bad. */
void sj_bk_end_row(struct sj_bulk *b);

/*
** Execute statement `id` (prepared from `sql` on first use) over every
** collected row, in chunks bounded by rows and bytes; one row per execute
** on servers without bulk support. Returns GB_OK (also for no rows),
** GB_EINVAL for a bad bulk or a statement whose parameters do not match,
** or a store error.
*/
int sj_bk_exec(struct st_db *db, enum st_sid id, const char *sql,
	       const struct sj_bulk *b);

#endif
