/*
** render.c — a decision record as text and JSON (render.h).
**
** Text goes to an open_memstream so the functions stay pure and the tests
** compare exact strings. One table serves every kind with candidates: a
** job decision has hundreds of queues and most of them are dropped, so
** the best ones come first (ranked, with their weight breakdown) and the
** dropped ones follow grouped under the stage that dropped them, in stage
** order: "why not AGLT2?" is answered by one group, and the group sizes
** read like the stage lines above them. A task decision has no ranking:
** its survivors come in grid order with the chosen one marked.
**
** Nothing here reads the head but head(): see the rule in render.h.
*/
#include "report/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "taskqueue.h"
#include "gb_error.h"
#include "base/jsonutil.h"
#include "base/timefmt.h"

#define RN_NAME_MAX 40 /* widest name column */
#define RN_SHOW_IDS 5  /* job IDs printed per assignment */
#define RN_MINUTE 60.0
#define RN_HOUR 3600.0
#define RN_DAY 86400.0

/* The kinds of record, told apart by their members (record.h). */
enum rn_kind { RK_TASK, RK_JOBS, RK_ANALYSIS, RK_PILOT, RK_TIMEOUT };

struct rn {
	FILE *f;
	const json_t *d;      /* the record */
	enum rn_kind kind;
	const json_t *cands;  /* "candidates", may be NULL */
	const json_t *stages; /* "stages", may be NULL */
	const char *col;      /* the name column's title */
	const char *one, *many; /* what a candidate is called */
	int w;                /* the name column's width */
};

/* ---- members ------------------------------------------------------------ */

static const json_t *get(const json_t *o, const char *k)
{
	return json_object_get(o, k);
}

/* A string member, `none` when absent, null or not a string. */
static const char *sor(const json_t *o, const char *k, const char *none)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : none;
}

/* A pilot list of a match record (a string, an array or null) as text:
** "a, b, c", or `none`. */
static const char *lor(const json_t *o, const char *k, const char *none,
		       char *buf, size_t len)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return json_string_value(v);
	if (!json_is_array(v) || json_array_size(v) == 0 || len == 0)
		return none;
	size_t pos = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < json_array_size(v); i++) {
		const char *e = json_string_value(json_array_get(v, i));
		int k2 = snprintf(buf + pos, len - pos, "%s%s", i ? ", " : "",
				  e ? e : "?");
		if (k2 < 0 || (size_t)k2 >= len - pos)
			break;
		pos += (size_t)k2;
	}
	return buf;
}

static const char *sget(const json_t *o, const char *k)
{
	return sor(o, k, "");
}

/* A number member as an integer, 0 when absent. */
static long long iget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long long)json_integer_value(v)
				  : (long long)json_number_value(v);
}

/* A number member as %.<prec>g text, "-" when absent or null. */
static const char *gnum(const json_t *o, const char *k, int prec, char *buf,
			size_t n)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_number(v))
		snprintf(buf, n, "%.*g", prec, json_number_value(v));
	else
		snprintf(buf, n, "-");
	return buf;
}

static const char *plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static enum rn_kind kind_of(const json_t *d)
{
	if (json_is_object(get(d, "resource")) ||
	    json_is_integer(get(d, "considered")))
		return RK_PILOT;
	if (json_is_number(get(d, "age")) && json_is_string(get(d, "action")))
		return RK_TIMEOUT;
	if (json_is_object(get(d, "throttle")))
		return RK_ANALYSIS;
	if (json_is_array(get(d, "best")) ||
	    json_is_array(get(d, "assignments")))
		return RK_JOBS;
	return RK_TASK;
}

static int is_dropped(const json_t *c)
{
	return json_is_string(get(c, "stage"));
}

/* The candidate named `name`, NULL when the record does not list it. */
static const json_t *cand(const struct rn *r, const char *name)
{
	size_t i;
	const json_t *c;
	json_array_foreach(r->cands, i, c)
		if (name && strcmp(sget(c, "name"), name) == 0)
			return c;
	return NULL;
}

