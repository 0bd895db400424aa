/*
** scenario_jobs.c — job-brokerage grids, job requests and job scenarios
** from JSON, and scj_run, the path `explain` decides them by.
**
** Strict like scenario.c, for the same reason: these files are written by
** people, and a typo such as "maxrs" must not silently take a default and
** answer a different what-if. Unknown fields are errors naming the field;
** every value's type and range is checked before it is stored.
**
** Most objects here are flat records of numbers, booleans and strings that
** land in one engine struct (jb_queue, jb_task, nw_link, jb_counts), so
** they are parsed from tables of {key, kind, flags, offset, range, default}
** rather than one hand-written call per field: a table row is where a
** field's range and default are read, and the same row yields the allowed
** key list for the unknown-field check. Enumerations, string lists, times
** and ages are table kinds too; nested arrays and maps of records go
** through parse_items with one callback per element type, and only the
** odd shapes (releases as a word or a list, architectures) are by hand.
** The error and path helpers repeat scenario.c's, which are static there.
**
** Limits (SCJ_MAX_* in the header, COD_MAX_STRING from the codec) bound
** every array and string, so a file cannot make the parser allocate without
** bound beyond the arena's cap; requests obey the same string limit as the
** message decoder so that whatever `job submit` accepts the worker accepts.
*/
#include "scenario_jobs.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec.h"
#include "gb_error.h"
#include "rng.h"
#include "scenario.h"

#define SCJ_PATH 224
#define SCJ_MAX_AGE_S 1e10 /* ~300 years: an age beyond this is a typo */

#if defined(__GNUC__)
#define SCJ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SCJ_PRINTF(a, b)
#endif

struct pctx {
	struct arena *a;
	char *err;
	size_t errlen;
	int scenario;  /* FF_REQSCN fields are required */
	long long now; /* FK_AGE counts back from it */
};

static int fail(const struct pctx *c, int rc, const char *path,
		const char *fmt, ...) SCJ_PRINTF(4, 5);

