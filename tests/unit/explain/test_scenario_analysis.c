/*
** test_scenario_analysis.c — analysis scenarios (scenario_analysis.c), the
** analysis fields of queues and requests (scenario_jobs*.c), the grid
** file's "analysis" section (scj_parse_analysis_grid) and the renderers of
** report_analysis.c, through the example files etc/scenarios/analysis-*.json.
**
** Runs with the repository root as working directory (ctest sets it).
** Each example file is decided through sca_run, the code path of
** `gridbroker explain`, and every queue's rule or weight, the throttle's
** numbers and the AJ-28 second pass are checked against the numbers the
** file's descriptions give. Parser errors are a table of {patch applied to
** a small valid scenario, expected code, expected message}.
*/
#include "gbtest.h"

#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "gb_error.h"
#include "report/record.h"
#include "report/render.h"
#include "report/report_analysis.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"

#include "jsonpatch.h"

#define ARENA_CAP (64u << 20)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the example files ---------------------------------------------------- */

/* One queue's expected fate: a rule and code, or a weight (rule NULL). */
struct qexpect {
	const char *name;
	const char *rule, *code;
	double weight;
	int njobs; /* jobs ab_distribute gave it */
};

struct fexpect {
	const char *file;
	int throttled;
	const char *th_rule, *th_code;
	double th_value, th_limit;
	enum dec_outcome outcome;
	int locality_dropped; /* AJ-28 second pass */
	struct qexpect q[16];
};

static const struct fexpect files[] = {
	{"analysis-assign.json", 0, NULL, NULL, 0, 0, DEC_ASSIGNED, 0,
	 {
		 /* AJ-25/26: W_s x W_q with W_q = (max_q_len - nq_user -
		 ** 12/4) / (150.5 - 12) */
		 {"ANALY_AGLT2", NULL, NULL, 12 * 55 / 138.5, 8},
		 {"ANALY_MWT2", NULL, NULL, 12 * 32 / 138.5, 4},
		 {"BNL_UNIFIED", NULL, NULL, 0.05 * 47 / 138.5, 0},
		 {"ANALY_SLAC", NULL, NULL, 0.002 * 4.5 / 138.5, 0},
		 {"CERN-PROD_MCORE", "AJ-05", "type", 0, 0},
		 {"ANALY_BADSITE", "AJ-06", "excluded", 0, 0},
		 {"ANALY_OU", "AJ-07", "status", 0, 0},
		 {"ANALY_DESY", "AJ-08", "locality", 0, 0},
		 {"ANALY_NET2_VP", "AJ-11", "avoid_vp", 0, 0},
		 {"ANALY_SWT2_LOWMEM", "AJ-13", "highmemory", 0, 0},
		 {"ANALY_UTA", "AJ-18", "badjobs", 0, 0},
		 {"ANALY_IU", "AJ-19", "cap_rt", 0, 0},
		 {"ANALY_TRIUMF", "AJ-20", "user_queue", 0, 0},
	 }},
	/* AJ-04: class C, 930 / 1000 = 93 % > 90 % */
	{"analysis-throttled.json", 1, "AJ-04", "share_class_c", 93, 90,
	 DEC_PENDING, 0, {{NULL, NULL, NULL, 0, 0}}},
	/* AJ-28: every queue fails AJ-08 first; the second pass weighs
	** three, room sum (32-1) + 15 + 7.5 = 53.5, minus 6 jobs = 47.5 */
	{"analysis-locality-retry.json", 0, NULL, NULL, 0, 0, DEC_ASSIGNED, 1,
	 {
		 {"ANALY_MWT2", NULL, NULL, 6 * (31 - 2) / 47.5, 4},
		 {"ANALY_AGLT2", NULL, NULL, 6 * (15 - 2) / 47.5, 2},
		 {"ANALY_SLAC", NULL, NULL, 0.002 * 5.5 / 47.5, 0},
		 {"ANALY_SWT2_LOWMEM", "AJ-13", "highmemory", 0, 0},
	 }},
	/* AJ-11: grandRatio 25000 / 20000 = 1.25, limit 1.2 x 1.25 = 1.5;
	** W_q = (max_q_len - 4/2) / (15 + 5 - 4), W_s 4 */
	{"analysis-overload.json", 0, NULL, NULL, 0, 0, DEC_ASSIGNED, 0,
	 {
		 {"ANALY_AGLT2", NULL, NULL, 4 * 13 / 16.0, 3},
		 {"ANALY_MWT2_VP", "AJ-11", "overloaded_vp", 0, 0},
		 {"ANALY_BNL_VP", NULL, NULL, 4 * 3 / 16.0, 1},
		 {"ANALY_SWT2_VP", "AJ-11", "overloaded_vp", 0, 0},
	 }},
	/* AJ-12 with RC-05's ALL path: the image's source path from the
	** ALL queue forward-matches MWT2's containers entry, not AGLT2's;
	** the lone survivor gets W_s 4 x W_q 1 and every job. */
	{"analysis-container.json", 0, NULL, NULL, 0, 0, DEC_ASSIGNED, 0,
	 {
		 {"ANALY_MWT2", NULL, NULL, 4, 4},
		 {"ANALY_AGLT2", "RC-05", "container", 0, 0},
	 }},
	/* AJ-08 complete enough: of 50 files, 5 missing (90 %) is local, 6
	** (88 %) and 11 (> 10) are not; the two survivors get W_s 5 x W_q
	** 0.5 each. */
	{"analysis-locality.json", 0, NULL, NULL, 0, 0, DEC_ASSIGNED, 0,
	 {
		 {"ANALY_MWT2", NULL, NULL, 2.5, 2},
		 {"ANALY_AGLT2", NULL, NULL, 2.5, 3},
		 {"ANALY_SLAC", "AJ-08", "locality", 0, 0},
		 {"ANALY_BNL", "AJ-08", "locality", 0, 0},
	 }},
};