static int in_list(const json_t *names, const char *name)
{
	size_t i;
	const json_t *v;
	json_array_foreach(names, i, v)
		if (strcmp(json_string_value(v) ? json_string_value(v) : "",
			   name) == 0)
			return 1;
	return 0;
}

/* ---- jobs ---------------------------------------------------------------- */

/* The jobs of one assignment: "count" (records since it was added), else
** the IDs it lists. */
static long long asg_jobs(const json_t *as)
{
	const json_t *n = get(as, "count");
	if (json_is_integer(n))
		return (long long)json_integer_value(n);
	return (long long)json_array_size(get(as, "jobIDs"));
}

static long long jobs_assigned(const json_t *d)
{
	long long n = 0;
	size_t i;
	const json_t *as;
	json_array_foreach(get(d, "assignments"), i, as)
		n += asg_jobs(as);
	return n;
}

/* The request's jobs: "nJobs", else what the lists hold. */
static long long jobs_total(const json_t *d)
{
	if (json_is_integer(get(d, "nJobs")))
		return iget(d, "nJobs");
	return jobs_assigned(d) +
	       (long long)json_array_size(get(d, "unassigned"));
}

/* The number of candidates: "nQueues", the first stage's input, or the
** list's length. */
static long long candidates_total(const struct rn *r)
{
	const json_t *s0 = json_array_get(r->stages, 0);
	if (json_is_integer(get(r->d, "nQueues")))
		return iget(r->d, "nQueues");
	if (json_is_integer(get(s0, "in")))
		return iget(s0, "in");
	return (long long)json_array_size(r->cands);
}

/* "4711, 4712, 4713, ... (+17)": the first IDs of `ids`, of `total` (a
** truncated record lists fewer than it counts). */
static void id_list(const json_t *ids, long long total, char *buf, size_t n)
{
	size_t used = 0, k;
	long long shown = 0;
	const json_t *id;
	buf[0] = '\0';
	json_array_foreach(ids, k, id)
	{
		if (k >= RN_SHOW_IDS || used >= n)
			break;
		int w = snprintf(buf + used, n - used, "%s%lld", k ? ", " : "",
				 (long long)json_integer_value(id));
		used += w > 0 ? (size_t)w : 0;
		shown++;
	}
	if (total > shown && used < n)
		snprintf(buf + used, n - used, "%s... (+%lld)",
			 shown ? ", " : "", total - shown);
}

/* ---- the head ------------------------------------------------------------ */

/* `why job`: where the job asked about went, on the head line. */
static void focus(FILE *f, const json_t *d, long long job)
{
	size_t i, k;
	const json_t *as, *id;
	json_array_foreach(get(d, "assignments"), i, as)
		json_array_foreach(get(as, "jobIDs"), k, id)
			if (json_integer_value(id) == job) {
				fprintf(f, "; job %lld: %s %s", job,
					sget(as, "queue"), sget(as, "status"));
				return;
			}
	json_array_foreach(get(d, "unassigned"), k, id)
		if (json_integer_value(id) == job) {
			fprintf(f, "; job %lld: unassigned", job);
			return;
		}
}

static void head(FILE *f, const struct rn_head *h, const json_t *d)
{
	const json_t *rec = get(d, "record");
	fprintf(f, "%s %s: %s, chosen %s", h->kind ? h->kind : "?",
		h->subject ? h->subject : "?", h->outcome ? h->outcome : "?",
		h->chosen ? h->chosen : "-");
	if (h->id == 0) {
		fprintf(f, ", digest %.16s, offline run\n",
			sor(rec, "digest", "-"));
		return;
	}
	char when[32];
	if (tf_format(h->decided_at, when, sizeof(when)) != GB_OK)
		snprintf(when, sizeof(when), "%lld", h->decided_at);
	fprintf(f, ", at %s, request %s, digest %.16s, decision %lld", when,
		h->request_id ? h->request_id : "-", sor(rec, "digest", "-"),
		h->id);
	if (h->focus_job)
		focus(f, d, h->focus_job);
	fputc('\n', f);
}

