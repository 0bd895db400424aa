/*
** summary.c — counting and printing for `gridbroker summary` (summary.h).
*/
#include "report/summary.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gb_error.h"

/* Columns of a pivot table beyond the statuses the caller names. */
#define SM_MAX_COLS 8

void sm_init(struct sm_table *t)
{
	memset(t, 0, sizeof(*t));
}

/* Copy `s` into dst[SM_KEY], cut at a UTF-8 character boundary. */
static void copy_key(char *dst, const char *s)
{
	size_t n = strlen(s);
	if (n > SM_KEY - 1) {
		n = SM_KEY - 1;
		/* back off continuation bytes (10xxxxxx) to a lead byte */
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
}

void sm_add(struct sm_table *t, const char *k1, const char *k2, long long n)
{
	char a[SM_KEY], b[SM_KEY];
	copy_key(a, k1 ? k1 : "");
	copy_key(b, k2 ? k2 : "");
	t->total += n;
	for (size_t i = 0; i < t->nrows; i++) {
		if (strcmp(t->rows[i].k1, a) == 0 &&
		    strcmp(t->rows[i].k2, b) == 0) {
			t->rows[i].n += n;
			return;
		}
	}
	if (t->nrows == SM_MAX_ROWS) {
		t->other += n;
		return;
	}
	struct sm_row *r = &t->rows[t->nrows++];
	memcpy(r->k1, a, sizeof(a));
	memcpy(r->k2, b, sizeof(b));
	r->n = n;
}

static int row_cmp(const void *x, const void *y)
{
	const struct sm_row *a = x, *b = y;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	int c = strcmp(a->k1, b->k1);
	return c ? c : strcmp(a->k2, b->k2);
}

void sm_sort(struct sm_table *t)
{
	qsort(t->rows, t->nrows, sizeof(t->rows[0]), row_cmp);
}

/* Add `n` to (rule, code) of object `o` when it has a string rule and a
** positive integer `count_key` (or 1 when count_key is NULL); the count. */
static long long add_rule(struct sm_table *t, json_t *o, const char *count_key)
{
	json_t *rule = json_object_get(o, "rule");
	json_t *code = json_object_get(o, "code");
	long long n = 1;
	if (count_key) {
		json_t *c = json_object_get(o, count_key);
		n = json_is_integer(c) ? (long long)json_integer_value(c) : 0;
	}
	if (!json_is_string(rule) || n <= 0)
		return 0;
	sm_add(t, json_string_value(rule),
	       json_is_string(code) ? json_string_value(code) : "", n);
	return n;
}

/*
** Every element of `arr` (or its member `member`) counted by its "count":
**   a pilot decision's "stages" with member "cut" (decrec.h): one stage
**     per filter that cut, with the filter's rule; its "cut" is the whole
**     stage, so it is counted as is;
**   a truncated record's "rejected" with member NULL: the dropped
**     candidates aggregated per (stage, rule, code) with their count.
*/
static long long counted(struct sm_table *t, json_t *arr, const char *member)
{
	long long found = 0;
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e)
	{
		json_t *o = member ? json_object_get(e, member) : e;
		if (json_is_object(o))
			found += add_rule(t, o, "count");
	}
	return found;
}

/* Walk `v`; `in_reasons` when v is an element of a "reasons" array. */
static long long walk(struct sm_table *t, json_t *v, int in_reasons,
		      int depth)
{
	long long found = 0;
	if (depth > 32) /* stored explanations are shallow; stop a cycle of
			** nesting from recursing without bound */
		return 0;
	if (json_is_object(v) && json_is_object(json_object_get(v, "rejectedBy")))
		return counted(t, json_object_get(v, "stages"), "cut");
	if (json_is_object(v)) {
		if (in_reasons)
			found += add_rule(t, v, NULL);
		const char *key;
		json_t *val;
		json_object_foreach(v, key, val)
		{
			if (strcmp(key, "rejected") == 0 &&
			    json_is_array(val)) {
				found += counted(t, val, NULL);
				continue;
			}
			if (strcmp(key, "rejected") == 0 &&
			    json_is_object(val)) {
				const char *f;
				json_t *cnt;
				json_object_foreach(val, f, cnt)
				{
					if (json_is_integer(cnt) &&
					    json_integer_value(cnt) > 0) {
						sm_add(t, "pilot filter", f,
						       json_integer_value(cnt));
						found += json_integer_value(cnt);
					}
				}
				continue;
			}
			int reasons = strcmp(key, "reasons") == 0 &&
				      json_is_array(val);
			if (json_is_array(val)) {
				size_t i;
				json_t *e;
				json_array_foreach(val, i, e)
					found += walk(t, e, reasons, depth + 1);
			} else if (json_is_object(val)) {
				found += walk(t, val, 0, depth + 1);
			}
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e)
			found += walk(t, e, 0, depth + 1);
	}
	return found;
}

