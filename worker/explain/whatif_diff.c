/*
** whatif_diff.c — the difference between two runs or two records of one
** decision, as structs, JSON and text, and a record's drops by rule
** (whatif.h).
**
** The diff reads the records (what the worker stores, so a replay diffs a
** stored decision against a re-run the same way) and, for a match
** scenario, the offline task queue rows, which no record keeps.
*/
#include "explain/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonutil.h"
#include "report/decrec.h"
#include "gb_error.h"

/* ---- diff --------------------------------------------------------------- */

static int str_differ(const char *x, const char *y)
{
	if (x == NULL || y == NULL)
		return x != y;
	return strcmp(x, y) != 0;
}

static const char *outcome_of(const struct ex_record *r)
{
	return r ? r->outcome : "none";
}

unsigned exw_record_changed(const struct ex_record *b,
			    const struct ex_record *a)
{
	unsigned ch = 0;
	if (str_differ(outcome_of(b), outcome_of(a)))
		ch |= EXW_OUTCOME;
	if (str_differ(b ? b->chosen : NULL, a ? a->chosen : NULL))
		ch |= EXW_CHOSEN;
	char db[65], da[65];
	dr_text_digest(b ? b->text : NULL, db);
	dr_text_digest(a ? a->text : NULL, da);
	if (strcmp(db, da) != 0)
		ch |= EXW_DIGEST;
	return ch;
}

static const char *sget(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *keep(struct arena *ar, const char *s, int *bad)
{
	if (s == NULL)
		return NULL;
	const char *c = arena_strdup(ar, s);
	*bad |= c == NULL;
	return c;
}

/* One candidate of a record as the diff compares it. */
struct cview {
	const char *name;
	const json_t *c;
	long long jobs;
};

static int cview_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cview *)x)->name,
		      ((const struct cview *)y)->name);
}

/* The jobs a job record's "assignments" give queue `name`. */
static long long jobs_of(const json_t *d, const char *name)
{
	size_t i;
	json_t *as;
	json_array_foreach(json_object_get(d, "assignments"), i, as)
	{
		const char *q = sget(as, "queue");
		if (q && strcmp(q, name) == 0)
			return (long long)json_integer_value(
				json_object_get(as, "count"));
	}
	return 0;
}

/* Record d's candidates, by name, into an array malloc'd here (*n of
** them); NULL with *n 0 when there are none, or when out of memory (then
** *oom is set). */
static struct cview *cviews(const json_t *d, int with_jobs, size_t *n, int *oom)
{
	const json_t *cands = json_object_get(d, "candidates");
	*n = 0;
	size_t cnt = json_array_size(cands);
	if (cnt == 0)
		return NULL;
	struct cview *v = malloc(cnt * sizeof(*v));
	if (v == NULL) {
		*oom = 1;
		return NULL;
	}
	for (size_t i = 0; i < cnt; i++) {
		const json_t *c = json_array_get(cands, i);
		const char *name = sget(c, "name");
		if (name == NULL)
			continue;
		v[*n] = (struct cview){name, c,
				       with_jobs ? jobs_of(d, name) : -1};
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), cview_cmp);
	return v;
}

/* Side s of candidate `x` from its record view (NULL: absent). */
static int fill_side(struct exw_cand *x, int s, const struct cview *v,
		     int with_jobs, struct arena *ar)
{
	int bad = 0;
	x->weight[s] = NAN;
	x->jobs[s] = with_jobs ? 0 : -1;
	if (v == NULL) {
		x->verdict[s] = "absent";
		return 0;
	}
	const json_t *w = json_object_get(v->c, "weight");
	if (json_is_number(w))
		x->weight[s] = json_number_value(w);
	x->jobs[s] = v->jobs;
	const char *stage = sget(v->c, "stage");
	if (stage == NULL) {
		x->verdict[s] = "kept";
		return 0;
	}
	char buf[256];
	snprintf(buf, sizeof(buf), "dropped at %s", stage);
	x->verdict[s] = keep(ar, buf, &bad);
	const json_t *r = json_array_get(json_object_get(v->c, "reasons"), 0);
	x->rule[s] = keep(ar, sget(r, "rule"), &bad);
	x->code[s] = keep(ar, sget(r, "code"), &bad);
	x->detail[s] = keep(ar, sget(r, "detail"), &bad);
	return bad;
}

