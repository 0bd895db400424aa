/*
** jsonutil.c — the strict JSON reading shared by scenario.c,
** scenario_jobs.c and scenario_jobs_grid.c, and the JSON building blocks
** shared by report.c and report_jobs.c (declared in jsonutil.h).
**
** The parsers of task and job scenarios grew the same error, path and
** string helpers side by side; they are kept here once because the tests
** and the people reading `explain` errors depend on those texts being the
** same everywhere ("queues[2].maxrss: expected a number >= 0, got -1").
** The record parser reads a table row per field, so a field's type, range
** and default are written in one place and the same row gives the allowed
** key list for the unknown-field check; checks that belong to one domain
** (PJ-22 connectivity words) come in through a row's `check` function
** rather than living here.
*/
#include "base/jsonutil.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/limits.h"
#include "gb_error.h"
#include "base/timefmt.h"

/* ---- errors and paths --------------------------------------------------- */

int ju_fail(const struct ju_ctx *c, int rc, const char *path, const char *fmt,
	    ...)
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

/* c without its error buffer: for a parse whose path is built only when
** it fails (and only when c has a buffer, loud). */
static struct ju_ctx ju_quiet(const struct ju_ctx *c)
{
	struct ju_ctx q = *c;
	q.err = NULL;
	q.errlen = 0;
	return q;
}

static int loud(const struct ju_ctx *c)
{
	return c->err != NULL && c->errlen != 0;
}