/* ---- subject and verdict ------------------------------------------------- */

static void pilot_subject(const struct rn *r)
{
	const json_t *d = r->d, *rs = get(d, "resource");
	char b1[256], b2[256], b3[256], b4[256];
	if (!json_is_object(rs))
		return;
	fprintf(r->f, "pilot match: pilot %s at %s, setup %s, cpuTime %lld s",
		sor(d, "pilot", "none"), sor(d, "site", "?"),
		sor(rs, "setup", "?"), iget(rs, "cpuTime"));
	const json_t *g = get(rs, "ownerGroup"), *dn = get(rs, "ownerDN");
	if (json_is_string(g) || json_is_array(g)) {
		fprintf(r->f, ", private to %s%s",
			lor(rs, "ownerGroup", "?", b1, sizeof(b1)),
			json_is_true(get(rs, "jobSharing")) ? " (JOB_SHARING)"
							   : "");
		if (json_is_string(dn))
			fprintf(r->f, " / %s", rn_short_dn(json_string_value(dn)));
		else if (json_is_array(dn))
			fprintf(r->f, " / %zu DNs", json_array_size(dn));
	}
	long long n = iget(d, "considered");
	fprintf(r->f, ", %lld task %s\n", n, plural(n, "queue", "queues"));
	fprintf(r->f, "  grid CE %s, platform %s, pilot type %s, job type %s\n",
		lor(rs, "gridCE", "any", b1, sizeof(b1)),
		lor(rs, "platform", "any", b2, sizeof(b2)),
		lor(rs, "pilotType", "any", b3, sizeof(b3)),
		lor(rs, "jobType", "any", b4, sizeof(b4)));
	const json_t *site = get(rs, "site");
	if (json_is_array(site))
		fprintf(r->f, "  sites %s\n", lor(rs, "site", "", b1, sizeof(b1)));
	const json_t *tg = json_object_get(rs, "tags");
	if (tg != NULL && !json_is_null(tg))
		fprintf(r->f, "  tags %s%s%s\n", lor(rs, "tags", "", b1, sizeof(b1)),
			json_is_null(get(rs, "requiredTags")) ? "" : ", required ",
			lor(rs, "requiredTags", "", b2, sizeof(b2)));
	else if (tg != NULL)
		fprintf(r->f, "  tags none offered\n");
	int nb = 0;
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		const char *k = tq_pfield_ban_names[f];
		if (json_is_null(get(rs, k)) || get(rs, k) == NULL)
			continue;
		fprintf(r->f, "%s%s %s", nb++ ? "; " : "  bans: ", k,
			lor(rs, k, "", b1, sizeof(b1)));
	}
	if (nb)
		fputc('\n', r->f);
}

/* What the decision was about: the request, the pilot or the job. */
static void subject(const struct rn *r)
{
	const json_t *d = r->d;
	long long nj = jobs_total(d), nq = candidates_total(r);
	switch (r->kind) {
	case RK_TASK:
		if (r->stages || r->cands)
			fprintf(r->f, "task brokerage over %lld %s\n", nq,
				plural(nq, r->one, r->many));
		break;
	case RK_JOBS:
		fprintf(r->f, "job brokerage: task %lld, gshare %s, nucleus "
			      "%s, %lld %s, %lld %s\n",
			iget(d, "taskID"), sor(d, "gshare", "?"),
			sor(d, "nucleus", "?"), nj, plural(nj, "job", "jobs"),
			nq, plural(nq, r->one, r->many));
		break;
	case RK_ANALYSIS:
		fprintf(r->f, "analysis brokerage: task %lld of %s, gshare %s, "
			      "class %s, %lld %s, %lld %s\n",
			iget(d, "taskID"), sor(d, "user", "?"),
			sor(d, "gshare", "?"), sor(d, "taskClass", "?"), nj,
			plural(nj, "job", "jobs"), nq,
			plural(nq, r->one, r->many));
		break;
	case RK_PILOT:
		pilot_subject(r);
		break;
	case RK_TIMEOUT:
		fprintf(r->f, "job %lld of task %lld at %s, status %s%s%s\n",
			iget(d, "jobID"), iget(d, "taskID"),
			sor(d, "queue", "no queue"), sget(d, "status"),
			sget(d, "gshare")[0] ? ", gshare " : "",
			sget(d, "gshare"));
		break;
	}
}