static int weight_differs(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) != isnan(y);
	return x != y;
}

static int cand_changed(const struct exw_cand *x)
{
	return str_differ(x->verdict[0], x->verdict[1]) ||
	       str_differ(x->rule[0], x->rule[1]) ||
	       str_differ(x->code[0], x->code[1]) ||
	       weight_differs(x->weight[0], x->weight[1]) ||
	       x->jobs[0] != x->jobs[1];
}

/* The changed candidates of records db and da (either NULL) into out. */
static int diff_cands(const json_t *db, const json_t *da, int with_jobs,
		      struct arena *ar, struct exw_decision *out)
{
	int oom = 0;
	size_t nb = 0, na = 0;
	struct cview *vb = db ? cviews(db, with_jobs, &nb, &oom) : NULL;
	struct cview *va = da ? cviews(da, with_jobs, &na, &oom) : NULL;
	if (!oom && nb + na > 0) {
		out->cands = arena_alloc(ar, (nb + na) * sizeof(*out->cands));
		oom = out->cands == NULL;
	}
	size_t i = 0, j = 0;
	while (!oom && (i < nb || j < na)) {
		int c = i == nb   ? 1
			: j == na ? -1
				  : strcmp(vb[i].name, va[j].name);
		const struct cview *b = c <= 0 ? &vb[i++] : NULL;
		const struct cview *a = c >= 0 ? &va[j++] : NULL;
		struct exw_cand *x = &out->cands[out->ncands];
		memset(x, 0, sizeof(*x));
		x->name = keep(ar, b ? b->name : a->name, &oom);
		oom |= fill_side(x, 0, b, with_jobs, ar);
		oom |= fill_side(x, 1, a, with_jobs, ar);
		if (cand_changed(x))
			out->ncands++;
	}
	free(vb);
	free(va);
	return oom ? GB_ENOMEM : GB_OK;
}

/* The decision's own rule on side s: the throttle's, the timeout's,
** TQ-10's. */
static int decision_rule(enum ex_kind kind, const json_t *d, int s,
			 struct arena *ar, struct exw_decision *out)
{
	int bad = 0;
	char buf[512];
	if (kind == EX_ANALYSIS) {
		const json_t *t = json_object_get(d, "throttle");
		if (!json_is_true(json_object_get(t, "throttled")))
			return 0;
		out->rule[s] = keep(ar, sget(t, "rule"), &bad);
		out->code[s] = keep(ar, sget(t, "code"), &bad);
		snprintf(buf, sizeof(buf), "value %.6g, limit %.6g",
			 json_number_value(json_object_get(t, "value")),
			 json_number_value(json_object_get(t, "limit")));
		out->detail[s] = keep(ar, buf, &bad);
	} else if (kind == EX_TIMEOUT) {
		out->rule[s] = keep(ar, sget(d, "rule"), &bad);
		snprintf(buf, sizeof(buf), "%s %.0f s, limit %.0f s",
			 sget(d, "what") ? sget(d, "what") : "age",
			 json_number_value(json_object_get(d, "age")),
			 json_number_value(json_object_get(d, "limit")));
		out->detail[s] = keep(ar, buf, &bad);
	} else if (kind == EX_MATCH) {
		out->rule[s] = "TQ-10";
		out->code[s] = keep(ar, sget(d, "code"), &bad);
		out->detail[s] = keep(ar, sget(d, "reason"), &bad);
	}
	return bad;
}

int exw_diff_records(enum ex_kind kind, const struct ex_record *b,
		     const struct ex_record *a, struct arena *ar,
		     struct exw_decision *out)
{
	if (out == NULL || ar == NULL || (b == NULL && a == NULL))
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	const struct ex_record *r[2] = {b, a};
	json_t *d[2] = {NULL, NULL};
	int rc = GB_OK, bad = 0;
	for (int s = 0; s < 2 && rc == GB_OK; s++) {
		out->outcome[s] = keep(ar, outcome_of(r[s]), &bad);
		out->chosen[s] = keep(ar, r[s] ? r[s]->chosen : NULL, &bad);
		dr_text_digest(r[s] ? r[s]->text : NULL, out->digest[s]);
		if (r[s] == NULL)
			continue;
		d[s] = json_loads(r[s]->text ? r[s]->text : "", 0, NULL);
		if (d[s] == NULL)
			rc = GB_EDECODE;
		else
			bad |= decision_rule(kind, d[s], s, ar, out);
	}
	out->subject = keep(ar, (b ? b : a)->subject, &bad);
	if (rc == GB_OK && !bad && kind != EX_MATCH && kind != EX_TIMEOUT)
		rc = diff_cands(d[0], d[1],
				kind == EX_JOBS || kind == EX_ANALYSIS, ar,
				out);
	json_decref(d[0]);
	json_decref(d[1]);
	if (rc == GB_OK && bad)
		rc = GB_ENOMEM;
	out->changed = exw_record_changed(b, a);
	if (out->ncands)
		out->changed |= EXW_CANDIDATES;
	return rc;
}