static int fail(const struct pctx *c, int rc, const char *path,
		const char *fmt, ...)
{
	if (c->err == NULL || c->errlen == 0)
		return rc;
	int n = snprintf(c->err, c->errlen, "%s: ", path[0] ? path : "(root)");
	if (n >= 0 && (size_t)n < c->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* A path cut short by its buffer ends in "..." rather than mid-name. */
static void path_done(char *buf, size_t n, int w)
{
	if ((w < 0 || (size_t)w >= n) && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

static void path_key(char *buf, size_t n, const char *path, const char *key)
{
	path_done(buf, n,
		  snprintf(buf, n, "%s%s%s", path, path[0] ? "." : "", key));
}

static void path_idx(char *buf, size_t n, const char *path, size_t i)
{
	path_done(buf, n, snprintf(buf, n, "%s[%zu]", path, i));
}

/* Queue names and file names may hold dots, so map keys are quoted. */
static void path_qkey(char *buf, size_t n, const char *path, const char *key)
{
	path_done(buf, n, snprintf(buf, n, "%s[\"%s\"]", path, key));
}

static const char *jtype(const json_t *j)
{
	static const char *const names[] = {
		[JSON_OBJECT] = "object", [JSON_ARRAY] = "array",
		[JSON_STRING] = "string", [JSON_INTEGER] = "integer",
		[JSON_REAL] = "real",     [JSON_TRUE] = "boolean",
		[JSON_FALSE] = "boolean", [JSON_NULL] = "null"};
	unsigned t = (unsigned)json_typeof(j);
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static int want_object(const struct pctx *c, json_t *v, const char *path)
{
	if (!json_is_object(v))
		return fail(c, GB_ETYPE, path, "expected object, got %s",
			    jtype(v));
	return GB_OK;
}

static int want_array(const struct pctx *c, json_t *v, const char *path,
		      size_t limit)
{
	if (!json_is_array(v))
		return fail(c, GB_ETYPE, path, "expected array, got %s",
			    jtype(v));
	if (json_array_size(v) > limit)
		return fail(c, GB_ETOOBIG, path,
			    "array of %zu exceeds the limit of %zu",
			    json_array_size(v), limit);
	return GB_OK;
}

static void *alloc_n(const struct pctx *c, size_t n, size_t size)
{
	if (n == 0 || n > SIZE_MAX / size)
		return NULL;
	return arena_alloc(c->a, n * size);
}

/* Check text against the codec's limits and copy it into the arena. */
static int str_copy(const struct pctx *c, const char *s, size_t n,
		    const char *f, int nonempty, const char **out)
{
	if (n > COD_MAX_STRING - 1)
		return fail(c, GB_ETOOBIG, f,
			    "string of %zu bytes exceeds the limit of %d", n,
			    COD_MAX_STRING - 1);
	if (strlen(s) != n)
		return fail(c, GB_ERANGE, f, "string contains a NUL byte");
	if (nonempty && n == 0)
		return fail(c, GB_ERANGE, f, "expected a non-empty string");
	char *copy = arena_strndup(c->a, s, n);
	if (copy == NULL)
		return fail(c, GB_ENOMEM, f, "out of memory");
	*out = copy;
	return GB_OK;
}

static int str_value(const struct pctx *c, json_t *v, const char *f,
		     int nonempty, const char **out)
{
	if (!json_is_string(v))
		return fail(c, GB_ETYPE, f, "expected string, got %s",
			    jtype(v));
	return str_copy(c, json_string_value(v), json_string_length(v), f,
			nonempty, out);
}

/* An array of strings into an arena array (NULL/0 when absent or empty). */
static int str_list(const struct pctx *c, json_t *v, const char *f,
		    size_t limit, int nonempty, const char *const **out,
		    size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL)
		return GB_OK;
	int rc = want_array(c, v, f, limit);
	size_t cnt = rc == GB_OK ? json_array_size(v) : 0;
	if (rc != GB_OK || cnt == 0)
		return rc;
	const char **arr = alloc_n(c, cnt, sizeof(*arr));
	if (arr == NULL)
		return fail(c, GB_ENOMEM, f, "out of memory");
	for (size_t i = 0; i < cnt; i++) {
		char p[SCJ_PATH];
		path_idx(p, sizeof(p), f, i);
		rc = str_value(c, json_array_get(v, i), p, nonempty, &arr[i]);
		if (rc != GB_OK)
			return rc;
	}
	*out = arr;
	*n = cnt;
	return GB_OK;
}

/* ---- table-driven fields ---------------------------------------------- */

enum fkind {
	FK_NUM,   /* double */
	FK_LONG,  /* long */
	FK_LLONG, /* long long */
	FK_BOOL,  /* int 0/1 */
	FK_STR,   /* const char *, copied */
	FK_LIST,  /* const char *const * at off, size_t count at off2 */
	FK_ENUM,  /* one of `words`: its index as an int (an enum member) */
	FK_WORD,  /* one of `words`: the static word itself */
	FK_TIME,  /* RFC 3339 string -> long long unix s; null -> 0 */
	FK_AGE,   /* seconds before pctx.now -> long long unix s; null -> 0 */
	FK_TEXT,  /* free text checked for type only, not stored */
};

enum {
	FF_REQ = 1,      /* required */
	FF_NONEMPTY = 2, /* strings (list elements): not "" */
	FF_POS = 4,      /* numbers: > min rather than >= min */
	FF_REQSCN = 8,   /* required in a scenario (pctx.scenario) */
	FF_IPCONN = 16,  /* strings: PJ-22 connectivity syntax */
};

/* One field. An optional field that is absent or null takes `def` (`sdef`
** for strings, word 0 for enums; NAN = unknown); a list's limit is `max`. */
struct fld {
	const char *key;
	unsigned char kind;
	unsigned char flags;
	size_t off, off2;
	double min, max; /* max INFINITY: none */
	double def;
	const char *sdef;
	const char *const *words;
};

/* FK_ENUM writes an int into enum members. */
_Static_assert(sizeof(enum jb_es) == sizeof(int), "enum size");
_Static_assert(sizeof(enum tb_job_scope) == sizeof(int), "enum size");
_Static_assert(sizeof(enum rc_kind) == sizeof(int), "enum size");

#define INF INFINITY
#define F(k, kind, f, s, m, lo, hi, d) \
	{k, kind, f, offsetof(s, m), 0, lo, hi, d, NULL, NULL}
#define NUMF(k, s, m, f, lo, hi, d) F(k, FK_NUM, f, s, m, lo, hi, d)
#define NUM(k, s, m, lo, hi, d) F(k, FK_NUM, 0, s, m, lo, hi, d)
#define NUMNULL(k, s, m, lo, hi) F(k, FK_NUM, 0, s, m, lo, hi, NAN)
#define LNG(k, s, m, lo, hi, d) F(k, FK_LONG, 0, s, m, lo, hi, d)
#define LLNG(k, s, m, f, lo) F(k, FK_LLONG, f, s, m, lo, INF, 0)
#define BOOL(k, s, m) F(k, FK_BOOL, 0, s, m, 0, 0, 0)
#define TIME(k, s, m, f) F(k, FK_TIME, f, s, m, 0, 0, 0)
#define AGE(k, s, m) F(k, FK_AGE, 0, s, m, 0, SCJ_MAX_AGE_S, 0)
#define STR(k, s, m, f, d) {k, FK_STR, f, offsetof(s, m), 0, 0, 0, 0, d, NULL}
#define LIST(k, s, m, n, f, lim) \
	{k, FK_LIST, f, offsetof(s, m), offsetof(s, n), 0, lim, 0, NULL, NULL}
#define ENUM(k, s, m, w) {k, FK_ENUM, 0, offsetof(s, m), 0, 0, 0, 0, NULL, w}
#define WORD(k, s, m, f, w) {k, FK_WORD, f, offsetof(s, m), 0, 0, 0, 0, NULL, w}
#define TEXT(k) {k, FK_TEXT, 0, 0, 0, 0, 0, 0, NULL, NULL}
#define FLD_END {NULL, 0, 0, 0, 0, 0, 0, 0, NULL, NULL}

/* The target of a string parsed outside a record's struct. */
struct one_str {
	const char *s;
};

static int fld_int(const struct pctx *c, const struct fld *d, json_t *v,
		   const char *f, long long *out)
{
	if (!json_is_integer(v))
		return fail(c, GB_ETYPE, f, "expected integer, got %s",
			    jtype(v));
	long long x = json_integer_value(v);
	long long lo = (long long)d->min;
	long long hi = isfinite(d->max) ? (long long)d->max : LLONG_MAX;
	if (x >= lo && x <= hi) {
		*out = x;
		return GB_OK;
	}
	if (hi == LLONG_MAX && lo == 1)
		return fail(c, GB_ERANGE, f,
			    "expected a positive integer, got %lld", x);
	if (hi == LLONG_MAX)
		return fail(c, GB_ERANGE, f,
			    "expected an integer >= %lld, got %lld", lo, x);
	return fail(c, GB_ERANGE, f,
		    "expected an integer in [%lld, %lld], got %lld", lo, hi, x);
}

static int fld_num(const struct pctx *c, const struct fld *d, json_t *v,
		   const char *f, double *out)
{
	if (!json_is_number(v))
		return fail(c, GB_ETYPE, f, "expected a number, got %s",
			    jtype(v));
	double x = json_number_value(v);
	int pos = (d->flags & FF_POS) != 0;
	if (!isfinite(x))
		return fail(c, GB_ERANGE, f, "expected a finite number");
	if ((pos ? x > d->min : x >= d->min) && x <= d->max) {
		*out = x;
		return GB_OK;
	}
	if (isfinite(d->max))
		return fail(c, GB_ERANGE, f,
			    "expected a number in %c%g, %g], got %g",
			    pos ? '(' : '[', d->min, d->max, x);
	return fail(c, GB_ERANGE, f, "expected a number %s %g, got %g",
		    pos ? ">" : ">=", d->min, x);
}

/* A string that must be one of `words`; *idx gets its position. */
static int fld_word(const struct pctx *c, const char *const *words,
		    json_t *v, const char *f, int *idx)
{
	if (!json_is_string(v))
		return fail(c, GB_ETYPE, f, "expected string, got %s",
			    jtype(v));
	const char *s = json_string_value(v);
	char list[160] = "";
	for (int i = 0; words[i]; i++) {
		if (strcmp(words[i], s) == 0) {
			*idx = i;
			return GB_OK;
		}
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s\"%s\"", i ? ", " : "",
			 words[i]);
	}
	return fail(c, GB_ERANGE, f, "unknown value '%.64s' (expected %s)", s,
		    list);
}

/* PJ-22: "" or full|http|none, optionally followed by #IPv4 or #IPv6;
** any case, as the engine compares them. Other words are typos here. */
static int ipconn_ok(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return 1;
	const char *hash = strchr(s, '#');
	size_t n = hash ? (size_t)(hash - s) : strlen(s);
	int head = n == 4 && (strncasecmp(s, "full", 4) == 0 ||
			      strncasecmp(s, "http", 4) == 0 ||
			      strncasecmp(s, "none", 4) == 0);
	return head && (hash == NULL || strcasecmp(hash, "#IPv4") == 0 ||
			strcasecmp(hash, "#IPv6") == 0);
}

static int fld_time(const struct pctx *c, json_t *v, const char *f,
		    long long *out)
{
	if (!json_is_string(v))
		return fail(c, GB_ETYPE, f, "expected string, got %s",
			    jtype(v));
	if (scn_time_parse(json_string_value(v), out) != GB_OK || *out <= 0)
		return fail(c, GB_ERANGE, f,
			    "expected an RFC 3339 time such as "
			    "2024-05-14T08:30:00Z, got '%.64s'",
			    json_string_value(v));
	return GB_OK;
}

/* Parse one field into base + d->off (and off2 for a list). */
static int fld_parse(const struct pctx *c, json_t *obj, const char *path,
		     const struct fld *d, void *base)
{
	char f[SCJ_PATH];
	path_key(f, sizeof(f), path, d->key);
	json_t *v = json_object_get(obj, d->key);
	int req = (d->flags & FF_REQ) || ((d->flags & FF_REQSCN) && c->scenario);
	/* null means "the default" for optional fields, "missing" otherwise */
	if (v != NULL && json_is_null(v) && !req)
		v = NULL;
	if (v == NULL && req)
		return fail(c, GB_EMISSING, f, "missing");
	char *p = (char *)base + d->off;
	long long i = (long long)(isfinite(d->def) ? d->def : 0);
	double x = d->def;
	int rc = GB_OK, w = 0;
	const char *s = d->sdef;
	const char *const *list = NULL;
	size_t n = 0;
	switch ((enum fkind)d->kind) {
	case FK_NUM:
		rc = v ? fld_num(c, d, v, f, &x) : GB_OK;
		memcpy(p, &x, sizeof(x));
		return rc;
	case FK_LONG: {
		rc = v ? fld_int(c, d, v, f, &i) : GB_OK;
		long l = (long)i; /* ranges of FK_LONG rows fit a long */
		memcpy(p, &l, sizeof(l));
		return rc;
	}
	case FK_LLONG:
		rc = v ? fld_int(c, d, v, f, &i) : GB_OK;
		memcpy(p, &i, sizeof(i));
		return rc;
	case FK_BOOL:
		if (v != NULL && !json_is_boolean(v))
			return fail(c, GB_ETYPE, f, "expected boolean, got %s",
				    jtype(v));
		w = v != NULL && json_is_true(v);
		memcpy(p, &w, sizeof(w));
		return GB_OK;
	case FK_STR:
		if (v != NULL)
			rc = str_value(c, v, f, (d->flags & FF_NONEMPTY) != 0,
				       &s);
		if (rc == GB_OK && (d->flags & FF_IPCONN) && !ipconn_ok(s))
			return fail(c, GB_ERANGE, f,
				    "expected \"\" or full|http|none with an "
				    "optional #IPv4 or #IPv6, got '%s'",
				    s);
		memcpy(p, &s, sizeof(s));
		return rc;
	case FK_LIST:
		rc = str_list(c, v, f, (size_t)d->max,
			      (d->flags & FF_NONEMPTY) != 0, &list, &n);
		memcpy(p, &list, sizeof(list));
		memcpy((char *)base + d->off2, &n, sizeof(n));
		return rc;
	case FK_ENUM:
	case FK_WORD:
		rc = v ? fld_word(c, d->words, v, f, &w) : GB_OK;
		if (d->kind == FK_ENUM)
			memcpy(p, &w, sizeof(w));
		else
			memcpy(p, &d->words[w], sizeof(d->words[w]));
		return rc;
	case FK_TIME:
		i = 0;
		rc = v ? fld_time(c, v, f, &i) : GB_OK;
		memcpy(p, &i, sizeof(i));
		return rc;
	case FK_AGE:
		x = NAN;
		rc = v ? fld_num(c, d, v, f, &x) : GB_OK;
		i = c->now - (isnan(x) ? 0 : llround(x));
		/* 0 means never; "very long ago" must not become that */
		i = isnan(x) ? 0 : (i > 0 ? i : 1);
		memcpy(p, &i, sizeof(i));
		return rc;
	case FK_TEXT:
		if (v != NULL && !json_is_string(v))
			return fail(c, GB_ETYPE, f, "expected string, got %s",
				    jtype(v));
		return GB_OK;
	}
	return fail(c, GB_EINVAL, f, "bad field table");
}

/*
** `obj` must be an object whose keys are in `t` or `extra` (NULL-ended);
** then every row of `t` is parsed in order, so the first error reported
** is the first field of the table that is wrong.
*/
static int parse_record(const struct pctx *c, json_t *obj, const char *path,
			const struct fld *t, const char *const *extra,
			void *base)
{
	int rc = want_object(c, obj, path);
	if (rc != GB_OK)
		return rc;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		const struct fld *d = t;
		while (d->key && strcmp(d->key, key) != 0)
			d++;
		const char *const *e = extra;
		while (d->key == NULL && e && *e && strcmp(*e, key) != 0)
			e++;
		if (d->key == NULL && (e == NULL || *e == NULL)) {
			char f[SCJ_PATH];
			path_key(f, sizeof(f), path, key);
			return fail(c, GB_EINVAL, f, "unknown field");
		}
	}
	for (const struct fld *d = t; d->key && rc == GB_OK; d++)
		rc = fld_parse(c, obj, path, d, base);
	return rc;
}

/* ---- arrays and maps of records ------------------------------------------ */

/* Parse one element `v` (at `path`; `key` is its map key, NULL in an
** array) into `elem`. */
typedef int (*item_fn)(const struct pctx *c, json_t *v, const char *path,
		       const char *key, void *elem);

/*
** An array (map == 0) or an object of at most `limit` elements into an
** arena array of `size`-byte elements, each parsed by `fn`; absent or null
** gives none. *out is NULL when there are none.
*/
static int parse_items(const struct pctx *c, json_t *v, const char *path,
		       int map, size_t limit, size_t size, item_fn fn,
		       void **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL || json_is_null(v))
		return GB_OK;
	int rc = map ? want_object(c, v, path) : want_array(c, v, path, limit);
	size_t cnt = rc != GB_OK ? 0
		     : map      ? json_object_size(v)
				: json_array_size(v);
	if (cnt > limit)
		return fail(c, GB_ETOOBIG, path,
			    "%zu entries exceed the limit of %zu", cnt, limit);
	if (rc != GB_OK || cnt == 0)
		return rc;
	char *arr = alloc_n(c, cnt, size);
	if (arr == NULL)
		return fail(c, GB_ENOMEM, path, "out of memory");
	char p[SCJ_PATH];
	size_t i = 0;
	const char *key;
	json_t *x;
	if (map) {
		json_object_foreach(v, key, x) {
			path_qkey(p, sizeof(p), path, key);
			rc = fn(c, x, p, key, arr + i++ * size);
			if (rc != GB_OK)
				return rc;
		}
	}
	for (; !map && i < cnt && rc == GB_OK; i++) {
		path_idx(p, sizeof(p), path, i);
		rc = fn(c, json_array_get(v, i), p, NULL, arr + i * size);
	}
	*out = arr;
	*n = cnt;
	return rc;
}

/* ---- duplicates --------------------------------------------------------- */

struct nameref {
	const char *name;
	size_t idx;
};

static int nameref_cmp(const void *x, const void *y)
{
	const struct nameref *a = x, *b = y;
	int r = strcmp(a->name, b->name);
	if (r)
		return r;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int nameref_key_cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key, ((const struct nameref *)elem)->name);
}

