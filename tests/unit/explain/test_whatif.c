/*
** test_whatif.c — what-if on one decision (explain/whatif.h): every NAME
** form parsed and the bad ones refused; sets applied to the example
** scenarios of every kind (and refused where they do not fit); the diff of
** a scenario and its changed copy with the numbers the rules compared
** (TB-04's threshold against UKI-NORTHGRID-MAN-HEP's and AGLT2's space,
** PJ-04 for an offline queue and the jobs moving to the others, PR-01's
** group share in the TQ priorities, TO-02's limit); the cheap per-record
** check, the digest, drops by rule, and the JSON and text forms.
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "explain/explain.h"
#include "explain/scenario.h"
#include "explain/whatif.h"
#include "gb_error.h"
#include "report/decrec.h"

#define ARENA_CAP (1024u << 20)

/* ---- helpers ------------------------------------------------------------ */

static json_t *load(const char *file)
{
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", file);
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	return root;
}

/* The member at `path` ("queues/1/status": steps apart by '/', array
** indexes as numbers), or NULL. */
static json_t *get(json_t *root, const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *cur = root;
	char *save = NULL;
	for (char *p = strtok_r(buf, "/", &save); p && cur;
	     p = strtok_r(NULL, "/", &save))
		cur = json_is_array(cur)
			      ? json_array_get(cur, strtoul(p, NULL, 10))
			      : json_object_get(cur, p);
	return cur;
}

/* A scenario decided as written and with `sets`, and their diff. */
struct wi {
	json_t *root, *changed;
	struct arena ab, aa, ad;
	struct ex_result b, a;
	struct exw_diff d;
};

