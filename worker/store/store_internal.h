/*
** store_internal.h — what store.c, store_task.c and store_outbox.c share:
** the connection object, the per-connection statement cache, and small
** helpers that bind parameters and read result columns.
**
** Why helpers instead of raw MYSQL_BIND arrays in every function: a bind
** array is a dozen lines per statement, and the lifetime rules (the value
** a bind points at must outlive mysql_stmt_execute) are easy to get wrong.
** struct st_args owns copies of the numbers it binds, so a caller can write
** st_arg_ll(&a, x) with a temporary and the value still lives at execute.
** Strings and blobs are bound by pointer: the caller's data outlives the
** call, as it always does here.
**
** Statements are prepared the first time they are used on a connection and
** kept in db->stmt[] by slot (enum st_sid). Statement ids belong to a
** server connection, so st_reconnect closes them all and the next use
** prepares again.
**
** Not part of the module's interface: only the store's own files and the
** store's integration test (which needs st_thread_id to kill a connection)
** include this header.
*/
#ifndef GB_STORE_INTERNAL_H
#define GB_STORE_INTERNAL_H

#include <limits.h>
#include <stddef.h>

#include <mysql.h>

#include "base/arena.h"
#include "base/config.h"
#include "base/hostlist.h"
#include "store/store.h"

/* One slot per statement the store prepares. */
enum st_sid {
	ST_SID_SCHEMA_VERSION = 0,
	ST_SID_MIGRATION_APPLIED,
	ST_SID_MIGRATION_RECORD,
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
	ST_SID_TASK_DS_BULK,
	ST_SID_TASK_GET,
	ST_SID_TASK_DS_GET,
	ST_SID_TASK_UPDATE,
	ST_SID_DECISION_INSERT,
	ST_SID_PENDING_DUE,
	ST_SID_OUTBOX_ADD,
	ST_SID_OUTBOX_SENT,
	ST_SID_OUTBOX_DUE,
	ST_SID_OUTBOX_OF_REQUEST,
	ST_SID_OUTBOX_LEASE,
	/* Job brokerage (store_jobs.c) numbers its statements from here. */
	ST_SID_JOBS_BASE,
	ST_SID_JOBS_LAST = ST_SID_JOBS_BASE + 31,
	/* DIRAC task queues (store_tq*.c) number their statements from here. */
	ST_SID_TQ_BASE,
	ST_SID_TQ_LAST = ST_SID_TQ_BASE + 63,
	/* store_panda.c */
	ST_SID_PANDA_BASE,
	ST_SID_PANDA_LAST = ST_SID_PANDA_BASE + 31,
	/* store_analysis.c */
	ST_SID_ANAL_BASE,
	ST_SID_ANAL_LAST = ST_SID_ANAL_BASE + 31,
	/* store_summary.c */
	ST_SID_SUMMARY_BASE,
	ST_SID_SUMMARY_LAST = ST_SID_SUMMARY_BASE + 7,
	/* store_decisions.c */
	ST_SID_DEC_BASE,
	ST_SID_DEC_LAST = ST_SID_DEC_BASE + 7,
	ST_NSID
};

/*
** Statements whose text depends on a row count (multi-row INSERTs of
** store_tq*.c: "VALUES (?,?),(?,?),..."), prepared per (kind, rows) on
** first use and kept, least recently used first out, so a steady load of
** batches of a few sizes prepares each size once per connection.
*/
#define ST_NROWSTMT 64
struct st_rowstmt {
	int kind;                /* the owner's statement kind, 0 = free slot */
	unsigned rows;           /* rows of the VALUES list */
	unsigned long long used; /* st_db.rowstmt_tick at the last use */
	MYSQL_STMT *stmt;
};

struct st_db {
	MYSQL *my;                    /* NULL while disconnected */
	MYSQL_STMT *stmt[ST_NSID];    /* prepared lazily, per connection */
	char msg[512];                /* last error text (st_error) */
	unsigned errnum;              /* its server/client number, 0 if ours */
	int params_warned;            /* bad params rows logged on this link */
	/* Per-row-count statements (store_tq*.c), closed with stmt[]. */
	struct st_rowstmt rowstmt[ST_NROWSTMT];
	unsigned long long rowstmt_tick;
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
};

/* ---- parameters ---------------------------------------------------------- */

#define ST_MAX_ARGS 40

struct st_args {
	unsigned n;
	int overflow; /* more than ST_MAX_ARGS added: a programming error */
	MYSQL_BIND b[ST_MAX_ARGS];
	unsigned long len[ST_MAX_ARGS];
	long long ll[ST_MAX_ARGS];
	double d[ST_MAX_ARGS];
};

void st_args_init(struct st_args *a);
void st_arg_ll(struct st_args *a, long long v);
void st_arg_dbl(struct st_args *a, double v);
/* A NUL-terminated string by pointer; NULL binds SQL NULL. */
void st_arg_str(struct st_args *a, const char *s);
/* `len` bytes by pointer (may contain NULs). */
void st_arg_blob(struct st_args *a, const void *p, size_t len);
void st_arg_null(struct st_args *a);

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

/* ---- execution ----------------------------------------------------------- */

/* mysql_stmt_execute, timed for the DB round-trip metric (metrics.h):
** every execute of the store goes through here. Returns its result. */
int st_stmt_execute(MYSQL_STMT *s);

/* The statement of slot `id`, prepared from `sql` on first use. */
int st_prepared(struct st_db *db, enum st_sid id, const char *sql,
		MYSQL_STMT **out);

/*
** Prepare `sql` into slot `id` if needed, bind `args` (may be NULL when the
** statement has no parameters) and execute. *out gets the statement (owned
** by the cache). For statements without a result set.
*/
int st_exec(struct st_db *db, enum st_sid id, const char *sql,
	    struct st_args *args, MYSQL_STMT **out);

/*
** As st_exec, then buffer the whole result on the client (so num_rows is
** known before fetching) and bind `cols`. Fetch with st_fetch; always end
** with st_done.
*/
int st_query(struct st_db *db, enum st_sid id, const char *sql,
	     struct st_args *args, struct st_cols *cols, MYSQL_STMT **out);

/* Next row: *got = 1 with a row, 0 at the end. */
int st_fetch(struct st_db *db, MYSQL_STMT *s, int *got);

/* Release the buffered result of `s` (NULL is fine). */
void st_done(MYSQL_STMT *s);

/* A plain query for transaction control and the trusted migration files. */
int st_plain(struct st_db *db, const char *sql, size_t len);

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