/* The analysis throttle (AJ-01..AJ-04) and the owner's numbers it
** compared. */
static void throttle(const struct rn *r)
{
	const json_t *d = r->d, *o = get(d, "owner"), *th = get(d, "throttle");
	char a[32], b[32], c[32], e[32];
	int wg = strcmp(sget(o, "countsOf"), "workingGroup") == 0;
	fprintf(r->f, "-- throttle (AJ-01..AJ-04), counts of %s %s --\n",
		wg ? "working group" : "user",
		wg ? sor(d, "workingGroup", sor(d, "user", "?"))
		   : sor(d, "user", "?"));
	if (json_is_object(o)) {
		fprintf(r->f, "  running %s jobs, %s cores; queued %s jobs, %s "
			      "cores; disk quota %s\n",
			gnum(o, "runningJobs", 6, a, sizeof(a)),
			gnum(o, "runningCores", 6, b, sizeof(b)),
			gnum(o, "queuedJobs", 6, c, sizeof(c)),
			gnum(o, "queuedCores", 6, e, sizeof(e)),
			json_is_true(get(o, "quotaExceeded")) ? "EXCEEDED"
							      : "ok");
		if (json_is_true(get(o, "userAnalysis")))
			fprintf(r->f, "  User Analysis share: usage %s of "
				      "target %s (%s %%), hi-site slots %s\n",
				gnum(o, "shareUsage", 6, a, sizeof(a)),
				gnum(o, "shareTarget", 6, b, sizeof(b)),
				gnum(o, "sharePercent", 4, c, sizeof(c)),
				gnum(o, "hiSiteSlots", 6, e, sizeof(e)));
		else
			fprintf(r->f, "  share %s: not User Analysis, AJ-04 "
				      "does not apply\n",
				sor(d, "gshare", "?"));
	}
	if (json_is_true(get(th, "throttled")))
		fprintf(r->f, "  THROTTLED by %s (%s): %s > limit %s\n",
			sor(th, "rule", "?"), sor(th, "code", "?"),
			gnum(th, "value", 6, a, sizeof(a)),
			gnum(th, "limit", 6, b, sizeof(b)));
	else
		fprintf(r->f, "  not throttled\n");
}

/* "3601 s (1.0003 h)": in the unit of the limit, days from 2 days up. */
static void human(char *buf, size_t n, double s, double unit_of)
{
	if (unit_of >= 2 * RN_DAY)
		snprintf(buf, n, "%.0f s (%.6g d)", s, s / RN_DAY);
	else if (unit_of >= RN_HOUR)
		snprintf(buf, n, "%.0f s (%.6g h)", s, s / RN_HOUR);
	else
		snprintf(buf, n, "%.0f s (%.6g min)", s, s / RN_MINUTE);
}

/* The timeout rule that fired, and TO-13's numbers. */
static void timeout_rule(const struct rn *r)
{
	const json_t *d = r->d, *fr = get(d, "fastRebro");
	double age = json_number_value(get(d, "age"));
	double lim = json_number_value(get(d, "limit"));
	char a[64], b[64], c[32], e[32], g[32];
	human(a, sizeof(a), age, lim > 0 ? lim : age);
	human(b, sizeof(b), lim, lim);
	if (lim > 0)
		fprintf(r->f, "rule: %s: %s %s > limit %s\n",
			sor(d, "rule", "?"), sget(d, "what"), a, b);
	else
		fprintf(r->f, "rule: %s: %s (age %s)\n", sor(d, "rule", "?"),
			sget(d, "what"), a);
	if (!json_is_object(fr))
		return;
	fprintf(r->f, "fast rebrokerage (TO-13): nQueue %s, nRun %s, total %s: "
		      "rebroker %lld %s (ratio limit %s, frac limit %s, ",
		gnum(fr, "nQueue", 6, a, sizeof(a)),
		gnum(fr, "nRun", 6, b, sizeof(b)),
		gnum(fr, "nQueueTotal", 6, c, sizeof(c)), iget(fr, "excess"),
		plural(iget(fr, "excess"), "job", "jobs"),
		gnum(fr, "ratioLimit", 6, e, sizeof(e)),
		gnum(fr, "fracLimit", 6, g, sizeof(g)));
	if (json_is_number(get(fr, "nQueueLimit")))
		fprintf(r->f, "nQueue limit %s)\n",
			gnum(fr, "nQueueLimit", 6, a, sizeof(a)));
	else
		fprintf(r->f, "nQueue limit unset)\n");
}

