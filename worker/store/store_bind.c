/*
** store_bind.c — the store's one way to bind parameters and run prepared
** statements (store_internal.h): the parameter list (struct st_args) for
** one row, an IN list or the rows of a multi-row statement; the text of
** every list, written by one function (sql_expand) when a statement is
** prepared; the two statement caches of a connection; the multi-row
** collector (struct st_rows); the result columns and the fetch.
**
** Multi-row statements ("INSERT ... VALUES (?,?),(?,?),...") rather than
** one statement executed over arrays of values: they work on every server,
** take RETURNING (the pilot records read their ids back), and a statement
** of a given row count is prepared once per connection. A batch of rows is
** one round trip either way.
**
** Values are kept apart from the MYSQL_BIND array, which is built just
** before mysql_stmt_bind_param: growing a list moves its values, and a
** bind must point at where they finally are.
*/
#include "store/store_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/metrics.h"
#include "gb_error.h"

/* ---- parameters ---------------------------------------------------------- */

static struct st_param *args_values(struct st_args *a)
{
	return a->heap ? a->heap : a->in;
}

static void args_mark(struct st_args *a, int rc, const char *why)
{
	if (a->bad == NULL) {
		a->bad = why;
		a->bad_rc = rc;
	}
}

static void args_start(struct st_args *a, int many)
{
	a->n = 0;
	a->cap = ST_ARGS_INLINE;
	a->bytes = 0;
	a->many = many;
	a->bad_rc = GB_OK;
	a->bad = NULL;
	a->heap = NULL;
	a->heap_b = NULL;
}

void st_args_init(struct st_args *a)
{
	args_start(a, 0);
}

void st_args_init_many(struct st_args *a)
{
	args_start(a, 1);
}

void st_args_free(struct st_args *a)
{
	free(a->heap);
	free(a->heap_b);
	args_start(a, a->many);
}

void st_args_reset(struct st_args *a)
{
	a->n = 0;
	a->bytes = 0;
	a->bad_rc = GB_OK;
	a->bad = NULL;
}

/* Room for one more value, growing a `many` list; NULL marks it bad. */
static struct st_param *args_next(struct st_args *a)
{
	if (a->bad)
		return NULL;
	if (a->n == a->cap) {
		if (!a->many) {
			args_mark(a, GB_EINVAL, "too many parameters");
			return NULL;
		}
		size_t cap = a->cap * 2;
		struct st_param *p = malloc(cap * sizeof(*p));
		MYSQL_BIND *b = malloc(cap * sizeof(*b));
		if (p == NULL || b == NULL) {
			free(p);
			free(b);
			args_mark(a, GB_ENOMEM, "out of memory for parameters");
			return NULL;
		}
		memcpy(p, args_values(a), a->n * sizeof(*p));
		free(a->heap);
		free(a->heap_b);
		a->heap = p;
		a->heap_b = b;
		a->cap = cap;
	}
	struct st_param *x = &args_values(a)[a->n++];
	a->bytes += 9;
	return x;
}

void st_arg_ll(struct st_args *a, long long v)
{
	struct st_param *x = args_next(a);
	if (x) {
		x->kind = 'l';
		x->v.ll = v;
	}
}

void st_arg_u64(struct st_args *a, uint64_t v)
{
	struct st_param *x = args_next(a);
	if (x) {
		x->kind = 'u';
		memcpy(&x->v.ll, &v, sizeof(v));
	}
}

void st_arg_dbl(struct st_args *a, double v)
{
	if (!isfinite(v)) {
		args_mark(a, GB_EINVAL, "a number is NaN or infinite");
		return;
	}
	struct st_param *x = args_next(a);
	if (x) {
		x->kind = 'd';
		x->v.d = v;
	}
}

void st_arg_dbl_or_null(struct st_args *a, double v)
{
	if (isnan(v))
		st_arg_null(a);
	else
		st_arg_dbl(a, v);
}

void st_arg_null(struct st_args *a)
{
	struct st_param *x = args_next(a);
	if (x)
		x->kind = 'n';
}

static void arg_bytes(struct st_args *a, char kind, const void *p, size_t len)
{
	struct st_param *x = args_next(a);
	if (x == NULL)
		return;
	x->kind = kind;
	x->len = (unsigned long)len;
	x->v.p = p ? p : "";
	a->bytes += len;
}