/* Sort refs by name and report the later of two equal names at
** "<path>[i]<suffix>". */
static int dups(const struct pctx *c, struct nameref *r, size_t n,
		const char *path, const char *suffix, const char *what)
{
	if (n > 1)
		qsort(r, n, sizeof(*r), nameref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(r[i - 1].name, r[i].name) != 0)
			continue;
		char f[SCJ_PATH];
		int w = snprintf(f, sizeof(f), "%s[%zu]%s", path, r[i].idx,
				 suffix);
		path_done(f, sizeof(f), w);
		return fail(c, GB_EDUP, f, "duplicate %s '%s' (also %s[%zu])",
			    what, r[i].name, path, r[i - 1].idx);
	}
	return GB_OK;
}

/* ---- published software (RC-01) --------------------------------------- */

#define H struct rc_hw
static const struct fld cpu_flds[] = {
	LIST("arch", H, arch, narch, 0, SCJ_MAX_SW_LIST),
	LIST("vendor", H, vendor, nvendor, 0, SCJ_MAX_SW_LIST),
	LIST("instr", H, instr, ninstr, 0, SCJ_MAX_SW_LIST),
	FLD_END,
};
static const struct fld gpu_flds[] = {
	LIST("vendor", H, vendor, nvendor, 0, SCJ_MAX_SW_LIST),
	LIST("model", H, model, nmodel, 0, SCJ_MAX_SW_LIST),
	FLD_END,
};
#undef H
static const char *const hw_types[] = {"cpu", "gpu", NULL};
static const struct fld hw_type = {"type", FK_ENUM, FF_REQ, 0, 0, 0, 0, 0,
				   NULL, hw_types};
