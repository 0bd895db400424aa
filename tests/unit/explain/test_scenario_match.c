/*
** test_scenario_match.c — DIRAC match scenarios (scenario_match.c): the
** parser's errors, and the example files etc/scenarios/match-*.json run
** through scm_run, the code path of `gridbroker explain` (the worker's
** index, pr_recompute, tq_match).
**
** Runs with the repository root as working directory (ctest sets it). The
** expectations below are worked out by hand from the rules and written as
** the arithmetic they come from (5000.0 * 7 / 46 is alice's share times
** her TQ's average UserPriority, 7/3, over the sum of her TQs' averages,
** 46/3: PR-02/PR-03), never copied from the
** program's output; each file's "description" says the same in words. The
** job a lottery picks is recomputed here from the seed with the rules'
** own procedure (TQ-07: one uniform draw over the entrants' cumulative
** priorities in TQ id order; TQ-08: a draw over the UserPriority levels
** weighted by jobs x priority, then a uniform pick among the ten lowest
** ids), with the hand-computed priorities as weights.
*/
#include "gbtest.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "gb_error.h"
#include "rng.h"
#include "explain/explain.h"
#include "explain/explain_print.h"
#include "explain/scenario.h"
#include "explain/scenario_match.h"
#include "taskqueue.h"
#include "base/timefmt.h"

#define ARENA_CAP (256u << 20)
#define REL 1e-9

/* ---- helpers ------------------------------------------------------------- */

static json_t *load_text(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
			       &e);
	if (j == NULL)
		fail_msg("bad test JSON: %s", e.text);
	return j;
}

/* Set (or, with value NULL, delete) the member at `path` ("a.b[1].c"). */
static void apply_patch(json_t *root, const char *path, const char *value)
{
	char buf[200];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = value ? load_text(value) : NULL;
	json_t *cur = root;
	char *save = NULL;
	for (char *part = strtok_r(buf, ".", &save); part;) {
		char *next = strtok_r(NULL, ".", &save);
		char *br = strchr(part, '[');
		long idx = -1;
		if (br) {
			idx = strtol(br + 1, NULL, 10);
			*br = '\0';
		}
		if (next == NULL && idx < 0) {
			if (v)
				json_object_set_new(cur, part, v);
			else
				json_object_del(cur, part);
			return;
		}
		cur = json_object_get(cur, part);
		assert_non_null(cur);
		if (idx >= 0 && next == NULL) {
			assert_non_null(v);
			json_array_set_new(cur, (size_t)idx, v);
			return;
		}
		if (idx >= 0)
			cur = json_array_get(cur, (size_t)idx);
		assert_non_null(cur);
		part = next;
	}
}

/* ---- a small valid scenario ---------------------------------------------- */

static const char *base_scenario =
	"{\"now\": \"2024-05-14T12:00:00Z\", \"seed\": 1,"
	" \"groups\": [{\"name\": \"g\", \"share\": 10}],"
	" \"taskQueues\": ["
	"  {\"id\": 1, \"ownerDN\": \"a\", \"ownerGroup\": \"g\","
	"   \"setup\": \"S\", \"cpuTime\": 100, \"sites\": [\"Y\", \"X\"],"
	"   \"jobs\": [{\"jobID\": 11}, {\"jobID\": 12, \"userPriority\": 4}]},"
	"  {\"id\": 2, \"ownerDN\": \"b\", \"ownerGroup\": \"g\","
	"   \"setup\": \"S\", \"cpuTime\": 100,"
	"   \"jobsByPriority\": {\"5\": 1, \"2\": 2}}],"
	" \"history\": [{\"age\": 60, \"ownerGroup\": \"g\", \"running\": 4}],"
	" \"pilot\": {\"setup\": \"S\", \"cpuTime\": 1000, \"site\": \"X\"}}";