void st_arg_str(struct st_args *a, const char *s)
{
	if (s == NULL)
		st_arg_null(a);
	else
		arg_bytes(a, 's', s, strlen(s));
}

void st_arg_blob(struct st_args *a, const void *p, size_t len)
{
	arg_bytes(a, 'b', p, len);
}

void st_arg_nulls(struct st_args *a, size_t k)
{
	while (k--)
		st_arg_null(a);
}

void st_arg_ids(struct st_args *a, const long long *ids, size_t n,
		size_t width)
{
	for (size_t i = 0; i < n; i++)
		st_arg_ll(a, ids[i]);
	st_arg_nulls(a, width > n ? width - n : 0);
}

/* The binds of the first `m` values. */
static MYSQL_BIND *args_binds(struct st_args *a, size_t m)
{
	struct st_param *v = args_values(a);
	MYSQL_BIND *b = a->heap ? a->heap_b : a->in_b;
	memset(b, 0, m * sizeof(*b));
	for (size_t i = 0; i < m; i++) {
		struct st_param *x = &v[i];
		switch (x->kind) {
		case 'l':
		case 'u':
			b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			b[i].buffer = &x->v.ll;
			b[i].is_unsigned = x->kind == 'u';
			break;
		case 'd':
			b[i].buffer_type = MYSQL_TYPE_DOUBLE;
			b[i].buffer = &x->v.d;
			break;
		case 's':
		case 'b':
			b[i].buffer_type = x->kind == 's' ? MYSQL_TYPE_STRING
							  : MYSQL_TYPE_BLOB;
			/* Connector/C never writes through an input buffer. */
			b[i].buffer = (void *)x->v.p;
			b[i].buffer_length = x->len;
			b[i].length = &x->len;
			break;
		default:
			b[i].buffer_type = MYSQL_TYPE_NULL;
			break;
		}
	}
	return b;
}

/* Drop the first `m` values, keeping the rest (a row not sent yet). */
static void args_drop(struct st_args *a, size_t m)
{
	struct st_param *v = args_values(a);
	memmove(v, v + m, (a->n - m) * sizeof(*v));
	a->n -= m;
	a->bytes = 0;
	for (size_t i = 0; i < a->n; i++)
		a->bytes += 9 + (v[i].kind == 's' || v[i].kind == 'b'
					 ? v[i].len
					 : 0);
}

/* ---- statement text ------------------------------------------------------ */

static size_t put(char *dst, size_t at, const char *s, size_t len)
{
	if (dst)
		memcpy(dst + at, s, len);
	return at + len;
}

/* `n` copies of `unit` joined by `sep`, written at dst + at. */
static size_t put_n(char *dst, size_t at, unsigned n, const char *unit,
		    const char *sep)
{
	for (unsigned i = 0; i < n; i++) {
		if (i)
			at = put(dst, at, sep, strlen(sep));
		at = put(dst, at, unit, strlen(unit));
	}
	return at;
}

/*
** `tmpl` with its markers replaced (store_internal.h) into `dst`, or, with
** dst NULL, only the length: the one place that writes placeholders.
*/
static size_t sql_expand(char *dst, const char *tmpl, unsigned n,
			 unsigned width)
{
	size_t at = 0;
	for (const char *t = tmpl; *t; t++) {
		if (*t == ST_LIST[0]) {
			at = put_n(dst, at, n, "?", ",");
		} else if (*t == ST_PAIRS[0]) {
			at = put_n(dst, at, n, "WHEN ? THEN ? ", "");
		} else if (*t == ST_ROWS[0]) {
			for (unsigned i = 0; i < n; i++) {
				at = put(dst, at, i ? ",(" : "(", i ? 2 : 1);
				at = put_n(dst, at, width, "?", ",");
				at = put(dst, at, ")", 1);
			}
		} else {
			at = put(dst, at, t, 1);
		}
	}
	return at;
}

/* ---- statement caches ---------------------------------------------------- */