static const char *const hw_extra[] = {"type", NULL};

/* "architectures": at most one cpu and one gpu dictionary (RC-03). */
static int parse_arches(const struct pctx *c, json_t *arr, const char *path,
			struct rc_sw *sw)
{
	if (arr == NULL || json_is_null(arr))
		return GB_OK;
	int rc = want_array(c, arr, path, 8);
	for (size_t i = 0; rc == GB_OK && i < json_array_size(arr); i++) {
		char p[SCJ_PATH];
		path_idx(p, sizeof(p), path, i);
		json_t *o = json_array_get(arr, i);
		int gpu = 0;
		rc = want_object(c, o, p);
		if (rc == GB_OK)
			rc = fld_parse(c, o, p, &hw_type, &gpu);
		if (rc == GB_OK && (gpu ? sw->gpu : sw->cpu) != NULL)
			return fail(c, GB_EDUP, p, "a second \"%s\" dictionary",
				    hw_types[gpu]);
		struct rc_hw *hw = rc == GB_OK ? alloc_n(c, 1, sizeof(*hw))
					       : NULL;
		if (rc == GB_OK && hw == NULL)
			return fail(c, GB_ENOMEM, p, "out of memory");
		if (rc == GB_OK)
			rc = parse_record(c, o, p, gpu ? gpu_flds : cpu_flds,
					  hw_extra, hw);
		*(gpu ? &sw->gpu : &sw->cpu) = hw;
	}
	return rc;
}

#define T struct rc_tag
static const struct fld tag_flds[] = {
	STR("cmtconfig", T, cmtconfig, 0, ""),
	STR("container_name", T, container_name, 0, ""),
	STR("project", T, project, 0, ""),
	STR("release", T, release, 0, ""),
	LIST("sources", T, sources, nsources, 0, SCJ_MAX_SOURCES),
	TEXT("tag"),
	FLD_END,
};
#undef T

static int tag_item(const struct pctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	(void)key;
	return parse_record(c, v, path, tag_flds, NULL, elem);
}

#define S struct rc_sw
static const struct fld sw_flds[] = {
	LIST("cmtconfigs", S, cmtconfigs, ncmtconfigs, 0, SCJ_MAX_SW_LIST),
	LIST("containers", S, containers, ncontainers, 0, SCJ_MAX_SW_LIST),
	LIST("cvmfs", S, cvmfs, ncvmfs, 0, SCJ_MAX_SW_LIST),
	FLD_END,
};
#undef S
static const char *const sw_extra[] = {"architectures", "tags", NULL};