static void wi_run(struct wi *w, const char *file, const char *const *args,
		   size_t n)
{
	char err[1024] = "";
	struct exw_set sets[8];
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		if (exw_parse_set(args[i], &sets[i], err, sizeof(err)) != GB_OK)
			fail_msg("%s", err);
	w->root = load(file);
	w->changed = json_deep_copy(w->root);
	assert_non_null(w->changed);
	if (exw_apply(w->changed, sets, n, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	arena_init(&w->ab, ARENA_CAP);
	arena_init(&w->aa, ARENA_CAP);
	arena_init(&w->ad, ARENA_CAP);
	if (ex_run(w->root, &w->ab, &w->b, err, sizeof(err)) != GB_OK ||
	    ex_run(w->changed, &w->aa, &w->a, err, sizeof(err)) != GB_OK)
		fail_msg("%s: %s", file, err);
	if (exw_diff(&w->b, &w->a, &w->ad, &w->d, err, sizeof(err)) != GB_OK)
		fail_msg("%s: %s", file, err);
}

static void wi_free(struct wi *w)
{
	arena_free(&w->ad);
	arena_free(&w->aa);
	arena_free(&w->ab);
	json_decref(w->changed);
	json_decref(w->root);
}

static const struct exw_cand *cand(const struct exw_decision *x,
				   const char *name)
{
	for (size_t i = 0; i < x->ncands; i++)
		if (strcmp(x->cands[i].name, name) == 0)
			return &x->cands[i];
	fail_msg("no changed candidate %s", name);
	return NULL;
}

static const struct exw_decision *decision(const struct exw_diff *d,
					   const char *subject)
{
	for (size_t i = 0; i < d->ndecisions; i++)
		if (strcmp(d->decisions[i].subject, subject) == 0)
			return &d->decisions[i];
	fail_msg("no decision %s", subject);
	return NULL;
}

static void str_eq(const char *got, const char *want)
{
	if (got == NULL || want == NULL) {
		if (got != want)
			fail_msg("got %s, expected %s", got ? got : "NULL",
				 want ? want : "NULL");
		return;
	}
	assert_string_equal(got, want);
}

/* ---- parsing ------------------------------------------------------------ */

static const struct parse_case {
	const char *arg;
	int rc;
	enum exw_target target;
	const char *path;
	const char *value;
	int value_json;
	const char *err; /* in the message, when rc is an error */
} parse_cases[] = {
	{"DISK_THRESHOLD_MC Reco=150000", GB_OK, EXW_PARAM,
	 "DISK_THRESHOLD_MC Reco", "150000", 1, NULL},
	{"NW_QUEUE_IMPORTANCE=0.25", GB_OK, EXW_PARAM, "NW_QUEUE_IMPORTANCE",
	 "0.25", 1, NULL},
	{"A=b=c", GB_OK, EXW_PARAM, "A", "b=c", 0, NULL},
	{"A=", GB_OK, EXW_PARAM, "A", "", 0, NULL},
	{"A=null", GB_OK, EXW_PARAM, "A", "null", 1, NULL},
	{"A=[1]", GB_OK, EXW_PARAM, "A", "[1]", 0, NULL},
	{"queue.AGLT2_UCORE.status=offline", GB_OK, EXW_QUEUE,
	 "AGLT2_UCORE.status", "offline", 0, NULL},
	{"queue.AGLT2_UCORE.status=\"offline\"", GB_OK, EXW_QUEUE,
	 "AGLT2_UCORE.status", "\"offline\"", 1, NULL},
	{"queue.MWT2_UCORE.jobs.MC Simul.running=5000", GB_OK, EXW_QUEUE,
	 "MWT2_UCORE.jobs.MC Simul.running", "5000", 1, NULL},
	{"nucleus.CERN-PROD.RW=5000", GB_OK, EXW_NUCLEUS, "CERN-PROD.RW",
	 "5000", 1, NULL},
	{"group.lhcb_mc.jobSharing=false", GB_OK, EXW_GROUP,
	 "lhcb_mc.jobSharing", "false", 1, NULL},
	{"share.lhcb_user=20000", GB_OK, EXW_GROUP, "lhcb_user.share", "20000",
	 1, NULL},
	{"tq.12.cpuTime=40000", GB_OK, EXW_TQ, "12.cpuTime", "40000", 1, NULL},
	{"corrections.GroupsInstance.WeekSlice.MaxCorrection=3", GB_OK,
	 EXW_CORRECTION, "GroupsInstance.WeekSlice.MaxCorrection", "3", 1,
	 NULL},
	{"corrections.enabled=false", GB_OK, EXW_CORRECTION, "enabled", "false",
	 1, NULL},
	/* bad ones */
	{"", GB_EINVAL, 0, NULL, NULL, 0, "expected NAME=VALUE"},
	{"DISK_THRESHOLD", GB_EINVAL, 0, NULL, NULL, 0, "expected NAME=VALUE"},
	{"=5", GB_EINVAL, 0, NULL, NULL, 0, "expected NAME=VALUE"},
	{"queue.AGLT2_UCORE=offline", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected queue.NAME.FIELD"},
	{"queue..status=offline", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected queue.NAME.FIELD"},
	{"queue.X.=offline", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected queue.NAME.FIELD"},
	{"queue.X.a..b=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected queue.NAME.FIELD"},
	{"nucleus.=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected nucleus.NAME.FIELD"},
	{"group.lhcb_mc=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected group.NAME.FIELD"},
	{"share.=1", GB_EINVAL, 0, NULL, NULL, 0, "expected share.GROUP"},
	{"share.a.b=1", GB_EINVAL, 0, NULL, NULL, 0, "expected share.GROUP"},
	{"tq.abc.cpuTime=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "ID a positive integer"},
	{"tq.0.cpuTime=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "ID a positive integer"},
	{"tq.-1.cpuTime=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "ID a positive integer"},
	{"tq.12=1", GB_EINVAL, 0, NULL, NULL, 0, "expected tq.ID.FIELD"},
	{"corrections.=1", GB_EINVAL, 0, NULL, NULL, 0,
	 "expected corrections.PATH"},
};

static void test_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(*parse_cases);
	     i++) {
		const struct parse_case *c = &parse_cases[i];
		struct exw_set s;
		char err[256] = "";
		int rc = exw_parse_set(c->arg, &s, err, sizeof(err));
		if (rc != c->rc)
			fail_msg("'%s': %s, expected %s (%s)", c->arg,
				 gb_errname(rc), gb_errname(c->rc), err);
		if (rc != GB_OK) {
			if (strstr(err, c->err) == NULL)
				fail_msg("'%s': '%s' lacks '%s'", c->arg, err,
					 c->err);
			continue;
		}
		assert_int_equal(s.target, c->target);
		assert_string_equal(s.path, c->path);
		assert_string_equal(s.value, c->value);
		assert_int_equal(s.value_json, c->value_json);
		assert_string_equal(s.arg, c->arg);
	}
	/* too long; NULL */
	char big[EXW_ARG_MAX + 8];
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[3] = '=';
	struct exw_set s;
	char err[256];
	assert_int_equal(exw_parse_set(big, &s, err, sizeof(err)), GB_ETOOBIG);
	assert_int_equal(exw_parse_set(NULL, &s, err, sizeof(err)), GB_EINVAL);
	assert_string_equal(exw_target_name(EXW_CORRECTION), "corrections");
}

/* ---- applying ----------------------------------------------------------- */

static const struct apply_case {
	const char *file; /* in etc/scenarios, or inline JSON with '{' */
	const char *arg;
	int rc;
	const char *where; /* get() path of the member set */
	const char *want;  /* its JSON value after, or the error's words */
} apply_cases[] = {
	/* task */
	{"task-assign.json", "DISK_THRESHOLD_MC Reco=130000", GB_OK,
	 "params/DISK_THRESHOLD_MC Reco", "130000"},
	{"task-assign.json", "nucleus.AGLT2.RW=5000", GB_OK, "nuclei/4/RW",
	 "5000"},
	{"task-assign.json",
	 "nucleus.UKI-NORTHGRID-MAN-HEP.storages.UKI-NORTHGRID-MAN-HEP_"
	 "DATADISK.spaceFree=9000000",
	 GB_OK, "nuclei/5/storages/0/spaceFree", "9000000"},
	{"task-assign.json", "nucleus.AGLT2.storages.0.tape=true", GB_OK,
	 "nuclei/4/storages/0/tape", "true"},
	{"task-assign.json", "nucleus.TAIWAN-LCG2.status=ACTIVE", GB_OK,
	 "nuclei/6/status", "\"ACTIVE\""},
	{"task-assign.json", "nucleus.NOPE.RW=1", GB_ENOTFOUND, NULL,
	 "no nucleus 'NOPE' in this task scenario"},
	{"task-assign.json", "nucleus.AGLT2.storages.NOPE.spaceFree=1",
	 GB_ENOTFOUND, NULL, "has no 'NOPE'"},
	{"task-assign.json", "nucleus.AGLT2.RW.x=1", GB_ETYPE, NULL,
	 "'RW' is not an object or array"},
	{"task-assign.json", "queue.X.status=offline", GB_EINVAL, NULL,
	 "queue.NAME.FIELD is for job, analysis and timeout scenarios; this "
	 "is a task scenario"},
	{"task-assign.json", "share.lhcb_user=1", GB_EINVAL, NULL,
	 "is for match scenarios"},
	{"task-assign.json", "corrections.enabled=false", GB_EINVAL, NULL,
	 "is for match scenarios"},
	{"task-assign.json", "NOT_A_PARAMETER=1", GB_ENOTFOUND, NULL,
	 "set 1 (NOT_A_PARAMETER=1): unknown parameter 'NOT_A_PARAMETER'"},
	/* jobs and analysis */
	{"jobs-assign.json", "queue.AGLT2_UCORE.status=offline", GB_OK,
	 "queues/1/status", "\"offline\""},
	{"jobs-assign.json", "queue.MWT2_UCORE.jobs.MC Simul.running=5000",
	 GB_OK, "queues/2/jobs/MC Simul/running", "5000"},
	{"jobs-assign.json", "queue.MWT2_UCORE.storage.spaceFree=100", GB_OK,
	 "queues/2/storage/spaceFree", "100"},
	{"jobs-assign.json", "NQUEUED_SAT_CAP=10", GB_OK,
	 "params/NQUEUED_SAT_CAP", "10"},
	{"jobs-assign.json", "queue.MWT2_UCORE.jobs.MC Nope.running=1",
	 GB_ENOTFOUND, NULL, "queue 'MWT2_UCORE' has no 'MC Nope'"},
	{"jobs-assign.json", "queue.NOPE.status=offline", GB_ENOTFOUND, NULL,
	 "no queue 'NOPE' in this job scenario"},
	{"jobs-assign.json", "nucleus.X.RW=1", GB_EINVAL, NULL,
	 "is for task scenarios; this is a job scenario"},
	{"analysis-assign.json", "queue.ANALY_AGLT2.status=offline", GB_OK,
	 "queues/1/status", "\"offline\""},
	{"analysis-assign.json", "tq.1.cpuTime=1", GB_EINVAL, NULL,
	 "this is a analysis scenario"},
	/* timeout */
	{"timeout-rules.json", "TIMEOUT_defined=3", GB_OK,
	 "params/TIMEOUT_defined", "3"},
	{"timeout-rules.json", "queue.BNL_STUCK.status=paused", GB_OK,
	 "queues/BNL_STUCK/status", "\"paused\""},
	{"timeout-rules.json", "queue.NOPE.status=paused", GB_ENOTFOUND, NULL,
	 "no queue 'NOPE' in this timeout scenario"},
	/* match */
	{"match-assign.json", "share.lhcb_user=20000", GB_OK, "groups/0/share",
	 "20000"},
	{"match-assign.json", "group.lhcb_mc.jobSharing=false", GB_OK,
	 "groups/1/jobSharing", "false"},
	{"match-assign.json", "tq.12.cpuTime=40000", GB_OK,
	 "taskQueues/11/cpuTime", "40000"},
	{"match-assign.json",
	 "corrections.GroupsInstance.WeekSlice.MaxCorrection=3", GB_OK,
	 "shareCorrections/WMSHistory/GroupsInstance/WeekSlice/MaxCorrection",
	 "3"},
	{"match-assign.json", "corrections.enabled=false", GB_OK,
	 "shareCorrections/enabled", "false"},
	{"match-assign.json", "share.nobody=1", GB_ENOTFOUND, NULL,
	 "no group 'nobody' in this match scenario"},
	{"match-assign.json", "tq.99.cpuTime=1", GB_ENOTFOUND, NULL,
	 "no task queue '99'"},
	{"match-assign.json",
	 "corrections.NoInstance.WeekSlice.MaxCorrection=3", GB_ENOTFOUND, NULL,
	 "has no 'NoInstance'"},
	{"match-assign.json", "DISK_THRESHOLD=1", GB_EINVAL, NULL,
	 "a match scenario has no parameters"},
	/* shapes no example has */
	{"{\"kind\": \"timeout\", \"queues\": {\"A\": {}, \"A.B\": "
	 "{\"status\": \"online\"}}}",
	 "queue.A.B.status=paused", GB_OK, "queues/A.B/status", "\"paused\""},
	{"{\"taskQueues\": [], \"shareCorrections\": {\"WMSHistory\": {\"G\": "
	 "{\"MaxGlobalCorrection\": 3}}}}",
	 "corrections.G.MaxGlobalCorrectionFactor=2", GB_OK,
	 "shareCorrections/WMSHistory/G/MaxGlobalCorrection", "2"},
	{"{\"taskQueues\": []}", "corrections.enabled=true", GB_ENOTFOUND, NULL,
	 "has no \"shareCorrections\""},
	{"{\"nuclei\": [], \"params\": 3}", "DISK_THRESHOLD=1", GB_ETYPE, NULL,
	 "\"params\" is not an object"},
	{"{\"nuclei\": []}", "DISK_THRESHOLD=1", GB_OK, "params/DISK_THRESHOLD",
	 "1"},
};

static void test_apply(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(apply_cases) / sizeof(*apply_cases);
	     i++) {
		const struct apply_case *c = &apply_cases[i];
		struct exw_set s;
		char err[1024] = "";
		assert_int_equal(exw_parse_set(c->arg, &s, err, sizeof(err)),
				 GB_OK);
		json_t *root = c->file[0] == '{' ? json_loads(c->file, 0, NULL)
						 : load(c->file);
		assert_non_null(root);
		int rc = exw_apply(root, &s, 1, err, sizeof(err));
		if (rc != c->rc)
			fail_msg("%s '%s': %s, expected %s (%s)", c->file,
				 c->arg, gb_errname(rc), gb_errname(c->rc),
				 err);
		if (rc != GB_OK) {
			if (strstr(err, c->want) == NULL)
				fail_msg("'%s': '%s' lacks '%s'", c->arg, err,
					 c->want);
			json_decref(root);
			continue;
		}
		json_t *want = json_loads(c->want, JSON_DECODE_ANY, NULL);
		json_t *got = get(root, c->where);
		if (!json_equal(got, want)) {
			char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
			fail_msg("%s '%s': %s is %s, expected %s", c->file,
				 c->arg, c->where, g ? g : "absent", c->want);
		}
		json_decref(want);
		/* an example file changed so still decides */
		if (c->file[0] != '{') {
			struct arena a;
			struct ex_result res;
			arena_init(&a, ARENA_CAP);
			if (ex_run(root, &a, &res, err, sizeof(err)) != GB_OK)
				fail_msg("%s '%s': %s", c->file, c->arg, err);
			arena_free(&a);
		}
		json_decref(root);
	}
}

/* Sets apply in order, and the one that fails is named. */
static void test_apply_many(void **state)
{
	(void)state;
	const char *args[] = {"share.lhcb_user=1", "share.lhcb_user=2",
			      "share.nobody=3"};
	struct exw_set s[3];
	char err[1024];
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(
			exw_parse_set(args[i], &s[i], err, sizeof(err)), GB_OK);
	json_t *root = load("match-assign.json");
	assert_int_equal(exw_apply(root, s, 2, err, sizeof(err)), GB_OK);
	assert_int_equal(json_integer_value(get(root, "groups/0/share")), 2);
	assert_int_equal(exw_apply(root, s, 3, err, sizeof(err)), GB_ENOTFOUND);
	assert_non_null(strstr(err, "set 3 (share.nobody=3): "));
	assert_int_equal(exw_apply(NULL, s, 1, err, sizeof(err)), GB_EINVAL);
	json_decref(root);
}

/* ---- diffs, with the rules' numbers ------------------------------------- */

/* TB-04: UKI-NORTHGRID-MAN-HEP's free+expired-expOut x RW is 135790 GB,
** dropped under the scenario's DISK_THRESHOLD_MC Reco 150000 (<=); at
** 135789 it passes TB-04 and meets TB-07 (none of the input local), at
** 135790 it is still dropped by TB-04. */
static void test_task_threshold_lowered(void **state)
{
	(void)state;
	struct wi w;
	const char *lower[] = {"DISK_THRESHOLD_MC Reco=135789"};
	wi_run(&w, "task-assign.json", lower, 1);
	assert_int_equal(w.d.kind, EX_TASK);
	assert_int_equal(w.d.ndecisions, 1);
	const struct exw_decision *x = &w.d.decisions[0];
	str_eq(x->subject, "36100001");
	str_eq(x->outcome[0], "assigned");
	str_eq(x->outcome[1], "assigned");
	str_eq(x->chosen[0], "AGLT2");
	str_eq(x->chosen[1], "AGLT2");
	assert_int_equal(x->changed, EXW_DIGEST | EXW_CANDIDATES);
	assert_int_equal(x->ncands, 1);
	const struct exw_cand *c = cand(x, "UKI-NORTHGRID-MAN-HEP");
	str_eq(c->verdict[0], "dropped at space");
	str_eq(c->rule[0], "TB-04");
	str_eq(c->code[0], "space");
	assert_non_null(strstr(c->detail[0], "= 135790 GB <= DISK_THRESHOLD "
					     "150000 GB (RW 420)"));
	str_eq(c->verdict[1], "dropped at locality");
	str_eq(c->rule[1], "TB-07");
	str_eq(c->code[1], "input_size");
	assert_true(isnan(c->weight[0]) && isnan(c->weight[1]));
	assert_int_equal(c->jobs[0], -1);
	wi_free(&w);

	const char *same[] = {"DISK_THRESHOLD_MC Reco=135790"};
	wi_run(&w, "task-assign.json", same, 1);
	/* the threshold is in the reason's numbers: the digest moves, no
	** verdict does */
	assert_int_equal(w.d.changed, EXW_DIGEST);
	assert_int_equal(w.d.decisions[0].ncands, 0);
	wi_free(&w);
}

/* Raised to 744350 GB, AGLT2's own free+expired-expOut x RW (744350 GB,
** RW 1300), TB-04 drops AGLT2, the chosen nucleus: the draw goes
** elsewhere. UKI-NORTHGRID-MAN-HEP stays dropped by TB-04. */
static void test_task_threshold_raised(void **state)
{
	(void)state;
	struct wi w;
	const char *raise[] = {"DISK_THRESHOLD_MC Reco=744350"};
	wi_run(&w, "task-assign.json", raise, 1);
	const struct exw_decision *x = &w.d.decisions[0];
	str_eq(x->chosen[0], "AGLT2");
	assert_non_null(x->chosen[1]);
	assert_string_not_equal(x->chosen[1], "AGLT2");
	assert_true(x->changed & EXW_CHOSEN);
	assert_false(x->changed & EXW_OUTCOME);
	assert_int_equal(x->ncands, 1);
	const struct exw_cand *c = cand(x, "AGLT2");
	str_eq(c->verdict[0], "kept");
	assert_near(c->weight[0], 2.38782051282e-5, 1e-9);
	str_eq(c->verdict[1], "dropped at space");
	str_eq(c->rule[1], "TB-04");
	assert_non_null(strstr(c->detail[1], "AGLT2_DATADISK: free+expired-"
					     "expOut x RW = 744350 GB <= "
					     "DISK_THRESHOLD 744350 GB"));
	assert_true(isnan(c->weight[1]));
	wi_free(&w);

	const char *below[] = {"DISK_THRESHOLD_MC Reco=744349"};
	wi_run(&w, "task-assign.json", below, 1);
	assert_false(w.d.changed & (EXW_CHOSEN | EXW_CANDIDATES));
	wi_free(&w);
}

/* PJ-04: AGLT2_UCORE offline leaves the five survivors' weights as they
** were; its 5 of the 20 jobs go to the others by the same seeded draws. */
static void test_jobs_queue_offline(void **state)
{
	(void)state;
	struct wi w;
	const char *off[] = {"queue.AGLT2_UCORE.status=offline"};
	wi_run(&w, "jobs-assign.json", off, 1);
	const struct exw_decision *x = &w.d.decisions[0];
	str_eq(x->outcome[1], "assigned");
	str_eq(x->chosen[0], "BNL_PROD_UCORE");
	str_eq(x->chosen[1], "BNL_PROD_UCORE");
	assert_int_equal(x->ncands, 4);
	const struct exw_cand *c = cand(x, "AGLT2_UCORE");
	str_eq(c->verdict[0], "kept");
	assert_near(c->weight[0], 5.46818181818, 1e-9);
	assert_int_equal(c->jobs[0], 5);
	str_eq(c->verdict[1], "dropped at status");
	str_eq(c->rule[1], "PJ-04");
	str_eq(c->code[1], "status");
	str_eq(c->detail[1], "status offline is not online");
	assert_int_equal(c->jobs[1], 0);
	assert_null(c->rule[0]);
	static const struct {
		const char *q;
		double w;
		long long before, after;
	} moved[] = {{"BNL_PROD_UCORE", 10.0125, 7, 10},
		     {"MWT2_UCORE", 3.70253164557, 2, 3},
		     {"SWT2_CPB_UCORE", 3.40090090090, 4, 5}};
	long long total = 0;
	for (size_t i = 0; i < 3; i++) {
		c = cand(x, moved[i].q);
		str_eq(c->verdict[0], "kept");
		str_eq(c->verdict[1], "kept");
		assert_near(c->weight[0], moved[i].w, 1e-9);
		assert_near(c->weight[1], moved[i].w, 1e-9);
		assert_int_equal(c->jobs[0], moved[i].before);
		assert_int_equal(c->jobs[1], moved[i].after);
		total += c->jobs[1];
	}
	assert_int_equal(total, 18); /* NET2_UCORE keeps its 2 */
	wi_free(&w);
}

/* AJ-07 for the analysis brokerage: ANALY_AGLT2 offline, its 8 jobs go
** to ANALY_MWT2 (12), which is now the best queue. */
static void test_analysis_queue_offline(void **state)
{
	(void)state;
	struct wi w;
	const char *off[] = {"queue.ANALY_AGLT2.status=offline"};
	wi_run(&w, "analysis-assign.json", off, 1);
	const struct exw_decision *x = &w.d.decisions[0];
	str_eq(x->chosen[0], "ANALY_AGLT2");
	str_eq(x->chosen[1], "ANALY_MWT2");
	const struct exw_cand *c = cand(x, "ANALY_AGLT2");
	str_eq(c->rule[1], "AJ-07");
	assert_int_equal(c->jobs[0], 8);
	c = cand(x, "ANALY_MWT2");
	assert_int_equal(c->jobs[0], 4);
	assert_int_equal(c->jobs[1], 12);
	wi_free(&w);
}

/* PR-01..PR-03: lhcb_user's share 10000 -> 20000 doubles alice's and
** bob's TQ priorities (TQ 11: 20000 / 2 users x 7/46 = 1521.74); lhcb_mc
** (TQ 1) and lhcb_data (TQ 2) keep theirs and are not listed. */
static void test_match_share(void **state)
{
	(void)state;
	struct wi w;
	const char *share[] = {"share.lhcb_user=20000"};
	wi_run(&w, "match-assign.json", share, 1);
	assert_int_equal(w.d.kind, EX_MATCH);
	const struct exw_decision *x = &w.d.decisions[0];
	str_eq(x->outcome[0], "matched");
	str_eq(x->outcome[1], "matched");
	str_eq(x->chosen[1], "1101");
	str_eq(x->rule[1], "TQ-10");
	str_eq(x->code[1], "matched");
	assert_int_equal(x->ncands, 11);
	const struct exw_cand *c = cand(x, "TQ 11");
	str_eq(c->verdict[0], "chosen");
	str_eq(c->verdict[1], "chosen");
	assert_near(c->weight[0], 5000.0 * 7 / 46, 1e-12);
	assert_near(c->weight[1], 10000.0 * 7 / 46, 1e-12);
	c = cand(x, "TQ 13");
	str_eq(c->verdict[0], "lower CPU time");
	assert_near(c->weight[1], 10000.0 * 15 / 46, 1e-12);
	c = cand(x, "TQ 3");
	str_eq(c->verdict[0], "rejected by owner_dn");
	str_eq(c->rule[0], "TQ-04");
	str_eq(c->code[0], "owner_dn");
	assert_near(c->weight[0], 5000, 1e-12);
	assert_near(c->weight[1], 10000, 1e-12);
	for (size_t i = 0; i < x->ncands; i++) {
		assert_string_not_equal(x->cands[i].name, "TQ 1");
		assert_string_not_equal(x->cands[i].name, "TQ 2");
	}
	wi_free(&w);
}

/* TO-02: TIMEOUT_defined 4 h -> 3 h fires for job 6000000202 (defined
** 3 h 59 min: none -> reassign) and keeps 6000000201's reassign with the
** new limit; 5 h lets 6000000201 (4 h 1 min) go. */
static void test_timeout_limit(void **state)
{
	(void)state;
	struct wi w;
	const char *three[] = {"TIMEOUT_defined=3"};
	wi_run(&w, "timeout-rules.json", three, 1);
	assert_int_equal(w.d.kind, EX_TIMEOUT);
	assert_int_equal(w.d.ndecisions, w.b.nrecords + 1);
	const struct exw_decision *x = decision(&w.d, "6000000202");
	str_eq(x->outcome[0], "none");
	str_eq(x->outcome[1], "reassign");
	assert_null(x->rule[0]);
	str_eq(x->rule[1], "TO-02");
	str_eq(x->detail[1], "defined for 14340 s, limit 10800 s");
	assert_string_equal(x->digest[0], "");
	assert_int_equal(strlen(x->digest[1]), 64);
	assert_true(x->changed & EXW_OUTCOME);
	x = decision(&w.d, "6000000201");
	str_eq(x->outcome[0], "reassign");
	str_eq(x->outcome[1], "reassign");
	str_eq(x->detail[0], "defined for 14460 s, limit 14400 s");
	str_eq(x->detail[1], "defined for 14460 s, limit 10800 s");
	assert_int_equal(x->changed, EXW_DIGEST);
	size_t changed = 0;
	for (size_t i = 0; i < w.d.ndecisions; i++)
		changed += w.d.decisions[i].changed != 0;
	assert_int_equal(changed, 2);
	wi_free(&w);

	const char *five[] = {"TIMEOUT_defined=5"};
	wi_run(&w, "timeout-rules.json", five, 1);
	x = decision(&w.d, "6000000201");
	str_eq(x->outcome[1], "none");
	str_eq(x->detail[0], "defined for 14460 s, limit 14400 s");
	assert_null(x->rule[1]);
	assert_int_equal(w.a.nrecords, w.b.nrecords - 1);
	wi_free(&w);
}

/* The corrector's MaxCorrection: match-corrections.json's lhcb_data
** week correction 5/3 is clamped to 1 with MaxCorrection 1, so its TQ 2
** gets 2000 x 1 / 2 TQs = 1000 (1533.33 before). */
static void test_match_correction(void **state)
{
	(void)state;
	struct wi w;
	const char *corr[] = {
		"corrections.GroupsInstance.WeekSlice.MaxCorrection=1"};
	wi_run(&w, "match-corrections.json", corr, 1);
	const struct exw_cand *c = cand(&w.d.decisions[0], "TQ 2");
	assert_near(c->weight[0], 2000.0 * 23 / 15 / 2, 1e-9);
	assert_near(c->weight[1], 1000, 1e-9);
	wi_free(&w);
}

/* No change: nothing differs, not even the digest. */
static void test_no_change(void **state)
{
	(void)state;
	static const char *const files[] = {"task-assign.json",
					    "jobs-assign.json",
					    "analysis-throttled.json",
					    "match-assign.json",
					    "timeout-rules.json"};
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		struct wi w;
		wi_run(&w, files[i], NULL, 0);
		assert_int_equal(w.d.changed, 0);
		assert_true(w.d.ndecisions >= 1);
		for (size_t k = 0; k < w.d.ndecisions; k++)
			assert_string_equal(w.d.decisions[k].digest[0],
					    w.d.decisions[k].digest[1]);
		wi_free(&w);
	}
}

/* Two runs of different kinds are no diff. */
static void test_diff_kinds(void **state)
{
	(void)state;
	struct wi w;
	wi_run(&w, "task-assign.json", NULL, 0);
	struct wi v;
	wi_run(&v, "jobs-assign.json", NULL, 0);
	struct exw_diff d;
	char err[256];
	assert_int_equal(exw_diff(&w.b, &v.a, &w.ad, &d, err, sizeof(err)),
			 GB_EINVAL);
	assert_non_null(strstr(err, "a task run and a jobs run"));
	wi_free(&v);
	wi_free(&w);
}

/* ---- per record --------------------------------------------------------- */

static void test_record_checks(void **state)
{
	(void)state;
	struct wi w;
	const char *raise[] = {"DISK_THRESHOLD_MC Reco=744350"};
	wi_run(&w, "task-assign.json", raise, 1);
	const struct ex_record *b = &w.b.records[0], *a = &w.a.records[0];
	char dig[65];
	assert_int_equal(dr_text_digest(b->text, dig), GB_OK);
	json_t *d = json_loads(b->text, 0, NULL);
	assert_string_equal(dig,
			    json_string_value(json_object_get(
				    json_object_get(d, "record"), "digest")));
	json_decref(d);
	assert_int_equal(exw_record_changed(b, b), 0);
	assert_int_equal(exw_record_changed(b, a), EXW_CHOSEN | EXW_DIGEST);
	assert_int_equal(exw_record_changed(b, NULL),
			 EXW_OUTCOME | EXW_CHOSEN | EXW_DIGEST);
	assert_int_equal(exw_record_changed(NULL, NULL), 0);
	assert_int_equal(dr_text_digest("{\"digest\":\"12\"}", dig),
			 GB_ENOTFOUND);
	assert_string_equal(dig, "");
	assert_int_equal(dr_text_digest(NULL, dig), GB_ENOTFOUND);
	/* 64 hex digits and not the string's end */
	char near[128];
	assert_int_equal(dr_text_digest(b->text, dig), GB_OK);
	snprintf(near, sizeof(near), "{\"digest\":\"%sx\"}", dig);
	assert_int_equal(dr_text_digest(near, dig), GB_ENOTFOUND);
	/* the last of two is the record block's; the key at the very start
	** is found too */
	char two[256], want[65];
	assert_int_equal(dr_text_digest(b->text, want), GB_OK);
	snprintf(two, sizeof(two), "\"digest\":\"%064d\",\"digest\":\"%s\"", 7,
		 want);
	assert_int_equal(dr_text_digest(two, dig), GB_OK);
	assert_string_equal(dig, want);
	snprintf(two, sizeof(two), "\"digest\":\"%064d\"", 7);
	assert_int_equal(dr_text_digest(two, dig), GB_OK);
	assert_int_equal(strspn(dig, "0"), 63);

	/* exw_diff_records from the records alone, as a replay has them */
	struct exw_decision x;
	assert_int_equal(exw_diff_records(EX_TASK, b, a, &w.ad, &x), GB_OK);
	assert_int_equal(x.changed, EXW_CHOSEN | EXW_DIGEST | EXW_CANDIDATES);
	str_eq(cand(&x, "AGLT2")->rule[1], "TB-04");
	assert_int_equal(exw_diff_records(EX_TASK, NULL, NULL, &w.ad, &x),
			 GB_EINVAL);
	struct ex_record junk = {.text = "{not json", .outcome = "assigned"};
	assert_int_equal(exw_diff_records(EX_TASK, b, &junk, &w.ad, &x),
			 GB_EDECODE);
	wi_free(&w);
}

struct drop_want {
	const char *rule, *code;
	long count;
};

static void want_drops(const char *text, const struct drop_want *want, size_t n)
{
	struct exw_drop out[32];
	size_t got = 0;
	assert_int_equal(exw_drops_by_rule_text(text, out, 32, &got), GB_OK);
	if (got != n) {
		for (size_t i = 0; i < got; i++)
			print_message("%s %s %ld\n", out[i].rule, out[i].code,
				      out[i].count);
		fail_msg("%zu pairs, expected %zu", got, n);
	}
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out[i].rule, want[i].rule);
		assert_string_equal(out[i].code, want[i].code);
		assert_int_equal(out[i].count, want[i].count);
	}
}

static void test_drops_by_rule(void **state)
{
	(void)state;
	struct wi w;
	/* task: TB-01 TAIWAN-LCG2, TB-07 INFN-T1 (its TB-08 second, not
	** counted), TB-04 UKI-NORTHGRID-MAN-HEP; in name order */
	const char *lower[] = {"DISK_THRESHOLD_MC Reco=135789"};
	wi_run(&w, "task-assign.json", lower, 1);
	static const struct drop_want task[] = {{"TB-07", "input_size", 1},
						{"TB-01", "status", 1},
						{"TB-04", "space", 1}};
	want_drops(w.b.records[0].text, task, 3);
	/* lowered: UKI-NORTHGRID-MAN-HEP is TB-07's too */
	static const struct drop_want low[] = {{"TB-07", "input_size", 2},
					       {"TB-01", "status", 1}};
	want_drops(w.a.records[0].text, low, 2);
	wi_free(&w);

	/* match: the stages' cuts, 10 of 13 TQs */
	wi_run(&w, "match-assign.json", NULL, 0);
	static const struct drop_want match[] = {
		{"TQ-06", "pilot_type", 1},  {"TQ-06", "site", 1},
		{"TQ-06", "grid_ce", 1},     {"TQ-06", "platform", 1},
		{"TQ-04", "owner_group", 2}, {"TQ-04", "owner_dn", 1},
		{"TQ-05", "setup", 1},       {"TQ-05", "cpu_time", 1},
		{"TQ-06", "banned_site", 1}};
	want_drops(w.b.records[0].text, match, 9);
	wi_free(&w);

	/* a timeout: its rule; a throttled analysis task: the throttle */
	wi_run(&w, "timeout-rules.json", NULL, 0);
	static const struct drop_want to[] = {{"TO-01", "", 1}};
	want_drops(w.b.records[0].text, to, 1);
	wi_free(&w);
	wi_run(&w, "analysis-throttled.json", NULL, 0);
	static const struct drop_want thr[] = {{"AJ-04", "share_class_c", 1}};
	want_drops(w.b.records[0].text, thr, 1);
	wi_free(&w);

	/* a truncated record: its aggregates count with their counts */
	static const struct drop_want agg[] = {{"PJ-04", "status", 400},
					       {"PJ-26", "no_pilot", 3}};
	want_drops(
		"{\"candidates\": [{\"name\": \"A\", \"stage\": null}], "
		"\"rejected\": [{\"stage\": \"status\", \"rule\": \"PJ-04\", "
		"\"code\": \"status\", \"count\": 400}, {\"stage\": \"pilot\", "
		"\"rule\": \"PJ-26\", \"code\": \"no_pilot\", \"count\": 3}]}",
		agg, 2);

	/* no room */
	struct exw_drop one[1];
	size_t n = 0;
	wi_run(&w, "task-assign.json", NULL, 0);
	assert_int_equal(exw_drops_by_rule_text(w.b.records[0].text, one, 1,
						&n),
			 GB_ETOOBIG);
	assert_int_equal(n, 1);
	assert_int_equal(exw_drops_by_rule_text("nope", one, 1, &n),
			 GB_EDECODE);
	wi_free(&w);
}

/* ---- JSON and text ------------------------------------------------------ */

static void test_json_and_text(void **state)
{
	(void)state;
	struct wi w;
	const char *args[] = {"queue.AGLT2_UCORE.status=offline",
			      "NQUEUED_SAT_CAP=150"};
	wi_run(&w, "jobs-assign.json", args, 2);
	json_t *j = exw_diff_json(&w.d);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")),
			    "jobs");
	json_t *d0 = json_array_get(json_object_get(j, "decisions"), 0);
	assert_true(json_is_false(get(d0, "changed/outcome")));
	assert_true(json_is_true(get(d0, "changed/candidates")));
	assert_string_equal(json_string_value(get(d0, "before/chosen")),
			    "BNL_PROD_UCORE");
	json_t *cs = json_object_get(d0, "candidates");
	assert_int_equal(json_array_size(cs), 4);
	json_t *c0 = json_array_get(cs, 0);
	assert_string_equal(json_string_value(json_object_get(c0, "name")),
			    "AGLT2_UCORE");
	assert_near(json_real_value(get(c0, "before/weight")), 5.46818181818,
		    1e-9);
	assert_int_equal(json_integer_value(get(c0, "before/jobs")), 5);
	assert_true(json_is_null(get(c0, "after/weight")));
	assert_string_equal(json_string_value(get(c0, "after/rule")), "PJ-04");
	json_decref(j);

	struct exw_set s[2];
	char err[256];
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(
			exw_parse_set(args[i], &s[i], err, sizeof(err)), GB_OK);
	json_t *sj = exw_sets_json(s, 2);
	assert_string_equal(json_string_value(get(sj, "0/value")), "offline");
	assert_string_equal(json_string_value(get(sj, "0/target")), "queue");
	assert_int_equal(json_integer_value(get(sj, "1/value")), 150);
	json_decref(sj);

	char *text = exw_render(s, 2, &w.d);
	assert_non_null(text);
	static const char *const lines[] = {
		"===== what-if: the decision with 2 changes =====\n",
		"set queue.AGLT2_UCORE.status=offline (queue, a string)\n",
		"set NQUEUED_SAT_CAP=150 (parameter)\n",
		"jobs 36100001: outcome assigned (unchanged), chosen "
		"BNL_PROD_UCORE (unchanged), digest 7673cb02e6de8655 -> ",
		"    candidates whose verdict or weight changed: 4\n",
		"    AGLT2_UCORE     kept, weight 5.46818, 5 jobs -> dropped at "
		"status [PJ-04 status]\n",
		"      after:  PJ-04 status offline is not online\n",
		"    BNL_PROD_UCORE  kept, weight 10.0125, 7 jobs -> kept, "
		"weight 10.0125, 10 jobs\n",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(*lines); i++)
		if (strstr(text, lines[i]) == NULL)
			fail_msg("lacks\n%s\nin\n%s", lines[i], text);
	free(text);
	wi_free(&w);

	/* a timeout scenario lists the jobs that changed and counts the rest */
	const char *three[] = {"TIMEOUT_defined=3"};
	wi_run(&w, "timeout-rules.json", three, 1);
	assert_int_equal(exw_parse_set(three[0], &s[0], err, sizeof(err)),
			 GB_OK);
	text = exw_render(s, 1, &w.d);
	assert_non_null(text);
	assert_non_null(strstr(text, "job 6000000202: outcome none -> "
				     "reassign, chosen - (unchanged), digest "
				     "- -> "));
	assert_non_null(strstr(text, "    rule: none -> TO-02 (defined for "
				     "14340 s, limit 10800 s)\n"));
	assert_non_null(strstr(text, "2 jobs with a timeout decision before "
				     "or after changed, 10 unchanged\n"));
	assert_null(strstr(text, "job 6000000101:"));
	free(text);
	wi_free(&w);

	/* a reason both runs give is printed once */
	const char *share[] = {"share.lhcb_user=20000"};
	wi_run(&w, "match-assign.json", share, 1);
	assert_int_equal(exw_parse_set(share[0], &s[0], err, sizeof(err)),
			 GB_OK);
	text = exw_render(s, 1, &w.d);
	assert_non_null(text);
	static const char *const mlines[] = {
		"set share.lhcb_user=20000 (group)\n",
		"    rule: TQ-10 matched (matched: 3 task queues, 2 at cpu_time "
		"50000 in the lottery) (unchanged)\n",
		"    TQ 3   rejected by owner_dn, priority 5000 [TQ-04 owner_dn] "
		"-> rejected by owner_dn, priority 10000 [TQ-04 owner_dn]\n"
		"             both:   TQ-04 owner DN not among",
		"    TQ 11  chosen, priority 760.87 -> chosen, priority "
		"1521.74\n",
	};
	for (size_t i = 0; i < sizeof(mlines) / sizeof(*mlines); i++)
		if (strstr(text, mlines[i]) == NULL)
			fail_msg("lacks\n%s\nin\n%s", mlines[i], text);
	free(text);
	wi_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_many),
		cmocka_unit_test(test_task_threshold_lowered),
		cmocka_unit_test(test_task_threshold_raised),
		cmocka_unit_test(test_jobs_queue_offline),
		cmocka_unit_test(test_analysis_queue_offline),
		cmocka_unit_test(test_match_share),
		cmocka_unit_test(test_timeout_limit),
		cmocka_unit_test(test_match_correction),
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_diff_kinds),
		cmocka_unit_test(test_record_checks),
		cmocka_unit_test(test_drops_by_rule),
		cmocka_unit_test(test_json_and_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