/* A match's task queues as candidates: verdict and priority per TQ. */
static void tq_side(struct exw_cand *x, int s, const struct scm_row *w,
		    struct arena *ar, int *bad)
{
	char vt[64];
	x->verdict[s] =
		keep(ar, scm_verdict_text(w->verdict, vt, sizeof(vt)), bad);
	x->weight[s] = w->pr.priority;
	x->jobs[s] = -1;
	if (w->verdict < TQ_NFILTERS) {
		x->rule[s] = w->reason.rule;
		x->code[s] = w->reason.code;
		x->detail[s] = keep(ar, w->detail, bad);
	}
}

static int diff_tqs(const struct scm_result *b, const struct scm_result *a,
		    struct arena *ar, struct exw_decision *out)
{
	size_t n = b->nrows + a->nrows;
	if (n == 0)
		return GB_OK;
	out->cands = arena_alloc(ar, n * sizeof(*out->cands));
	if (out->cands == NULL)
		return GB_ENOMEM;
	int bad = 0;
	size_t i = 0, j = 0;
	while (!bad && (i < b->nrows || j < a->nrows)) {
		long long ib = i < b->nrows ? b->rows[i].tq->tq_id : -1;
		long long ia = j < a->nrows ? a->rows[j].tq->tq_id : -1;
		int c = ib < 0 ? 1 : ia < 0 ? -1 : (ib > ia) - (ib < ia);
		struct exw_cand *x = &out->cands[out->ncands];
		memset(x, 0, sizeof(*x));
		char nm[40];
		snprintf(nm, sizeof(nm), "TQ %lld", c <= 0 ? ib : ia);
		x->name = keep(ar, nm, &bad);
		x->verdict[0] = x->verdict[1] = "absent";
		x->weight[0] = x->weight[1] = NAN;
		x->jobs[0] = x->jobs[1] = -1;
		if (c <= 0)
			tq_side(x, 0, &b->rows[i++], ar, &bad);
		if (c >= 0)
			tq_side(x, 1, &a->rows[j++], ar, &bad);
		if (cand_changed(x))
			out->ncands++;
	}
	if (out->ncands)
		out->changed |= EXW_CANDIDATES;
	return bad ? GB_ENOMEM : GB_OK;
}

/* A timeout scenario: one decision per job with a record on either side
** (records come in job order). */
static int diff_timeout(const struct ex_result *b, const struct ex_result *a,
			struct arena *ar, struct exw_diff *out,
			const struct ju_ctx *c)
{
	const struct sct_scenario *sb = &b->in.timeout, *sa = &a->in.timeout;
	if (sb->njobs != sa->njobs)
		return ju_fail(c, GB_EINVAL, "jobs",
			       "the runs have %zu and %zu jobs", sb->njobs,
			       sa->njobs);
	size_t cap = b->nrecords + a->nrecords;
	if (cap == 0)
		return GB_OK;
	out->decisions = arena_alloc(ar, cap * sizeof(*out->decisions));
	if (out->decisions == NULL)
		return GB_ENOMEM;
	size_t pb = 0, pa = 0;
	for (size_t i = 0; i < sb->njobs; i++) {
		long long id = sb->jobs[i].j.job_id;
		if (sa->jobs[i].j.job_id != id)
			return ju_fail(c, GB_EINVAL, "jobs",
				       "job %zu is %lld in one run and %lld "
				       "in the other",
				       i, id, sa->jobs[i].j.job_id);
		const struct ex_record *rb =
			pb < b->nrecords && b->records[pb].job_id == id
				? &b->records[pb++]
				: NULL;
		const struct ex_record *ra =
			pa < a->nrecords && a->records[pa].job_id == id
				? &a->records[pa++]
				: NULL;
		if (rb == NULL && ra == NULL)
			continue;
		struct exw_decision *x = &out->decisions[out->ndecisions++];
		int rc = exw_diff_records(EX_TIMEOUT, rb, ra, ar, x);
		if (rc != GB_OK)
			return rc;
		out->changed |= x->changed;
	}
	return GB_OK;
}