static void parse_ok(json_t *root, struct arena *a, struct scm_scenario *sc)
{
	char err[512] = "";
	if (scm_parse_scenario(root, a, sc, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
}

static void test_valid_base(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scm_scenario sc;
	assert_true(scm_is_match_scenario(root));
	parse_ok(root, &a, &sc);
	long long now = 0;
	assert_int_equal(tf_parse("2024-05-14T12:00:00Z", &now), GB_OK);
	assert_int_equal(sc.now, now);
	assert_int_equal(sc.seed, 1);
	/* no cpuSegments: the 2009 ones; no shareCorrections: off */
	assert_int_equal(sc.cfg.nseg, 4);
	assert_false(sc.cfg.pr.corrections);
	assert_int_equal(sc.ntqs, 2);
	/* TQ-02: 100 s is rounded up to the 500 s segment */
	assert_int_equal(sc.tqs[0].def.cpu_time, 100);
	assert_int_equal(sc.tqs[0].segment, 500);
	/* TQ-03: sets sorted */
	assert_string_equal(sc.tqs[0].def.set[TQ_F_SITES].v[0], "X");
	assert_int_equal(sc.tqs[0].njobs, 2);
	assert_int_equal(sc.tqs[0].jobs[0].user_priority, 1);
	assert_int_equal(sc.tqs[0].jobs[1].user_priority, 4);
	/* generated ids: id x 1000000 + n, ascending UserPriority whatever
	** the key order */
	static const struct scm_job gen[] = {
		{2000001, 2}, {2000002, 2}, {2000003, 5}};
	assert_int_equal(sc.tqs[1].njobs, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(sc.tqs[1].jobs[i].job_id, gen[i].job_id);
		assert_int_equal(sc.tqs[1].jobs[i].user_priority,
				 gen[i].user_priority);
	}
	/* a sample without ownerDN counts for no owner */
	assert_int_equal(sc.nhist, 1);
	assert_int_equal(sc.hist[0].t, now - 60);
	assert_string_equal(sc.hist[0].group, "g");
	assert_string_equal(sc.hist[0].owner, "");
	assert_near(sc.hist[0].running, 4, 0);
	assert_null(sc.pilot.pilot_id);
	assert_string_equal(sc.pilot.site, "X");
	json_decref(root);
	arena_free(&a);
}

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete */
		const char *path2, *value2; /* a second patch, or NULL */
		int rc;
		const char *msg;
	} cases[] = {
		{"now", "\"noon\"", NULL, NULL, GB_ERANGE,
		 "now: expected an RFC 3339 time"},
		{"seed", NULL, NULL, NULL, GB_EMISSING, "seed: missing"},
		{"queues", "[]", NULL, NULL, GB_EINVAL, "queues: unknown field"},
		{"groups[0].share", "0", NULL, NULL, GB_ERANGE,
		 "groups[0].share: expected a number > 0, got 0"},
		{"taskQueues", NULL, NULL, NULL, GB_EMISSING,
		 "taskQueues: missing"},
		{"taskQueues", "{}", NULL, NULL, GB_ETYPE,
		 "taskQueues: expected array, got object"},
		{"taskQueues[1].id", "1", NULL, NULL, GB_EDUP,
		 "taskQueues[1].id: duplicate task queue id '1' (also "
		 "taskQueues[0])"},
		{"taskQueues[0].id", "0", NULL, NULL, GB_ERANGE,
		 "taskQueues[0].id: expected an integer in [1, 1000000000], "
		 "got 0"},
		{"taskQueues[0].cpuTime", NULL, NULL, NULL, GB_EMISSING,
		 "taskQueues[0].cpuTime: missing"},
		{"taskQueues[0].site", "[\"X\"]", NULL, NULL, GB_EINVAL,
		 "taskQueues[0].site: unknown field"},
		{"taskQueues[0].sites", "[\"\"]", NULL, NULL, GB_ERANGE,
		 "taskQueues[0].sites[0]: expected a non-empty string"},
		/* TQ-01: the same set in another order, with a repeat */
		{"taskQueues[1].ownerDN", "\"a\"", "taskQueues[1].sites",
		 "[\"X\", \"Y\", \"X\"]", GB_EDUP,
		 "taskQueues[1]: same requirements and CPU segment as "
		 "taskQueues[0] (TQ-01: they would be one task queue)"},
		{"taskQueues[0].jobsByPriority", "{\"1\": 1}", NULL, NULL,
		 GB_EINVAL,
		 "taskQueues[0].jobsByPriority: give jobs or jobsByPriority, "
		 "not both"},
		{"taskQueues[1].jobsByPriority", "{\"11\": 1}", NULL, NULL,
		 GB_ERANGE,
		 "taskQueues[1].jobsByPriority[\"11\"]: expected a "
		 "UserPriority 0..10 as the key"},
		{"taskQueues[1].jobsByPriority", "{\"x\": 1}", NULL, NULL,
		 GB_ERANGE,
		 "taskQueues[1].jobsByPriority[\"x\"]: expected a UserPriority"},
		{"taskQueues[1].jobsByPriority", "{\"2\": -1}", NULL, NULL,
		 GB_ERANGE,
		 "taskQueues[1].jobsByPriority[\"2\"]: expected a job count in "
		 "[0, 999999], got -1"},
		{"taskQueues[1].jobsByPriority", "{\"2\": \"3\"}", NULL, NULL,
		 GB_ETYPE,
		 "taskQueues[1].jobsByPriority[\"2\"]: expected integer, got "
		 "string"},
		{"taskQueues[0].jobs", "{}", NULL, NULL, GB_ETYPE,
		 "taskQueues[0].jobs: expected array, got object"},
		{"taskQueues[0].jobs[1].userPriority", "11", NULL, NULL,
		 GB_ERANGE,
		 "taskQueues[0].jobs[1].userPriority: expected an integer in "
		 "[0, 10], got 11"},
		{"taskQueues[0].jobs[0].jobId", "3", NULL, NULL, GB_EINVAL,
		 "taskQueues[0].jobs[0].jobId: unknown field"},
		/* a waiting job is in one task queue */
		{"taskQueues[0].jobs[0].jobID", "2000001", NULL, NULL, GB_EDUP,
		 "taskQueues[1]: job 2000001 is also in taskQueues[0]"},
		{"history", "{}", NULL, NULL, GB_ETYPE,
		 "history: expected array, got object"},
		{"history[0].age", "-1", NULL, NULL, GB_ERANGE,
		 "history[0].age: expected an integer in [0, 253402300799], "
		 "got -1"},
		{"history[0].running", NULL, NULL, NULL, GB_EMISSING,
		 "history[0].running: missing"},
		{"history[0].ownerGroup", NULL, NULL, NULL, GB_EMISSING,
		 "history[0].ownerGroup: missing"},
		{"pilot", NULL, NULL, NULL, GB_EMISSING, "pilot: missing"},
		{"pilot.site", "true", NULL, NULL, GB_ETYPE,
		 "pilot.site: expected string or array, got boolean"},
		{"pilot.ownerDN", "\"a\"", NULL, NULL, GB_EMISSING,
		 "pilot.ownerGroup: required when ownerDN is given"},
		{"pilot.requiredTags", "\"GPU\"", NULL, NULL, GB_ERANGE,
		 "pilot.requiredTags[0]: \"GPU\" is not among tags (required "
		 "tags must be a subset of the pilot's tags)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(base_scenario);
		apply_patch(root, cases[i].path, cases[i].value);
		if (cases[i].path2)
			apply_patch(root, cases[i].path2, cases[i].value2);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scm_scenario sc;
		char err[512] = "";
		int rc = scm_parse_scenario(root, &a, &sc, err, sizeof(err));
		if (rc != cases[i].rc || strncmp(err, cases[i].msg,
						 strlen(cases[i].msg)) != 0)
			fail_msg("case %zu (%s): got %s '%s', expected %s '%s'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* ---- etc/scenarios/match-*.json ---------------------------------------- */

#define V_ENTRANT "entrant"   /* in the TQ-07 lottery (chosen or not) */
#define V_LOWER "lower_cpu"   /* matched, lower CPU time (TQ-07) */
#define V_EMPTY "empty"       /* matched, no waiting job (TQ-10) */

struct tq_expect {
	long long id;
	const char *verdict; /* a filter name or one of the V_* above */
	double priority, group_corr, user_corr;
};

struct scen_expect {
	const char *file;
	const char *code;   /* tq_result_code */
	const char *reason; /* tq_result_format, exactly */
	const struct tq_expect *tqs;
	size_t ntqs;
};

/*
** match-assign: no history, so every correction is 1. lhcb_user's 10000
** over its 2 users (PR-02), alice's 5000 over her TQs' average
** UserPriorities (PR-03): TQs 4..10 average 1 each, 11 (3 + 3 + 1) / 3,
** 12 four jobs of 1: 1, 13 one of 5; 46/3 in all (x 3: 46).
*/
static const struct tq_expect assign_tqs[] = {
	{1, "owner_group", 300, 1, 1},   /* lhcb_mc JOB_SHARING, one TQ */
	{2, "owner_group", 40000, 1, 1}, /* lhcb_data */
	{3, "owner_dn", 5000, 1, 1},     /* bob's half */
	{4, "setup", 5000.0 * 3 / 46, 1, 1},
	{5, "cpu_time", 5000.0 * 3 / 46, 1, 1},
	{6, "pilot_type", 5000.0 * 3 / 46, 1, 1},
	{7, "site", 5000.0 * 3 / 46, 1, 1},
	{8, "banned_site", 5000.0 * 3 / 46, 1, 1},
	{9, "grid_ce", 5000.0 * 3 / 46, 1, 1},
	{10, "platform", 5000.0 * 3 / 46, 1, 1},
	{11, V_ENTRANT, 5000.0 * 7 / 46, 1, 1},
	{12, V_ENTRANT, 5000.0 * 3 / 46, 1, 1},
	{13, V_LOWER, 5000.0 * 15 / 46, 1, 1},
};

/*
** match-nomatch: corrections disabled. Every job of lhcb_mc's and
** lhcb_data's TQs has UserPriority 1, so lhcb_mc's 300 and lhcb_data's
** 40000 are split evenly over their TQs whatever their job counts
** (100, 50, 50 and 30, 10); lhcb_user 10000 / 3 users: alice's TQs 4 and
** 6 (averages 2 and 1), bob's 5 and 8 (3 and 1), carol's 10.
*/
static const struct tq_expect nomatch_tqs[] = {
	{1, "cpu_time", 300.0 / 3, 1, 1},
	{2, "cpu_time", 300.0 / 3, 1, 1},
	{3, "cpu_time", 40000.0 / 2, 1, 1},
	{4, "pilot_type", 10000.0 / 3 * 2 / 3, 1, 1},
	{5, "site", 10000.0 / 3 * 3 / 4, 1, 1},
	{6, "site", 10000.0 / 3 / 3, 1, 1},
	{7, "banned_site", 40000.0 / 2, 1, 1},
	{8, "grid_ce", 10000.0 / 3 / 4, 1, 1},
	{9, "platform", 300.0 / 3, 1, 1},
	{10, "setup", 10000.0 / 3, 1, 1},
};

/* match-empty: empty TQs get 0 and are not counted (PR-01), so lhcb_mc's
** 300 is TQ 5's alone. */
static const struct tq_expect empty_tqs[] = {
	{1, V_EMPTY, 0, 1, 1},
	{2, V_EMPTY, 0, 1, 1},
	{3, "owner_group", 10000, 1, 1},
	{4, "owner_group", 40000, 1, 1},
	{5, "cpu_time", 300, 1, 1},
};

/*
** match-corrections (PR-05, PR-06), shares 1000 / 1000 / 2000, so the
** expected shares are 1/4, 1/4, 1/2; weights 0.8 (week, max 2) and 0.2
** (hour, max 5), global max 3.
**   lhcb_mc:   week 0.25/0.6 -> 1/2, hour 0.25/0.5 = 1/2     C = 1/2
**   lhcb_data: week 0.5/0.3 = 5/3,   hour 0.5/0.5 = 1        C = 23/15
**   lhcb_user: week 0.25/0.1 -> 2,   hour absent -> 5        C = 2.6
** inside lhcb_user (hour slice without history, left out):
**   alice 0.5/0.9 = 5/9, bob 0.5/0.1 -> 2.
** PR-03: lhcb_data's TQs 2 and 3 average UserPriority 1 each (1/2 each of
** the group's share), bob's TQs 5 and 6 average 2 and 3 (2/5 and 3/5).
*/
#define C_MC 0.5
#define C_DATA (0.8 * 5 / 3 + 0.2 * 1)
#define C_USER (0.8 * 2 + 0.2 * 5)
#define C_ALICE (5.0 / 9)
#define C_BOB 2.0
static const struct tq_expect corr_tqs[] = {
	{1, V_ENTRANT, 1000 * C_MC, C_MC, 1},
	{2, V_ENTRANT, 2000 * C_DATA / 2, C_DATA, 1},
	{3, V_ENTRANT, 2000 * C_DATA / 2, C_DATA, 1},
	{4, V_ENTRANT, 1000 * C_USER / 2 * C_ALICE, C_USER, C_ALICE},
	{5, V_ENTRANT, 1000 * C_USER / 2 * C_BOB * 2 / 5, C_USER, C_BOB},
	{6, V_ENTRANT, 1000 * C_USER / 2 * C_BOB * 3 / 5, C_USER, C_BOB},
};

/* match-descriptions: one JOB_SHARING group of 300 over 8 TQs of equal
** average UserPriority, 37.5 each; every rejection by the field or tag
** that DIRAC's TaskQueueDB would use. */
static const struct tq_expect lists_tqs[] = {
	{1, V_ENTRANT, 37.5, 1, 1},	 {2, "tag", 37.5, 1, 1},
	{3, "required_tag", 37.5, 1, 1}, {4, "site", 37.5, 1, 1},
	{5, "banned_site", 37.5, 1, 1},	 {6, V_ENTRANT, 37.5, 1, 1},
	{7, "job_type", 37.5, 1, 1},	 {8, "ban_tag", 37.5, 1, 1},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const struct scen_expect examples[] = {
	{"match-assign.json", "matched",
	 "matched: 3 task queues, 2 at cpu_time 50000 in the lottery",
	 assign_tqs, N(assign_tqs)},
	{"match-nomatch.json", "no_tq_matched",
	 "no task queue matched: 10 considered; pilot_type excluded 1, site "
	 "excluded 2, grid_ce excluded 1, platform excluded 1, setup excluded "
	 "1, cpu_time excluded 3, banned_site excluded 1",
	 nomatch_tqs, N(nomatch_tqs)},
	{"match-empty.json", "all_empty", "all 2 matching task queues are empty",
	 empty_tqs, N(empty_tqs)},
	{"match-corrections.json", "matched",
	 "matched: 6 task queues, 6 at cpu_time 50000 in the lottery",
	 corr_tqs, N(corr_tqs)},
	{"match-descriptions.json", "matched",
	 "matched: 2 task queues, 2 at cpu_time 5000 in the lottery",
	 lists_tqs, N(lists_tqs)},
};

static int verdict_is(int verdict, const char *want)
{
	if (strcmp(want, V_ENTRANT) == 0)
		return verdict == TQ_V_ENTRANT || verdict == TQ_V_CHOSEN;
	if (strcmp(want, V_LOWER) == 0)
		return verdict == TQ_V_LOWER_CPU;
	if (strcmp(want, V_EMPTY) == 0)
		return verdict == TQ_V_EMPTY;
	const struct tq_filter_desc *f = tq_filter((enum tq_filter_id)verdict);
	return verdict < TQ_NFILTERS && f && strcmp(f->name, want) == 0;
}

static int id_cmp(const void *x, const void *y)
{
	long long a = *(const long long *)x, b = *(const long long *)y;
	return (a > b) - (a < b);
}

/*
** The job the rules pick with this seed, from the hand-computed
** priorities (TQ-07) and the scenario's own job list (TQ-08). 0 when no
** TQ is in the lottery. *tq gets the TQ id.
*/
static long long expected_job(const struct scm_scenario *sc,
			      const struct scen_expect *x, long long *tq)
{
	struct gb_rng rng;
	gb_rng_seed(&rng, sc->seed);
	double total = 0;
	const struct tq_expect *last = NULL;
	for (size_t i = 0; i < x->ntqs; i++)
		if (strcmp(x->tqs[i].verdict, V_ENTRANT) == 0) {
			total += x->tqs[i].priority;
			last = &x->tqs[i];
		}
	*tq = 0;
	if (last == NULL)
		return 0;
	double r = gb_rng_uniform(&rng) * total;
	const struct tq_expect *win = last;
	for (size_t i = 0; i < x->ntqs; i++) { /* the table is in id order */
		if (strcmp(x->tqs[i].verdict, V_ENTRANT) != 0)
			continue;
		if (r < x->tqs[i].priority) {
			win = &x->tqs[i];
			break;
		}
		r -= x->tqs[i].priority;
	}
	*tq = win->id;
	const struct scm_tq *t = NULL;
	for (size_t i = 0; i < sc->ntqs; i++)
		if (sc->tqs[i].tq_id == win->id)
			t = &sc->tqs[i];
	assert_non_null(t);
	/* TQ-08: levels in ascending UserPriority, weight jobs x priority */
	size_t count[TQ_MAX_PRIORITY + 1] = {0};
	for (size_t j = 0; j < t->njobs; j++)
		count[t->jobs[j].user_priority]++;
	int levels[TQ_MAX_PRIORITY + 1], nl = 0;
	double sum = 0;
	for (int p = 0; p <= TQ_MAX_PRIORITY; p++)
		if (count[p]) {
			levels[nl++] = p;
			sum += (double)count[p] * fmax(p, TQ_MIN_JOB_WEIGHT);
		}
	int level = levels[nl - 1];
	if (nl > 1) {
		double u = gb_rng_uniform(&rng) * sum;
		for (int l = 0; l < nl; l++) {
			double w = (double)count[levels[l]] *
				   fmax(levels[l], TQ_MIN_JOB_WEIGHT);
			if (u < w) {
				level = levels[l];
				break;
			}
			u -= w;
		}
	}
	/* the ten lowest ids of the level, then a uniform pick */
	long long *ids = malloc(t->njobs * sizeof(*ids));
	assert_non_null(ids);
	size_t n = 0;
	for (size_t j = 0; j < t->njobs; j++)
		if (t->jobs[j].user_priority == level)
			ids[n++] = t->jobs[j].job_id;
	qsort(ids, n, sizeof(*ids), id_cmp);
	if (n > TQ_PICK_FROM)
		n = TQ_PICK_FROM;
	long long job = n == 1 ? ids[0] : ids[gb_rng_below(&rng, n)];
	free(ids);
	return job;
}

static void check_rows(const struct scen_expect *x, const struct scm_result *r)
{
	assert_int_equal(r->nrows, x->ntqs);
	size_t rejected[TQ_NFILTERS] = {0};
	for (size_t i = 0; i < x->ntqs; i++) {
		const struct scm_row *w = &r->rows[i];
		const struct tq_expect *e = &x->tqs[i];
		assert_int_equal(w->tq->tq_id, e->id);
		if (!verdict_is(w->verdict, e->verdict))
			fail_msg("%s: TQ %lld: verdict %d, expected %s", x->file,
				 e->id, w->verdict, e->verdict);
		assert_near(w->pr.priority, e->priority, REL);
		assert_near(w->pr.group_corr, e->group_corr, REL);
		assert_near(w->pr.user_corr, e->user_corr, REL);
		if (w->verdict < TQ_NFILTERS) {
			rejected[w->verdict]++;
			/* the reason names the filter's rule and the values */
			assert_string_equal(w->reason.rule,
					    tq_filter((enum tq_filter_id)
							      w->verdict)
						    ->rule);
			assert_non_null(w->detail);
		} else {
			assert_null(w->detail);
		}
	}
	/* TQ-10: the counts are the per-TQ verdicts added up */
	for (int f = 0; f < TQ_NFILTERS; f++)
		assert_int_equal(r->match.rejected[f], rejected[f]);
	assert_string_equal(r->outcome, x->reason);
	assert_string_equal(tq_result_code(&r->match), x->code);
}

/* The JSON and explain's text (the pilot's record, then every task
** queue) say what the result says. */
static void check_renderings(const char *file, const struct scm_scenario *sc,
			     const struct scm_result *r)
{
	json_t *j = scm_result_json(sc, r);
	assert_non_null(j);
	json_t *tqs = json_object_get(j, "taskQueues");
	assert_int_equal(json_array_size(tqs), r->nrows);
	char vt[64];
	for (size_t i = 0; i < r->nrows; i++) {
		json_t *t = json_array_get(tqs, i);
		assert_int_equal(json_integer_value(json_object_get(t, "id")),
				 r->rows[i].tq->tq_id);
		assert_string_equal(
			json_string_value(json_object_get(t, "verdict")),
			scm_verdict_text(r->rows[i].verdict, vt, sizeof(vt)));
		assert_near(json_number_value(json_object_get(t, "priority")),
			    r->rows[i].pr.priority, 0);
		assert_int_equal(json_is_null(json_object_get(t, "detail")),
				 r->rows[i].detail == NULL);
	}
	json_t *job = json_object_get(j, "job");
	assert_int_equal(json_is_null(job), r->chosen < 0);
	if (r->chosen >= 0)
		assert_int_equal(json_integer_value(json_object_get(job, "jobID")),
				 r->job_id);
	assert_string_equal(json_string_value(json_object_get(j, "reason")),
			    r->outcome);
	json_decref(j);

	char path[256], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", file);
	json_t *root = scn_read_file(path, err, sizeof(err));
	assert_non_null(root);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct ex_result x;
	assert_int_equal(ex_run(root, &a, &x, err, sizeof(err)), GB_OK);
	assert_int_equal(x.out.match.job_id, r->job_id);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(exp_print(f, &x), GB_OK);
	fclose(f);
	assert_non_null(strstr(buf, "\n===== offline only (not in the record): "
				    "every task queue =====\n"));
	char line[512];
	snprintf(line, sizeof(line), "\nTQ-10 %s: %s\n",
		 tq_result_code(&r->match), r->outcome);
	assert_non_null(strstr(buf, line));
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].detail)
			assert_non_null(strstr(buf, r->rows[i].detail));
	if (r->chosen >= 0)
		snprintf(line, sizeof(line), "\ndecision: matched job %lld from "
					     "task queue %lld: ",
			 r->job_id, r->rows[r->chosen].tq->tq_id);
	else
		snprintf(line, sizeof(line), "\ndecision: nomatch, no job for "
					     "this pilot\n");
	assert_non_null(strstr(buf, line));
	free(buf);
	arena_free(&a);
	json_decref(root);
}

static void run_file(const char *file, struct arena *a,
		     struct scm_scenario *sc, struct scm_result *r)
{
	char path[256], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", file);
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	assert_true(scm_is_match_scenario(root));
	assert_true(json_is_string(json_object_get(root, "description")));
	parse_ok(root, a, sc);
	assert_int_equal(scm_run(sc, a, r), GB_OK);
	json_decref(root);
}

/*
** TQ-04..TQ-08, TQ-10, PR-01..PR-03 on the example files: every TQ's
** verdict and priority, the TQ-10 counts and line, and the job the seed's
** lottery gives.
*/
static void test_tq07_examples(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(examples); i++) {
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scm_scenario sc;
		struct scm_result r, again;
		run_file(examples[i].file, &a, &sc, &r);
		check_rows(&examples[i], &r);
		long long tq = 0, job = expected_job(&sc, &examples[i], &tq);
		assert_int_equal(r.job_id, job);
		if (job == 0) {
			assert_int_equal(r.chosen, -1);
		} else {
			assert_true(r.chosen >= 0);
			assert_int_equal(r.rows[r.chosen].tq->tq_id, tq);
			assert_int_equal(r.rows[r.chosen].verdict, TQ_V_CHOSEN);
		}
		check_renderings(examples[i].file, &sc, &r);
		/* the same seed gives the same job */
		assert_int_equal(scm_run(&sc, &a, &again), GB_OK);
		assert_int_equal(again.job_id, r.job_id);
		arena_free(&a);
	}
}

/*
** TQ-04..06 in explain's table: for every filter, one TQ that the pilot's
** field or tag rejects, with the verdict naming the filter and the detail
** naming the values compared (the field's, or the tag that decided). The
** pilot descriptions are pilot.match's (lists, ANY, tags, bans, owners).
*/
static void test_tq06_rejections_named(void **state)
{
	(void)state;
	static const struct {
		const char *tq, *pilot; /* extra members of each */
		const char *filter, *detail;
	} rows[] = {
		{"\"pilotTypes\": [\"private\"]", "\"pilotType\": [\"generic\"]",
		 "pilot_type", "pilot's pilotType generic; TQ pilotTypes: private"},
		{"\"sites\": [\"X\"]", "\"site\": [\"Y\", \"Z\"]", "site",
		 "pilot's site Y, Z; TQ sites: X"},
		{"\"gridCEs\": [\"c1\"]", "\"gridCE\": \"c2\"", "grid_ce",
		 "pilot's gridCE c2; TQ gridCEs: c1"},
		{"\"platforms\": [\"el9\"]", "\"platform\": [\"el8\"]", "platform",
		 "pilot's platform el8; TQ platforms: el9"},
		{"\"jobTypes\": [\"User\"]", "\"jobType\": \"Test\"", "job_type",
		 "pilot's jobType Test; TQ jobTypes: User"},
		{"\"tags\": [\"MP\"]", "\"tags\": [\"MP\", \"GPU\"], "
		 "\"requiredTags\": \"GPU\"", "required_tag",
		 "tag GPU required by the pilot; TQ tags: MP"},
		{"\"sites\": [\"X\"]", "\"ownerGroup\": [\"h\", \"k\"]",
		 "owner_group", "TQ group g, pilot's h, k"},
		{"\"sites\": [\"X\"]", "\"ownerGroup\": [\"g\"], "
		 "\"ownerDN\": [\"b\", \"c\"]", "owner_dn",
		 "TQ owner a, pilot's b, c"},
		{"\"sites\": [\"X\"]", "\"setup\": \"T\"", "setup",
		 "TQ setup S, pilot's T"},
		{"\"sites\": [\"X\"]", "\"cpuTime\": 499", "cpu_time",
		 "CPU time 500 s exceeds the pilot's 499 s"},
		{"\"bannedSites\": [\"X\", \"Y\"]", "\"site\": [\"Y\", \"X\"]",
		 "banned_site", "pilot's sites Y, X; TQ bannedSites: X, Y"},
		{"\"tags\": [\"GPU\", \"MP\"]", "\"tags\": \"MP\"", "tag",
		 "tag GPU not offered; pilot's tags: MP"},
		{"\"tags\": [\"MP\"]", "\"site\": \"X\"", "tag",
		 "tag MP not offered; pilot's tags: none"},
		{"\"sites\": [\"X\"]", "\"bannedSite\": \"X\"", "ban_site",
		 "pilot's bannedSite X; TQ sites: X"},
		{"\"gridCEs\": [\"c1\", \"c2\"]", "\"bannedGridCE\": [\"c2\", \"c1\"]",
		 "ban_grid_ce", "pilot's bannedGridCE c2, c1; TQ gridCEs: c1, c2"},
		{"\"platforms\": [\"el9\"]", "\"bannedPlatform\": \"el9\"",
		 "ban_platform", "pilot's bannedPlatform el9; TQ platforms: el9"},
		{"\"pilotTypes\": [\"private\"]", "\"bannedPilotType\": \"private\"",
		 "ban_pilot_type",
		 "pilot's bannedPilotType private; TQ pilotTypes: private"},
		{"\"jobTypes\": [\"User\"]", "\"bannedJobType\": [\"User\"]",
		 "ban_job_type", "pilot's bannedJobType User; TQ jobTypes: User"},
		{"\"tags\": [\"MP\"]", "\"tags\": \"aNy\", \"bannedTag\": \"MP\"",
		 "ban_tag", "pilot's bannedTag MP; TQ tags: MP"},
	};
	for (size_t i = 0; i < N(rows); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
			 "{\"now\": \"2024-05-14T12:00:00Z\", \"seed\": 1,"
			 " \"groups\": [{\"name\": \"g\", \"share\": 10}],"
			 " \"taskQueues\": [{\"id\": 1, \"ownerDN\": \"a\","
			 " \"ownerGroup\": \"g\", \"setup\": \"S\", \"cpuTime\": 100,"
			 " %s, \"jobs\": [{\"jobID\": 11}]}],"
			 " \"pilot\": {%s%s%s}}",
			 rows[i].tq,
			 strstr(rows[i].pilot, "\"setup\"") ? ""
							    : "\"setup\": \"S\", ",
			 strstr(rows[i].pilot, "\"cpuTime\"")
				 ? ""
				 : "\"cpuTime\": 1000, ",
			 rows[i].pilot);
		json_t *root = load_text(text);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scm_scenario sc;
		struct scm_result r;
		parse_ok(root, &a, &sc);
		assert_int_equal(scm_run(&sc, &a, &r), GB_OK);
		assert_int_equal(r.nrows, 1);
		const struct scm_row *w = &r.rows[0];
		const struct tq_filter_desc *f =
			w->verdict < TQ_NFILTERS
				? tq_filter((enum tq_filter_id)w->verdict)
				: NULL;
		if (f == NULL || strcmp(f->name, rows[i].filter) != 0)
			fail_msg("row %zu (%s): verdict %d, want %s", i,
				 rows[i].pilot, w->verdict, rows[i].filter);
		if (w->detail == NULL || strstr(w->detail, rows[i].detail) == NULL)
			fail_msg("row %zu (%s): detail \"%s\", want \"%s\" in it",
				 i, rows[i].pilot, w->detail ? w->detail : "(none)",
				 rows[i].detail);
		/* the JSON record carries the same detail */
		json_t *j = scm_result_json(&sc, &r);
		json_t *t = json_array_get(json_object_get(j, "taskQueues"), 0);
		assert_string_equal(json_string_value(json_object_get(t, "detail")),
				    w->detail);
		json_decref(j);
		json_decref(root);
		arena_free(&a);
	}

	/* etc/scenarios/match-descriptions.json: the tag or field named */
	static const struct {
		long long tq;
		const char *detail;
	} named[] = {
		{2, "tag GPU not offered"},
		{3, "tag MultiProcessor required by the pilot; TQ tags: none"},
		{4, "TQ sites: LCG.GRIDKA.de"},
		{5, "TQ bannedSites: LCG.CERN.cern, LCG.CNAF.it"},
		{7, "pilot's jobType MCSimulation; TQ jobTypes: User"},
		{8, "pilot's bannedTag Test; TQ tags: MultiProcessor, Test"},
	};
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scm_scenario sc;
	struct scm_result r;
	run_file("match-descriptions.json", &a, &sc, &r);
	for (size_t i = 0; i < N(named); i++) {
		const struct scm_row *w = NULL;
		for (size_t k = 0; k < r.nrows; k++)
			if (r.rows[k].tq->tq_id == named[i].tq)
				w = &r.rows[k];
		assert_non_null(w);
		if (w->detail == NULL || strstr(w->detail, named[i].detail) == NULL)
			fail_msg("match-descriptions TQ %lld: detail \"%s\", "
				 "want \"%s\" in it",
				 named[i].tq, w->detail ? w->detail : "(none)",
				 named[i].detail);
	}
	arena_free(&a);
}

/* The chosen jobs the descriptions promise, by id. */
static void test_tq08_described_jobs(void **state)
{
	(void)state;
	static const struct {
		const char *file;
		long long tq;
	} cases[] = {{"match-assign.json", 11}, {"match-corrections.json", 2}};
	for (size_t i = 0; i < N(cases); i++) {
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scm_scenario sc;
		struct scm_result r;
		run_file(cases[i].file, &a, &sc, &r);
		assert_true(r.chosen >= 0);
		assert_int_equal(r.rows[r.chosen].tq->tq_id, cases[i].tq);
		/* the job is one of that TQ's, with its UserPriority */
		const struct scm_tq *t = r.rows[r.chosen].tq;
		int found = 0;
		for (size_t j = 0; j < t->njobs; j++)
			if (t->jobs[j].job_id == r.job_id) {
				found = 1;
				assert_int_equal(t->jobs[j].user_priority,
						 r.job_priority);
			}
		assert_true(found);
		/* the pick names the TQ's owner as the scenario wrote it
		** (the decision path's names are the index's, gone with it) */
		assert_string_equal(r.m.owner, t->def.owner);
		assert_string_equal(r.m.owner_group, t->def.owner_group);
		arena_free(&a);
	}
}

/*
** PR-05, PR-06, PR-07: the corrector's per-slice corrections of
** match-corrections, and the factors pr_recompute applied agree with them.
*/
static void test_pr05_pr06_corrections(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scm_scenario sc;
	struct scm_result r;
	run_file("match-corrections.json", &a, &sc, &r);
	assert_int_equal(r.ncorr, 2);
	static const struct {
		const char *name;
		double usage[2], slice[2], c;
	} groups[] = {
		/* sorted by name; week then hour */
		{"lhcb_data", {250 + 50, 50}, {5.0 / 3, 1}, C_DATA},
		{"lhcb_mc", {550 + 50, 50}, {0.5, 0.5}, C_MC},
		{"lhcb_user", {90 + 10, 0}, {2, 5}, C_USER},
	};
	const struct scm_correction *g = &r.corr[0];
	assert_string_equal(g->inst->name, "GroupsInstance");
	assert_false(g->ignored);
	assert_int_equal(g->nents, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(g->ents[i].name, groups[i].name);
		for (size_t k = 0; k < 2; k++) {
			assert_near(g->ents[i].usage[k], groups[i].usage[k], 0);
			assert_near(g->ents[i].slice_corr[k], groups[i].slice[k],
				    REL);
		}
		assert_near(g->ents[i].correction, groups[i].c, REL);
	}
	/* inside lhcb_user the hour slice has no history: left out, NaN */
	const struct scm_correction *u = &r.corr[1];
	assert_string_equal(u->inst->group, "lhcb_user");
	assert_int_equal(u->nents, 2);
	assert_string_equal(u->ents[0].name,
			    "/DC=ch/DC=cern/OU=Organic Units/OU=Users/CN=alice");
	assert_near(u->ents[0].usage[0], 90, 0); /* 8 days ago is outside */
	assert_near(u->ents[0].slice_corr[0], C_ALICE, REL);
	assert_true(isnan(u->ents[0].slice_corr[1]));
	assert_near(u->ents[0].correction, C_ALICE, REL);
	assert_near(u->ents[1].slice_corr[0], C_BOB, REL);
	assert_near(u->ents[1].correction, C_BOB, REL);
	/* the same numbers as the factors on the TQs */
	for (size_t i = 0; i < r.nrows; i++) {
		const struct pr_tq *t = &r.rows[i].pr;
		for (size_t e = 0; e < g->nents; e++)
			if (strcmp(g->ents[e].name, t->owner_group) == 0)
				assert_near(t->group_corr, g->ents[e].correction,
					    REL);
		for (size_t e = 0; e < u->nents; e++)
			if (strcmp(u->ents[e].name, t->owner) == 0)
				assert_near(t->user_corr, u->ents[e].correction,
					    REL);
	}
	arena_free(&a);
}

/* Corrections off: no instance is shown, every factor is 1. */
static void test_corrections_off(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scm_scenario sc;
	struct scm_result r;
	run_file("match-nomatch.json", &a, &sc, &r);
	assert_false(sc.cfg.pr.corrections);
	assert_int_equal(r.ncorr, 0);
	json_t *j = scm_result_json(&sc, &r);
	json_t *c = json_object_get(j, "corrections");
	assert_true(json_is_false(json_object_get(c, "enabled")));
	assert_int_equal(json_array_size(json_object_get(c, "instances")), 0);
	json_decref(j);
	arena_free(&a);
}

/* Every match-*.json has an expectation here; no other file is one. */
static void test_example_files_listed(void **state)
{
	(void)state;
	DIR *dir = opendir("etc/scenarios");
	assert_non_null(dir);
	size_t nmatch = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		char path[512], err[512] = "";
		snprintf(path, sizeof(path), "etc/scenarios/%s", de->d_name);
		json_t *root = scn_read_file(path, err, sizeof(err));
		if (root == NULL)
			fail_msg("%s", err);
		int is_match = strncmp(de->d_name, "match-", 6) == 0;
		assert_int_equal(scm_is_match_scenario(root), is_match);
		if (is_match) {
			int listed = 0;
			for (size_t i = 0; i < N(examples); i++)
				listed |= strcmp(examples[i].file,
						 de->d_name) == 0;
			if (!listed)
				fail_msg("%s has no expectation here",
					 de->d_name);
			nmatch++;
		}
		json_decref(root);
	}
	closedir(dir);
	assert_int_equal(nmatch, N(examples));
}

static void test_verdict_text(void **state)
{
	(void)state;
	char buf[64];
	assert_string_equal(scm_verdict_text(TQ_V_CHOSEN, buf, sizeof(buf)),
			    "chosen");
	assert_string_equal(scm_verdict_text(TQ_V_ENTRANT, buf, sizeof(buf)),
			    "lottery entrant");
	assert_string_equal(scm_verdict_text(TQ_V_LOWER_CPU, buf, sizeof(buf)),
			    "lower CPU time");
	assert_string_equal(scm_verdict_text(TQ_V_EMPTY, buf, sizeof(buf)),
			    "empty");
	assert_string_equal(scm_verdict_text(TQ_FL_BANNED_SITE, buf,
					     sizeof(buf)),
			    "rejected by banned_site");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_base),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_tq07_examples),
		cmocka_unit_test(test_tq08_described_jobs),
		cmocka_unit_test(test_tq06_rejections_named),
		cmocka_unit_test(test_pr05_pr06_corrections),
		cmocka_unit_test(test_corrections_off),
		cmocka_unit_test(test_example_files_listed),
		cmocka_unit_test(test_verdict_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
