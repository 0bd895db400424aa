/*
** test_scenario_timeout.c — timeout scenarios (scenario_timeout.c) through
** etc/scenarios/timeout-rules.json: the rule that fires for each job with
** the age it compared and the limit it passed (TO-01..TO-11), the jobs a
** rule does not reach yet (next check), the exempt queues (TO-12) and fast
** rebrokerage (TO-13); the JSON and the table; parser errors as a table.
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "gb_error.h"
#include "explain/explain.h"
#include "explain/explain_print.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"
#include "explain/scenario_timeout.h"

#include "jsonpatch.h"

#define ARENA_CAP (16u << 20)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOW 1715675400LL /* 2024-05-14T08:30:00Z */
#define M 60.0
#define H 3600.0
#define D 86400.0

struct jexpect {
	long long job_id;
	const char *rule;      /* NULL: nothing fires */
	enum to_action action;
	double age, limit;     /* s, when a rule fires */
	long long next_in;     /* s after now, when nothing fires (0: skip) */
	const char *exempt;    /* TO-12 */
};

static const struct jexpect jobs[] = {
	{6000000101, "TO-01", TO_ACT_REASSIGN, H + M, H, 0, NULL},
	{6000000102, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000201, "TO-02", TO_ACT_REASSIGN, 4 * H + M, 4 * H, 0, NULL},
	{6000000202, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000301, "TO-03", TO_ACT_REASSIGN, 12 * H + M, 12 * H, 0, NULL},
	{6000000302, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000401, "TO-04", TO_ACT_KILL, 7 * D + M, 7 * D, 0, NULL},
	{6000000402, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000501, "TO-05", TO_ACT_REASSIGN, 2 * D + M, 2 * D, 0, NULL},
	{6000000502, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	/* TO-06: priority 900, last start 3 h ago, activated 5 h > 4 h */
	{6000000601, "TO-06", TO_ACT_REASSIGN, 5 * H, 4 * H, 0, NULL},
	{6000000602, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000701, "TO-07", TO_ACT_FAIL, 31 * M, 30 * M, 0, NULL},
	{6000000702, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000801, "TO-08", TO_ACT_KILL, 21 * D + M, 21 * D, 0, NULL},
	{6000000802, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000000901, "TO-09", TO_ACT_FAIL, 2 * H + M, 2 * H, 0, NULL},
	{6000000902, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	/* HEARTBEAT_TIMEOUT_hpc 6 h: heartbeat 3 h old, due in 3 h + 1 s */
	{6000000903, NULL, TO_ACT_NONE, 0, 0, 3 * 3600 + 1, NULL},
	{6000001001, "TO-10", TO_ACT_FAIL, 3 * H + M, 3 * H, 0, NULL},
	{6000001002, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000001101, "TO-11", TO_ACT_FAIL, 6 * D + M, 6 * D, 0, NULL},
	{6000001102, NULL, TO_ACT_NONE, 0, 0, 61, NULL},
	{6000001201, NULL, TO_ACT_NONE, 0, 0, 0, "paused"},
	{6000001202, NULL, TO_ACT_NONE, 0, 0, 0, "disableReassign"},
};

static void load(const char *path, struct arena *a, struct sct_scenario *sc,
		 json_t **root)
{
	char err[512] = "";
	*root = scn_read_file(path, err, sizeof(err));
	if (*root == NULL)
		fail_msg("%s", err);
	int rc = sct_parse_scenario(*root, a, sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s: %s", gb_errname(rc), err);
}

static void test_rules_file(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sct_scenario sc;
	struct sct_result r;
	json_t *root;
	load("etc/scenarios/timeout-rules.json", &a, &sc, &root);
	assert_true(sct_is_timeout_scenario(root));
	assert_false(scj_is_job_scenario(root));
	assert_false(sca_is_analysis_scenario(root));
	assert_true(json_is_string(json_object_get(root, "description")));
	assert_int_equal(sc.now, NOW);
	assert_int_equal(sct_run(&sc, &a, &r), GB_OK);
	assert_int_equal(sc.njobs, N(jobs));
	for (size_t i = 0; i < N(jobs); i++) {
		const struct jexpect *x = &jobs[i];
		const struct sct_job_result *g = &r.jobs[i];
		assert_int_equal(sc.jobs[i].j.job_id, x->job_id);
		if (x->rule) {
			if (!g->fired || strcmp(g->v.rule, x->rule) != 0)
				fail_msg("job %lld: %s, expected %s", x->job_id,
					 g->fired ? g->v.rule : "none",
					 x->rule);
			assert_int_equal(g->v.action, x->action);
			assert_near(g->v.age_s, x->age, 1e-12);
			assert_near(g->v.limit_s, x->limit, 1e-12);
			continue;
		}
		if (g->fired)
			fail_msg("job %lld: %s fired", x->job_id, g->v.rule);
		if (x->exempt) { /* TO-12 */
			assert_non_null(g->exempt);
			assert_string_equal(g->exempt, x->exempt);
		} else {
			assert_null(g->exempt);
			assert_true(g->has_next);
			assert_int_equal(g->next_at - NOW, x->next_in);
		}
	}
	/* TO-13: 900 > 3 x 200, > 0.3 x 1500, > 500: excess 300 */
	assert_int_equal(sc.nrebro, 2);
	assert_true(r.rebro[0].triggered);
	assert_int_equal(r.rebro[0].excess, 300);
	assert_near(r.rebro[0].ratio_limit, 600, 1e-12);
	assert_near(r.rebro[0].frac_limit, 450, 1e-12);
	assert_near(r.rebro[0].nqueue_limit, 500, 1e-12);
	/* no FAST_REBRO_THRESHOLD_NQUEUE_Data Derivations: never */
	assert_false(r.rebro[1].triggered);
	assert_true(isnan(r.rebro[1].nqueue_limit));

	json_t *j = sct_result_json(&sc, &r);
	assert_non_null(j);
	json_t *jj = json_object_get(j, "jobs");
	assert_int_equal(json_array_size(jj), N(jobs));
	json_t *first = json_array_get(jj, 0);
	assert_string_equal(json_string_value(json_object_get(first, "rule")),
			    "TO-01");
	assert_near(json_number_value(json_object_get(first, "ageHours")),
		    (H + M) / H, 1e-12);
	json_t *ex = json_array_get(jj, N(jobs) - 2);
	assert_string_equal(json_string_value(json_object_get(ex, "exempt")),
			    "TO-12: paused");
	json_t *rb = json_array_get(json_object_get(j, "rebro"), 1);
	assert_true(json_is_null(json_object_get(rb, "nQueueLimit")));
	json_decref(j);

	/* explain's text: a record per job a rule fires for, then the
	** offline part (the others' next checks, TO-13) */
	struct ex_result x;
	char err[512] = "";
	assert_int_equal(ex_run(root, &a, &x, err, sizeof(err)), GB_OK);
	assert_int_equal(x.nrecords, 11);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(exp_print(f, &x), GB_OK);
	fclose(f);
	assert_non_null(strstr(buf, "timeout 6000000601: reassign, chosen -, "));
	assert_non_null(strstr(buf, "\nrule: TO-06: waiting at a queue with "
				    "no recent start for 18000 s (5 h) > "
				    "limit 14400 s (4 h)\ndecision: "
				    "reassign\n"));
	const char *off = strstr(buf, "\n===== offline only (not in the "
				      "records): ");
	assert_non_null(off);
	assert_true(strstr(off, "exempt (TO-12: disableReassign)") > off);
	assert_true(strstr(off, "6000000903   running      HPC_QUEUE        "
				"next check 2024-05-14T11:30:01Z (in 10801 "
				"s)\n") > off);
	assert_true(strstr(off, "TO-13 triggered, rebroker 300 jobs") > off);
	assert_true(strstr(off, "summary: 11 of 25 jobs timed out, 2 "
				"exempt") > off);
	/* a job a rule fires for is the record's, not the offline part's */
	assert_null(strstr(off, "6000000601"));
	free(buf);
	json_decref(root);
	arena_free(&a);
}

static const char *base =
	"{\"kind\": \"timeout\", \"now\": \"2024-05-14T08:30:00Z\","
	" \"queues\": {\"Q\": {\"status\": \"paused\", \"lastStart\": null,"
	"   \"transtimehi\": 1, \"workflow\": \"w\"}},"
	" \"jobs\": [{\"jobID\": 1, \"status\": \"running\", \"queue\": \"Q\","
	"   \"statusSince\": \"2024-05-14T00:00:00Z\","
	"   \"lastHeartbeat\": null, \"jobSubStatus\": \"x\"}],"
	" \"rebro\": [{\"queue\": \"Q\", \"gshare\": \"\", \"nQueue\": 1}]}";

struct err_case {
	const char *path, *value;
	int code;
	const char *msg;
};

static const struct err_case errors[] = {
	{"kind", "\"jobs\"", GB_ERANGE, "kind: expected \"timeout\""},
	{"now", NULL, GB_EMISSING, "now: missing"},
	{"jobs", NULL, GB_EMISSING, "jobs: missing"},
	{"extra", "1", GB_EINVAL, "extra: unknown field"},
	{"queues.Q.status", "\"sleepy\"", GB_ERANGE,
	 "queues[\"Q\"].status: unknown value 'sleepy'"},
	{"queues.Q.lastStart", "\"yesterday\"", GB_ERANGE,
	 "queues[\"Q\"].lastStart: expected an RFC 3339 time"},
	{"queues.Q.transtimelo", "-1", GB_ERANGE, "queues[\"Q\"].transtimelo: "},
	{"jobs[0].status", "\"runing\"", GB_ERANGE,
	 "jobs[0].status: unknown status 'runing' (expected pending, "},
	{"jobs[0].queue", "\"X\"", GB_ENOTFOUND,
	 "jobs[0].queue: no queue \"X\" in queues"},
	{"jobs[0].statusSince", NULL, GB_EMISSING, "jobs[0].statusSince: missing"},
	{"jobs[1]", "{\"jobID\": 1, \"status\": \"sent\", \"statusSince\":"
		    " \"2024-05-14T00:00:00Z\"}",
	 GB_EDUP, "jobs[1].jobID: duplicate jobID '1'"},
	{"rebro[0].queue", "\"Z\"", GB_ENOTFOUND,
	 "rebro[0].queue: no queue \"Z\" in queues"},
	{"rebro[0].nRun", "-3", GB_ERANGE, "rebro[0].nRun: "},
	{"params.NO_SUCH_PARAM", "1", GB_ENOTFOUND, "params"},
};

static void test_parse(void **state)
{
	(void)state;
	json_t *root = load_text(base);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct sct_scenario sc;
	char err[512] = "";
	int rc = sct_parse_scenario(root, &a, &sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s", err);
	json_decref(root);
	assert_true(sc.queues[0].q.paused);
	assert_int_equal(sc.queues[0].q.last_start, 0); /* never */
	assert_string_equal(sc.jobs[0].j.workflow, "w");
	assert_true(sc.jobs[0].j.own_stageout);
	assert_int_equal(sc.jobs[0].j.created_at, sc.jobs[0].j.status_since);
	assert_int_equal(sc.jobs[0].j.last_heartbeat, 0);
	arena_free(&a);

	for (size_t i = 0; i < N(errors); i++) {
		const struct err_case *e = &errors[i];
		root = load_text(base);
		if (strncmp(e->path, "params.", 7) == 0)
			json_object_set_new(root, "params", json_object());
		apply_patch(root, e->path, e->value);
		arena_init(&a, ARENA_CAP);
		err[0] = '\0';
		rc = sct_parse_scenario(root, &a, &sc, err, sizeof(err));
		if (rc != e->code || strncmp(err, e->msg, strlen(e->msg)) != 0)
			fail_msg("%s: got %s '%s', expected %s '%s'", e->path,
				 gb_errname(rc), err, gb_errname(e->code),
				 e->msg);
		json_decref(root);
		arena_free(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_file),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
