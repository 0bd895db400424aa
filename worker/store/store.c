/*
** store.c — the MariaDB connection: open/reconnect, error mapping, the
** small helpers of store_internal.h, transactions, migrations, parameters
** and request dedup. Binding and running statements is store_bind.c; the
** grid and task tables are in store_task.c, the outbox in store_outbox.c.
**
** One blocking connection per process, no automatic reconnect: a silent
** reconnect inside Connector/C would drop the open transaction and every
** prepared statement behind the caller's back. Instead a lost link is
** reported as GB_EDBGONE and the caller reconnects and redoes the whole
** request, which the dedup table makes safe.
**
** Session settings, and why:
**  - READ COMMITTED: the claim queries (FOR UPDATE SKIP LOCKED) take no gap
**    locks and skip delete-marked rows, which under REPEATABLE READ cause
**    most of the queue-table contention seen in practice.
**  - strict sql_mode on every table: a value that does not fit is an error,
**    never a silently truncated name.
**  - innodb_lock_wait_timeout below the client's read timeout, so a long lock
**    wait comes back as ER_LOCK_WAIT_TIMEOUT (retry the transaction) instead
**    of a client timeout that looks like a lost server.
**  - CLIENT_FOUND_ROWS: an UPDATE reports matched rows, so "no such row" and
**    "row already had these values" are told apart.
*/
#include "store/store_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysqld_error.h>

#include "base/clock.h"
#include "gb_error.h"
#include "base/log.h"
#include "base/metrics.h"

#define ST_CONNECT_TIMEOUT_S 5
#define ST_READ_TIMEOUT_S 30
#define ST_WRITE_TIMEOUT_S 30

#define ST_MIGRATION_MAX_FILES 1000
#define ST_MIGRATION_MAX_BYTES (1u << 20)
#define ST_MIGRATION_NAME_MAX 128

static const char SQL_SESSION[] =
	"SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
	"NO_ENGINE_SUBSTITUTION', SESSION innodb_lock_wait_timeout = 10, "
	"SESSION autocommit = 1";
static const char SQL_ISOLATION[] =
	"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

/* The errors (st_failf, st_error, st_map_errno, ...) are store_error.c's. */

unsigned long st_thread_id(const struct st_db *db)
{
	return db && db->my ? mysql_thread_id(db->my) : 0;
}

int st_end(struct st_db *db, int rc)
{
	if (rc == GB_OK)
		return st_commit(db);
	st_rollback(db);
	return rc;
}

int st_input_error(struct st_db *db, int rc, int dup)
{
	if (rc != GB_EDB)
		return rc;
	switch (db->errnum) {
	case ER_DUP_ENTRY:
		return dup ? GB_EINVAL : rc;
	case ER_BAD_NULL_ERROR:
	case ER_DATA_TOO_LONG:
	case ER_CONSTRAINT_FAILED:
	case ER_WARN_DATA_OUT_OF_RANGE:
	case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
	case ER_TRUNCATED_WRONG_VALUE:
	case WARN_DATA_TRUNCATED:
		return GB_EINVAL;
	default:
		return rc;
	}
}

/* ---- small helpers ------------------------------------------------------- */

int st_cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t st_distinct(const char **v, size_t n)
{
	size_t u = 0;
	qsort(v, n, sizeof(*v), st_cmp_strp);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || strcmp(v[i], v[u - 1]) != 0)
			v[u++] = v[i];
	return u;
}


/* ---- plain queries ------------------------------------------------------- */

int st_plain(struct st_db *db, const char *sql, size_t len)
{
	if (db->my == NULL)
		return st_failf(db, GB_EDBGONE,
				"not connected to the database");
	double t0 = clk_mono();
	int ex = mysql_real_query(db->my, sql, (unsigned long)len);
	mx_wk_db_roundtrip(clk_mono() - t0);
	if (ex != 0)
		return st_fail_conn(db);
	/* Drain whatever came back (a migration may hold a SELECT). */
	for (;;) {
		MYSQL_RES *r = mysql_store_result(db->my);
		if (r)
			mysql_free_result(r);
		else if (mysql_field_count(db->my) != 0)
			return st_fail_conn(db);
		int more = mysql_next_result(db->my);
		if (more > 0)
			return st_fail_conn(db);
		if (more < 0)
			return GB_OK;
	}
}

