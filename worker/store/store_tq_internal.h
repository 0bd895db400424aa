/*
** store_tq_internal.h — what the DIRAC store files share: store_tq.c
** (helpers, the index's reads, reading match records), store_tq_match.c
** (submission, claim, writing match records) and store_tq_leader.c
** (configuration, job status, lease, priorities, history, cleanup). Only
** those three files include it.
**
** Three things live here because more than one file needs them:
**  - the statement slots: one enum for all three files, because they index
**    one range of the connection's statement cache (ST_SID_TQ_BASE ..
**    ST_SID_TQ_LAST of store_internal.h), and two enums could hand the same
**    slot to two statements;
**  - a growable parameter list (struct stq_binds) for statements with more
**    placeholders than struct st_args holds: IN lists of a few hundred ids
**    and multi-row INSERTs of a thousand rows;
**  - statements prepared per row count (stq_rowstmt), cached in the
**    connection (st_db.rowstmt), for those multi-row INSERTs, and the row
**    collector that sends them in chunks (struct stq_ins).
**
** Placeholder lists of fixed width (STQ_Q64, STQ_Q256) are padded with SQL
** NULL, which an IN list never matches, so one prepared statement serves
** every count up to its width.
*/
#ifndef GB_STORE_TQ_INTERNAL_H
#define GB_STORE_TQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "base/arena.h"
#include "store/store_internal.h"

/* ---- statements ---------------------------------------------------------- */

enum stq_slot {
	/* store_tq.c */
	STQ_LIST = 0,
	STQ_LIST_REQS,
	STQ_GET,
	STQ_SCAN_ONE,
	STQ_SCAN_ALL,
	STQ_LAST_MATCH,
	STQ_CLAIMED_SINCE,
	STQ_MATCH_GET,
	STQ_MATCH_DETAIL,
	/* store_tq_match.c */
	STQ_SIG_LOOKUP,
	STQ_TQ_LOCK,
	STQ_TQ_INSERT,
	STQ_TQ_LOCK_SIG,
	STQ_DIRTY_BUMP,
	STQ_NEXT_SEQ,
	STQ_CLAIM,
	STQ_MATCHED_UPDATE,
	/* store_tq_leader.c */
	STQ_JOB_STATUS,
	STQ_JOB_EXISTS,
	STQ_JOB_GET,
	STQ_CFG_DEL_SLICES,
	STQ_CFG_DEL_INST,
	STQ_CFG_DEL_GROUPS,
	STQ_CFG_DEL_SEGS,
	STQ_CFG_INS_GROUP,
	STQ_CFG_INS_INST,
	STQ_CFG_INS_SLICE,
	STQ_CFG_INS_SEG,
	STQ_CFG_SETTINGS,
	STQ_CFG_GET_SETTINGS,
	STQ_CFG_GET_GROUPS,
	STQ_CFG_GET_INST,
	STQ_CFG_GET_SLICES,
	STQ_CFG_GET_SEGS,
	STQ_LEASE,
	STQ_LEASE_RELEASE,
	STQ_PRIO_STATE,
	STQ_PRIO_UPDATE,
	STQ_PRIO_DONE,
	STQ_HIST_SAMPLE,
	STQ_HIST_LOAD,
	STQ_HIST_PRUNE,
	STQ_CLEAN_CANDIDATES,
	STQ_CLEAN_LOCK,
	STQ_CLEAN_HAS_JOB,
	STQ_CLEAN_DELETE,
	STQ_CLEAN_DIRTY,
	STQ_NSLOTS
};
_Static_assert(ST_SID_TQ_BASE + STQ_NSLOTS <= ST_SID_TQ_LAST + 1,
	       "store_internal.h reserves too few task queue statement slots");
/* The statement-cache slot of task queue statement `slot`. */
#define STQ_SID(slot) ((enum st_sid)(ST_SID_TQ_BASE + (slot)))

/* Kinds of the per-row-count statements (st_rowstmt.kind; 0 = free). */
enum stq_kind {
	STQ_K_TQ_JOBS = 1, /* tq_jobs rows of a submission */
	STQ_K_WMS_JOBS,    /* wms_jobs rows of a submission */
	STQ_K_REQS,        /* tq_requirements rows of new TQs */
	STQ_K_MATCHES,     /* pilot_matches rows of st_tq_record */
};

#define STQ_Q4 "?,?,?,?"
#define STQ_Q16 STQ_Q4 "," STQ_Q4 "," STQ_Q4 "," STQ_Q4
#define STQ_Q64 STQ_Q16 "," STQ_Q16 "," STQ_Q16 "," STQ_Q16
#define STQ_Q128 STQ_Q64 "," STQ_Q64
#define STQ_Q256 STQ_Q128 "," STQ_Q128
_Static_assert(sizeof(STQ_Q256) == 2 * 256, "STQ_Q256 has 256 placeholders");

/* 128 "WHEN ? THEN ?" pairs of a CASE that writes one value per TQ. */
#define STQ_W4 "WHEN ? THEN ? WHEN ? THEN ? WHEN ? THEN ? WHEN ? THEN ? "
#define STQ_W16 STQ_W4 STQ_W4 STQ_W4 STQ_W4
#define STQ_W64 STQ_W16 STQ_W16 STQ_W16 STQ_W16
#define STQ_W128 STQ_W64 STQ_W64