void st_stmts_close(struct st_db *db)
{
	for (int i = 0; i < ST_NSID; i++) {
		if (db->stmt[i])
			mysql_stmt_close(db->stmt[i]);
		db->stmt[i] = NULL;
	}
	for (int i = 0; i < ST_NSIZED; i++) {
		if (db->sized[i].stmt)
			mysql_stmt_close(db->sized[i].stmt);
		memset(&db->sized[i], 0, sizeof(db->sized[i]));
	}
}

/* Close `s` and forget it in whichever cache holds it. */
static void forget(struct st_db *db, MYSQL_STMT *s)
{
	for (int i = 0; i < ST_NSID; i++)
		if (db->stmt[i] == s)
			db->stmt[i] = NULL;
	for (int i = 0; i < ST_NSIZED; i++)
		if (db->sized[i].stmt == s)
			memset(&db->sized[i], 0, sizeof(db->sized[i]));
	mysql_stmt_close(s);
}

/* A new statement prepared from `sql` (len bytes). */
static int prepare(struct st_db *db, const char *sql, size_t len,
		   MYSQL_STMT **out)
{
	*out = NULL;
	MYSQL_STMT *s = mysql_stmt_init(db->my);
	if (s == NULL)
		return st_fail_conn(db);
	if (mysql_stmt_prepare(s, sql, (unsigned long)len) != 0) {
		int rc = st_fail_stmt(db, s);
		mysql_stmt_close(s);
		return rc;
	}
	*out = s;
	return GB_OK;
}

int st_prepared(struct st_db *db, enum st_sid id, const char *sql,
		MYSQL_STMT **out)
{
	*out = NULL;
	if (db->my == NULL)
		return st_failf(db, GB_EDBGONE,
				"not connected to the database");
	if ((unsigned)id >= ST_NSID)
		return st_failf(db, GB_EINVAL, "statement slot %d out of range",
				(int)id);
	if (db->stmt[id] == NULL) {
		int rc = prepare(db, sql, strlen(sql), &db->stmt[id]);
		if (rc != GB_OK)
			return rc;
	}
	*out = db->stmt[id];
	return GB_OK;
}

int st_prepared_n(struct st_db *db, enum st_sid id, const char *tmpl,
		  unsigned n, unsigned width, MYSQL_STMT **out)
{
	*out = NULL;
	if (db->my == NULL)
		return st_failf(db, GB_EDBGONE,
				"not connected to the database");
	if (n == 0)
		return st_failf(db, GB_EINVAL,
				"statement %d: a list of 0 entries", (int)id);
	struct st_sized *slot = NULL;
	db->sized_tick++;
	for (int i = 0; i < ST_NSIZED; i++) {
		struct st_sized *r = &db->sized[i];
		if (r->stmt && r->id == (int)id && r->n == n) {
			r->used = db->sized_tick;
			*out = r->stmt;
			return GB_OK;
		}
		/* The victim: a free entry, else the least recently used. */
		if (r->stmt == NULL) {
			if (slot == NULL || slot->stmt != NULL)
				slot = r;
		} else if (slot == NULL ||
			   (slot->stmt != NULL && r->used < slot->used)) {
			slot = r;
		}
	}
	size_t len = sql_expand(NULL, tmpl, n, width);
	char *sql = malloc(len + 1);
	if (sql == NULL)
		return st_failf(db, GB_ENOMEM, "out of memory");
	sql_expand(sql, tmpl, n, width);
	sql[len] = '\0';
	if (slot->stmt)
		mysql_stmt_close(slot->stmt);
	memset(slot, 0, sizeof(*slot));
	MYSQL_STMT *s = NULL;
	int rc = prepare(db, sql, len, &s);
	free(sql);
	if (rc != GB_OK)
		return rc;
	*slot = (struct st_sized){(int)id, n, db->sized_tick, s};
	*out = s;
	return GB_OK;
}

/* ---- execution ----------------------------------------------------------- */

int st_stmt_execute(MYSQL_STMT *s)
{
	double t0 = clk_mono();
	int ex = mysql_stmt_execute(s);
	mx_wk_db_roundtrip(clk_mono() - t0);
	return ex;
}