/* ---- connection ---------------------------------------------------------- */

/*
** Is the server a node that may serve queries? A Galera node that is up but
** outside the primary component (a partition, a node still joining)
** accepts connections and then refuses nearly every statement with 1047
** "WSREP has not yet prepared node for application use"; connecting to it
** would keep a worker on a node that cannot work, so st_connect treats it
** as down and tries the next entry. A server without Galera (no wsrep_on,
** or wsrep_on OFF, as a plain Debian MariaDB has it) is ready. Constant
** statements without parameters, like st_plain's. 1: ready, 0: not
** (db->msg says so), -1: a query failed.
*/
static int st_node_ready(struct st_db *db, const char *at)
{
	static const char q_plain[] = "SHOW VARIABLES LIKE 'wsrep_on'";
	static const char q[] = "SHOW GLOBAL STATUS LIKE 'wsrep_ready'";
	MYSQL_RES *res;
	MYSQL_ROW row;
	/* A plain server reports wsrep_ready OFF too: ask wsrep_on first. */
	if (mysql_real_query(db->my, q_plain, sizeof(q_plain) - 1) != 0 ||
	    (res = mysql_store_result(db->my)) == NULL)
		return -1;
	row = mysql_fetch_row(res);
	int galera = row != NULL && row[1] != NULL && strcmp(row[1], "ON") == 0;
	mysql_free_result(res);
	if (!galera)
		return 1;
	if (mysql_real_query(db->my, q, sizeof(q) - 1) != 0 ||
	    (res = mysql_store_result(db->my)) == NULL)
		return -1;
	row = mysql_fetch_row(res);
	int ready = row != NULL && row[1] != NULL && strcmp(row[1], "ON") == 0;
	mysql_free_result(res);
	if (!ready)
		st_failf(db, GB_EDBGONE,
			 "connect to %s: Galera node not ready (wsrep_ready is "
			 "not ON: not in the primary component)",
			 at);
	return ready;
}

