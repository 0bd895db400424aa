/*
** why_render.c — a stored decision record as text and JSON for
** `gridbroker why` (see why_render.h).
**
** The record is read as JSON, not as the engine's structs: it outlives the
** inputs and the binary that wrote it, so every member is optional here
** (an older record, a truncated one, another kind) and a missing member
** prints nothing rather than failing. Text goes to an open_memstream so
** the function stays pure and the tests compare exact strings.
*/
#include "report/why_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "gb_error.h"
#include "base/jsonutil.h"
#include "base/timefmt.h"

#define WR_NAME_MIN 4
#define WR_NAME_MAX 40

static const char *sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* A number member as %g text, "-" when absent or null. */
static const char *nget(const json_t *o, const char *k, char *buf, size_t n)
{
	const json_t *v = json_object_get(o, k);
	if (!json_is_number(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	snprintf(buf, n, "%.6g", json_number_value(v));
	return buf;
}

int wr_stage_line(const json_t *stage, char *buf, size_t n)
{
	const char *name = json_string_value(json_object_get(stage, "name"));
	if (name == NULL || buf == NULL)
		return GB_EINVAL;
	/* The same line as explain's summary (engine/decision.c). */
	struct dec_stage s = {
		.name = name,
		.rule = json_string_value(json_object_get(stage, "rule")),
		.in = (int)json_integer_value(json_object_get(stage, "in")),
		.out = (int)json_integer_value(json_object_get(stage, "out")),
	};
	int w = dec_stage_format(&s, buf, n);
	const json_t *cut = json_object_get(stage, "cut");
	if (w < 0 || (size_t)w >= n || !json_is_object(cut) || s.in == s.out)
		return w;
	return w + snprintf(buf + w, n - (size_t)w, " [%s %s x%lld]",
			    sget(cut, "rule"), sget(cut, "code"),
			    (long long)json_integer_value(
				    json_object_get(cut, "count")));
}

/* Width of the name column: the longest candidate name, bounded. */
static int name_width(const json_t *cands)
{
	int w = WR_NAME_MIN;
	size_t i;
	const json_t *c;
	json_array_foreach(cands, i, c)
	{
		int len = (int)strlen(sget(c, "name"));
		if (len > w)
			w = len;
	}
	return w < WR_NAME_MAX ? w : WR_NAME_MAX;
}

static int is_dropped(const json_t *c)
{
	return json_is_string(json_object_get(c, "stage"));
}

/* One dropped candidate: a row per reason. */
static void dropped_rows(FILE *f, const json_t *c, int w)
{
	const json_t *rs = json_object_get(c, "reasons");
	size_t i;
	const json_t *r;
	json_array_foreach(rs, i, r)
		fprintf(f, "  %-*.*s %-6s %-18s %s\n", w, w,
			i ? "" : sget(c, "name"), sget(r, "rule"),
			sget(r, "code"), sget(r, "detail"));
	if (json_array_size(rs) == 0)
		fprintf(f, "  %-*.*s (no reason recorded)\n", w, w,
			sget(c, "name"));
	json_int_t more = json_integer_value(json_object_get(c, "moreReasons"));
	if (more > 0)
		fprintf(f, "  %-*s (+%lld more reasons)\n", w, "",
			(long long)more);
}

/* Has stage name `nm` appeared before index `si` of stages? */
static int seen_before(const json_t *stages, size_t si, const char *nm)
{
	for (size_t k = 0; k < si; k++)
		if (strcmp(sget(json_array_get(stages, k), "name"), nm) == 0)
			return 1;
	return 0;
}

static int stage_known(const json_t *stages, const char *nm)
{
	return seen_before(stages, json_array_size(stages), nm);
}

/* The dropped candidates of stage `nm` (all others when nm is NULL),
** under a header. */
static void dropped_group(FILE *f, const json_t *cands, const json_t *stages,
			  const char *nm, const char *rule, int w)
{
	size_t n = 0, i;
	const json_t *c;
	json_array_foreach(cands, i, c)
	{
		const char *st = sget(c, "stage");
		n += is_dropped(c) && (nm ? strcmp(st, nm) == 0
					  : !stage_known(stages, st));
	}
	if (n == 0)
		return;
	if (nm)
		fprintf(f, "-- dropped at %s (%s): %zu --\n", nm,
			rule[0] ? rule : "?", n);
	else
		fprintf(f, "-- dropped elsewhere: %zu --\n", n);
	json_array_foreach(cands, i, c)
	{
		const char *st = sget(c, "stage");
		if (is_dropped(c) && (nm ? strcmp(st, nm) == 0
					 : !stage_known(stages, st)))
			dropped_rows(f, c, w);
	}
}

static void rejected_section(FILE *f, const json_t *d)
{
	const json_t *cands = json_object_get(d, "candidates");
	const json_t *stages = json_object_get(d, "stages");
	const json_t *agg = json_object_get(d, "rejected");
	size_t nd = 0, i;
	const json_t *c;
	json_array_foreach(cands, i, c)
		nd += is_dropped(c);
	if (nd > 0) {
		int w = name_width(cands);
		fprintf(f, "rejected:\n");
		fprintf(f, "  %-*s %-6s %-18s %s\n", w, "NAME", "RULE", "CODE",
			"DETAIL");
		const json_t *s;
		json_array_foreach(stages, i, s)
		{
			const char *nm = sget(s, "name");
			if (!seen_before(stages, i, nm))
				dropped_group(f, cands, stages, nm,
					      sget(s, "rule"), w);
		}
		dropped_group(f, cands, stages, NULL, "", w);
	}
	if (json_is_array(agg) && json_array_size(agg) > 0) {
		fprintf(f, "rejected, per rule (candidates not listed):\n");
		const json_t *g;
		json_array_foreach(agg, i, g)
			fprintf(f, "  %-12s %-6s %-18s %6lld  e.g. %s\n",
				sget(g, "stage"), sget(g, "rule"),
				sget(g, "code"),
				(long long)json_integer_value(
					json_object_get(g, "count")),
				sget(g, "example"));
	}
}

static void survivors_section(FILE *f, const json_t *d, const char *chosen)
{
	const json_t *cands = json_object_get(d, "candidates");
	size_t ns = 0, i;
	const json_t *c;
	json_array_foreach(cands, i, c)
		ns += !is_dropped(c) && json_is_number(json_object_get(c, "weight"));
	if (ns == 0)
		return;
	int w = name_width(cands);
	fprintf(f, "weights of the surviving candidates:\n");
	fprintf(f, "  %-*s %-10s %s\n", w, "NAME", "WEIGHT", "DETAIL");
	json_array_foreach(cands, i, c)
	{
		const json_t *wt = json_object_get(c, "weight");
		if (is_dropped(c) || !json_is_number(wt))
			continue;
		const char *nm = sget(c, "name");
		char wb[32];
		snprintf(wb, sizeof(wb), "%.4g", json_number_value(wt));
		const json_t *x = json_object_get(c, "weightDetail");
		int mark = chosen && strcmp(chosen, nm) == 0;
		fprintf(f, "%c %-*.*s %-10s %s\n", mark ? '*' : ' ', w, w, nm,
			wb, sget(x, "detail"));
	}
}

/* What stopped or ended the decision, for the kinds that are no
** candidate list: the analysis throttle, a timeout rule, TQ-10. */
static void verdict_lines(FILE *f, const json_t *d)
{
	char a[32], b[32];
	const json_t *th = json_object_get(d, "throttle");
	if (json_is_true(json_object_get(th, "throttled")))
		fprintf(f, "throttled: %s %s %s > %s (owner %s)\n",
			sget(th, "rule"), sget(th, "code"),
			nget(th, "value", a, sizeof(a)),
			nget(th, "limit", b, sizeof(b)), sget(d, "user"));
	if (json_object_get(d, "age") && json_object_get(d, "rule")) {
		fprintf(f, "rule: %s %s: %s age %s s > limit %s s -> %s\n",
			sget(d, "rule"), sget(d, "what"), sget(d, "status"),
			nget(d, "age", a, sizeof(a)),
			nget(d, "limit", b, sizeof(b)), sget(d, "action"));
		fprintf(f, "job %lld of task %lld at %s\n",
			(long long)json_integer_value(json_object_get(d, "jobID")),
			(long long)json_integer_value(json_object_get(d, "taskID")),
			json_is_string(json_object_get(d, "queue"))
				? sget(d, "queue")
				: "no queue");
	}
	const json_t *fr = json_object_get(d, "fastRebro");
	if (json_is_object(fr)) {
		char c1[32], c2[32], c3[32], c4[32];
		fprintf(f, "fast rebrokerage: nQueue %s nRun %s (ratio limit "
			   "%s), total %s (frac limit %s, nQueue limit %s)\n",
			nget(fr, "nQueue", a, sizeof(a)),
			nget(fr, "nRun", b, sizeof(b)),
			nget(fr, "ratioLimit", c1, sizeof(c1)),
			nget(fr, "nQueueTotal", c2, sizeof(c2)),
			nget(fr, "fracLimit", c3, sizeof(c3)),
			nget(fr, "nQueueLimit", c4, sizeof(c4)));
	}
	if (json_is_integer(json_object_get(d, "considered")))
		fprintf(f, "task queues: %lld considered, %lld matched, %lld "
			   "of them empty\n",
			(long long)json_integer_value(
				json_object_get(d, "considered")),
			(long long)json_integer_value(
				json_object_get(d, "matched")),
			(long long)json_integer_value(
				json_object_get(d, "empty")));
	if (json_is_string(json_object_get(d, "reason")))
		fprintf(f, "TQ-10 %s: %s\n", sget(d, "code"), sget(d, "reason"));
	if (json_is_integer(json_object_get(d, "job")))
		fprintf(f, "job %lld from task queue %lld (CPU time %lld s, "
			   "%lld in the lottery)\n",
			(long long)json_integer_value(json_object_get(d, "job")),
			(long long)json_integer_value(json_object_get(d, "tq")),
			(long long)json_integer_value(
				json_object_get(d, "topCpuTime")),
			(long long)json_integer_value(
				json_object_get(d, "entrants")));
}

/* `why job`: where this job of a job brokerage decision went. */
static void focus_line(FILE *f, const json_t *d, long long job)
{
	size_t i, k;
	const json_t *as, *id;
	json_array_foreach(json_object_get(d, "assignments"), i, as)
		json_array_foreach(json_object_get(as, "jobIDs"), k, id)
			if (json_integer_value(id) == job) {
				fprintf(f, "job %lld: %s%s%s\n", job,
					sget(as, "queue"),
					json_is_string(json_object_get(as, "status"))
						? " "
						: "",
					sget(as, "status"));
				return;
			}
	json_array_foreach(json_object_get(d, "unassigned"), k, id)
		if (json_integer_value(id) == job) {
			fprintf(f, "job %lld: unassigned\n", job);
			return;
		}
}

static void header(FILE *f, const struct wr_head *h, const json_t *d)
{
	char when[32];
	if (tf_format(h->decided_at, when, sizeof(when)) != GB_OK)
		snprintf(when, sizeof(when), "%lld", h->decided_at);
	const json_t *rec = json_object_get(d, "record");
	fprintf(f, "%s %s: %s, chosen %s, at %s, request %s, digest %.16s, "
		   "decision %lld\n",
		h->kind ? h->kind : "?", h->subject ? h->subject : "?",
		h->outcome ? h->outcome : "?", h->chosen ? h->chosen : "-",
		when, h->request_id ? h->request_id : "-",
		json_is_string(json_object_get(rec, "digest"))
			? sget(rec, "digest")
			: "-",
		h->id);
}

char *wr_render(const struct wr_head *h, const json_t *d)
{
	if (h == NULL)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	header(f, h, d);
	if (!json_is_object(d)) {
		fprintf(f, "(no readable record stored with this decision)\n");
		goto out;
	}
	if (h->focus_job)
		focus_line(f, d, h->focus_job);
	const json_t *stages = json_object_get(d, "stages");
	char line[512];
	size_t i;
	const json_t *s;
	if (json_array_size(stages) > 0) {
		fprintf(f, "stages:\n");
		json_array_foreach(stages, i, s)
			if (wr_stage_line(s, line, sizeof(line)) >= 0)
				fprintf(f, "%s\n", line);
	}
	verdict_lines(f, d);
	rejected_section(f, d);
	survivors_section(f, d, h->chosen);
	const json_t *rec = json_object_get(d, "record");
	if (json_is_true(json_object_get(rec, "truncated")))
		fprintf(f, "record truncated at %lld bytes: %lld candidates "
			   "not listed one by one\n",
			(long long)json_integer_value(json_object_get(rec, "cap")),
			(long long)json_integer_value(
				json_object_get(rec, "omitted")));
	if (json_is_integer(json_object_get(d, "retryAfter")))
		fprintf(f, "retry after %lld s\n",
			(long long)json_integer_value(
				json_object_get(d, "retryAfter")));
	if (json_is_string(json_object_get(d, "note")))
		fprintf(f, "note: %s\n", sget(d, "note"));
out:
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

json_t *wr_json(const struct wr_head *h, const json_t *d)
{
	if (h == NULL)
		return NULL;
	char when[32];
	if (tf_format(h->decided_at, when, sizeof(when)) != GB_OK)
		when[0] = '\0';
	json_t *o = json_object();
	if (o == NULL)
		return NULL;
	int bad = ju_set(o, "decision", json_integer(h->id)) ||
		  ju_set(o, "kind", ju_str(h->kind)) ||
		  ju_set(o, "subject", ju_str(h->subject)) ||
		  ju_set(o, "requestId", ju_str(h->request_id)) ||
		  ju_set(o, "outcome", ju_str(h->outcome)) ||
		  ju_set(o, "chosen", ju_str(h->chosen)) ||
		  ju_set(o, "decidedAt", ju_str(when)) ||
		  ju_set(o, "record", d ? json_deep_copy(d) : json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
