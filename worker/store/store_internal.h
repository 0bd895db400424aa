/*
** store_internal.h — what every file of the store shares: the connection
** object, the statement caches, the one way to bind parameters and run
** statements (store_bind.c: one row, many rows, IN lists), the result
** columns, the decision writer, and small helpers the files had each
** written out.
**
** Why one binding for every file: a MYSQL_BIND array is a dozen lines per
** statement, and its lifetime rules (the value a bind points at must
** outlive mysql_stmt_execute) are easy to get wrong. struct st_args owns
** copies of the numbers it binds, so a caller can write st_arg_ll(&a, x)
** with a temporary and the value still lives at execute. Strings and blobs
** are bound by pointer: the caller's data outlives the execute, as it
** always does here. The same list serves one row, an IN list and the rows
** of a multi-row statement, so there is one set of rules to learn.
**
** Statements are prepared the first time they are used on a connection and
** kept: a statement of fixed text in db->stmt[] by slot (enum st_sid), a
** statement whose text holds a list (ST_LIST, ST_PAIRS, ST_ROWS) per slot
** and list length in db->sized[]. Statement ids belong to a server
** connection, so st_reconnect closes them all and the next use prepares
** again.
**
** Not part of the module's interface: only the store's own files, its
** integration tests (st_thread_id to kill a connection, st_plain, the
** column buffer's size) and the match benchmark (st_plain) include this
** header.
*/
#ifndef GB_STORE_INTERNAL_H
#define GB_STORE_INTERNAL_H

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <mysql.h>

#include "base/arena.h"
#include "base/config.h"
#include "base/hostlist.h"
#include "gb_error.h"
#include "store/store.h"

/* `n` slots a file (or a group of files) numbers its statements in, from
** ST_SID_<name>_BASE to ST_SID_<name>_LAST. */
#define ST_SID_RANGE(name, n)                                                  \
	ST_SID_##name##_BASE,                                                  \
		ST_SID_##name##_LAST = ST_SID_##name##_BASE + (n)-1

/* One slot per statement the store prepares. */
enum st_sid {
	ST_SID_SCHEMA_VERSION = 0,
	ST_SID_MIGRATION_APPLIED,
	ST_SID_MIGRATION_RECORD,
	ST_SID_READ_ONLY,
	ST_SID_PARAM_SEED,
	ST_SID_PARAMS_LOAD,
	ST_SID_CLAIM_MESSAGE,
	ST_SID_NUCLEUS_UPSERT,
	ST_SID_STORAGE_DELETE,
	ST_SID_STORAGE_UPSERT,
	ST_SID_REPLICA_DELETE,
	ST_SID_REPLICA_INSERT,
	ST_SID_NUCLEI_ALL,
	ST_SID_STORAGES_ALL,
	ST_SID_REPLICAS_IN,
	ST_SID_TASK_UPSERT,
	ST_SID_TASK_DS_DELETE,
	ST_SID_TASK_DS_INSERT,
	ST_SID_TASK_GET,
	ST_SID_TASK_DS_GET,
	ST_SID_TASK_UPDATE,
	ST_SID_DECISION_INSERT, /* st_dec_write, for every kind */
	ST_SID_PENDING_DUE,
	ST_SID_OUTBOX_ADD,
	ST_SID_OUTBOX_SENT,
	ST_SID_OUTBOX_SENT_MANY,
	ST_SID_OUTBOX_DUE,
	ST_SID_OUTBOX_OF_REQUEST,
	ST_SID_OUTBOX_OF_REQUEST_DUE,
	ST_SID_OUTBOX_LEASE,
	ST_SID_RANGE(JOBS, 32),	  /* store_jobs*.c (store_jobs_internal.h) */
	ST_SID_RANGE(TQ, 64),	  /* store_tq*.c (store_tq_internal.h) */
	ST_SID_RANGE(PANDA, 32),  /* store_panda.c */
	ST_SID_RANGE(ANAL, 32),	  /* store_analysis.c */
	ST_SID_RANGE(SUMMARY, 8), /* store_summary.c */
	ST_SID_RANGE(DEC, 8),	  /* store_decisions.c */
	ST_SID_RANGE(GRANTS, 8), /* store_grants.c */
	ST_SID_RANGE(INPUTS, 8), /* store_inputs.c */
	ST_NSID
};