/*
** Connect the fresh handle db->my to `e` (NULL: the Unix socket), `at`
** naming it for messages, and set the session up. On failure db->my is
** closed and NULL, db->msg says why.
*/
static int st_connect_one(struct st_db *db, const struct hl_entry *e,
			  const char *at)
{
	db->my = mysql_init(NULL);
	if (db->my == NULL)
		return st_failf(db, GB_ENOMEM, "mysql_init: out of memory");
	unsigned int ct = ST_CONNECT_TIMEOUT_S, rt = ST_READ_TIMEOUT_S,
		     wt = ST_WRITE_TIMEOUT_S;
	my_bool no = 0;
	mysql_optionsv(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
	mysql_optionsv(db->my, MYSQL_OPT_READ_TIMEOUT, &rt);
	mysql_optionsv(db->my, MYSQL_OPT_WRITE_TIMEOUT, &wt);
	mysql_optionsv(db->my, MYSQL_OPT_RECONNECT, &no);
	mysql_optionsv(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (db->tls) {
		/* ENFORCE: a server (or a man in the middle) that does not
		** offer TLS is an error, never a silent plain connection.
		** VERIFY_SERVER_CERT checks the chain against the CA and that
		** the certificate names the host connected to. */
		my_bool yes = 1, verify = db->tls_verify ? 1 : 0;
		if (db->tls_ca[0])
			mysql_optionsv(db->my, MYSQL_OPT_SSL_CA, db->tls_ca);
		if (db->tls_cert[0])
			mysql_optionsv(db->my, MYSQL_OPT_SSL_CERT, db->tls_cert);
		if (db->tls_key[0])
			mysql_optionsv(db->my, MYSQL_OPT_SSL_KEY, db->tls_key);
		mysql_optionsv(db->my, MYSQL_OPT_TLS_VERSION, "TLSv1.2,TLSv1.3");
		mysql_optionsv(db->my, MYSQL_OPT_SSL_ENFORCE, &yes);
		mysql_optionsv(db->my, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
	}

	/* Connector/C uses the socket when the host is NULL/"localhost". */
	const char *sock = e ? NULL : db->socket;
	if (mysql_real_connect(db->my, e ? e->host : NULL, db->user,
			       db->password[0] ? db->password : NULL, db->name,
			       e ? (unsigned)e->port : 0, sock,
			       CLIENT_FOUND_ROWS) == NULL) {
		unsigned err = mysql_errno(db->my);
		if (err == CR_SSL_CONNECTION_ERROR)
			st_failf(db, GB_EDB, "TLS handshake with %s failed: %s (%u)",
				 at, mysql_error(db->my), err);
		else
			st_failf(db, GB_EDB, "connect to %s: %s (%u)", at,
				 mysql_error(db->my), err);
		db->errnum = err;
		mysql_close(db->my);
		db->my = NULL;
		/* A node that refuses TLS is as unreachable as one that is
		** down: the caller may try the next one, and reconnects. */
		return err == CR_SSL_CONNECTION_ERROR ? GB_EDBGONE
						      : st_map_errno(err);
	}
	int ready = st_node_ready(db, at);
	int rc = ready > 0 ? GB_OK : ready == 0 ? GB_EDBGONE : st_fail_conn(db);
	if (rc == GB_OK)
		rc = st_plain(db, SQL_SESSION, sizeof(SQL_SESSION) - 1);
	if (rc == GB_OK)
		rc = st_plain(db, SQL_ISOLATION, sizeof(SQL_ISOLATION) - 1);
	if (rc != GB_OK) {
		mysql_close(db->my);
		db->my = NULL;
		return rc;
	}
	return GB_OK;
}

/*
** (Re)connect: the Unix socket when one is configured, else the entries of
** the host list in hostlist.h's order, starting with the one that last
** worked, so all of a worker's connections stay on one Galera node until it
** fails. The reasons of every entry tried end up in db->msg.
*/
static int st_connect(struct st_db *db)
{
	st_stmts_close(db);
	if (db->my)
		mysql_close(db->my);
	db->my = NULL;
	int rc;
	if (db->socket[0]) {
		char at[PATH_MAX + 8];
		snprintf(at, sizeof(at), "socket %s", db->socket);
		rc = st_connect_one(db, NULL, at);
	} else {
		char tried[sizeof(db->msg)] = "";
		unsigned last_errnum = 0;
		size_t used = 0;
		rc = GB_EDBGONE;
		for (size_t k = 0; k < db->hosts.n; k++) {
			size_t i = hl_try(db->hosts.n, db->host_cur, k);
			char at[HL_TEXT_MAX];
			hl_format(&db->hosts.e[i], at, sizeof(at));
			rc = st_connect_one(db, &db->hosts.e[i], at);
			if (rc == GB_OK) {
				if (k > 0)
					log_warn("MariaDB: connected to %s (entry "
						 "%zu of %zu) after: %s",
						 at, i + 1, db->hosts.n, tried);
				else if (db->hosts.n > 1)
					log_info("MariaDB: connected to %s (entry "
						 "%zu of %zu)",
						 at, i + 1, db->hosts.n);
				db->host_cur = i;
				break;
			}
			if (rc == GB_ENOMEM)
				return rc;
			last_errnum = db->errnum;
			if (used + 1 < sizeof(tried)) {
				int n = snprintf(tried + used,
						 sizeof(tried) - used, "%s%s",
						 used ? "; " : "", db->msg);
				if (n > 0)
					used += (size_t)n < sizeof(tried) - used
							? (size_t)n
							: sizeof(tried) - used - 1;
			}
		}
		if (rc != GB_OK && db->hosts.n > 1) {
			st_failf(db, rc, "%s", tried);
			db->errnum = last_errnum;
		}
	}
	if (rc != GB_OK)
		return rc;
	db->params_warned = 0;
	db->msg[0] = '\0';
	db->errnum = 0;
	return GB_OK;
}

int st_open(const struct gb_config *cfg, struct st_db **out, char *err,
	    size_t errlen)
{
	*out = NULL;
	if (cfg == NULL) {
		if (errlen)
			snprintf(err, errlen, "no configuration");
		return GB_EINVAL;
	}
	struct st_db *db = calloc(1, sizeof(*db));
	if (db == NULL) {
		if (errlen)
			snprintf(err, errlen, "out of memory");
		return GB_ENOMEM;
	}
	char why[512];
	/* cfg_load checked the list; a config built by hand may not be. */
	if (hl_parse(cfg->db_host, cfg->db_port, &db->hosts, why,
		     sizeof(why)) != GB_OK) {
		if (errlen)
			snprintf(err, errlen, "database.host: %s", why);
		free(db);
		return GB_ECONFIG;
	}
	snprintf(db->socket, sizeof(db->socket), "%s", cfg->db_socket);
	snprintf(db->name, sizeof(db->name), "%s", cfg->db_name);
	snprintf(db->user, sizeof(db->user), "%s", cfg->db_user);
	snprintf(db->password, sizeof(db->password), "%s", cfg->db_password);
	db->tls = cfg->db_tls;
	db->tls_verify = cfg->db_tls_verify;
	snprintf(db->tls_ca, sizeof(db->tls_ca), "%s", cfg->db_tls_ca_file);
	snprintf(db->tls_cert, sizeof(db->tls_cert), "%s",
		 cfg->db_tls_cert_file);
	/* cfg_load resolved a cred:NAME key; a hand-made config names the
	** file itself. */
	snprintf(db->tls_key, sizeof(db->tls_key), "%s",
		 cfg->db_tls_key[0] ? cfg->db_tls_key : cfg->db_tls_key_file);
	int rc = st_connect(db);
	if (rc != GB_OK) {
		if (errlen)
			snprintf(err, errlen, "%s", db->msg);
		st_close(db);
		return rc;
	}
	*out = db;
	return GB_OK;
}

void st_close(struct st_db *db)
{
	if (db == NULL)
		return;
	st_stmts_close(db);
	sj_qcache_free(db);
	stc_sw_free(db);
	if (db->my)
		mysql_close(db->my);
	db->my = NULL;
	/* The password does not outlive the connection object. */
	volatile char *p = db->password;
	for (size_t i = 0; i < sizeof(db->password); i++)
		p[i] = 0;
	free(db);
}

int st_reconnect(struct st_db *db)
{
	if (db == NULL)
		return GB_EINVAL;
	return st_connect(db);
}

int st_ping(struct st_db *db)
{
	if (db == NULL)
		return GB_EINVAL;
	if (db->my == NULL)
		return st_failf(db, GB_EDBGONE,
				"not connected to the database");
	if (mysql_ping(db->my) != 0)
		return st_fail_conn(db);
	return GB_OK;
}

/* ---- transactions -------------------------------------------------------- */

int st_begin(struct st_db *db)
{
	static const char sql[] = "START TRANSACTION";
	db->txn_seq++;
	return st_plain(db, sql, sizeof(sql) - 1);
}

int st_commit(struct st_db *db)
{
	static const char sql[] = "COMMIT";
	return st_plain(db, sql, sizeof(sql) - 1);
}

/* Run a rollback statement; when it fails too, keep the text of the
** failure that led here: a rollback on a dead link fails as well, and
** "server has gone away" would hide the cause. */
static int rollback_keeping_error(struct st_db *db, const char *sql,
				  size_t len)
{
	char keep[sizeof(db->msg)];
	unsigned keep_errnum = db->errnum;
	memcpy(keep, db->msg, sizeof(keep));
	int rc = st_plain(db, sql, len);
	if (rc != GB_OK && keep[0]) {
		memcpy(db->msg, keep, sizeof(keep));
		db->errnum = keep_errnum;
	}
	return rc;
}

int st_rollback(struct st_db *db)
{
	static const char sql[] = "ROLLBACK";
	return rollback_keeping_error(db, sql, sizeof(sql) - 1);
}

int st_savepoint(struct st_db *db)
{
	static const char sql[] = "SAVEPOINT gb_item";
	return st_plain(db, sql, sizeof(sql) - 1);
}

int st_rollback_savepoint(struct st_db *db)
{
	static const char sql[] = "ROLLBACK TO SAVEPOINT gb_item";
	return rollback_keeping_error(db, sql, sizeof(sql) - 1);
}

/* ---- migrations ---------------------------------------------------------- */

/* The runner's own ledger: it must exist before the first file is read. */
static const char SQL_LEDGER[] =
	"CREATE TABLE IF NOT EXISTS schema_migrations ("
	" version INT NOT NULL PRIMARY KEY COMMENT 'NNNN of the file name',"
	" name VARCHAR(128) NOT NULL COMMENT 'the file applied',"
	" applied_at BIGINT NOT NULL COMMENT 'unix s, worker clock'"
	") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin"
	" COMMENT='migrations applied by gridbroker db migrate'";
static const char SQL_SCHEMA_VERSION[] =
	"SELECT COALESCE(MAX(version), 0) FROM schema_migrations";
static const char SQL_READ_ONLY[] = "SELECT @@global.read_only";
static const char SQL_MIGRATION_APPLIED[] =
	"SELECT version FROM schema_migrations WHERE version = ?";
static const char SQL_MIGRATION_RECORD[] =
	"INSERT IGNORE INTO schema_migrations (version, name, applied_at) "
	"VALUES (?, ?, ?)";
static const char SQL_PARAM_SEED[] =
	"INSERT IGNORE INTO params (component, name, value) VALUES (?, ?, ?)";

struct mig_file {
	int version;
	char name[ST_MIGRATION_NAME_MAX];
};

static int mig_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mig_file *)a)->name,
		      ((const struct mig_file *)b)->name);
}