/* Bind the first `m` values of `a` to `s`, execute, bind the result to
** rb[0..nr) when nr > 0 (st_run). */
static int run(struct st_db *db, MYSQL_STMT *s, struct st_args *a, size_t m,
	       MYSQL_BIND *rb, unsigned nr)
{
	if (a && a->bad)
		return st_failf(db, a->bad_rc, "%s", a->bad);
	if (mysql_stmt_param_count(s) != m)
		return st_failf(db, GB_EINVAL,
				"statement expects %lu parameters, got %zu",
				mysql_stmt_param_count(s), m);
	mysql_stmt_free_result(s);
	if (m && mysql_stmt_bind_param(s, args_binds(a, m)) != 0)
		return st_fail_stmt(db, s);
	if (st_stmt_execute(s) != 0) {
		int rc = st_fail_stmt(db, s);
		if (nr)
			forget(db, s);
		return rc;
	}
	if (nr == 0)
		return GB_OK;
	/* RETURNING statements learn their columns at execute, so the
	** count is checked after it. */
	if (mysql_stmt_field_count(s) != nr) {
		unsigned got = mysql_stmt_field_count(s);
		forget(db, s);
		return st_failf(db, GB_EINVAL,
				"statement returns %u columns, %u expected",
				got, nr);
	}
	if (mysql_stmt_bind_result(s, rb) != 0 ||
	    mysql_stmt_store_result(s) != 0) {
		int rc = st_fail_stmt(db, s);
		forget(db, s);
		return rc;
	}
	return GB_OK;
}

int st_run_binds(struct st_db *db, MYSQL_STMT *s, struct st_args *args,
		 MYSQL_BIND *rb, unsigned nr)
{
	return run(db, s, args, args ? args->n : 0, rb, nr);
}

int st_run(struct st_db *db, MYSQL_STMT *s, struct st_args *args,
	   struct st_cols *cols)
{
	return cols ? st_run_binds(db, s, args, cols->b, cols->n)
		    : st_run_binds(db, s, args, NULL, 0);
}