/* A path cut short by its buffer ends in "..." rather than mid-name. */
void ju_path_done(char *buf, size_t n, int w)
{
	if ((w < 0 || (size_t)w >= n) && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

void ju_path_key(char *buf, size_t n, const char *path, const char *key)
{
	ju_path_done(buf, n,
		     snprintf(buf, n, "%s%s%s", path, path[0] ? "." : "", key));
}

void ju_path_idx(char *buf, size_t n, const char *path, size_t i)
{
	ju_path_done(buf, n, snprintf(buf, n, "%s[%zu]", path, i));
}

void ju_path_qkey(char *buf, size_t n, const char *path, const char *key)
{
	ju_path_done(buf, n, snprintf(buf, n, "%s[\"%s\"]", path, key));
}

const char *ju_type_name(const json_t *j)
{
	static const char *const names[] = {
		[JSON_OBJECT] = "object", [JSON_ARRAY] = "array",
		[JSON_STRING] = "string", [JSON_INTEGER] = "integer",
		[JSON_REAL] = "real",     [JSON_TRUE] = "boolean",
		[JSON_FALSE] = "boolean", [JSON_NULL] = "null"};
	unsigned t = (unsigned)json_typeof(j);
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

int ju_want_object(const struct ju_ctx *c, json_t *v, const char *path)
{
	if (!json_is_object(v))
		return ju_fail(c, GB_ETYPE, path, "expected object, got %s",
			       ju_type_name(v));
	return GB_OK;
}

int ju_want_array(const struct ju_ctx *c, json_t *v, const char *path,
		  size_t limit)
{
	if (!json_is_array(v))
		return ju_fail(c, GB_ETYPE, path, "expected array, got %s",
			       ju_type_name(v));
	if (json_array_size(v) > limit)
		return ju_fail(c, GB_ETOOBIG, path,
			       "array of %zu exceeds the limit of %zu",
			       json_array_size(v), limit);
	return GB_OK;
}

void *ju_alloc_n(const struct ju_ctx *c, size_t n, size_t size)
{
	if (n == 0 || n > SIZE_MAX / size)
		return NULL;
	return arena_alloc(c->a, n * size);
}

/* Check text against the codec's limits and copy it into the arena. */
int ju_str_copy(const struct ju_ctx *c, const char *s, size_t n, const char *f,
		int nonempty, const char **out)
{
	if (n > GB_MAX_STRING - 1)
		return ju_fail(c, GB_ETOOBIG, f,
			       "string of %zu bytes exceeds the limit of %d", n,
			       GB_MAX_STRING - 1);
	if (strlen(s) != n)
		return ju_fail(c, GB_ERANGE, f, "string contains a NUL byte");
	if (nonempty && n == 0)
		return ju_fail(c, GB_ERANGE, f, "expected a non-empty string");
	char *copy = arena_strndup(c->a, s, n);
	if (copy == NULL)
		return ju_fail(c, GB_ENOMEM, f, "out of memory");
	*out = copy;
	return GB_OK;
}

int ju_str_value(const struct ju_ctx *c, json_t *v, const char *f, int nonempty,
		 const char **out)
{
	if (!json_is_string(v))
		return ju_fail(c, GB_ETYPE, f, "expected string, got %s",
			       ju_type_name(v));
	return ju_str_copy(c, json_string_value(v), json_string_length(v), f,
			   nonempty, out);
}

/* An array of strings into an arena array (NULL/0 when absent or empty). */
int ju_str_list(const struct ju_ctx *c, json_t *v, const char *f, size_t limit,
		int nonempty, const char *const **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL)
		return GB_OK;
	int rc = ju_want_array(c, v, f, limit);
	size_t cnt = rc == GB_OK ? json_array_size(v) : 0;
	if (rc != GB_OK || cnt == 0)
		return rc;
	const char **arr = ju_alloc_n(c, cnt, sizeof(*arr));
	if (arr == NULL)
		return ju_fail(c, GB_ENOMEM, f, "out of memory");
	const struct ju_ctx q = ju_quiet(c);
	for (size_t i = 0; i < cnt; i++) {
		json_t *e = json_array_get(v, i);
		/* the element's path only for a message: ju_str_value fails
		** before it allocates, so the second call fails the same */
		rc = ju_str_value(&q, e, f, nonempty, &arr[i]);
		if (rc != GB_OK && loud(c)) {
			char p[JU_PATH];
			ju_path_idx(p, sizeof(p), f, i);
			rc = ju_str_value(c, e, p, nonempty, &arr[i]);
		}
		if (rc != GB_OK)
			return rc;
	}
	*out = arr;
	*n = cnt;
	return GB_OK;
}

/* ---- table-driven fields ---------------------------------------------- */

static int fld_int(const struct ju_ctx *c, const struct ju_fld *d, json_t *v,
		   const char *f, long long *out)
{
	if (!json_is_integer(v))
		return ju_fail(c, GB_ETYPE, f, "expected integer, got %s",
			       ju_type_name(v));
	long long x = json_integer_value(v);
	long long lo = (long long)d->min;
	long long hi = isfinite(d->max) ? (long long)d->max : LLONG_MAX;
	if (x >= lo && x <= hi) {
		*out = x;
		return GB_OK;
	}
	if (hi == LLONG_MAX && lo == 1)
		return ju_fail(c, GB_ERANGE, f,
			       "expected a positive integer, got %lld", x);
	if (hi == LLONG_MAX)
		return ju_fail(c, GB_ERANGE, f,
			       "expected an integer >= %lld, got %lld", lo, x);
	return ju_fail(c, GB_ERANGE, f,
		       "expected an integer in [%lld, %lld], got %lld", lo, hi,
		       x);
}

static int fld_num(const struct ju_ctx *c, const struct ju_fld *d, json_t *v,
		   const char *f, double *out)
{
	if (!json_is_number(v))
		return ju_fail(c, GB_ETYPE, f, "expected a number, got %s",
			       ju_type_name(v));
	double x = json_number_value(v);
	int pos = (d->flags & JU_F_POS) != 0;
	if (!isfinite(x))
		return ju_fail(c, GB_ERANGE, f, "expected a finite number");
	if ((pos ? x > d->min : x >= d->min) && x <= d->max) {
		*out = x;
		return GB_OK;
	}
	if (isfinite(d->max))
		return ju_fail(c, GB_ERANGE, f,
			       "expected a number in %c%g, %g], got %g",
			       pos ? '(' : '[', d->min, d->max, x);
	return ju_fail(c, GB_ERANGE, f, "expected a number %s %g, got %g",
		       pos ? ">" : ">=", d->min, x);
}

/* A string that must be one of `words`; *idx gets its position. */
static int fld_word(const struct ju_ctx *c, const char *const *words, json_t *v,
		    const char *f, int *idx)
{
	if (!json_is_string(v))
		return ju_fail(c, GB_ETYPE, f, "expected string, got %s",
			       ju_type_name(v));
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
	return ju_fail(c, GB_ERANGE, f, "unknown value '%.64s' (expected %s)",
		       s, list);
}

static int fld_time(const struct ju_ctx *c, json_t *v, const char *f,
		    long long *out)
{
	if (!json_is_string(v))
		return ju_fail(c, GB_ETYPE, f, "expected string, got %s",
			       ju_type_name(v));
	if (tf_parse(json_string_value(v), out) != GB_OK || *out <= 0)
		return ju_fail(c, GB_ERANGE, f,
			       "expected an RFC 3339 time such as "
			       "2024-05-14T08:30:00Z, got '%.64s'",
			       json_string_value(v));
	return GB_OK;
}

/* Any case, as the engine compares them; other words are typos here. */
int ju_ipconn_ok(const char *s)
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

/* Parse one field, at path f, into base + d->off (and off2 for a list). */
static int fld_parse(const struct ju_ctx *c, json_t *obj, const char *f,
		     const struct ju_fld *d, void *base)
{
	json_t *v = json_object_get(obj, d->key);
	int req = (d->flags & JU_F_REQ) ||
		  ((d->flags & JU_F_REQOPT) && c->req_opt);
	/* null means "the default" for optional fields, "missing" otherwise */
	if (v != NULL && json_is_null(v) && !req)
		v = NULL;
	if (v == NULL && req)
		return ju_fail(c, GB_EMISSING, f, "missing");
	char *p = (char *)base + d->off;
	long long i = (long long)(isfinite(d->def) ? d->def : 0);
	double x = d->def;
	int rc = GB_OK, w = 0;
	const char *s = d->sdef;
	const char *const *list = NULL;
	size_t n = 0;
	switch ((enum ju_kind)d->kind) {
	case JU_K_NUM:
		rc = v ? fld_num(c, d, v, f, &x) : GB_OK;
		memcpy(p, &x, sizeof(x));
		return rc;
	case JU_K_LONG: {
		rc = v ? fld_int(c, d, v, f, &i) : GB_OK;
		long l = (long)i; /* ranges of JU_K_LONG rows fit a long */
		memcpy(p, &l, sizeof(l));
		return rc;
	}
	case JU_K_LLONG:
		rc = v ? fld_int(c, d, v, f, &i) : GB_OK;
		memcpy(p, &i, sizeof(i));
		return rc;
	case JU_K_BOOL:
		if (v != NULL && !json_is_boolean(v))
			return ju_fail(c, GB_ETYPE, f,
				       "expected boolean, got %s",
				       ju_type_name(v));
		w = v != NULL && json_is_true(v);
		memcpy(p, &w, sizeof(w));
		return GB_OK;
	case JU_K_STR:
		if (v != NULL)
			rc = ju_str_value(c, v, f,
					  (d->flags & JU_F_NONEMPTY) != 0, &s);
		if (rc == GB_OK && d->check && s && !d->check(s))
			return ju_fail(c, GB_ERANGE, f, "expected %s, got '%s'",
				       d->expect, s);
		memcpy(p, &s, sizeof(s));
		return rc;
	case JU_K_LIST:
		rc = ju_str_list(c, v, f, (size_t)d->max,
				 (d->flags & JU_F_NONEMPTY) != 0, &list, &n);
		memcpy(p, &list, sizeof(list));
		memcpy((char *)base + d->off2, &n, sizeof(n));
		return rc;
	case JU_K_ENUM:
	case JU_K_WORD:
		rc = v ? fld_word(c, d->words, v, f, &w) : GB_OK;
		if (d->kind == JU_K_ENUM)
			memcpy(p, &w, sizeof(w));
		else
			memcpy(p, &d->words[w], sizeof(d->words[w]));
		return rc;
	case JU_K_TIME:
		i = 0;
		rc = v ? fld_time(c, v, f, &i) : GB_OK;
		memcpy(p, &i, sizeof(i));
		return rc;
	case JU_K_AGE:
		x = NAN;
		rc = v ? fld_num(c, d, v, f, &x) : GB_OK;
		i = c->now - (isnan(x) ? 0 : llround(x));
		/* 0 means never; "very long ago" must not become that */
		i = isnan(x) ? 0 : (i > 0 ? i : 1);
		memcpy(p, &i, sizeof(i));
		return rc;
	case JU_K_TEXT:
		if (v != NULL && !json_is_string(v))
			return ju_fail(c, GB_ETYPE, f,
				       "expected string, got %s",
				       ju_type_name(v));
		return GB_OK;
	}
	return ju_fail(c, GB_EINVAL, f, "bad field table");
}

/*
** The field's path is only for an error message, and building it for
** every field of every record was a good part of parsing a large grid.
** So a field is parsed first without the message; only when that fails is
** it parsed again with its path for the message. The second parse gives
** the same result because a failing fld_parse has allocated nothing:
** every failure comes before the arena copy, except a list's (its array
** and earlier elements are copied first) and a checked string's (the
** check looks at the copy), so those rows build their path up front.
*/
int ju_fld_parse(const struct ju_ctx *c, json_t *obj, const char *path,
		 const struct ju_fld *d, void *base)
{
	if (!loud(c) || (d->kind != JU_K_LIST && d->check == NULL)) {
		const struct ju_ctx q = ju_quiet(c);
		int rc = fld_parse(&q, obj, "", d, base);
		if (rc == GB_OK || !loud(c))
			return rc;
	}
	char f[JU_PATH];
	ju_path_key(f, sizeof(f), path, d->key);
	return fld_parse(c, obj, f, d, base);
}

/* Unknown keys first, so a typo is reported as such and not as the
** missing field it was meant to be. */
int ju_parse_record(const struct ju_ctx *c, json_t *obj, const char *path,
		    const struct ju_fld *t, const char *const *extra,
		    void *base)
{
	int rc = ju_want_object(c, obj, path);
	if (rc != GB_OK)
		return rc;
	/* Fast path: when as many of the table's keys are present as the
	** object has keys, none is unknown (a table's keys are distinct).
	** One hash lookup per row instead of a key-by-row comparison. */
	size_t known = 0;
	for (const struct ju_fld *d = t; d->key; d++)
		known += json_object_get(obj, d->key) != NULL;
	for (const char *const *e = extra; e && *e; e++)
		known += json_object_get(obj, *e) != NULL;
	if (known == json_object_size(obj))
		goto fields;
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		const struct ju_fld *d = t;
		while (d->key && strcmp(d->key, key) != 0)
			d++;
		const char *const *e = extra;
		while (d->key == NULL && e && *e && strcmp(*e, key) != 0)
			e++;
		if (d->key == NULL && (e == NULL || *e == NULL)) {
			char f[JU_PATH];
			ju_path_key(f, sizeof(f), path, key);
			return ju_fail(c, GB_EINVAL, f, "unknown field");
		}
	}
fields:
	for (const struct ju_fld *d = t; d->key && rc == GB_OK; d++)
		rc = ju_fld_parse(c, obj, path, d, base);
	return rc;
}

/* ---- arrays and maps of records ------------------------------------------ */

int ju_parse_items(const struct ju_ctx *c, json_t *v, const char *path, int map,
		   size_t limit, size_t size, ju_item_fn fn, void **out,
		   size_t *n)
{
	*out = NULL;
	*n = 0;
	if (v == NULL || json_is_null(v))
		return GB_OK;
	int rc = map ? ju_want_object(c, v, path)
		     : ju_want_array(c, v, path, limit);
	size_t cnt = rc != GB_OK ? 0
		     : map      ? json_object_size(v)
				: json_array_size(v);
	if (cnt > limit)
		return ju_fail(c, GB_ETOOBIG, path,
			       "%zu entries exceed the limit of %zu", cnt,
			       limit);
	if (rc != GB_OK || cnt == 0)
		return rc;
	char *arr = ju_alloc_n(c, cnt, size);
	if (arr == NULL)
		return ju_fail(c, GB_ENOMEM, path, "out of memory");
	char p[JU_PATH];
	size_t i = 0;
	const char *key;
	json_t *x;
	if (map) {
		json_object_foreach(v, key, x) {
			ju_path_qkey(p, sizeof(p), path, key);
			rc = fn(c, x, p, key, arr + i++ * size);
			if (rc != GB_OK)
				return rc;
		}
	}
	for (; !map && i < cnt && rc == GB_OK; i++) {
		ju_path_idx(p, sizeof(p), path, i);
		rc = fn(c, json_array_get(v, i), p, NULL, arr + i * size);
	}
	*out = arr;
	*n = cnt;
	return rc;
}

/* ---- duplicates --------------------------------------------------------- */

int ju_nameref_cmp(const void *x, const void *y)
{
	const struct ju_nameref *a = x, *b = y;
	int r = strcmp(a->name, b->name);
	if (r)
		return r;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

int ju_nameref_key_cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key,
		      ((const struct ju_nameref *)elem)->name);
}