/* A pilot's task queues: how many matched, the lottery, TQ-10. */
static void pilot_verdict(const struct rn *r)
{
	const json_t *d = r->d;
	char a[32];
	fprintf(r->f, "task queues: %lld considered, %lld matched, %lld of "
		      "them empty\n",
		iget(d, "considered"), iget(d, "matched"), iget(d, "empty"));
	if (iget(d, "entrants") > 0)
		fprintf(r->f, "lottery (TQ-07): %lld at cpu_time %lld, total "
			      "priority %s\n",
			iget(d, "entrants"), iget(d, "topCpuTime"),
			gnum(d, "lotteryTotal", 6, a, sizeof(a)));
	if (json_is_string(get(d, "reason")))
		fprintf(r->f, "TQ-10 %s: %s\n", sget(d, "code"),
			sget(d, "reason"));
	if (iget(d, "lostClaims") > 0)
		fprintf(r->f, "lost claims: %lld picked jobs were taken by "
			      "another worker first\n",
			iget(d, "lostClaims"));
}

/* ---- stages and candidates --------------------------------------------- */

static void stage_lines(const struct rn *r)
{
	if (json_array_size(r->stages) == 0)
		return;
	fprintf(r->f, "stages:\n");
	char line[512];
	size_t i;
	const json_t *s;
	json_array_foreach(r->stages, i, s)
		if (rn_stage_line(s, line, sizeof(line)) >= 0)
			fprintf(r->f, "%s\n", line);
}

/* One table row; `x` gives rule, code and detail (may be NULL). Trailing
** blanks are cut, so a row without detail ends at its last word. */
static void row(const struct rn *r, const char *mark, const char *name,
		const char *weight, const json_t *x)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%-3s %-*.*s %-10s %-6s %-18s %s",
			 mark, r->w, r->w, name, weight, sget(x, "rule"),
			 sget(x, "code"), sget(x, "detail"));
	size_t len = n < 0 ? 0 : (size_t)n;
	if (len >= sizeof(line))
		len = sizeof(line) - 1;
	while (len > 0 && line[len - 1] == ' ')
		len--;
	fprintf(r->f, "%.*s\n", (int)len, line);
}

static const char *weight_text(const json_t *c, char *buf, size_t n)
{
	return gnum(c, "weight", 4, buf, n);
}

/* The best candidates ranked ("best", job kinds), then every other
** survivor; the task's chosen nucleus is marked. */
static void survivors(const struct rn *r)
{
	const json_t *d = r->d, *best = get(d, "best"), *c, *nm;
	const char *chosen = NULL;
	if (r->kind == RK_TASK && strcmp(sget(d, "decision"), "assigned") == 0)
		chosen = json_string_value(get(d, "nucleus"));
	char mark[24], wt[32];
	size_t i;
	json_array_foreach(best, i, nm)
	{
		const char *name = json_string_value(nm);
		c = cand(r, name);
		snprintf(mark, sizeof(mark), "*%zu", i + 1);
		row(r, mark, name ? name : "?", weight_text(c, wt, sizeof(wt)),
		    get(c, "weightDetail"));
	}
	json_array_foreach(r->cands, i, c)
	{
		const char *name = sget(c, "name");
		if (is_dropped(c) || in_list(best, name))
			continue;
		row(r, chosen && strcmp(chosen, name) == 0 ? "*" : "", name,
		    weight_text(c, wt, sizeof(wt)), get(c, "weightDetail"));
	}
}