int scj_parse_sw(json_t *obj, const char *path, struct arena *a,
		 struct rc_sw *out, char *err, size_t errlen)
{
	struct pctx c = {a, err, errlen, 0, 0};
	if (out == NULL || a == NULL || path == NULL)
		return fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	char f[SCJ_PATH], g[SCJ_PATH];
	path_key(f, sizeof(f), path, "architectures");
	path_key(g, sizeof(g), path, "tags");
	void *tags = NULL;
	int rc = parse_record(&c, obj, path, sw_flds, sw_extra, out);
	if (rc == GB_OK)
		rc = parse_arches(&c, json_object_get(obj, "architectures"), f,
				  out);
	if (rc == GB_OK)
		rc = parse_items(&c, json_object_get(obj, "tags"), g, 0,
				 SCJ_MAX_TAGS, sizeof(struct rc_tag), tag_item,
				 &tags, &out->ntags);
	out->tags = tags;
	return rc;
}

int scj_parse_sw_text(const char *json, const char *path, struct arena *a,
		      struct rc_sw *out, char *err, size_t errlen)
{
	struct pctx c = {a, err, errlen, 0, 0};
	if (json == NULL || path == NULL || a == NULL || out == NULL)
		return fail(&c, GB_EINVAL, path ? path : "",
			    "invalid arguments");
	memset(out, 0, sizeof(*out));
	json_error_t je;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return fail(&c, GB_EDECODE, path, "invalid JSON at %d:%d: %s",
			    je.line, je.column, je.text);
	int rc = scj_parse_sw(root, path, a, out, err, errlen);
	json_decref(root);
	return rc;
}

/* ---- queues ----------------------------------------------------------- */

static const char *const status_words[] = {"online", "offline", "brokeroff",
					   "test", "standby", "paused", NULL};
/* In the order of enum jb_es. */
static const char *const es_words[] = {"none", "allowed", "only", NULL};

#define Q struct jb_queue
static const struct fld queue_flds[] = {
	STR("name", Q, name, FF_REQ | FF_NONEMPTY, NULL),
	WORD("status", Q, status, FF_REQ, status_words),
	STR("site", Q, site, FF_REQ | FF_NONEMPTY, NULL),
	STR("nucleus", Q, nucleus, 0, ""),
	LNG("coreCount", Q, core_count, 0, 1e6, 1),
	NUMF("corepower", Q, corepower, FF_POS, 0, INF, 10),
	NUM("minrss", Q, min_rss_per_core, 0, INF, 0),
	NUM("maxrss", Q, max_rss_per_core, 0, INF, 0),
	NUM("maxwdir", Q, maxwdir, 0, INF, 0),
	NUM("mintime", Q, mintime, 0, INF, 0),
	NUM("maxtime", Q, maxtime, 0, INF, 0),
	BOOL("directAccess", Q, direct_access),
	STR("wnconnectivity", Q, wnconnectivity, FF_IPCONN, ""),
	NUMNULL("maxDiskIO", Q, max_diskio, 0, INF),
	NUM("diskIOAvg", Q, diskio_avg, 0, INF, 0),
	STR("fairsharepolicy", Q, fairsharepolicy, 0, ""),
	ENUM("eventService", Q, es, es_words),
	BOOL("dynamicNEvents", Q, dynamic_nevents),
	NUM("transferringLimit", Q, transferring_limit, 0, INF, 0),
	LNG("numSlots", Q, num_slots, -1, 1e9, -1),
	AGE("lastPilotAge", Q, last_pilot),
	AGE("lastStartAge", Q, last_start),
	TEXT("description"),
	FLD_END,
};
static const char *const queue_extra[] = {"releases", "storage", "jobs",
					  NULL};
/* The storage object's fields live in the queue (jb_queue.storage*). */
static const struct fld storage_flds[] = {
	STR("name", Q, storage, FF_REQ | FF_NONEMPTY, NULL),
	NUMF("spaceFree", Q, storage_free, FF_REQ, 0, INF, 0),
	BOOL("blacklisted", Q, storage_blacklisted),
	FLD_END,
};
#undef Q

#define K struct jb_counts
static const struct fld counts_flds[] = {
	NUM("running", K, running, 0, INF, 0),
	NUM("defined", K, defined, 0, INF, 0),
	NUM("assigned", K, assigned, 0, INF, 0),
	NUM("activated", K, activated, 0, INF, 0),
	NUM("starting", K, starting, 0, INF, 0),
	NUM("transferring", K, transferring, 0, INF, 0),
	NUM("nBatchJob", K, nbatchjob, 0, INF, 0),
	FLD_END,
};
#undef K

/* PJ-14: "ANY", "AUTO" or a list of release names. */
static int parse_releases(const struct pctx *c, json_t *o, const char *path,
			  struct jb_queue *q)
{
	char f[SCJ_PATH];
	path_key(f, sizeof(f), path, "releases");
	json_t *v = json_object_get(o, "releases");
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	q->releases = JB_REL_ANY;
	if (json_is_array(v)) {
		q->releases = JB_REL_LIST;
		return str_list(c, v, f, SCJ_MAX_RELEASES, 1, &q->release_list,
				&q->nrelease_list);
	}
	if (v == NULL || json_is_null(v) || (s && strcmp(s, "ANY") == 0))
		return GB_OK;
	if (s && strcmp(s, "AUTO") == 0) {
		q->releases = JB_REL_AUTO;
		return GB_OK;
	}
	if (s)
		return fail(c, GB_ERANGE, f,
			    "expected \"ANY\", \"AUTO\" or a list of releases, "
			    "got '%.64s'",
			    s);
	return fail(c, GB_ETYPE, f, "expected string or array, got %s",
		    jtype(v));
}

/* "jobs": one gshare's counts (PJ-24, PJ-28..PJ-34). */
static int counts_item(const struct pctx *c, json_t *v, const char *path,
		       const char *key, void *elem)
{
	struct gm_counts *k = elem;
	int rc = str_copy(c, key, strlen(key), path, 1, &k->gshare);
	return rc == GB_OK ? parse_record(c, v, path, counts_flds, NULL, &k->k)
			   : rc;
}