/* Longest text a VARCHAR(256) utf8mb4 column can hold, in bytes. A longer
** value is refused before it is sent: it could not be stored anyway, and a
** multi-row statement of such values could pass max_allowed_packet, which
** costs the connection rather than the statement. */
#define STQ_MAX_NAME_BYTES 1024

/* ---- parameters ---------------------------------------------------------- */

struct stq_param {
	char kind; /* 'l' integer, 'u' unsigned 64-bit, 'd' double, 's', 'n' */
	long long ll;
	double d;
	const char *s;
	unsigned long len;
};

/*
** A growable list of parameter values. Values are kept apart from the
** MYSQL_BIND array, which stq_b_binds builds at the end, because growing
** the list moves the values and a bind must point at where they finally
** are. Strings are bound by pointer: they must outlive the execute.
*/
struct stq_binds {
	struct stq_param *p;
	MYSQL_BIND *b;
	size_t n, cap;
	int oom; /* an append failed: stq_b_binds returns NULL */
};

void stq_b_init(struct stq_binds *b);
void stq_b_free(struct stq_binds *b);
/* Forget the values, keep the memory (the next chunk of rows). */
void stq_b_reset(struct stq_binds *b);
void stq_b_ll(struct stq_binds *b, long long v);
void stq_b_u64(struct stq_binds *b, uint64_t v);
void stq_b_dbl(struct stq_binds *b, double v);
/* NULL binds SQL NULL. */
void stq_b_str(struct stq_binds *b, const char *s);
void stq_b_null(struct stq_binds *b);
/* ids[0..n) then SQL NULL up to `width` (a padded IN list). */
void stq_b_ids(struct stq_binds *b, const long long *ids, size_t n,
	       size_t width);
/* The bind array for mysql_stmt_bind_param (owned by `b`, valid until the
** next append), or NULL when an append ran out of memory. */
MYSQL_BIND *stq_b_binds(struct stq_binds *b);

/* ---- execution ----------------------------------------------------------- */

/*
** Bind `b` (may be NULL for no parameters) to `s` and execute it; with
** `cols`, bind the result and buffer it on the client (fetch with st_fetch,
** end with st_done). The parameter count must match the statement's.
** Returns 0 or a store error (st_error has the text).
*/
int stq_run(struct st_db *db, MYSQL_STMT *s, struct stq_binds *b,
	    struct st_cols *cols);

/* As stq_run on the statement of `slot`, prepared from `sql` on first use;
** *out gets the statement (owned by the cache). */
int stq_run_slot(struct st_db *db, enum stq_slot slot, const char *sql,
		 struct stq_binds *b, struct st_cols *cols, MYSQL_STMT **out);

/*
** The statement `head` + `rows` copies of `row` joined by "," + `tail` (a
** multi-row INSERT), from the connection's per-row-count cache or prepared
** now (evicting the least recently used). *out is owned by the cache.
*/
int stq_rowstmt(struct st_db *db, enum stq_kind kind, unsigned rows,
		const char *head, const char *row, const char *tail,
		MYSQL_STMT **out);

/* ---- multi-row inserts --------------------------------------------------- */

#define STQ_INS_ROWS 1000 /* rows per multi-row INSERT */

/*
** The rows of one multi-row INSERT (`head` then `cols` placeholders per
** `row`), sent every STQ_INS_ROWS rows and by stq_ins_flush: append a
** row's values to x->b, then call stq_ins_row. A thousand rows is far
** under the 65,535 placeholders of a statement and, with names capped at
** STQ_MAX_NAME_BYTES, a few MB of packet.
*/
struct stq_ins {
	enum stq_kind kind;
	const char *head, *row;
	unsigned cols, rows;
	struct stq_binds b;
};

void stq_ins_init(struct stq_ins *x, enum stq_kind kind, const char *head,
		  const char *row, unsigned cols);
void stq_ins_free(struct stq_ins *x);
/* Close the row just appended; a full chunk is sent. */
int stq_ins_row(struct st_db *db, struct stq_ins *x);
/* Send the rows collected so far (none: nothing happens). */
int stq_ins_flush(struct st_db *db, struct stq_ins *x);

/* ---- small helpers ------------------------------------------------------- */

/* 64-bit hash of a signature (FNV-1a with a final avalanche). */
uint64_t stq_hash64(const char *s, size_t n);

/* A name for a VARCHAR(256) column: non-NULL, non-empty, not longer than
** STQ_MAX_NAME_BYTES. */
int stq_name_ok(const char *s);

/*
** A write that failed on a value the tables refuse (too long, a CHECK, an
** out-of-range number) is the input's fault: GB_EINVAL, keeping the
** server's text. Other codes pass through.
*/
int stq_input_error(struct st_db *db, int rc);

/* GB_ESTATE unless a transaction is open (`want` 1) or none is (`want`
** 0); `fn` names the caller in the message. */
int stq_need_txn(struct st_db *db, int want, const char *fn);

/* Text column `i` compared with s[0..len) without copying it when it fit
** the fixed buffer; 1 equal, 0 different, negative a store error. */
int stq_col_equals(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		   unsigned i, const char *str, size_t len);

#endif