/* A dropped candidate: a row per reason, then what it weighed if it got
** that far (the caps drop queues after weighing them). */
static void dropped_rows(const struct rn *r, const json_t *c)
{
	const json_t *rs = get(c, "reasons"), *x;
	size_t i;
	json_array_foreach(rs, i, x)
		row(r, "", i ? "" : sget(c, "name"), i ? "" : "-", x);
	if (json_array_size(rs) == 0)
		fprintf(r->f, "%-3s %-*.*s %-10s (no reason recorded)\n", "",
			r->w, r->w, sget(c, "name"), "-");
	if (iget(c, "moreReasons") > 0)
		fprintf(r->f, "%-3s %-*s %-10s (+%lld more reasons)\n", "",
			r->w, "", "", iget(c, "moreReasons"));
	if (json_is_object(get(c, "weightDetail")))
		row(r, "", "", "weighed", get(c, "weightDetail"));
}

/* Is stage `name` among the record's stages before index `end`? */
static int stage_before(const struct rn *r, size_t end, const char *name)
{
	for (size_t k = 0; k < end && k < json_array_size(r->stages); k++)
		if (strcmp(sget(json_array_get(r->stages, k), "name"), name) ==
		    0)
			return 1;
	return 0;
}

/* Was `c` dropped at stage `name`, or (name NULL) at a stage the record
** does not list? */
static int dropped_at(const struct rn *r, const json_t *c, const char *name)
{
	if (!is_dropped(c))
		return 0;
	if (name)
		return strcmp(sget(c, "stage"), name) == 0;
	return !stage_before(r, (size_t)-1, sget(c, "stage"));
}

static void dropped_group(const struct rn *r, const char *name,
			  const char *rule)
{
	size_t n = 0, i;
	const json_t *c;
	json_array_foreach(r->cands, i, c)
		n += (size_t)dropped_at(r, c, name);
	if (n == 0)
		return;
	if (name)
		fprintf(r->f, "-- dropped at %s (%s): %zu %s --\n", name,
			rule[0] ? rule : "?", n, plural((long long)n, r->one,
							r->many));
	else
		fprintf(r->f, "-- dropped at other stages: %zu %s --\n", n,
			plural((long long)n, r->one, r->many));
	json_array_foreach(r->cands, i, c)
		if (dropped_at(r, c, name))
			dropped_rows(r, c);
}

/* A truncated record's dropped candidates: per (stage, rule, code). */
static void aggregates(const struct rn *r)
{
	const json_t *agg = get(r->d, "rejected"), *g;
	size_t i;
	if (json_array_size(agg) == 0)
		return;
	fprintf(r->f, "rejected, per rule (%s not listed):\n", r->many);
	json_array_foreach(agg, i, g)
		fprintf(r->f, "  %-12s %-6s %-18s %6lld  e.g. %s\n",
			sget(g, "stage"), sget(g, "rule"), sget(g, "code"),
			iget(g, "count"), sget(g, "example"));
}

static void candidates(const struct rn *r)
{
	if (json_array_size(r->cands) > 0 ||
	    json_array_size(get(r->d, "best")) > 0) {
		fprintf(r->f, "%-3s %-*s %-10s %-6s %-18s %s\n", "", r->w,
			r->col, "WEIGHT", "RULE", "CODE", "DETAIL");
		survivors(r);
		size_t i;
		const json_t *s;
		json_array_foreach(r->stages, i, s)
			if (!stage_before(r, i, sget(s, "name")))
				dropped_group(r, sget(s, "name"),
					      sget(s, "rule"));
		dropped_group(r, NULL, "");
	}
	aggregates(r);
}

/* ---- jobs, decision ------------------------------------------------------ */