/*
** Statements whose text holds a list, prepared per (slot, list length) on
** first use and kept, least recently used first out: a steady load of a
** few lengths (the fixed-width IN lists, the batch sizes of the
** multi-row statements) prepares each once per connection.
*/
#define ST_NSIZED 128
struct st_sized {
	int id;                  /* enum st_sid; meaningful while stmt is set */
	unsigned n;              /* the list's length */
	unsigned long long used; /* st_db.sized_tick at the last use */
	MYSQL_STMT *stmt;        /* NULL: a free entry */
};

struct st_db {
	MYSQL *my;                    /* NULL while disconnected */
	MYSQL_STMT *stmt[ST_NSID];    /* prepared lazily, per connection */
	struct st_sized sized[ST_NSIZED]; /* statements with lists, likewise */
	unsigned long long sized_tick;
	char msg[512];                /* last error text (st_error) */
	unsigned errnum;              /* its server/client number, 0 if ours */
	int params_warned;            /* bad params rows logged on this link */
	/* What st_reconnect needs; copied so the caller's config may change. */
	struct hl_list hosts;         /* [database] host, parsed */
	size_t host_cur;              /* entry that last worked (hostlist.h) */
	char socket[PATH_MAX];
	char name[64];
	char user[64];
	char password[CFG_STR];
	int tls;                      /* [database] tls: TLS required */
	int tls_verify;
	char tls_ca[PATH_MAX];
	char tls_cert[PATH_MAX];
	char tls_key[PATH_MAX];       /* resolved (config.h: db_tls_key) */
	struct st_swcache *swc;       /* parsed sw dictionaries, NULL until
					 the first (store_swcache.c) */
	unsigned long long txn_seq;   /* st_begin's count: what a cache
					 kept for one transaction checks */
	struct sj_qcache *qcache;     /* store_jobs.c: one transaction's
					 queues, NULL until the first */
};

/* ---- parsed software dictionaries (store_swcache.c) ---------------------- */

struct rc_sw;
/* At the start of a grid load: empty the cache if it is full (never during
** a load, so what a load handed out stays valid for its decision). */
int stc_sw_begin(struct st_db *db); /* 1 when it emptied the cache */
/* The parsed RC-01 dictionary of stored text `json` (named `what` in
** errors): from the cache, or parsed and kept; when the cache is full,
** parsed into `a`. 0, GB_ETOOBIG or GB_ERANGE (does not parse), with the
** text in st_error. */
int stc_sw_get(struct st_db *db, const char *json, const char *what,
	       struct arena *a, const struct rc_sw **out);
/* Free the cache (st_close). */
void stc_sw_free(struct st_db *db);
/* Free store_jobs.c's queue cache (st_close). */
void sj_qcache_free(struct st_db *db);

/* ---- parameters (store_bind.c) ------------------------------------------- */

/* Values a list holds in itself: every one-row statement, and the claim's
** IN list of ST_TQ_CLAIM_MAX ids, without touching the heap. */
#define ST_ARGS_INLINE 64

struct st_param {
	char kind; /* 'l' integer, 'u' unsigned 64-bit, 'd' double, 's' text,
		      'b' blob, 'n' NULL */
	unsigned long len; /* 's', 'b': bytes */
	union {
		long long ll;
		double d;
		const void *p; /* 's', 'b': the caller's bytes */
	} v;
};

/*
** The parameter values of one execute, in placeholder order. The bind
** array is built from them at execute, so a list may grow (and move) while
** it is filled. Any append that cannot be honoured (a full fixed list, no
** memory, a NaN) marks the list bad instead of failing on the spot, and
** the execute then refuses it: callers need not check each append.
*/
struct st_args {
	size_t n;              /* values appended */
	size_t cap;            /* room: ST_ARGS_INLINE until grown */
	size_t bytes;          /* wire size, roughly: 9 a value plus its text */
	int many;              /* may grow on the heap (st_args_init_many) */
	int bad_rc;            /* with `bad`: the code the execute returns */
	const char *bad;       /* why the list cannot be sent; NULL: fine */
	struct st_param *heap; /* the values once grown, else NULL */
	MYSQL_BIND *heap_b;    /* their binds, likewise */
	struct st_param in[ST_ARGS_INLINE];
	MYSQL_BIND in_b[ST_ARGS_INLINE];
};