int st_run_n(struct st_db *db, enum st_sid id, const char *tmpl, unsigned n,
	     struct st_args *args, struct st_cols *cols, MYSQL_STMT **out)
{
	MYSQL_STMT *s = NULL;
	*out = NULL;
	int rc = st_prepared_n(db, id, tmpl, n, 0, &s);
	if (rc == GB_OK)
		rc = st_run(db, s, args, cols);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

int st_exec(struct st_db *db, enum st_sid id, const char *sql,
	    struct st_args *args, MYSQL_STMT **out)
{
	MYSQL_STMT *s = NULL;
	*out = NULL;
	int rc = st_prepared(db, id, sql, &s);
	if (rc == GB_OK)
		rc = st_run(db, s, args, NULL);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

int st_query(struct st_db *db, enum st_sid id, const char *sql,
	     struct st_args *args, struct st_cols *cols, MYSQL_STMT **out)
{
	MYSQL_STMT *s = NULL;
	*out = NULL;
	int rc = st_prepared(db, id, sql, &s);
	if (rc == GB_OK)
		rc = st_run(db, s, args, cols);
	if (rc == GB_OK)
		*out = s;
	return rc;
}

int st_query_key(struct st_db *db, enum st_sid id, const char *sql,
		 struct st_key key, const char *spec, struct st_cols *cols,
		 MYSQL_STMT **out)
{
	struct st_args a;
	st_args_init(&a);
	if (key.is_text)
		st_arg_str(&a, key.text);
	else
		st_arg_ll(&a, key.id);
	st_cols_init(cols, spec);
	return st_query(db, id, sql, &a, cols, out);
}

int st_update_id(struct st_db *db, enum st_sid id, const char *sql,
		 long long value, long long key, const char *what)
{
	struct st_args a;
	MYSQL_STMT *s;
	st_args_init(&a);
	st_arg_ll(&a, value);
	st_arg_ll(&a, key);
	int rc = st_exec(db, id, sql, &a, &s);
	if (rc == GB_OK && mysql_stmt_affected_rows(s) == 0)
		rc = st_failf(db, GB_ENOTFOUND, "%s %lld not found", what, key);
	return rc;
}

int st_fetch(struct st_db *db, MYSQL_STMT *s, int *got)
{
	*got = 0;
	int r = mysql_stmt_fetch(s);
	if (r == 0 || r == MYSQL_DATA_TRUNCATED) {
		*got = 1;
		return GB_OK;
	}
	if (r == MYSQL_NO_DATA)
		return GB_OK;
	return st_fail_stmt(db, s);
}

void st_done(MYSQL_STMT *s)
{
	if (s)
		mysql_stmt_free_result(s);
}

void *st_result_array(struct st_db *db, MYSQL_STMT *s, struct arena *a,
		      size_t size, const char *what, size_t *rows, int *rc)
{
	size_t r = (size_t)mysql_stmt_num_rows(s);
	void *v = r && r <= SIZE_MAX / size ? arena_alloc(a, r * size) : NULL;
	*rows = v ? r : 0;
	if (r && v == NULL && *rc == GB_OK)
		*rc = st_too_big(db, what, r);
	return v;
}

int st_query_ids(struct st_db *db, enum st_sid id, const char *sql,
		 struct st_args *args, size_t max, long long *ids, size_t *n)
{
	struct st_cols c;
	MYSQL_STMT *s;
	*n = 0;
	st_cols_init(&c, "l");
	int rc = st_query(db, id, sql, args, &c, &s);
	while (*n < max && st_row(db, s, &rc))
		ids[(*n)++] = st_col_ll(&c, 0);
	st_done(s);
	return rc;
}

int st_due_ids(struct st_db *db, enum st_sid id, const char *sql,
	       const char *fn, long long now, size_t max, long long *ids,
	       size_t *n)
{
	if (db == NULL || n == NULL || (max && ids == NULL))
		return GB_EINVAL;
	*n = 0;
	if (max == 0)
		return GB_OK;
	int rc = st_need_txn(db, 1, fn);
	if (rc != GB_OK)
		return rc;
	struct st_args a;
	st_args_init(&a);
	st_arg_ll(&a, now);
	st_arg_ll(&a, st_limit(max));
	return st_query_ids(db, id, sql, &a, max, ids, n);
}

/* ---- IN lists ------------------------------------------------------------ */

void st_chunks_init(struct st_chunks *ch, size_t n, size_t width)
{
	ch->n = n;
	ch->width = width ? width : 1;
	ch->off = 0;
	ch->k = 0;
	st_args_init_many(&ch->a);
}

int st_chunks_next(struct st_chunks *ch, const int *rc)
{
	ch->off += ch->k;
	if (*rc != GB_OK || ch->off >= ch->n)
		return 0;
	ch->k = ch->n - ch->off < ch->width ? ch->n - ch->off : ch->width;
	st_args_reset(&ch->a);
	return 1;
}

void st_chunks_free(struct st_chunks *ch)
{
	st_args_free(&ch->a);
}

/* ---- many rows ----------------------------------------------------------- */

void st_rows_init(struct st_rows *r, enum st_sid id, const char *tmpl,
		  unsigned width)
{
	r->id = id;
	r->tmpl = tmpl;
	r->width = width ? width : 1;
	r->rows = 0;
	r->max_rows = ST_ROWS_MAX;
	if (r->max_rows * r->width > ST_MAX_PLACEHOLDERS)
		r->max_rows = ST_MAX_PLACEHOLDERS / r->width;
	st_args_init_many(&r->a);
}

void st_rows_free(struct st_rows *r)
{
	st_args_free(&r->a);
	r->rows = 0;
}

/* Send the first `k` rows collected; the rest stay. A bad list sends
** nothing and drops every row. */
static int rows_send(struct st_db *db, struct st_rows *r, size_t k)
{
	if (r->a.bad) {
		int rc = st_failf(db, r->a.bad_rc, "%s", r->a.bad);
		st_args_reset(&r->a);
		r->rows = 0;
		return rc;
	}
	size_t m = k * r->width;
	MYSQL_STMT *s = NULL;
	int rc = st_prepared_n(db, r->id, r->tmpl, (unsigned)k, r->width, &s);
	if (rc == GB_OK)
		rc = run(db, s, &r->a, m, NULL, 0);
	args_drop(&r->a, m);
	r->rows -= k;
	return rc;
}

int st_rows_end(struct st_db *db, struct st_rows *r)
{
	r->rows++;
	if (r->a.n != r->rows * r->width)
		args_mark(&r->a, GB_EINVAL,
			  "a row does not match its statement");
	if (r->rows >= r->max_rows || r->a.bad)
		return rows_send(db, r, r->rows);
	/* Over the byte bound: the rows before this one go, it starts the
	** next statement. */
	if (r->rows > 1 && r->a.bytes > ST_ROWS_BYTES)
		return rows_send(db, r, r->rows - 1);
	return GB_OK;
}

int st_rows_flush(struct st_db *db, struct st_rows *r)
{
	if (r->rows == 0)
		return r->a.bad ? st_failf(db, r->a.bad_rc, "%s", r->a.bad)
				: GB_OK;
	return rows_send(db, r, r->rows);
}

/* ---- result columns ------------------------------------------------------ */

void st_cols_init(struct st_cols *c, const char *spec)
{
	memset(c, 0, sizeof(*c));
	for (; *spec && c->n < ST_MAX_COLS; spec++) {
		unsigned i = c->n++;
		MYSQL_BIND *b = &c->b[i];
		c->kind[i] = *spec;
		b->length = &c->len[i];
		b->is_null = &c->isnull[i];
		b->error = &c->error[i];
		switch (*spec) {
		case 'l':
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &c->ll[i];
			break;
		case 'd':
			b->buffer_type = MYSQL_TYPE_DOUBLE;
			b->buffer = &c->d[i];
			break;
		case 'b':
			/* Length only; the bytes come with st_col_blob. */
			b->buffer_type = MYSQL_TYPE_BLOB;
			b->buffer = NULL;
			b->buffer_length = 0;
			break;
		default: /* 's' */
			b->buffer_type = MYSQL_TYPE_STRING;
			b->buffer = c->s[i];
			b->buffer_length = ST_STRBUF;
			break;
		}
	}
}

int st_col_isnull(const struct st_cols *c, unsigned i)
{
	return c->isnull[i] != 0;
}

long long st_col_ll(const struct st_cols *c, unsigned i)
{
	return c->isnull[i] ? 0 : c->ll[i];
}

double st_col_dbl(const struct st_cols *c, unsigned i)
{
	return c->isnull[i] ? 0.0 : c->d[i];
}

/* Read column `i` of the current row into `dst` (len bytes). */
static int col_fetch(struct st_db *db, MYSQL_STMT *s, struct st_cols *c,
		     unsigned i, void *dst, unsigned long len)
{
	MYSQL_BIND b;
	unsigned long got = 0;
	memset(&b, 0, sizeof(b));
	b.buffer_type = c->kind[i] == 'b' ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
	b.buffer = dst;
	b.buffer_length = len;
	b.length = &got;
	if (mysql_stmt_fetch_column(s, &b, i, 0) != 0)
		return st_fail_stmt(db, s);
	return GB_OK;
}

int st_col_str(struct st_db *db, MYSQL_STMT *s, struct st_cols *c, unsigned i,
	       struct arena *a, char **out)
{
	*out = NULL;
	if (c->isnull[i])
		return GB_OK;
	unsigned long len = c->len[i];
	if (len <= ST_STRBUF) {
		*out = arena_strndup(a, c->s[i], len);
		return *out ? GB_OK
			    : st_failf(db, GB_ETOOBIG,
				       "result does not fit the request's "
				       "memory");
	}
	char *p = arena_alloc(a, (size_t)len + 1);
	if (p == NULL)
		return st_failf(db, GB_ETOOBIG,
				"result does not fit the request's memory");
	int rc = col_fetch(db, s, c, i, p, len);
	if (rc != GB_OK)
		return rc;
	p[len] = '\0';
	*out = p;
	return GB_OK;
}

int st_col_blob(struct st_db *db, MYSQL_STMT *s, struct st_cols *c, unsigned i,
		struct arena *a, void **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	unsigned long n = c->isnull[i] ? 0 : c->len[i];
	void *p = arena_alloc(a, n ? n : 1);
	if (p == NULL)
		return st_failf(db, GB_ETOOBIG,
				"result does not fit the request's memory");
	if (n) {
		int rc = col_fetch(db, s, c, i, p, n);
		if (rc != GB_OK)
			return rc;
	}
	*out = p;
	*len = n;
	return GB_OK;
}