int exw_diff(const struct ex_result *b, const struct ex_result *a,
	     struct arena *ar, struct exw_diff *out, char *err, size_t errlen)
{
	const struct ju_ctx c = {.err = err, .errlen = errlen};
	if (err && errlen)
		err[0] = '\0';
	if (b == NULL || a == NULL || ar == NULL || out == NULL)
		return ju_fail(&c, GB_EINVAL, "diff", "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (b->kind != a->kind)
		return ju_fail(&c, GB_EINVAL, "kind", "a %s run and a %s run",
			       ex_kind_name(b->kind), ex_kind_name(a->kind));
	out->kind = b->kind;
	if (b->kind == EX_TIMEOUT)
		return diff_timeout(b, a, ar, out, &c);
	if (b->nrecords == 0 && a->nrecords == 0)
		return GB_OK;
	out->decisions = arena_alloc(ar, sizeof(*out->decisions));
	if (out->decisions == NULL)
		return GB_ENOMEM;
	out->ndecisions = 1;
	struct exw_decision *x = &out->decisions[0];
	int rc = exw_diff_records(b->kind, b->nrecords ? &b->records[0] : NULL,
				  a->nrecords ? &a->records[0] : NULL, ar, x);
	if (rc == GB_OK && b->kind == EX_MATCH)
		rc = diff_tqs(&b->out.match, &a->out.match, ar, x);
	out->changed = x->changed;
	return rc;
}

/* ---- diff as JSON ------------------------------------------------------- */

static json_t *num_or_null(double x)
{
	return isnan(x) ? json_null() : json_real(x);
}

static json_t *changed_json(unsigned ch)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "outcome", json_boolean(ch & EXW_OUTCOME));
	bad |= ju_set(o, "chosen", json_boolean(ch & EXW_CHOSEN));
	bad |= ju_set(o, "digest", json_boolean(ch & EXW_DIGEST));
	bad |= ju_set(o, "candidates", json_boolean(ch & EXW_CANDIDATES));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *cand_side(const struct exw_cand *x, int s)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "verdict", ju_str(x->verdict[s]));
	bad |= ju_set(o, "weight", num_or_null(x->weight[s]));
	if (x->jobs[s] >= 0)
		bad |= ju_set(o, "jobs", json_integer(x->jobs[s]));
	bad |= ju_set(o, "rule", ju_str(x->rule[s]));
	bad |= ju_set(o, "code", ju_str(x->code[s]));
	bad |= ju_set(o, "detail", ju_str(x->detail[s]));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *decision_side(const struct exw_decision *x, int s)
{
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "outcome", ju_str(x->outcome[s]));
	bad |= ju_set(o, "chosen", ju_str(x->chosen[s]));
	bad |= ju_set(o, "rule", ju_str(x->rule[s]));
	bad |= ju_set(o, "code", ju_str(x->code[s]));
	bad |= ju_set(o, "detail", ju_str(x->detail[s]));
	bad |= ju_set(o, "digest",
		      ju_str(x->digest[s][0] ? x->digest[s] : NULL));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *decision_json(const struct exw_decision *x)
{
	json_t *o = json_object(), *cands = json_array();
	int bad = o == NULL || cands == NULL;
	for (size_t i = 0; !bad && i < x->ncands; i++) {
		json_t *c = json_object();
		bad = c == NULL ||
		      ju_set(c, "name", ju_str(x->cands[i].name)) ||
		      ju_set(c, "before", cand_side(&x->cands[i], 0)) ||
		      ju_set(c, "after", cand_side(&x->cands[i], 1)) ||
		      ju_push(cands, c);
	}
	if (!bad) {
		bad = ju_set(o, "subject", ju_str(x->subject)) ||
		      ju_set(o, "changed", changed_json(x->changed)) ||
		      ju_set(o, "before", decision_side(x, 0)) ||
		      ju_set(o, "after", decision_side(x, 1));
		bad |= ju_set(o, "candidates", cands);
		cands = NULL;
	}
	json_decref(cands);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *exw_diff_json(const struct exw_diff *d)
{
	if (d == NULL)
		return NULL;
	json_t *o = json_object(), *decs = json_array();
	int bad = o == NULL || decs == NULL;
	for (size_t i = 0; !bad && i < d->ndecisions; i++)
		bad = ju_push(decs, decision_json(&d->decisions[i]));
	if (!bad) {
		bad = ju_set(o, "kind", ju_str(ex_kind_name(d->kind))) ||
		      ju_set(o, "changed", changed_json(d->changed));
		bad |= ju_set(o, "decisions", decs);
		decs = NULL;
	}
	json_decref(decs);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---- diff as text ------------------------------------------------------- */

/* "x (unchanged)" or "x -> y"; NULL prints as "-". */
static void pair(FILE *f, const char *label, const char *x, const char *y)
{
	x = x ? x : "-";
	y = y ? y : "-";
	if (strcmp(x, y) == 0)
		fprintf(f, "%s %s (unchanged)", label, x);
	else
		fprintf(f, "%s %s -> %s", label, x, y);
}

/* A digest as the explain head shows it: its first 16 digits. */
static const char *short_digest(const char *d, char buf[17])
{
	snprintf(buf, 17, "%.16s", d[0] ? d : "-");
	return buf;
}

/* One side of a candidate; `wname` says what its weight is. */
static void cand_side_text(FILE *f, const struct exw_cand *x, int s,
			   const char *wname)
{
	fputs(x->verdict[s], f);
	if (!isnan(x->weight[s]))
		fprintf(f, ", %s %.6g", wname, x->weight[s]);
	if (x->jobs[s] > 0)
		fprintf(f, ", %lld job%s", x->jobs[s],
			x->jobs[s] == 1 ? "" : "s");
	if (x->rule[s])
		fprintf(f, " [%s %s]", x->rule[s],
			x->code[s] ? x->code[s] : "");
}

static void render_decision(FILE *f, enum ex_kind kind,
			    const struct exw_decision *x)
{
	char b0[17], b1[17];
	fprintf(f, "%s %s: ", kind == EX_TIMEOUT ? "job" : ex_kind_name(kind),
		x->subject ? x->subject : "-");
	pair(f, "outcome", x->outcome[0], x->outcome[1]);
	pair(f, ", chosen", x->chosen[0], x->chosen[1]);
	pair(f, ", digest", short_digest(x->digest[0], b0),
	     short_digest(x->digest[1], b1));
	fputc('\n', f);
	if (x->rule[0] || x->rule[1]) {
		char r[2][1024];
		for (int s = 0; s < 2; s++)
			if (x->rule[s])
				snprintf(r[s], sizeof(r[s]), "%s%s%s (%s)",
					 x->rule[s], x->code[s] ? " " : "",
					 x->code[s] ? x->code[s] : "",
					 x->detail[s] ? x->detail[s] : "");
			else
				snprintf(r[s], sizeof(r[s]), "none");
		pair(f, "    rule:", r[0], r[1]);
		fputc('\n', f);
	}
	if (x->ncands == 0) {
		if (kind != EX_TIMEOUT)
			fputs("    no candidate's verdict or weight changed\n",
			      f);
		return;
	}
	int w = 0;
	for (size_t i = 0; i < x->ncands; i++) {
		int len = (int)strlen(x->cands[i].name);
		w = len > w ? (len > 28 ? 28 : len) : w;
	}
	fprintf(f, "    candidates whose verdict or weight changed: %zu\n",
		x->ncands);
	for (size_t i = 0; i < x->ncands; i++) {
		const struct exw_cand *c = &x->cands[i];
		fprintf(f, "    %-*s  ", w, c->name);
		const char *wname = kind == EX_MATCH ? "priority" : "weight";
		cand_side_text(f, c, 0, wname);
		fputs(" -> ", f);
		cand_side_text(f, c, 1, wname);
		fputc('\n', f);
		/* the reasons' numbers, once when both sides give the same */
		int same = c->detail[0] && c->detail[1] &&
			   !str_differ(c->rule[0], c->rule[1]) &&
			   strcmp(c->detail[0], c->detail[1]) == 0;
		for (int s = same; s < 2; s++)
			if (c->detail[s])
				fprintf(f, "    %-*s    %-7s %s %s\n", w, "",
					same ? "both:"
					: s  ? "after:"
					     : "before:",
					c->rule[s], c->detail[s]);
	}
}

char *exw_render(const struct exw_set *sets, size_t n, const struct exw_diff *d)
{
	if (d == NULL || (sets == NULL && n > 0))
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	fprintf(f, "===== what-if: the decision with %zu change%s =====\n", n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "set %s (%s%s)\n", sets[i].arg,
			sets[i].target == EXW_PARAM
				? "parameter"
				: exw_target_name(sets[i].target),
			sets[i].value_json ? "" : ", a string");
	size_t same = 0;
	for (size_t i = 0; i < d->ndecisions; i++) {
		const struct exw_decision *x = &d->decisions[i];
		if (d->kind == EX_TIMEOUT && x->changed == 0)
			same++;
		else
			render_decision(f, d->kind, &d->decisions[i]);
	}
	if (d->kind == EX_TIMEOUT)
		fprintf(f,
			"%zu job%s with a timeout decision before or after "
			"changed, %zu unchanged\n",
			d->ndecisions - same,
			d->ndecisions - same == 1 ? "" : "s", same);
	if (d->changed == 0)
		fputs("nothing changed\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- drops by rule ------------------------------------------------------ */

/* Add `count` to (rule, code) in out[0..*n); GB_ETOOBIG when a new pair
** finds no room. */
static int count_drop(struct exw_drop *out, size_t cap, size_t *n,
		      const char *rule, const char *code, long count)
{
	rule = rule ? rule : "";
	code = code ? code : "";
	for (size_t i = 0; i < *n; i++)
		if (strcmp(out[i].rule, rule) == 0 &&
		    strcmp(out[i].code, code) == 0) {
			out[i].count += count;
			return GB_OK;
		}
	if (*n == cap)
		return GB_ETOOBIG;
	struct exw_drop *x = &out[(*n)++];
	snprintf(x->rule, sizeof(x->rule), "%s", rule);
	snprintf(x->code, sizeof(x->code), "%s", code);
	x->count = count;
	return GB_OK;
}

int exw_drops_by_rule(const json_t *record, struct exw_drop *out, size_t cap,
		      size_t *n)
{
	if (record == NULL || n == NULL || (out == NULL && cap > 0))
		return GB_EINVAL;
	*n = 0;
	int rc = GB_OK;
	size_t i;
	const json_t *c;
	/* a timeout: the rule that fired */
	if (json_is_string(json_object_get(record, "action")))
		return count_drop(out, cap, n, sget(record, "rule"), "", 1);
	/* an analysis task the throttle stopped */
	const json_t *t = json_object_get(record, "throttle");
	if (json_is_true(json_object_get(t, "throttled")))
		rc = count_drop(out, cap, n, sget(t, "rule"), sget(t, "code"),
				1);
	const json_t *cands = json_object_get(record, "candidates");
	json_array_foreach(cands, i, c)
	{
		if (rc != GB_OK || sget(c, "stage") == NULL)
			continue;
		const json_t *r =
			json_array_get(json_object_get(c, "reasons"), 0);
		rc = count_drop(out, cap, n, sget(r, "rule"), sget(r, "code"),
				1);
	}
	json_array_foreach(json_object_get(record, "rejected"), i, c)
	{
		if (rc == GB_OK)
			rc = count_drop(out, cap, n, sget(c, "rule"),
					sget(c, "code"),
					(long)json_integer_value(
						json_object_get(c, "count")));
	}
	/* a match record keeps no candidates: its stages are its filters */
	if (cands == NULL && json_object_get(record, "rejected") == NULL)
		json_array_foreach(json_object_get(record, "stages"), i, c)
		{
			const json_t *cut = json_object_get(c, "cut");
			if (rc == GB_OK && cut)
				rc = count_drop(
					out, cap, n, sget(cut, "rule"),
					sget(cut, "code"),
					(long)json_integer_value(
						json_object_get(cut, "count")));
		}
	return rc;
}

int exw_drops_by_rule_text(const char *text, struct exw_drop *out, size_t cap,
			   size_t *n)
{
	if (text == NULL || n == NULL)
		return GB_EINVAL;
	*n = 0;
	json_t *d = json_loads(text, 0, NULL);
	if (d == NULL)
		return GB_EDECODE;
	int rc = exw_drops_by_rule(d, out, cap, n);
	json_decref(d);
	return rc;
}