static int queue_item(const struct pctx *c, json_t *o, const char *path,
		      const char *key, void *elem)
{
	struct gm_queue *gq = elem;
	(void)key;
	char f[SCJ_PATH], g[SCJ_PATH];
	path_key(f, sizeof(f), path, "storage");
	path_key(g, sizeof(g), path, "jobs");
	void *counts = NULL;
	int rc = parse_record(c, o, path, queue_flds, queue_extra, &gq->q);
	json_t *st = rc == GB_OK ? json_object_get(o, "storage") : NULL;
	if (rc == GB_OK)
		rc = parse_releases(c, o, path, &gq->q);
	if (rc == GB_OK && st == NULL)
		return fail(c, GB_EMISSING, f, "missing");
	if (rc == GB_OK)
		rc = parse_record(c, st, f, storage_flds, NULL, &gq->q);
	if (rc == GB_OK)
		rc = parse_items(c, json_object_get(o, "jobs"), g, 1,
				 SCJ_MAX_GSHARES, sizeof(struct gm_counts),
				 counts_item, &counts, &gq->ncounts);
	gq->counts = counts;
	return rc;
}

/* ---- links and replicas ------------------------------------------------ */

#define L struct gm_link
static const struct fld link_flds[] = {
	STR("site", L, site, FF_REQ | FF_NONEMPTY, NULL),
	STR("nucleus", L, nucleus, FF_REQ | FF_NONEMPTY, NULL),
	BOOL("blocked", L, blocked),
	NUM("queuedFiles", L, l.queued_files, 0, INF, 0),
	NUMNULL("mbps1h", L, l.mbps_1h, 0, INF),
	NUMNULL("mbps1d", L, l.mbps_1d, 0, INF),
	NUMNULL("mbps1w", L, l.mbps_1w, 0, INF),
	NUMNULL("closeness", L, l.closeness, -1, 11),
	FLD_END,
};
#undef L

static int link_item(const struct pctx *c, json_t *v, const char *path,
		     const char *key, void *elem)
{
	struct gm_link *l = elem;
	(void)key;
	int rc = parse_record(c, v, path, link_flds, NULL, l);
	if (rc == GB_OK && l->l.closeness > -1 && l->l.closeness < 0) {
		char f[SCJ_PATH];
		path_key(f, sizeof(f), path, "closeness");
		return fail(c, GB_ERANGE, f,
			    "expected -1 (blocked) or a number in [0, 11], "
			    "got %g",
			    l->l.closeness);
	}
	return rc;
}

/* One pair per link: "site -> nucleus" names make the duplicate check. */
static int link_dups(const struct pctx *c, const struct gm_link *l, size_t n)
{
	struct nameref *names = n ? alloc_n(c, n, sizeof(*names)) : NULL;
	if (n && names == NULL)
		return fail(c, GB_ENOMEM, "links", "out of memory");
	for (size_t i = 0; i < n; i++) {
		char key[2 * COD_MAX_STRING + 8]; /* names are bounded */
		snprintf(key, sizeof(key), "%s -> %s", l[i].site, l[i].nucleus);
		names[i] = (struct nameref){arena_strdup(c->a, key), i};
		if (names[i].name == NULL)
			return fail(c, GB_ENOMEM, "links", "out of memory");
	}
	return dups(c, names, n, "links", "", "link");
}

/* fileReplicas: one file's storages, each once. */
static int replica_item(const struct pctx *c, json_t *v, const char *path,
			const char *key, void *elem)
{
	struct gm_file *f = elem;
	int rc = str_copy(c, key, strlen(key), path, 1, &f->lfn);
	if (rc == GB_OK)
		rc = str_list(c, v, path, SCJ_MAX_REPLICAS, 1, &f->storages,
			      &f->nstorages);
	if (v == NULL || json_is_null(v))
		return fail(c, GB_ETYPE, path, "expected array, got null");
	struct nameref refs[SCJ_MAX_REPLICAS];
	for (size_t x = 0; rc == GB_OK && x < f->nstorages; x++)
		refs[x] = (struct nameref){f->storages[x], x};
	return rc == GB_OK ? dups(c, refs, f->nstorages, path, "", "storage")
			   : rc;
}

/* ---- grid ----------------------------------------------------------------- */

/* One "sw" entry: the parsed dictionary and its compact sorted text. */
static int sw_entry(const struct pctx *c, json_t *v, const char *path,
		    const struct rc_sw **sw, const char **text)
{
	struct rc_sw *s = alloc_n(c, 1, sizeof(*s));
	if (s == NULL)
		return fail(c, GB_ENOMEM, path, "out of memory");
	int rc = scj_parse_sw(v, path, c->a, s, c->err, c->errlen);
	if (rc != GB_OK)
		return rc;
	char *dump = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	*text = dump ? arena_strdup(c->a, dump) : NULL;
	free(dump);
	if (*text == NULL)
		return fail(c, GB_ENOMEM, path, "out of memory");
	*sw = s;
	return GB_OK;
}

/* "sw": queue name (or "ALL") -> dictionary; `names` sorted by name. */
static int parse_sw_map(const struct pctx *c, json_t *o, struct gm_grid *g,
			const struct nameref *names)
{
	if (o == NULL)
		return GB_OK;
	int rc = want_object(c, o, "sw");
	const char *name;
	json_t *v;
	json_object_foreach(o, name, v) {
		if (rc != GB_OK)
			break;
		char p[SCJ_PATH];
		path_qkey(p, sizeof(p), "sw", name);
		if (strcmp(name, "ALL") == 0) {
			rc = sw_entry(c, v, p, &g->all_sw, &g->all_sw_json);
			continue;
		}
		const struct nameref *r =
			g->nqueues ? bsearch(name, names, g->nqueues,
					     sizeof(*names), nameref_key_cmp)
				   : NULL;
		if (r == NULL)
			return fail(c, GB_ENOTFOUND, p,
				    "no queue of that name in queues");
		struct gm_queue *gq = &g->queues[r->idx];
		rc = sw_entry(c, v, p, &gq->q.sw, &gq->sw_json);
	}
	return rc;
}