int ju_dups(const struct ju_ctx *c, struct ju_nameref *r, size_t n,
	    const char *path, const char *suffix, const char *what)
{
	if (n > 1)
		qsort(r, n, sizeof(*r), ju_nameref_cmp);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(r[i - 1].name, r[i].name) != 0)
			continue;
		char f[JU_PATH];
		int w = snprintf(f, sizeof(f), "%s[%zu]%s", path, r[i].idx,
				 suffix);
		ju_path_done(f, sizeof(f), w);
		return ju_fail(c, GB_EDUP, f,
			       "duplicate %s '%s' (also %s[%zu])", what,
			       r[i].name, path, r[i - 1].idx);
	}
	return GB_OK;
}

/* ---- writing ------------------------------------------------------------ */

json_t *ju_str(const char *s)
{
	if (s == NULL)
		return json_null();
	json_t *j = json_string(s);
	return j ? j : json_string("<not UTF-8>");
}

int ju_set(json_t *o, const char *k, json_t *v)
{
	return v == NULL || json_object_set_new(o, k, v) != 0;
}

int ju_push(json_t *a, json_t *v)
{
	return v == NULL || json_array_append_new(a, v) != 0;
}

json_t *ju_reason_json(const struct dec_reason *r)
{
	char detail[512];
	dec_reason_format(r, detail, sizeof(detail));
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "rule", ju_str(r->rule));
	bad |= ju_set(o, "code", ju_str(r->code));
	bad |= ju_set(o, "detail", ju_str(detail));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ju_stage_json(const struct dec_stage *s)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "name", ju_str(s->name));
	bad |= ju_set(o, "rule", ju_str(s->rule));
	bad |= ju_set(o, "in", json_integer(s->in));
	bad |= ju_set(o, "out", json_integer(s->out));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ju_candidate_json(const struct dec_candidate *c, const char *name,
			  int dropped_detail)
{
	json_t *o = json_object(), *reasons = json_array();
	int bad = o == NULL || reasons == NULL;
	int dropped = dec_dropped(c);
	unsigned nr = c->nreasons < DEC_MAX_REASONS ? c->nreasons
						    : DEC_MAX_REASONS;
	for (unsigned i = 0; !bad && dropped && i < nr; i++)
		bad |= ju_push(reasons, ju_reason_json(&c->reasons[i]));
	if (bad) {
		json_decref(o);
		json_decref(reasons);
		return NULL;
	}
	bad |= ju_set(o, "name", ju_str(name));
	bad |= ju_set(o, "weight",
		      !dropped && isfinite(c->weight) ? json_real(c->weight)
						      : json_null());
	bad |= ju_set(o, "stage", ju_str(dropped ? c->stage : NULL));
	bad |= ju_set(o, "reasons", reasons);
	if (dropped && c->nreasons > DEC_MAX_REASONS)
		bad |= ju_set(o, "moreReasons",
			      json_integer(c->nreasons - DEC_MAX_REASONS));
	bad |= ju_set(o, "weightDetail",
		      c->wexpl.fmt && (!dropped || dropped_detail)
			      ? ju_reason_json(&c->wexpl)
			      : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int ju_scenario_begin(const struct ju_ctx *c, const json_t *root, void *out,
		      size_t size)
{
	if (out == NULL || c->a == NULL)
		return ju_fail(c, GB_EINVAL, "", "invalid arguments");
	memset(out, 0, size);
	if (root == NULL)
		return ju_fail(c, GB_EMISSING, "", "no scenario");
	return GB_OK;
}

struct scenario_head {
	long long now, seed;
};

int ju_scenario_head(const struct ju_ctx *c, json_t *root,
		     const char *const *others, long long *now,
		     unsigned long long *seed)
{
	static const struct ju_fld flds[] = {
		JU_TEXT("$schema"),
		JU_TEXT("description"),
		JU_TIME("now", struct scenario_head, now, JU_F_REQ),
		JU_LLNG("seed", struct scenario_head, seed, JU_F_REQ, 0),
		JU_FLD_END,
	};
	struct scenario_head h = {0, 0};
	int rc = ju_parse_record(c, root, "", flds, others, &h);
	*now = h.now;
	*seed = (unsigned long long)h.seed;
	return rc;
}