/* A list of up to ST_ARGS_INLINE values (more: the execute fails with
** GB_EINVAL). Nothing to free. */
void st_args_init(struct st_args *a);
/* A list that grows on the heap as needed: end with st_args_free. */
void st_args_init_many(struct st_args *a);
/* Release what the list allocated; it is then empty and may be reused. */
void st_args_free(struct st_args *a);
/* Forget the values, keep the memory (the next chunk of an IN list). */
void st_args_reset(struct st_args *a);

void st_arg_ll(struct st_args *a, long long v);
void st_arg_u64(struct st_args *a, uint64_t v);
/* A NaN or an infinity would reach the server as garbage: it marks the
** list bad (GB_EINVAL at execute). */
void st_arg_dbl(struct st_args *a, double v);
/* A missing figure (NAN) binds SQL NULL; any other value as st_arg_dbl. */
void st_arg_dbl_or_null(struct st_args *a, double v);
/* A NUL-terminated string by pointer; NULL binds SQL NULL. */
void st_arg_str(struct st_args *a, const char *s);
/* `len` bytes by pointer (may contain NULs). */
void st_arg_blob(struct st_args *a, const void *p, size_t len);
void st_arg_null(struct st_args *a);
/* `k` SQL NULLs: the padding of a fixed-width list, which neither IN nor
** CASE ... WHEN ever matches. */
void st_arg_nulls(struct st_args *a, size_t k);
/* ids[0..n) then SQL NULL up to `width` (>= n): a padded IN list. */
void st_arg_ids(struct st_args *a, const long long *ids, size_t n,
		size_t width);

/* ---- lists in a statement's text ----------------------------------------- */

/*
** Where a statement's text holds a list, one of these markers stands (C
** string literals, joined with the text around them). The text is a
** template: st_prepared_n replaces each marker by `n` entries, so one
** function writes every "?,?,..." of the store:
**   ST_LIST   n placeholders "?,?,...,?"              (an IN list)
**   ST_PAIRS  n "WHEN ? THEN ? "                       (a CASE's arms)
**   ST_ROWS   n rows "(?,...,?),(...)" of `width` each (a multi-row INSERT)
** Control characters, because no SQL text contains them.
*/
#define ST_LIST "\001"
#define ST_PAIRS "\002"
#define ST_ROWS "\003"

/* Placeholders MariaDB accepts in one statement. */
#define ST_MAX_PLACEHOLDERS 65535

/*
** The statement of slot `id` made from template `tmpl` with lists of `n`
** entries (rows of `width` placeholders for ST_ROWS; 0 when the text has
** none), from the connection's per-length cache or prepared now (evicting
** the least recently used). *out is owned by the cache and stays valid
** until the next call. GB_EINVAL for n == 0.
*/
int st_prepared_n(struct st_db *db, enum st_sid id, const char *tmpl,
		  unsigned n, unsigned width, MYSQL_STMT **out);

/*
** A list of `n` entries taken `width` at a time by a statement with a
** fixed-width list (an IN list, CASE arms): one round per chunk, the
** chunk's values appended to ch.a, padded with st_arg_nulls up to the
** width, then the statement run:
**   struct st_chunks ch;
**   st_chunks_init(&ch, n, W);
**   while (st_chunks_next(&ch, &rc)) {
**           for (i = 0; i < ch.k; i++) st_arg_...(&ch.a, x[ch.off + i]);
**           st_arg_nulls(&ch.a, W - ch.k);
**           rc = st_run_n(..., W, &ch.a, ...);
**   }
**   st_chunks_free(&ch);
*/
struct st_chunks {
	size_t n, width;
	size_t off, k;    /* this round's entries: [off, off + k) */
	struct st_args a; /* its values, emptied every round */
};