int scj_parse_grid(json_t *root, struct arena *a, long long now,
		   struct gm_grid *out, char *err, size_t errlen)
{
	struct pctx c = {a, err, errlen, 0, now};
	if (out == NULL || a == NULL)
		return fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	int rc = want_object(&c, root, "");
	void *qs = NULL, *links = NULL, *files = NULL;
	if (rc == GB_OK)
		rc = parse_items(&c, json_object_get(root, "queues"), "queues",
				 0, SCJ_MAX_QUEUES, sizeof(struct gm_queue),
				 queue_item, &qs, &out->nqueues);
	out->queues = qs;
	size_t n = rc == GB_OK ? out->nqueues : 0;
	struct nameref *names = n ? alloc_n(&c, n, sizeof(*names)) : NULL;
	if (n && names == NULL)
		return fail(&c, GB_ENOMEM, "queues", "out of memory");
	for (size_t i = 0; i < n; i++)
		names[i] = (struct nameref){out->queues[i].q.name, i};
	if (rc == GB_OK)
		rc = dups(&c, names, n, "queues", ".name", "queue name");
	if (rc == GB_OK)
		rc = parse_sw_map(&c, json_object_get(root, "sw"), out, names);
	if (rc == GB_OK)
		rc = parse_items(&c, json_object_get(root, "links"), "links",
				 0, SCJ_MAX_LINKS, sizeof(struct gm_link),
				 link_item, &links, &out->nlinks);
	out->links = links;
	if (rc == GB_OK)
		rc = link_dups(&c, out->links, out->nlinks);
	if (rc == GB_OK)
		rc = parse_items(&c, json_object_get(root, "fileReplicas"),
				 "fileReplicas", 1, SCJ_MAX_REPLICA_FILES,
				 sizeof(struct gm_file), replica_item, &files,
				 &out->nfiles);
	out->files = files;
	return rc;
}

/* ---- job requests ------------------------------------------------------- */

/* In the order of the enums tb_job_scope and rc_kind. */
static const char *const scope_words[] = {"satellites", "nucleus", NULL};
static const char *const kind_words[] = {"release", "nightly", NULL};

#define R struct gm_request
static const struct fld request_flds[] = {
	TEXT("description"),
	LLNG("taskID", R, t.task_id, FF_REQ, 1),
	STR("nucleus", R, t.nucleus, FF_NONEMPTY | FF_REQSCN, NULL),
	STR("gshare", R, t.gshare, FF_NONEMPTY | FF_REQSCN, NULL),
	LNG("currentPriority", R, t.priority, 0, 1e6, 0),
	STR("processingType", R, t.processing_type, 0, ""),
	NUM("ioIntensity", R, t.io_intensity, 0, INF, 0),
	NUM("diskIO", R, t.diskio, 0, INF, 0),
	LNG("coreCount", R, t.core_count, 1, 1e6, 1),
	LNG("maxCoreCount", R, t.max_core_count, 0, 1e6, 0),
	NUM("baseRamCount", R, t.base_ram, 0, INF, 0),
	NUM("ramCount", R, t.ram_count, 0, INF, 0),
	NUM("outDiskCount", R, t.out_disk_count, 0, INF, 0),
	NUM("workDiskCount", R, t.work_disk_count, 0, INF, 0),
	NUM("cpuTime", R, t.cpu_time, 0, INF, 0),
	NUMF("cpuEfficiency", R, t.cpu_efficiency, FF_POS, 0, 100, 100),
	NUM("baseWalltime", R, t.base_time, 0, INF, 0),
	STR("ipConnectivity", R, t.ip_connectivity, FF_IPCONN, ""),
	BOOL("directAccessOnly", R, t.direct_access_only),
	BOOL("useEventService", R, t.use_es),
	BOOL("dynamicNEvents", R, t.dynamic_nevents),
	NUM("t1Weight", R, t.t1_weight, -INF, INF, 0),
	STR("architecture", R, architecture, 0, ""),
	STR("containerName", R, need.container_name, 0, ""),
	BOOL("onlyTagsForFC", R, need.only_tags_fc),
	STR("swProject", R, need.sw_project, 0, ""),
	STR("swVersion", R, need.sw_version, 0, ""),
	ENUM("jobScope", R, t.scope, scope_words),
	ENUM("swKind", R, need.kind, kind_words),
	LIST("preassigned", R, t.preassigned, t.npreassigned, FF_NONEMPTY,
	     SCJ_MAX_PREASSIGNED),
	TIME("preassignSkippedSince", R, t.preassign_skipped_since, 0),
	BOOL("scout", R, t.scout),
	BOOL("merge", R, t.merge),
	BOOL("premerged", R, t.premerged),
	FLD_END,
};
#undef R
static const char *const request_extra[] = {"outDiskCountUnit", "jobs",
					    NULL};

static const struct fld job_flds[] = {
	LLNG("jobID", struct gm_job, job_id, FF_REQ, 1),
	LNG("nEvents", struct gm_job, nevents, 0, 1e9, 0),
	FLD_END,
};
static const char *const job_extra[] = {"inputFiles", NULL};
static const struct fld input_flds[] = {
	STR("lfn", struct gm_input, lfn, FF_REQ | FF_NONEMPTY, NULL),
	NUMF("size", struct gm_input, size_mb, FF_REQ, 0, INF, 0),
	FLD_END,
};

static int input_item(const struct pctx *c, json_t *v, const char *path,
		      const char *key, void *elem)
{
	(void)key;
	return parse_record(c, v, path, input_flds, NULL, elem);
}

static int job_item(const struct pctx *c, json_t *v, const char *path,
		    const char *key, void *elem)
{
	struct gm_job *j = elem;
	(void)key;
	char f[SCJ_PATH];
	path_key(f, sizeof(f), path, "inputFiles");
	void *in = NULL;
	int rc = parse_record(c, v, path, job_flds, job_extra, j);
	if (rc == GB_OK)
		rc = parse_items(c, json_object_get(v, "inputFiles"), f, 0,
				 SCJ_MAX_INPUTS, sizeof(struct gm_input),
				 input_item, &in, &j->ninputs);
	j->inputs = in;
	struct nameref refs[SCJ_MAX_INPUTS];
	for (size_t i = 0; rc == GB_OK && i < j->ninputs; i++)
		refs[i] = (struct nameref){j->inputs[i].lfn, i};
	return rc == GB_OK ? dups(c, refs, j->ninputs, f, ".lfn", "input file")
			   : rc;
}