/* "NNNN_something.sql" -> NNNN, or 0 when the name is not a migration. */
static int mig_version(const char *name)
{
	size_t len = strlen(name);
	if (len < 10 || len >= ST_MIGRATION_NAME_MAX || name[4] != '_' ||
	    strcmp(name + len - 4, ".sql") != 0)
		return 0;
	int v = 0;
	for (int i = 0; i < 4; i++) {
		if (!isdigit((unsigned char)name[i]))
			return 0;
		v = v * 10 + (name[i] - '0');
	}
	return v;
}

static int mig_list(struct st_db *db, const char *path, struct mig_file *files,
		    size_t *n)
{
	*n = 0;
	DIR *d = opendir(path);
	if (d == NULL)
		return st_failf(db, GB_EIO, "%s: %s", path, strerror(errno));
	struct dirent *e;
	int rc = GB_OK;
	while ((e = readdir(d)) != NULL) {
		int v = mig_version(e->d_name);
		if (v == 0)
			continue;
		if (*n == ST_MIGRATION_MAX_FILES) {
			rc = st_failf(db, GB_ETOOBIG,
				      "%s: more than %d migrations", path,
				      ST_MIGRATION_MAX_FILES);
			break;
		}
		files[*n].version = v;
		/* mig_version() accepted it, so it fits with its NUL. */
		memcpy(files[*n].name, e->d_name, strlen(e->d_name) + 1);
		(*n)++;
	}
	closedir(d);
	if (rc != GB_OK)
		return rc;
	qsort(files, *n, sizeof(*files), mig_cmp);
	for (size_t i = 1; i < *n; i++)
		if (files[i].version == files[i - 1].version)
			return st_failf(db, GB_EINVAL,
					"%s and %s have the same number",
					files[i - 1].name, files[i].name);
	return GB_OK;
}