void st_chunks_init(struct st_chunks *ch, size_t n, size_t width);
/* The next chunk: 1 with ch->off, ch->k set and ch->a empty; 0 when every
** entry was had, or once *rc is an error. */
int st_chunks_next(struct st_chunks *ch, const int *rc);
void st_chunks_free(struct st_chunks *ch);

/* ---- many rows ----------------------------------------------------------- */

#define ST_ROWS_MAX 1000		 /* rows per multi-row statement */
#define ST_ROWS_BYTES ((size_t)4 << 20) /* payload per statement */

/*
** The rows of one multi-row statement (a template with ST_ROWS), sent as
** the rows come: append a row's `width` values to r->a with st_arg_*, then
** call st_rows_end; st_rows_flush sends the rest. A statement carries at
** most ST_ROWS_MAX rows (fewer when they would pass ST_MAX_PLACEHOLDERS)
** and, beyond its first row, at most ST_ROWS_BYTES: a thousand rows stay
** far under max_allowed_packet even with long names, and a long row (a
** queue's software dictionary) goes out alone. The values are kept from
** one statement to the next, so a long load allocates no memory per row.
** Strings are bound by pointer: they must live until their row is sent
** (at the latest, st_rows_flush).
*/
struct st_rows {
	enum st_sid id;   /* the statement's slot */
	const char *tmpl; /* its text, ST_ROWS where the rows go */
	unsigned width;   /* values per row */
	size_t rows;      /* rows collected and not sent yet */
	size_t max_rows;  /* rows per statement */
	struct st_args a; /* the values; grows on the heap */
};

void st_rows_init(struct st_rows *r, enum st_sid id, const char *tmpl,
		  unsigned width);
/* Release the values (rows not flushed are dropped). */
void st_rows_free(struct st_rows *r);
/* Close the row just appended; a full statement is sent. Returns GB_OK,
** GB_EINVAL for a row of the wrong width, or a store error. */
int st_rows_end(struct st_db *db, struct st_rows *r);
/* Send the rows collected so far (none: nothing happens). */
int st_rows_flush(struct st_db *db, struct st_rows *r);

/* ---- result columns ------------------------------------------------------ */

#define ST_MAX_COLS 12
#define ST_STRBUF 272 /* covers a VARCHAR(256) of ASCII; longer: fetch_column */

struct st_cols {
	unsigned n;
	/* 'l' integer, 'd' double, 's' text, 'b' blob */
	char kind[ST_MAX_COLS];
	MYSQL_BIND b[ST_MAX_COLS];
	unsigned long len[ST_MAX_COLS];
	my_bool isnull[ST_MAX_COLS];
	my_bool error[ST_MAX_COLS];
	long long ll[ST_MAX_COLS];
	double d[ST_MAX_COLS];
	char s[ST_MAX_COLS][ST_STRBUF];
};

/*
** Describe the result: one letter per column of `spec` ("lsd" = integer,
** text, double; 'b' = blob, fetched on demand with st_col_blob).
*/
void st_cols_init(struct st_cols *c, const char *spec);

int st_col_isnull(const struct st_cols *c, unsigned i);
long long st_col_ll(const struct st_cols *c, unsigned i);
double st_col_dbl(const struct st_cols *c, unsigned i);
/*
** Copy a text column into `a` (NULL for SQL NULL). Returns 0, GB_ETOOBIG
** when the arena is full, or a database error.
*/
int st_col_str(struct st_db *db, MYSQL_STMT *s, struct st_cols *c, unsigned i,
	       struct arena *a, char **out);
/* Copy a blob column into `a` (never NULL on success; *len may be 0). */
int st_col_blob(struct st_db *db, MYSQL_STMT *s, struct st_cols *c, unsigned i,
		struct arena *a, void **out, size_t *len);

/* st_col_str into a `const char *` field of an engine struct. */
static inline int st_col_cstr(struct st_db *db, MYSQL_STMT *s,
			      struct st_cols *c, unsigned i, struct arena *a,
			      const char **out)
{
	char *p = NULL;
	int rc = st_col_str(db, s, c, i, a, &p);
	*out = p;
	return rc;
}