/* 1..SCJ_MAX_JOBS jobs with distinct jobIDs. */
static int parse_jobs(const struct pctx *c, json_t *arr, const char *f,
		      struct gm_request *r)
{
	void *jobs = NULL;
	if (arr == NULL)
		return fail(c, GB_EMISSING, f, "missing");
	if (json_is_array(arr) && json_array_size(arr) == 0)
		return fail(c, GB_ERANGE, f, "expected at least one job");
	int rc = parse_items(c, arr, f, 0, SCJ_MAX_JOBS, sizeof(struct gm_job),
			     job_item, &jobs, &r->njobs);
	r->jobs = jobs;
	size_t n = rc == GB_OK ? r->njobs : 0;
	if (rc == GB_OK && json_is_null(arr))
		return fail(c, GB_ETYPE, f, "expected array, got null");
	struct nameref *ids = n ? alloc_n(c, n, sizeof(*ids)) : NULL;
	if (n && ids == NULL)
		return fail(c, GB_ENOMEM, f, "out of memory");
	for (size_t i = 0; i < n; i++) {
		/* as text, so the duplicate check is the one for names */
		char id[24];
		snprintf(id, sizeof(id), "%lld", r->jobs[i].job_id);
		ids[i] = (struct nameref){arena_strdup(c->a, id), i};
		if (ids[i].name == NULL)
			return fail(c, GB_ENOMEM, f, "out of memory");
	}
	return rc == GB_OK ? dups(c, ids, n, f, ".jobID", "jobID") : rc;
}

int scj_parse_request(json_t *obj, const char *path, struct arena *a,
		      int scenario, struct gm_request *out, char *err,
		      size_t errlen)
{
	struct pctx c = {a, err, errlen, scenario, 0};
	if (out == NULL || a == NULL || path == NULL)
		return fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (obj == NULL)
		return fail(&c, GB_EMISSING, path, "missing");
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	char f[SCJ_PATH];
	path_key(f, sizeof(f), path, "architecture");
	int rc = parse_record(&c, obj, path, request_flds, request_extra, &r);
	if (rc == GB_OK && rc_parse_arch(r.architecture, &r.need.arch) != 0)
		return fail(&c, GB_ERANGE, f,
			    "expected sw_platform<@base_platform><#cpu_spec>"
			    "<&gpu_spec>, each separator once and each piece "
			    "under %d bytes, got '%s'",
			    RC_SPEC_MAX, r.architecture);
	/* Only whether the unit is per event matters (PJ-17). */
	static const struct fld unit_fld =
		STR("outDiskCountUnit", struct one_str, s, 0, "");
	struct one_str unit = {""};
	if (rc == GB_OK)
		rc = fld_parse(&c, obj, path, &unit_fld, &unit);
	size_t n = rc == GB_OK ? strlen(unit.s) : 0;
	r.t.out_disk_per_event = n >= 8 && !strcmp(unit.s + n - 8, "PerEvent");
	path_key(f, sizeof(f), path, "jobs");
	if (rc == GB_OK)
		rc = parse_jobs(&c, json_object_get(obj, "jobs"), f, &r);
	if (rc == GB_OK)
		*out = r;
	return rc;
}

/* ---- whole scenario ------------------------------------------------------- */

/* Besides $schema, description, now and seed (read by a table). */
static const char *const scenario_keys[] = {
	"params", "queues", "sw", "links", "fileReplicas", "task", NULL};

int scj_is_job_scenario(json_t *root)
{
	return json_is_object(root) && json_object_get(root, "queues") != NULL;
}

int scj_parse_scenario(json_t *root, struct arena *a, struct scj_scenario *out,
		       char *err, size_t errlen)
{
	struct pctx c = {a, err, errlen, 1, 0};
	if (out == NULL || a == NULL)
		return fail(&c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (root == NULL)
		return fail(&c, GB_EMISSING, "", "no scenario");
	static const struct fld head_flds[] = {
		TEXT("$schema"),
		TEXT("description"),
		TIME("now", struct scj_scenario, now, FF_REQ),
		LLNG("seed", struct scj_scenario, seed, FF_REQ, 0),
		FLD_END,
	};
	int rc = parse_record(&c, root, "", head_flds, scenario_keys, out);
	struct prm_kv *kv = NULL;
	size_t nkv = 0;
	if (rc == GB_OK)
		rc = scn_parse_params(json_object_get(root, "params"), "params",
				      a, &kv, &nkv, err, errlen);
	out->params = (struct prm_set){kv, nkv};
	if (rc == GB_OK && json_object_get(root, "queues") == NULL)
		return fail(&c, GB_EMISSING, "queues", "missing");
	if (rc == GB_OK)
		rc = scj_parse_grid(root, a, out->now, &out->grid, err, errlen);
	if (rc == GB_OK)
		rc = scj_parse_request(json_object_get(root, "task"), "task", a,
				       1, &out->req, err, errlen);
	return rc;
}

/* ---- deciding ------------------------------------------------------------- */

int scj_run(const struct scj_scenario *s, struct arena *a,
	    struct scj_result *out)
{
	if (s == NULL || a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->req = s->req;
	int rc = gm_resolve(&s->grid, &out->req, s->now, a, &out->queues,
			    &out->env);
	if (rc != GB_OK)
		return rc;
	size_t nq = s->grid.nqueues, nj = out->req.njobs;
	out->nqueues = nq;
	jb_params_resolve(&s->params, out->req.t.gshare, &out->params);
	/* one slot at least, so an empty grid is not "out of memory" */
	out->cands = arena_alloc(a, (nq ? nq : 1) * sizeof(*out->cands));
	out->plan.job_queue =
		arena_alloc(a, (nj ? nj : 1) * sizeof(*out->plan.job_queue));
	out->plan.job_status =
		arena_alloc(a, (nj ? nj : 1) * sizeof(*out->plan.job_status));
	if (out->cands == NULL || out->plan.job_queue == NULL ||
	    out->plan.job_status == NULL)
		return GB_ENOMEM;
	struct gb_rng rng;
	gb_rng_seed(&rng, (uint64_t)s->seed);
	rc = jb_broker(&out->req.t, out->queues, nq, &out->params, &out->env,
		       &rng, out->cands, &out->dec, &out->plan);
	/* the renderers name candidates; do not rely on the engine for it */
	for (size_t i = 0; i < nq; i++)
		if (out->cands[i].name == NULL)
			out->cands[i].name = out->queues[i].name;
	return rc;
}