static void assignments(const struct rn *r)
{
	const json_t *d = r->d, *as = get(d, "assignments"), *a;
	if (!json_is_array(as) && !json_is_array(get(d, "unassigned")))
		return;
	char ids[512];
	size_t i;
	if (json_array_size(as) > 0)
		fprintf(r->f, "jobs per queue:\n");
	json_array_foreach(as, i, a)
	{
		long long n = asg_jobs(a);
		id_list(get(a, "jobIDs"), n, ids, sizeof(ids));
		fprintf(r->f, "  %-*.*s %-9s %5lld %s: %s\n", r->w, r->w,
			sget(a, "queue"), sget(a, "status"), n,
			plural(n, "job ", "jobs"), ids);
	}
	long long un = jobs_total(d) - jobs_assigned(d);
	id_list(get(d, "unassigned"), un, ids, sizeof(ids));
	fprintf(r->f, "unassigned: %lld %s%s%s\n", un,
		plural(un, "job", "jobs"), un ? ": " : "", un ? ids : "");
}

/* How many distinct queues got jobs. */
static long long queues_used(const json_t *d)
{
	const json_t *as = get(d, "assignments"), *a;
	long long n = 0;
	size_t i;
	json_array_foreach(as, i, a)
	{
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(sget(json_array_get(as, k), "queue"),
				       sget(a, "queue")) == 0;
		n += !seen && asg_jobs(a) > 0;
	}
	return n;
}

static void jobs_decision(const struct rn *r, const char *dec,
			  long long retry)
{
	const json_t *d = r->d;
	long long nj = jobs_total(d);
	char wt[32];
	if (strcmp(dec, "throttled") == 0) {
		fprintf(r->f, "decision: throttled, no queue looked at; %lld "
			      "%s wait, retried after %lld s\n",
			nj, plural(nj, "job", "jobs"), retry);
	} else if (strcmp(dec, "assigned") == 0) {
		const char *best = json_string_value(
			json_array_get(get(d, "best"), 0));
		long long nq = queues_used(d);
		fprintf(r->f, "decision: assigned %lld of %lld jobs to %lld "
			      "%s, best %s (weight %s)\n",
			jobs_assigned(d), nj, nq, plural(nq, "queue", "queues"),
			best ? best : "?",
			weight_text(cand(r, best), wt, sizeof(wt)));
	} else {
		fprintf(r->f, "decision: %s, %lld %s retried after %lld s\n",
			dec, nj, plural(nj, "job", "jobs"), retry);
	}
}

static void decision_line(const struct rn *r)
{
	const json_t *d = r->d;
	const char *dec = sget(d, "decision");
	long long retry = iget(d, "retryAfter");
	char wt[32];
	if (dec[0] == '\0')
		return;
	switch (r->kind) {
	case RK_TASK:
		if (strcmp(dec, "assigned") == 0) {
			const char *nuc = sor(d, "nucleus", "?");
			fprintf(r->f, "decision: assigned to %s (weight %s)\n",
				nuc, weight_text(cand(r, nuc), wt, sizeof(wt)));
		} else {
			fprintf(r->f, "decision: %s, retry after %lld s\n", dec,
				retry);
		}
		break;
	case RK_JOBS:
	case RK_ANALYSIS:
		jobs_decision(r, dec, retry);
		break;
	case RK_PILOT:
		if (json_is_integer(get(d, "job")))
			fprintf(r->f, "decision: %s job %lld from task queue "
				      "%lld: UserPriority %lld, CPU time %lld "
				      "s, owner %s, group %s\n",
				dec, iget(d, "job"), iget(d, "tq"),
				iget(d, "userPriority"), iget(d, "tqCpuTime"),
				sor(d, "tqOwnerDN", "?"),
				sor(d, "tqOwnerGroup", "?"));
		else
			fprintf(r->f, "decision: %s, no job for this pilot\n",
				dec);
		break;
	case RK_TIMEOUT:
		fprintf(r->f, "decision: %s\n", dec);
		break;
	}
}