/* ---- execution ----------------------------------------------------------- */

/* mysql_stmt_execute, timed for the DB round-trip metric (metrics.h):
** every execute of the store goes through here. Returns its result. */
int st_stmt_execute(MYSQL_STMT *s);

/* The statement of slot `id`, prepared from `sql` on first use. */
int st_prepared(struct st_db *db, enum st_sid id, const char *sql,
		MYSQL_STMT **out);

/*
** Bind `args` (NULL: no parameters; their number must be the statement's)
** to prepared statement `s` and execute it. With `cols`, the result is
** bound to them and buffered on the client (so num_rows is known before
** fetching): fetch with st_fetch, end with st_done. A statement with a
** result that fails is closed and forgotten, so its next use prepares it
** again: a RETURNING statement's error (a deadlock, a duplicate key)
** arrives with its rows, and Connector/C may otherwise believe a result is
** still pending on the handle and wait at the next execute for rows the
** server never sends. Returns 0 or a store error (st_error says more).
*/
int st_run(struct st_db *db, MYSQL_STMT *s, struct st_args *args,
	   struct st_cols *cols);

/* As st_run, the result bound to the `nr` binds `rb` (0: no result): for
** a row wider than one struct st_cols. */
int st_run_binds(struct st_db *db, MYSQL_STMT *s, struct st_args *args,
		 MYSQL_BIND *rb, unsigned nr);

/* st_prepared_n (lists of `n`, no ST_ROWS) then st_run; *out gets the
** statement (owned by the cache). */
int st_run_n(struct st_db *db, enum st_sid id, const char *tmpl, unsigned n,
	     struct st_args *args, struct st_cols *cols, MYSQL_STMT **out);

/* st_prepared then st_run without a result; *out gets the statement (owned
** by the cache). */
int st_exec(struct st_db *db, enum st_sid id, const char *sql,
	    struct st_args *args, MYSQL_STMT **out);

/* st_prepared then st_run with `cols`; always end with st_done. */
int st_query(struct st_db *db, enum st_sid id, const char *sql,
	     struct st_args *args, struct st_cols *cols, MYSQL_STMT **out);

/* The one parameter of a lookup: an integer (ST_ID) or a text (ST_TEXT;
** NULL binds SQL NULL). */
struct st_key {
	int is_text;
	const char *text;
	long long id;
};
#define ST_ID(v) ((struct st_key){0, NULL, (v)})
#define ST_TEXT(s) ((struct st_key){1, (s), 0})

/*
** A lookup by one key: st_query with `key` the one parameter, `cols`
** initialised from `spec` first. Read the rows with st_row (one row:
** got = st_row(...)), then st_done.
*/
int st_query_key(struct st_db *db, enum st_sid id, const char *sql,
		 struct st_key key, const char *spec, struct st_cols *cols,
		 MYSQL_STMT **out);

/*
** An UPDATE of the row whose key is `key`: `sql` takes `value`, then the
** key. GB_ENOTFOUND ("<what> <key> not found") when no row has that key;
** with CLIENT_FOUND_ROWS a row that already had the value counts as
** found. Returns 0 or a store error.
*/
int st_update_id(struct st_db *db, enum st_sid id, const char *sql,
		 long long value, long long key, const char *what);

/* Next row: *got = 1 with a row, 0 at the end. */
int st_fetch(struct st_db *db, MYSQL_STMT *s, int *got);

/*
** The loop over a result: while (st_row(db, s, &rc)) { ... }. Fetches
** while *rc is GB_OK; 1 with a row, 0 at the end or once *rc is an error
** (a failed fetch sets it), so a body that fails just sets rc.
*/
static inline int st_row(struct st_db *db, MYSQL_STMT *s, int *rc)
{
	int got = 0;
	if (*rc == GB_OK)
		*rc = st_fetch(db, s, &got);
	return *rc == GB_OK && got;
}

/* Release the buffered result of `s` (NULL is fine). */
void st_done(MYSQL_STMT *s);