long long sm_add_reasons(struct sm_table *t, const char *json)
{
	json_error_t err;
	json_t *doc = json_loads(json, JSON_DECODE_ANY, &err);
	if (doc == NULL)
		return GB_EDECODE;
	long long n = walk(t, doc, 0, 0);
	json_decref(doc);
	return n;
}

/* One line of a pivot table. */
struct pivot_line {
	const char *k1;
	long long n[SM_MAX_COLS + 1]; /* the named columns, then other */
	long long total;
};

static int line_cmp(const void *x, const void *y)
{
	const struct pivot_line *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->k1, b->k1);
}

void sm_print_pivot(FILE *out, const struct sm_table *t, const char *title1,
		    const char *none, const char *const *cols, size_t ncols,
		    int other_col, size_t max_lines)
{
	struct pivot_line lines[SM_MAX_ROWS]; /* 45 KB: a CLI's stack */
	size_t nl = 0;
	if (ncols > SM_MAX_COLS)
		ncols = SM_MAX_COLS;
	for (size_t i = 0; i < t->nrows; i++) {
		const struct sm_row *r = &t->rows[i];
		size_t l = 0;
		while (l < nl && strcmp(lines[l].k1, r->k1) != 0)
			l++;
		if (l == nl) {
			memset(&lines[nl], 0, sizeof(lines[nl]));
			lines[nl++].k1 = r->k1;
		}
		size_t c = 0;
		while (c < ncols && strcmp(cols[c], r->k2) != 0)
			c++;
		lines[l].n[c] += r->n; /* c == ncols: the other column */
		lines[l].total += r->n;
	}
	qsort(lines, nl, sizeof(lines[0]), line_cmp);

	fprintf(out, "  %-28s", title1);
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, " %10s", cols[c]);
	if (other_col)
		fprintf(out, " %10s", "other");
	fprintf(out, " %10s\n", "total");
	long long sum[SM_MAX_COLS + 1] = {0}, all = 0;
	for (size_t l = 0; l < nl; l++) {
		for (size_t c = 0; c <= ncols; c++)
			sum[c] += lines[l].n[c];
		all += lines[l].total;
		if (l >= max_lines)
			continue;
		fprintf(out, "  %-28.28s",
			lines[l].k1[0] ? lines[l].k1 : none);
		for (size_t c = 0; c < ncols; c++)
			fprintf(out, " %10lld", lines[l].n[c]);
		if (other_col)
			fprintf(out, " %10lld", lines[l].n[ncols]);
		fprintf(out, " %10lld\n", lines[l].total);
	}
	if (nl > max_lines)
		fprintf(out, "  ... %zu more\n", nl - max_lines);
	if (t->other)
		fprintf(out, "  (%lld more in keys beyond the table's %d rows)\n",
			t->other, SM_MAX_ROWS);
	fprintf(out, "  %-28s", "total");
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, " %10lld", sum[c]);
	if (other_col)
		fprintf(out, " %10lld", sum[ncols]);
	fprintf(out, " %10lld\n", all);
}

void sm_print_list(FILE *out, const struct sm_table *t, const char *h1,
		   const char *h2, size_t max_lines)
{
	fprintf(out, "  %-14s %-44s %8s %6s\n", h1, h2, "count", "share");
	for (size_t i = 0; i < t->nrows && i < max_lines; i++) {
		const struct sm_row *r = &t->rows[i];
		fprintf(out, "  %-14.14s %-44.44s %8lld %5.1f%%\n",
			r->k1[0] ? r->k1 : "-", r->k2[0] ? r->k2 : "-", r->n,
			t->total ? 100.0 * (double)r->n / (double)t->total
				 : 0.0);
	}
	if (t->nrows > max_lines)
		fprintf(out, "  ... %zu more\n", t->nrows - max_lines);
	fprintf(out, "  %-59s %8lld\n", "total", t->total);
}