/* What the size bound left out (decrec.h). */
static void truncation(const struct rn *r)
{
	const json_t *rec = get(r->d, "record");
	if (json_is_true(get(rec, "truncated")))
		fprintf(r->f, "record truncated at %lld bytes: %lld %s not "
			      "listed one by one\n",
			iget(rec, "cap"), iget(rec, "omitted"), r->many);
	if (iget(r->d, "jobIDsOmitted") > 0)
		fprintf(r->f, "record truncated: %lld job IDs not kept\n",
			iget(r->d, "jobIDsOmitted"));
}

/* The name column: as wide as the longest name, within bounds. */
static int name_width(const struct rn *r)
{
	int w = (int)strlen(r->col);
	size_t i;
	const json_t *c;
	json_array_foreach(r->cands, i, c)
		if ((int)strlen(sget(c, "name")) > w)
			w = (int)strlen(sget(c, "name"));
	json_array_foreach(get(r->d, "assignments"), i, c)
		if ((int)strlen(sget(c, "queue")) > w)
			w = (int)strlen(sget(c, "queue"));
	return w < RN_NAME_MAX ? w : RN_NAME_MAX;
}

static void body(FILE *f, const json_t *d)
{
	struct rn r = {
		.f = f,
		.d = d,
		.kind = kind_of(d),
		.cands = json_is_array(get(d, "candidates"))
				 ? get(d, "candidates")
				 : NULL,
		.stages = json_is_array(get(d, "stages")) ? get(d, "stages")
							  : NULL,
		.col = "NAME",
		.one = "candidate",
		.many = "candidates",
	};
	if (r.kind == RK_TASK) {
		r.col = "NUCLEUS";
		r.one = "nucleus";
		r.many = "nuclei";
	} else if (r.kind == RK_JOBS || r.kind == RK_ANALYSIS) {
		r.col = "QUEUE";
		r.one = "queue";
		r.many = "queues";
	}
	r.w = name_width(&r);
	subject(&r);
	if (r.kind == RK_ANALYSIS)
		throttle(&r);
	else if (r.kind == RK_TIMEOUT)
		timeout_rule(&r);
	else if (r.kind == RK_PILOT)
		pilot_verdict(&r);
	stage_lines(&r);
	candidates(&r);
	assignments(&r);
	if (json_is_true(get(d, "localityDropped")))
		fprintf(f, "AJ-28: second pass without the locality check "
			   "(AJ-08) after the first left no queue\n");
	if (json_is_string(get(d, "note")))
		fprintf(f, "note: %s\n", sget(d, "note"));
	decision_line(&r);
	truncation(&r);
}

char *rn_render(const struct rn_head *h, const json_t *d)
{
	if (h == NULL)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	head(f, h, d);
	if (!json_is_object(d) || json_object_size(d) == 0)
		fprintf(f, "(no readable record stored with this decision)\n");
	else
		body(f, d);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- pieces -------------------------------------------------------------- */

int rn_stage_line(const json_t *stage, char *buf, size_t n)
{
	const char *name = json_string_value(get(stage, "name"));
	if (name == NULL || buf == NULL)
		return GB_EINVAL;
	/* The same line as the engine's and PanDA's (engine/decision.c). */
	struct dec_stage s = {
		.name = name,
		.rule = json_string_value(get(stage, "rule")),
		.in = (int)iget(stage, "in"),
		.out = (int)iget(stage, "out"),
	};
	int w = dec_stage_format(&s, buf, n);
	const json_t *cut = get(stage, "cut");
	if (w < 0 || (size_t)w >= n || !json_is_object(cut) || s.in == s.out)
		return w;
	return w + snprintf(buf + w, n - (size_t)w, " [%s %s x%lld]",
			    sget(cut, "rule"), sget(cut, "code"),
			    iget(cut, "count"));
}

const char *rn_short_dn(const char *dn)
{
	const char *cn = NULL;
	for (const char *p = dn; p && (p = strstr(p, "/CN=")) != NULL; p += 4)
		cn = p + 4;
	return cn && *cn ? cn : dn;
}

json_t *rn_json(const struct rn_head *h, const json_t *d)
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