/*
** An array in `a` for the buffered result of `s`, `size` bytes a row:
** *rows gets the row count. NULL for no rows, or when it does not fit
** (*rc then GB_ETOOBIG, naming `what`).
*/
void *st_result_array(struct st_db *db, MYSQL_STMT *s, struct arena *a,
		      size_t size, const char *what, size_t *rows, int *rc);

/*
** Query `sql` (slot `id`, parameters `args`) and read column 0, an
** integer, of up to `max` rows into ids; *n gets how many.
*/
int st_query_ids(struct st_db *db, enum st_sid id, const char *sql,
		 struct st_args *args, size_t max, long long *ids, size_t *n);

/*
** The ids a "due" query returns, locked FOR UPDATE SKIP LOCKED: the query
** takes `now` and a LIMIT, and must run in a transaction (with autocommit
** on, FOR UPDATE locks nothing and two workers would retry the same row);
** `fn` names the caller in the error. Up to `max` ids; *n gets how many.
*/
int st_due_ids(struct st_db *db, enum st_sid id, const char *sql,
	       const char *fn, long long now, size_t max, long long *ids,
	       size_t *n);

/* Close every prepared statement (before the connection goes). */
void st_stmts_close(struct st_db *db);

/* A plain query for transaction control and the trusted migration files. */
int st_plain(struct st_db *db, const char *sql, size_t len);

/* ---- decisions (store_decisions.c) --------------------------------------- */

struct st_dec_row;

/*
** Write one row of `decisions` (kind task, jobs, timeout or rebro; the
** pilots have their own table) from `row`: every field but `id`, which
** gets the new row's id. The strings are the caller's; chosen may be
** NULL. Returns 0 or a store error.
*/
int st_dec_write(struct st_db *db, struct st_dec_row *row);

/* ---- small helpers ------------------------------------------------------- */

/* A stored figure that must be a real number >= 0. */
static inline int st_finite_nonneg(double v)
{
	return isfinite(v) && v >= 0;
}

/* The longest MEDIUMBLOB or MEDIUMTEXT value, in bytes. */
#define ST_MEDIUM_MAX 16777215u

/* A size as a LIMIT parameter. */
static inline long long st_limit(size_t n)
{
	return n > (size_t)LLONG_MAX ? LLONG_MAX : (long long)n;
}

/* qsort order of `const char *` by strcmp. */
int st_cmp_strp(const void *a, const void *b);

/* Sort v[0..n) by strcmp and drop the repeats: the names an IN list asks
** for once each. Returns how many are left. */
size_t st_distinct(const char **v, size_t n);

/* GB_ETOOBIG: `n` `what` do not fit the request's memory. */
int st_too_big(struct st_db *db, const char *what, size_t n);

/* GB_ESTATE unless a transaction is open (`want` 1) or none is (`want`
** 0); `fn` names the caller in the message. */
int st_need_txn(struct st_db *db, int want, const char *fn);

/* End the transaction the caller began: commit when `rc` is GB_OK (and
** return the commit's code), else roll back and return `rc`. */
int st_end(struct st_db *db, int rc);

/*
** A write that failed on a value the tables refuse (too long, NULL, a
** CHECK, out of range; with `dup` also a duplicate key) is the input's
** fault: GB_EINVAL, keeping the server's text. Other codes pass through.
*/
int st_input_error(struct st_db *db, int rc, int dup);

/* ---- errors -------------------------------------------------------------- */

/* Map a client or server error number to GB_EDBGONE, GB_EDBRETRY or GB_EDB. */
int st_map_errno(unsigned err);
/* Record the connection's last error; returns the mapped code. */
int st_fail_conn(struct st_db *db);
/* Record a statement's last error; returns the mapped code. */
int st_fail_stmt(struct st_db *db, MYSQL_STMT *s);
/* Record our own message; returns `code`. */
int st_failf(struct st_db *db, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Non-zero inside an explicit transaction (the server's status flag). */
int st_in_transaction(struct st_db *db);

/* Server-side id of the connection (0 while disconnected); for tests. */
unsigned long st_thread_id(const struct st_db *db);

#endif