static int mig_read(struct st_db *db, const char *path, char **out, size_t *len)
{
	*out = NULL;
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return st_failf(db, GB_EIO, "%s: %s", path, strerror(errno));
	char *buf = malloc(ST_MIGRATION_MAX_BYTES + 1);
	if (buf == NULL) {
		fclose(f);
		return st_failf(db, GB_ENOMEM, "%s: out of memory", path);
	}
	size_t n = fread(buf, 1, ST_MIGRATION_MAX_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad || n > ST_MIGRATION_MAX_BYTES) {
		free(buf);
		return st_failf(db, bad ? GB_EIO : GB_ETOOBIG, "%s: %s", path,
				bad ? "read error" : "larger than 1 MiB");
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return GB_OK;
}

/*
** Run one migration file statement by statement: a statement ends on a
** line whose last non-blank character is ';'; lines starting with "--" are
** comments. Plain queries: the files are part of the program, not data.
*/
static int mig_apply(struct st_db *db, const char *name, char *text, size_t len)
{
	char *stmt = malloc(len + 1);
	if (stmt == NULL)
		return st_failf(db, GB_ENOMEM, "%s: out of memory", name);
	size_t used = 0;
	int line = 0, first = 0, rc = GB_OK;
	char *p = text;
	while (rc == GB_OK && *p) {
		char *eol = strchr(p, '\n');
		char *next = eol ? eol + 1 : p + strlen(p);
		char *end = eol ? eol : next;
		line++;
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		char *start = p;
		while (start < end && isspace((unsigned char)*start))
			start++;
		p = next;
		if (start == end ||
		    (end - start >= 2 && start[0] == '-' && start[1] == '-'))
			continue;
		if (used == 0)
			first = line;
		int last = end[-1] == ';';
		size_t n = (size_t)(end - start) - (size_t)last;
		memcpy(stmt + used, start, n);
		used += n;
		stmt[used++] = '\n';
		if (!last)
			continue;
		rc = st_plain(db, stmt, used);
		if (rc != GB_OK) {
			char cause[sizeof(db->msg)];
			memcpy(cause, db->msg, sizeof(cause));
			unsigned errnum = db->errnum;
			st_failf(db, rc, "%s:%d: %s", name, first, cause);
			db->errnum = errnum;
		}
		used = 0;
	}
	if (rc == GB_OK && used)
		rc = st_failf(db, GB_EINVAL,
			      "%s:%d: statement does not end with ';'", name,
			      first);
	free(stmt);
	return rc;
}

static int mig_applied(struct st_db *db, int version, int *yes)
{
	struct st_cols c;
	MYSQL_STMT *s;
	int rc = st_query_key(db, ST_SID_MIGRATION_APPLIED,
			      SQL_MIGRATION_APPLIED, ST_ID(version), "l", &c,
			      &s);
	*yes = st_row(db, s, &rc);
	st_done(s);
	return rc;
}

static int mig_record(struct st_db *db, const struct mig_file *f)
{
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, f->version);
	st_arg_str(&a, f->name);
	st_arg_ll(&a, clk_now());
	return st_exec(db, ST_SID_MIGRATION_RECORD, SQL_MIGRATION_RECORD, &a,
		       &s);
}