static void load_file(const char *file, struct arena *a,
		      struct sca_scenario *sc)
{
	char path[256], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", file);
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	assert_true(json_is_string(json_object_get(root, "description")));
	assert_true(sca_is_analysis_scenario(root));
	assert_false(scj_is_job_scenario(root));
	int rc = sca_parse_scenario(root, a, sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s: %s: %s", file, gb_errname(rc), err);
	json_decref(root);
}

static long find(const struct md_analysis *r, const char *name)
{
	for (size_t i = 0; i < r->nqueues; i++)
		if (strcmp(r->queues[i].name, name) == 0)
			return (long)i;
	fail_msg("no queue %s", name);
	return -1;
}

static void check_queue(const struct fexpect *x, const struct qexpect *e,
			const struct md_analysis *r)
{
	long i = find(r, e->name);
	const struct dec_candidate *c = &r->dec.cands[i];
	if (e->rule) {
		if (!dec_dropped(c))
			fail_msg("%s: %s not dropped", x->file, e->name);
		assert_string_equal(c->reasons[0].rule, e->rule);
		assert_string_equal(c->reasons[0].code, e->code);
	} else {
		if (dec_dropped(c))
			fail_msg("%s: %s dropped by %s", x->file, e->name,
				 c->reasons[0].rule);
		assert_string_equal(c->wexpl.rule, "AJ-25");
		assert_near(c->weight, e->weight, 1e-9);
	}
	int n = 0;
	for (size_t j = 0; j < r->req.njobs; j++)
		n += r->plan.job_queue[j] == i;
	if (n != e->njobs)
		fail_msg("%s: %s got %d jobs, expected %d", x->file, e->name, n,
			 e->njobs);
}

/* The text `explain` prints for `r`: its record rendered (free it). */
static char *render(const struct md_analysis *r, const char *outcome)
{
	char *rec = rec_analysis(r, NULL);
	assert_non_null(rec);
	json_t *j = json_loads(rec, 0, NULL);
	assert_non_null(j);
	free(rec);
	const struct rn_head h = {.kind = "analysis", .subject = "1",
				  .outcome = outcome};
	char *buf = rn_render(&h, j);
	assert_non_null(buf);
	json_decref(j);
	return buf;
}

/* Parse `root` as an analysis scenario; a refusal fails the test. */
static void parse_ok(json_t *root, struct arena *a, struct sca_scenario *sc,
		     const char *what)
{
	char err[512] = "";
	if (sca_parse_scenario(root, a, sc, err, sizeof(err)) != GB_OK)
		fail_msg("%s: %s", what, err);
}

/* The JSON and the table say what the result says. */
static void check_render(const struct fexpect *x, const struct md_analysis *r)
{
	json_t *j = rpa_decision_json(r);
	assert_non_null(j);
	const char *dec = json_string_value(json_object_get(j, "decision"));
	assert_string_equal(dec, x->throttled ? "throttled"
					      : dec_outcome_name(x->outcome));
	json_t *th = json_object_get(j, "throttle");
	assert_int_equal(json_is_true(json_object_get(th, "throttled")),
			 x->throttled);
	if (x->throttled) {
		assert_string_equal(
			json_string_value(json_object_get(th, "rule")),
			x->th_rule);
		assert_near(json_number_value(json_object_get(th, "value")),
			    x->th_value, 1e-12);
		assert_int_equal(json_array_size(json_object_get(j, "unassigned")),
				 r->req.njobs);
		assert_int_equal(json_array_size(json_object_get(j, "candidates")),
				 0);
	} else {
		assert_int_equal(json_array_size(json_object_get(j, "candidates")),
				 r->nqueues);
		assert_int_equal(json_array_size(json_object_get(j, "stages")),
				 r->dec.nstages);
		assert_int_equal(json_is_true(json_object_get(j,
							      "localityDropped")),
				 x->locality_dropped);
		size_t jobs = 0;
		json_t *as = json_object_get(j, "assignments");
		for (size_t i = 0; i < json_array_size(as); i++)
			jobs += json_array_size(json_object_get(
				json_array_get(as, i), "jobIDs"));
		assert_int_equal(jobs, r->req.njobs);
	}
	json_decref(j);

	char *buf = render(r, x->throttled ? "throttled"
					   : dec_outcome_name(x->outcome));
	assert_non_null(strstr(buf, "-- throttle (AJ-01..AJ-04)"));
	if (x->throttled) {
		char line[128];
		snprintf(line, sizeof(line), "THROTTLED by %s (%s): %g > limit %g",
			 x->th_rule, x->th_code, x->th_value, x->th_limit);
		assert_non_null(strstr(buf, line));
		assert_non_null(strstr(buf, "decision: throttled"));
		assert_null(strstr(buf, "stages:"));
	} else {
		assert_non_null(strstr(buf, "\nstages:\n"));
		for (size_t i = 0; i < r->nqueues; i++)
			assert_non_null(strstr(buf, r->queues[i].name));
		assert_int_equal(strstr(buf, "AJ-28: second pass") != NULL,
				 x->locality_dropped);
	}
	free(buf);
}

static void test_examples(void **state)
{
	(void)state;
	for (size_t k = 0; k < N(files); k++) {
		const struct fexpect *x = &files[k];
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct sca_scenario sc;
		struct md_analysis r;
		load_file(x->file, &a, &sc);
		assert_int_equal(sca_run(&sc, &a, &r), GB_OK);
		assert_int_equal(r.throttle.throttled, x->throttled);
		if (x->throttled) { /* AJ-02..AJ-04: rule, value, limit */
			assert_string_equal(r.throttle.rule, x->th_rule);
			assert_string_equal(r.throttle.code, x->th_code);
			assert_near(r.throttle.value, x->th_value, 1e-12);
			assert_near(r.throttle.limit, x->th_limit, 1e-12);
			assert_null(r.aqs);
		} else {
			assert_int_equal(r.dec.outcome, x->outcome);
			assert_int_equal(r.aplan.locality_dropped,
					 x->locality_dropped);
			size_t nq = 0;
			for (; nq < N(x->q) && x->q[nq].name; nq++)
				check_queue(x, &x->q[nq], &r);
			assert_int_equal(nq, r.nqueues);
		}
		check_render(x, &r);
		arena_free(&a);
	}
}

/* AJ-11 in analysis-overload.json: the numbers each refusal compared,
** and the text `explain` prints with them. */
static void test_overload_numbers(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sca_scenario sc;
	struct md_analysis r;
	load_file("analysis-overload.json", &a, &sc);
	assert_near(sc.state.grid_queued, 25000, 0);
	assert_near(sc.state.grid_running, 20000, 0);
	assert_int_equal(sca_run(&sc, &a, &r), GB_OK);
	assert_near(r.task.grand_ratio, 1.25, 0);
	/* ratio 190 / 100 against 1.2 x 1.25, then queued and running */
	const struct dec_reason *m = &r.dec.cands[find(&r, "ANALY_MWT2_VP")]
					      .reasons[0];
	assert_near(m->v[0], 1.9, 0);
	assert_near(m->v[1], 1.5, 0);
	assert_near(m->v[2], 190, 0);
	assert_near(m->v[3], 100, 0);
	/* nothing running: queued against OVERLOAD_MIN_QUEUE */
	const struct dec_reason *w = &r.dec.cands[find(&r, "ANALY_SWT2_VP")]
					      .reasons[0];
	assert_near(w->v[0], 25, 0);
	assert_near(w->v[1], 20, 0);
	assert_near(w->v[2], 0, 0);
	char *buf = render(&r, "assigned");
	assert_non_null(strstr(buf, "queued / running 1.9 > 1.5 = "
				    "OVERLOAD_RATIO_OFFSET x grandRatio, "
				    "with 190 queued"));
	assert_non_null(strstr(buf, "25 queued > OVERLOAD_MIN_QUEUE 20 and "
				    "0 running"));
	free(buf);
	arena_free(&a);
}

/* ---- parser ---------------------------------------------------------------- */

static const char *base =
	"{\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 1,"
	" \"queues\": ["
	"  {\"name\": \"Q1\", \"status\": \"online\", \"site\": \"S1\","
	"   \"type\": \"analysis\", \"vp\": true, \"siteClass\": \"hi\","
	"   \"disableReassign\": true, \"transtimehi\": 3,"
	"   \"transtimelo\": 5, \"workflow\": \"hpc\","
	"   \"storage\": {\"name\": \"S1_DISK\", \"spaceFree\": 800},"
	"   \"jobs\": {\"User Analysis\": {\"running\": 10}}},"
	"  {\"name\": \"Q2\", \"status\": \"online\", \"site\": \"S2\","
	"   \"storage\": {\"name\": \"S2_DISK\", \"spaceFree\": 800}}],"
	" \"analysis\": {\"owner\": {\"runningJobs\": 5, \"shareUsage\": 1,"
	"   \"shareTarget\": 10}, \"taskClass\": \"A\","
	"   \"queues\": {\"Q1\": {\"trr\": 2, \"nqUser\": 1}}},"
	" \"task\": {\"taskID\": 9, \"taskType\": \"anal\","
	"   \"userName\": \"alice\", \"workingGroup\": \"phys-higgs\","
	"   \"taskPriority\": 2500, \"ramCountUnit\": \"MB\","
	"   \"excludedSite\": [\"S3\"], \"includedSite\": [\"S1\", \"S2\"],"
	"   \"avoidVP\": true, \"jobs\": [{\"jobID\": 1}]}}";

static void test_valid_base(void **state)
{
	(void)state;
	json_t *root = load_text(base);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sca_scenario sc;
	char err[512] = "";
	int rc = sca_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s", err);
	json_decref(root);
	const struct gm_queue *q1 = &sc.job.grid.queues[0],
			      *q2 = &sc.job.grid.queues[1];
	assert_int_equal(q1->type, AB_QT_ANALYSIS);
	assert_true(q1->is_vp);
	assert_int_equal(q1->site_class, AN_SITE_HI);
	assert_true(q1->disable_reassign);
	assert_near(q1->transtimehi, 3, 0);
	assert_near(q1->transtimelo, 5, 0);
	assert_string_equal(q1->workflow, "hpc");
	/* the defaults, which are not the enums' 0 values */
	assert_int_equal(q2->type, AB_QT_UNIFIED);
	assert_int_equal(q2->site_class, AN_SITE_MID);
	assert_false(q2->is_vp);
	assert_false(q2->disable_reassign);
	assert_string_equal(q2->workflow, "");
	const struct gm_request *r = &sc.job.req;
	assert_true(r->an.is_analysis);
	assert_string_equal(r->an.user, "alice");
	assert_string_equal(r->an.working_group, "phys-higgs");
	assert_int_equal(r->an.task_priority, 2500);
	assert_int_equal(r->an.ram_per_core, 0);
	assert_int_equal(r->an.nexcluded, 1);
	assert_int_equal(r->an.nincluded, 2);
	assert_true(r->an.avoid_vp);
	/* no nucleus needed; gshare defaults to User Analysis */
	assert_string_equal(r->t.nucleus, "");
	assert_string_equal(r->t.gshare, "User Analysis");
	assert_int_equal(sc.task_class, AN_CLASS_A);
	assert_near(sc.state.user.running_jobs, 5, 0);
	assert_true(sc.state.user.user_analysis);
	assert_int_equal(sc.state.nqueues, 1);
	assert_near(sc.state.queues[0].trr, 2, 0);
	arena_free(&a);

	/* request defaults: MBPerCore, priority 1000, class B */
	root = load_text(base);
	apply_patch(root, "task.ramCountUnit", NULL);
	apply_patch(root, "task.taskPriority", NULL);
	apply_patch(root, "analysis.taskClass", NULL);
	arena_init(&a, ARENA_CAP);
	assert_int_equal(sca_parse_scenario(root, &a, &sc, err, sizeof(err)),
			 GB_OK);
	assert_int_equal(sc.job.req.an.ram_per_core, 1);
	assert_int_equal(sc.job.req.an.task_priority, 1000);
	assert_int_equal(sc.task_class, AN_CLASS_B);
	json_decref(root);
	arena_free(&a);
}

struct err_case {
	const char *path, *value; /* value NULL deletes */
	int code;
	const char *msg;
};

static const struct err_case errors[] = {
	{"queues[0].type", "\"batch\"", GB_ERANGE,
	 "queues[0].type: unknown value 'batch' (expected \"analysis\", "
	 "\"unified\", \"production\", \"other\")"},
	{"queues[0].siteClass", "\"top\"", GB_ERANGE,
	 "queues[0].siteClass: unknown value 'top'"},
	{"queues[0].vp", "1", GB_ETYPE,
	 "queues[0].vp: expected boolean, got integer"},
	{"queues[0].transtimehi", "-1", GB_ERANGE, "queues[0].transtimehi: "},
	{"task.taskType", "\"user\"", GB_ERANGE,
	 "task.taskType: unknown value 'user' (expected \"prod\", \"anal\")"},
	{"task.userName", NULL, GB_EMISSING,
	 "task.userName: missing (required when taskType is \"anal\")"},
	{"task.taskPriority", "1000001", GB_ERANGE, "task.taskPriority: "},
	{"task.ramCountUnit", "\"GB\"", GB_ERANGE,
	 "task.ramCountUnit: unknown value 'GB'"},
	{"task.excludedSite", "[\"S3\", \"S3\"]", GB_EDUP,
	 "task.excludedSite[1]: duplicate site 'S3'"},
	{"task.includedSite", "[\"\"]", GB_ERANGE, "task.includedSite[0]: "},
	{"task.avoidVP", "\"yes\"", GB_ETYPE,
	 "task.avoidVP: expected boolean, got string"},
	{"task.taskType", "\"prod\"", GB_EMISSING, "task.nucleus: missing"},
	{"analysis.owner.runningJobs", "-1", GB_ERANGE,
	 "analysis.owner.runningJobs: "},
	{"analysis.owner.quota", "true", GB_EINVAL,
	 "analysis.owner.quota: unknown field"},
	{"analysis.taskClass", "\"D\"", GB_ERANGE,
	 "analysis.taskClass: unknown value 'D'"},
	{"analysis.queues.Q9", "{}", GB_ENOTFOUND,
	 "analysis.queues[\"Q9\"]: no queue of that name in queues"},
	{"analysis.queues.Q1.trr", "-2", GB_ERANGE,
	 "analysis.queues[\"Q1\"].trr: "},
	{"analysis.extra", "1", GB_EINVAL, "analysis.extra: unknown field"},
	{"analysis.grandRatio", "-0.5", GB_ERANGE, "analysis.grandRatio: "},
	{"analysis.gridQueued", "\"many\"", GB_ETYPE,
	 "analysis.gridQueued: "},
	{"analysis.gridRunning", "-1", GB_ERANGE, "analysis.gridRunning: "},
	/* one count without the other, or the ratio with a count */
	{"analysis.gridQueued", "10", GB_EMISSING,
	 "analysis.gridRunning: missing (gridQueued and gridRunning go "
	 "together)"},
	{"analysis.gridRunning", "10", GB_EMISSING,
	 "analysis.gridQueued: missing"},
};

/* AJ-11's grid-wide figures: the counts, the ratio (read as ratio per 1
** running), or the sums of the queues' counts of the task's gshare. */
static void test_grid_figures(void **state)
{
	(void)state;
	static const struct {
		const char *queued, *running, *ratio; /* NULL: left out */
		double want_q, want_r;
	} rows[] = {
		{"300", "200", NULL, 300, 200},
		{"300", "0", NULL, 300, 0},
		{NULL, NULL, "2.5", 2.5, 1},
		{NULL, NULL, "0", 0, 1},
		/* neither: base's queues, Q1 10 running and nothing queued
		** in User Analysis (Q2 has no counts) */
		{NULL, NULL, NULL, 0, 10},
		{"null", "null", NULL, 0, 10},
	};
	for (size_t i = 0; i < N(rows); i++) {
		json_t *root = load_text(base);
		if (rows[i].queued)
			apply_patch(root, "analysis.gridQueued", rows[i].queued);
		if (rows[i].running)
			apply_patch(root, "analysis.gridRunning",
				    rows[i].running);
		if (rows[i].ratio)
			apply_patch(root, "analysis.grandRatio", rows[i].ratio);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct sca_scenario sc;
		parse_ok(root, &a, &sc, "a grid figures row");
		assert_near(sc.state.grid_queued, rows[i].want_q, 0);
		assert_near(sc.state.grid_running, rows[i].want_r, 0);
		json_decref(root);
		arena_free(&a);
	}
	/* a queue of another gshare adds nothing to the sums */
	json_t *root = load_text(base);
	apply_patch(root, "queues[1].jobs",
		    "{\"MC Simul\": {\"running\": 7, \"defined\": 9},"
		    " \"User Analysis\": {\"defined\": 1, \"assigned\": 2,"
		    " \"activated\": 3, \"starting\": 4, \"running\": 5,"
		    " \"transferring\": 100}}");
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sca_scenario sc;
	parse_ok(root, &a, &sc, "two gshares");
	assert_near(sc.state.grid_queued, 10, 0);
	assert_near(sc.state.grid_running, 15, 0);
	json_decref(root);
	arena_free(&a);

	/* the ratio and the counts together: which one would count? */
	root = load_text(base);
	apply_patch(root, "analysis.grandRatio", "1");
	apply_patch(root, "analysis.gridQueued", "1");
	apply_patch(root, "analysis.gridRunning", "1");
	arena_init(&a, ARENA_CAP);
	char err[512] = "";
	assert_int_equal(sca_parse_scenario(root, &a, &sc, err, sizeof(err)),
			 GB_EINVAL);
	assert_string_equal(err, "analysis.grandRatio: give grandRatio or "
				 "gridQueued and gridRunning, not both");
	json_decref(root);
	arena_free(&a);
}

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(errors); i++) {
		const struct err_case *e = &errors[i];
		json_t *root = load_text(base);
		apply_patch(root, e->path, e->value);
		if (strcmp(e->path, "task.taskType") == 0 && e->value &&
		    strcmp(e->value, "\"prod\"") == 0)
			json_object_set_new(json_object_get(root, "task"),
					    "gshare", json_string("x"));
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct sca_scenario sc;
		char err[512] = "";
		int rc = sca_parse_scenario(root, &a, &sc, err, sizeof(err));
		if (rc != e->code || strncmp(err, e->msg, strlen(e->msg)) != 0)
			fail_msg("%s: got %s '%s', expected %s '%s'", e->path,
				 gb_errname(rc), err, gb_errname(e->code),
				 e->msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* A production task in a file with "analysis" is refused. */
static void test_not_analysis(void **state)
{
	(void)state;
	json_t *root = load_text(base);
	json_t *t = json_object_get(root, "task");
	json_object_set_new(t, "taskType", json_string("prod"));
	json_object_set_new(t, "nucleus", json_string("N"));
	json_object_set_new(t, "gshare", json_string("MC Simul"));
	assert_false(sca_is_analysis_scenario(root));
	assert_true(scj_is_job_scenario(root));
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sca_scenario sc;
	char err[512] = "";
	assert_int_equal(sca_parse_scenario(root, &a, &sc, err, sizeof(err)),
			 GB_ERANGE);
	assert_non_null(strstr(err, "task.taskType: expected \"anal\""));
	/* and the production parser refuses the "analysis" key */
	struct scj_scenario js;
	assert_int_equal(scj_parse_scenario(root, &a, &js, err, sizeof(err)),
			 GB_EINVAL);
	assert_non_null(strstr(err, "analysis: unknown field"));
	json_decref(root);
	arena_free(&a);
}

/* ---- the grid file's "analysis" section ---------------------------------- */

static void test_analysis_grid(void **state)
{
	(void)state;
	json_t *j = load_text(
		"{\"users\": {\"alice\": {\"runningJobs\": 3, \"quotaGB\": 100,"
		"   \"quotaUsedGB\": 20}, \"bob\": {}},"
		" \"workingGroups\": {\"phys-higgs\": {\"runningCores\": 64,"
		"   \"quotaGB\": null}},"
		" \"shares\": {\"User Analysis\": {\"target\": 100,"
		"   \"usage\": 93}},"
		" \"taskClasses\": {\"42\": \"C\", \"7\": \"S\"}}");
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_analysis_grid g;
	char err[512] = "";
	int rc = scj_parse_analysis_grid(j, &a, &g, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s", err);
	assert_int_equal(g.nowners, 3);
	for (size_t i = 0; i < g.nowners; i++) {
		const struct gm_owner *o = &g.owners[i];
		if (strcmp(o->name, "alice") == 0) {
			assert_false(o->is_group);
			assert_near(o->running_jobs, 3, 0);
			assert_near(o->quota_gb, 100, 0);
			assert_near(o->quota_used_gb, 20, 0);
		} else if (strcmp(o->name, "bob") == 0) {
			assert_true(isnan(o->quota_gb)); /* unlimited */
		} else {
			assert_string_equal(o->name, "phys-higgs");
			assert_true(o->is_group);
			assert_near(o->running_cores, 64, 0);
			assert_true(isnan(o->quota_gb));
		}
	}
	assert_int_equal(g.nshares, 1);
	assert_near(g.shares[0].target, 100, 0);
	assert_near(g.shares[0].usage, 93, 0);
	assert_int_equal(g.nclasses, 2);
	assert_int_equal(g.classes[0].task_id, 7); /* sorted */
	assert_int_equal(g.classes[0].cls, AN_CLASS_S);
	assert_int_equal(g.classes[1].cls, AN_CLASS_C);
	json_decref(j);
	assert_int_equal(scj_parse_analysis_grid(NULL, &a, &g, err, sizeof(err)),
			 GB_OK);
	assert_int_equal(g.nowners + g.nshares + g.nclasses, 0);

	static const struct {
		const char *text;
		int code;
		const char *msg;
	} bad[] = {
		{"{\"users\": {\"alice\": {\"runningJobs\": -1}}}", GB_ERANGE,
		 "analysis.users[\"alice\"].runningJobs: "},
		{"{\"users\": {\"alice\": {\"running\": 1}}}", GB_EINVAL,
		 "analysis.users[\"alice\"].running: unknown field"},
		{"{\"workingGroups\": {\"g\": {\"quotaGB\": \"x\"}}}",
		 GB_ETYPE, "analysis.workingGroups[\"g\"].quotaGB: "},
		{"{\"shares\": {\"User Analysis\": {\"usage\": 3}}}",
		 GB_EMISSING, "analysis.shares[\"User Analysis\"].target: "
			      "missing"},
		{"{\"shares\": {\"X\": {\"target\": 0}}}", GB_ERANGE,
		 "analysis.shares[\"X\"].target: "},
		{"{\"taskClasses\": {\"x1\": \"A\"}}", GB_ERANGE,
		 "analysis.taskClasses[\"x1\"]: expected a task ID"},
		{"{\"taskClasses\": {\"5\": \"E\"}}", GB_ERANGE,
		 "analysis.taskClasses[\"5\"]: unknown value 'E'"},
		{"{\"taskClasses\": {\"5\": \"A\", \"05\": \"B\"}}", GB_EDUP,
		 "analysis.taskClasses: duplicate task ID 5"},
		{"{\"groups\": {}}", GB_EINVAL,
		 "analysis.groups: unknown field"},
		{"[]", GB_ETYPE, "analysis: expected object, got array"},
	};
	for (size_t i = 0; i < N(bad); i++) {
		j = load_text(bad[i].text);
		err[0] = '\0';
		rc = scj_parse_analysis_grid(j, &a, &g, err, sizeof(err));
		if (rc != bad[i].code ||
		    strncmp(err, bad[i].msg, strlen(bad[i].msg)) != 0)
			fail_msg("%s: got %s '%s', expected '%s'", bad[i].text,
				 gb_errname(rc), err, bad[i].msg);
		json_decref(j);
	}
	arena_free(&a);
}

/* The renderers refuse arguments that disagree. */
static void test_render_inconsistent(void **state)
{
	(void)state;
	struct md_analysis m;
	memset(&m, 0, sizeof(m));
	assert_null(rpa_decision_json(NULL));
	/* not throttled needs a decision over its queues */
	m.nqueues = 3;
	assert_null(rpa_decision_json(&m));
	/* throttled: the verdict alone, every job unassigned */
	m.nqueues = 0;
	m.throttle.throttled = 1;
	m.throttle.rule = "AJ-02";
	m.throttle.code = "running_jobs";
	json_t *j = rpa_decision_json(&m);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "decision")),
			    "throttled");
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_overload_numbers),
		cmocka_unit_test(test_valid_base),
		cmocka_unit_test(test_grid_figures),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_not_analysis),
		cmocka_unit_test(test_analysis_grid),
		cmocka_unit_test(test_render_inconsistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
