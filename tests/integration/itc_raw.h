/*
** itc_raw.h — what the C integration tests share: the fixture that loads
** the configuration named by $GB_CONFIG, opens the store on it, applies the
** migrations and opens a raw connection (`raw`) to look at MariaDB behind
** the store's back; and raw_q(), a prepared query with bound parameters
** returning the first column of the first row as text. Static in every
** including test, as each test is its own executable.
*/
#ifndef GB_ITC_RAW_H
#define GB_ITC_RAW_H

#include "../unit/gbtest.h" /* cmocka: fail_msg, assert_* */

#include <mysql.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "gb_error.h"
#include "store/store.h"

static struct gb_config cfg;
static struct st_db *db;
static MYSQL *raw;

/*
** Group setup: load $GB_CONFIG into `cfg`, open `db`, migrate, and open
** `raw`. Problems are printed prefixed with `prog`. Returns 0 or -1.
*/
static int itc_open(const char *prog)
{
	const char *path = getenv("GB_CONFIG");
	if (path == NULL || path[0] == '\0') {
		fprintf(stderr, "%s: set GB_CONFIG to a configuration file "
				"(run through run-itc.sh)\n", prog);
		return -1;
	}
	char err[4096] = "";
	if (cfg_load(path, &cfg, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "%s: %s:\n%s\n", prog, path, err);
		return -1;
	}
	if (st_open(&cfg, &db, err, sizeof(err)) != GB_OK) {
		fprintf(stderr, "%s: st_open: %s\n", prog, err);
		return -1;
	}
	if (st_migrate(db, GB_SCHEMA_DIR, NULL) != GB_OK) {
		fprintf(stderr, "%s: migrate: %s\n", prog, st_error(db));
		return -1;
	}
	raw = mysql_init(NULL);
	const char *sock = cfg.db_socket[0] ? cfg.db_socket : NULL;
	if (raw == NULL ||
	    mysql_real_connect(raw, sock ? NULL : cfg.db_host, cfg.db_user,
			       cfg.db_password, cfg.db_name,
			       (unsigned)cfg.db_port, sock, 0) == NULL) {
		fprintf(stderr, "%s: raw connect: %s\n", prog,
			raw ? mysql_error(raw) : "out of memory");
		return -1;
	}
	return 0;
}

/* Group teardown: run the test's `cleanup` while `raw` is open, close. */
static void itc_close(void (*cleanup)(void))
{
	if (raw) {
		cleanup();
		mysql_close(raw);
	}
	st_close(db);
}

/*
** The group setup and teardown of a test whose own rows `cleanup_fn`
** deletes: itc_open(prog) and a cleanup before the run (rows an aborted
** run left), a cleanup and itc_close after it. Defines group_setup and
** group_teardown for cmocka_run_group_tests.
*/
#define ITC_GROUP_FIXTURE(prog, cleanup_fn)                                  \
	static int group_setup(void **state)                                 \
	{                                                                    \
		(void)state;                                                 \
		if (itc_open(prog) != 0)                                     \
			return -1;                                           \
		cleanup_fn();                                                \
		return 0;                                                    \
	}                                                                    \
	static int group_teardown(void **state)                              \
	{                                                                    \
		(void)state;                                                 \
		itc_close(cleanup_fn);                                       \
		return 0;                                                    \
	}

#ifdef GB_STORE_INTERNAL_H
/*
** Whether the store's connection holds a statement of slot `id` prepared
** for a list of `n` (store_internal.h: the per-length cache of statements
** with lists): what shows a test how the store cut its rows into
** statements. Only for tests that include store_internal.h first.
*/
static inline int itc_sized(enum st_sid id, unsigned n)
{
	for (int i = 0; i < ST_NSIZED; i++)
		if (db->sized[i].stmt && db->sized[i].id == (int)id &&
		    db->sized[i].n == n)
			return 1;
	return 0;
}
#endif

/* Leave no transaction open for the next test, whatever failed. */
static int test_teardown(void **state)
{
	(void)state;
	if (db)
		st_rollback(db);
	return 0;
}

/*
** Run `sql` with parameters per `spec` ('s' const char *, 'l' long long)
** and copy the first column of the first row as text into `out` ("NULL" for
** SQL NULL). Returns the number of rows (affected rows for DML).
*/
static long raw_q(char *out, size_t outlen, const char *sql, const char *spec,
		  ...)
{
	MYSQL_STMT *s = mysql_stmt_init(raw);
	assert_non_null(s);
	if (mysql_stmt_prepare(s, sql, (unsigned long)strlen(sql)) != 0)
		fail_msg("prepare %s: %s", sql, mysql_stmt_error(s));
	MYSQL_BIND b[8];
	long long ll[8];
	unsigned long len[8];
	memset(b, 0, sizeof(b));
	va_list ap;
	va_start(ap, spec);
	unsigned n = 0;
	for (; spec[n]; n++) {
		assert_true(n < 8);
		if (spec[n] == 's') {
			const char *v = va_arg(ap, const char *);
			len[n] = (unsigned long)strlen(v);
			b[n].buffer_type = MYSQL_TYPE_STRING;
			b[n].buffer = (void *)v;
			b[n].buffer_length = len[n];
			b[n].length = &len[n];
		} else {
			ll[n] = va_arg(ap, long long);
			b[n].buffer_type = MYSQL_TYPE_LONGLONG;
			b[n].buffer = &ll[n];
		}
	}
	va_end(ap);
	if ((n && mysql_stmt_bind_param(s, b) != 0) || mysql_stmt_execute(s))
		fail_msg("execute %s: %s", sql, mysql_stmt_error(s));
	long rows = 0;
	if (mysql_stmt_field_count(s) == 0) {
		rows = (long)mysql_stmt_affected_rows(s);
	} else {
		char buf[4096];
		unsigned long rlen = 0;
		my_bool isnull = 0;
		unsigned cols = mysql_stmt_field_count(s);
		MYSQL_BIND *rb = calloc(cols, sizeof(*rb));
		assert_non_null(rb);
		rb[0].buffer_type = MYSQL_TYPE_STRING;
		rb[0].buffer = buf;
		rb[0].buffer_length = sizeof(buf) - 1;
		rb[0].length = &rlen;
		rb[0].is_null = &isnull;
		for (unsigned i = 1; i < cols; i++)
			rb[i].buffer_type = MYSQL_TYPE_NULL;
		assert_int_equal(mysql_stmt_bind_result(s, rb), 0);
		assert_int_equal(mysql_stmt_store_result(s), 0);
		rows = (long)mysql_stmt_num_rows(s);
		if (out && outlen) {
			out[0] = '\0';
			int f = mysql_stmt_fetch(s);
			if ((f == 0 || f == MYSQL_DATA_TRUNCATED) && isnull)
				snprintf(out, outlen, "NULL");
			else if (f == 0 || f == MYSQL_DATA_TRUNCATED)
				snprintf(out, outlen, "%.*s",
					 (int)(rlen < sizeof(buf) - 1
						       ? rlen
						       : sizeof(buf) - 1),
					 buf);
		}
		free(rb);
	}
	mysql_stmt_close(s);
	return rows;
}

#endif