static int seed_params(struct st_db *db)
{
	int rc = st_begin(db);
	for (const struct prm_def *d = prm_table; rc == GB_OK && d->name; d++) {
		struct st_args a;
		MYSQL_STMT *s;
		st_args_init(&a);
		st_arg_str(&a, d->component);
		st_arg_str(&a, d->name);
		if (isnan(d->def))
			st_arg_null(&a);
		else
			st_arg_dbl(&a, d->def);
		rc = st_exec(db, ST_SID_PARAM_SEED, SQL_PARAM_SEED, &a, &s);
	}
	return st_end(db, rc);
}

int st_migrate(struct st_db *db, const char *dir, FILE *progress)
{
	if (db == NULL || dir == NULL)
		return GB_EINVAL;
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/migrations", dir) >=
	    (int)sizeof(path))
		return st_failf(db, GB_EINVAL,
				"schema directory path too long");
	int rc = st_plain(db, SQL_LEDGER, sizeof(SQL_LEDGER) - 1);
	if (rc != GB_OK)
		return rc;
	struct mig_file *files = calloc(ST_MIGRATION_MAX_FILES, sizeof(*files));
	if (files == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	size_t n = 0;
	rc = mig_list(db, path, files, &n);
	for (size_t i = 0; rc == GB_OK && i < n; i++) {
		int done = 0;
		rc = mig_applied(db, files[i].version, &done);
		if (rc != GB_OK || done)
			continue;
		char fpath[PATH_MAX];
		if (snprintf(fpath, sizeof(fpath), "%s/%s", path,
			     files[i].name) >= (int)sizeof(fpath)) {
			rc = st_failf(db, GB_EINVAL, "%s: path too long",
				      files[i].name);
			break;
		}
		char *text = NULL;
		size_t len = 0;
		rc = mig_read(db, fpath, &text, &len);
		if (rc == GB_OK)
			rc = mig_apply(db, files[i].name, text, len);
		free(text);
		if (rc == GB_OK)
			rc = mig_record(db, &files[i]);
		if (rc == GB_OK && progress)
			fprintf(progress, "applied %s\n", files[i].name);
	}
	free(files);
	if (rc == GB_OK)
		rc = seed_params(db);
	return rc;
}

int st_schema_version(struct st_db *db, int *version)
{
	if (db == NULL || version == NULL)
		return GB_EINVAL;
	*version = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "l");
	int rc = st_query(db, ST_SID_SCHEMA_VERSION, SQL_SCHEMA_VERSION, NULL,
			  &c, &s);
	if (rc != GB_OK) {
		/* A database nobody migrated yet is at version 0. */
		return db->errnum == ER_NO_SUCH_TABLE ? GB_OK : rc;
	}
	if (st_row(db, s, &rc))
		*version = (int)st_col_ll(&c, 0);
	st_done(s);
	return rc;
}

int st_read_only(struct st_db *db, int *read_only)
{
	if (db == NULL || read_only == NULL)
		return GB_EINVAL;
	*read_only = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "l");
	int rc = st_query(db, ST_SID_READ_ONLY, SQL_READ_ONLY, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	if (st_row(db, s, &rc))
		*read_only = st_col_ll(&c, 0) != 0;
	st_done(s);
	return rc;
}

int st_refused_write(const struct st_db *db)
{
	return db != NULL && (db->errnum == ER_OPTION_PREVENTS_STATEMENT ||
			      db->errnum == ER_READ_ONLY_MODE);
}

/* ---- parameters ---------------------------------------------------------- */

static const char SQL_PARAMS_LOAD[] =
	"SELECT name, value FROM params WHERE value IS NOT NULL "
	"ORDER BY component, name";

int st_params_load(struct st_db *db, struct arena *a, struct prm_set *out)
{
	if (db == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	out->kv = NULL;
	out->n = 0;
	struct st_cols c;
	MYSQL_STMT *s;
	st_cols_init(&c, "sd");
	int rc =
		st_query(db, ST_SID_PARAMS_LOAD, SQL_PARAMS_LOAD, NULL, &c, &s);
	if (rc != GB_OK)
		return rc;
	size_t rows = 0, n = 0;
	struct prm_kv *kv =
		st_result_array(db, s, a, sizeof(*kv), "params", &rows, &rc);
	int bad = 0;
	while (st_row(db, s, &rc)) {
		char *name = NULL;
		rc = st_col_str(db, s, &c, 0, a, &name);
		if (rc != GB_OK)
			break;
		double v = st_col_dbl(&c, 1);
		/* A row the catalogue rejects (unknown name, out of range)
		** would steer a rule with a value nobody validated: leave it
		** out so the default applies, and say so once per link. */
		int chk = prm_check(name, v);
		if (chk != GB_OK) {
			if (!db->params_warned)
				log_warn("params: ignoring %s = %g (%s)", name,
					 v, gb_strerror(chk));
			bad = 1;
			continue;
		}
		if (n < rows) {
			kv[n].name = name;
			kv[n].value = v;
			n++;
		}
	}
	st_done(s);
	if (bad)
		db->params_warned = 1;
	if (rc != GB_OK)
		return rc;
	out->kv = kv;
	out->n = n;
	return GB_OK;
}

/* ---- request dedup ------------------------------------------------------- */

static const char SQL_CLAIM_MESSAGE[] =
	"INSERT INTO processed_messages (message_id, kind, processed_at) "
	"VALUES (?, ?, ?)";

int st_claim_message(struct st_db *db, const char *message_id, const char *kind,
		     long long now, int *already)
{
	if (db == NULL || message_id == NULL || message_id[0] == '\0' ||
	    kind == NULL || already == NULL)
		return GB_EINVAL;
	*already = 0;
	/* In autocommit mode the row would commit before the decision, and a
	** crash in between would lose the request for good. */
	int rc = st_need_txn(db, 1, "st_claim_message");
	if (rc != GB_OK)
		return rc;
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_str(&a, message_id);
	st_arg_str(&a, kind);
	st_arg_ll(&a, now);
	rc = st_exec(db, ST_SID_CLAIM_MESSAGE, SQL_CLAIM_MESSAGE, &a, &s);
	if (rc != GB_OK && db->errnum == ER_DUP_ENTRY) {
		*already = 1;
		return GB_OK;
	}
	return rc;
}
