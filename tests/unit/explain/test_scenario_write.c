/*
** test_scenario_write.c — the scenario writers (scenario_write.h) against
** their parsers: every file of etc/scenarios and hand-made maximal
** scenarios (every field away from its default, numbers no sample has:
** 0.1, 5e-324, -0.0, 1e300, the longest strings, times far in the past)
** go parse -> write -> text -> parse -> write, and
**   - the written scenario says everything the file said ("covers": a key
**     of the file missing from the written one, or a number that is not
**     the same double, is a field a writer dropped or bent);
**   - the two written scenarios are the same JSON (types, keys, strings,
**     numbers bit for bit);
**   - the engine decides both parsed copies the same way (the decision
**     JSON of explain's own renderers).
** Match scenarios are written from a task queue index built the way
** scm_run builds it, so their check is on the TQs, jobs and priorities
** read back. Timeout scenarios are written one job at a time. Then what
** the formats cannot say (times after now, loads at queues not in the
** grid, history no slice counts) and the arguments the writers refuse,
** and the match format's per-TQ "priority". With GB_SCENARIO_OUT, every
** written scenario is also kept there for unit.scenario_schemas (keep()).
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/limits.h"
#include "base/timefmt.h"
#include "explain/scenario.h"
#include "explain/scenario_analysis.h"
#include "explain/scenario_jobs.h"
#include "explain/scenario_match.h"
#include "explain/scenario_timeout.h"
#include "explain/scenario_write.h"
#include "gb_error.h"
#include "model/tqindex.h"
#include "report/report.h"
#include "report/report_analysis.h"
#include "report/report_jobs.h"
#include "rng.h"

#include "jsonpatch.h"

#define ARENA_CAP (256u << 20)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- JSON comparisons ---------------------------------------------------- */

/* The text round trip a dump takes: jansson's default precision (17). */
static json_t *reload(const json_t *j)
{
	assert_non_null(j);
	char *txt = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_non_null(txt);
	json_error_t e;
	json_t *back = json_loads(txt, JSON_REJECT_DUPLICATES, &e);
	if (back == NULL)
		fail_msg("written scenario is not JSON: %s", e.text);
	free(txt);
	return back;
}

static int same_double(double a, double b)
{
	return memcmp(&a, &b, sizeof(a)) == 0;
}

/* Two RFC 3339 texts of one second (a file may write an offset or a
** fraction, the writer writes UTC). */
static int same_time(const json_t *a, const json_t *b)
{
	long long x = 0, y = 0;
	return tf_parse(json_string_value(a), &x) == GB_OK &&
	       tf_parse(json_string_value(b), &y) == GB_OK && x == y;
}

/* "absent" in the parsers' sense: null, [] or {}. */
static int nothing(const json_t *v)
{
	return v == NULL || json_is_null(v) ||
	       (json_is_array(v) && json_array_size(v) == 0) ||
	       (json_is_object(v) && json_object_size(v) == 0);
}

static int listed(const char *const *l, const char *k)
{
	for (; l && *l; l++)
		if (strcmp(*l, k) == 0)
			return 1;
	return 0;
}

/* Keys a file may hold and a writer need not repeat: free text, and
** `lossy` (what the parser keeps only in part). */
static const char *const free_text[] = {"description", "$schema", NULL};

/*
** `b` says what `a` says. strict: the same JSON exactly (keys, types,
** numbers bit for bit, integers as integers). Not strict ("covers"): every
** member of object `a` that is not free text, not in `lossy` and not
** nothing is in `b` and covered there; numbers are the same double
** whether integer or real.
*/
static void check_json(const json_t *a, const json_t *b, const char *path,
		       int strict, const char *const *lossy)
{
	char p[512];
	if (json_is_number(a) && json_is_number(b) &&
	    (!strict || json_typeof(a) == json_typeof(b))) {
		if (!same_double(json_number_value(a), json_number_value(b)))
			fail_msg("%s: %.17g written as %.17g", path,
				 json_number_value(a), json_number_value(b));
		return;
	}
	if (json_typeof(a) != json_typeof(b))
		fail_msg("%s: type %d written as %d", path, json_typeof(a),
			 json_typeof(b));
	if (json_is_string(a) && strcmp(json_string_value(a),
					json_string_value(b)) != 0 &&
	    (strict || !same_time(a, b)))
		fail_msg("%s: '%s' written as '%s'", path,
			 json_string_value(a), json_string_value(b));
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			fail_msg("%s: %zu elements written as %zu", path,
				 json_array_size(a), json_array_size(b));
		for (size_t i = 0; i < json_array_size(a); i++) {
			snprintf(p, sizeof(p), "%s[%zu]", path, i);
			check_json(json_array_get(a, i), json_array_get(b, i),
				   p, strict, lossy);
		}
	}
	if (!json_is_object(a))
		return;
	if (strict && json_object_size(a) != json_object_size(b))
		fail_msg("%s: %zu members written as %zu", path,
			 json_object_size(a), json_object_size(b));
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)a, k, v) {
		snprintf(p, sizeof(p), "%s.%s", path, k);
		const json_t *w = json_object_get(b, k);
		if (!strict && (listed(free_text, k) || listed(lossy, k) ||
				(nothing(v) && nothing(w))))
			continue;
		if (w == NULL)
			fail_msg("%s: not written", p);
		check_json(v, w, p, strict, lossy);
	}
}

static void check_same(const json_t *a, const json_t *b, const char *what)
{
	assert_non_null(a);
	assert_non_null(b);
	check_json(a, b, what, 1, NULL);
	assert_true(json_equal((json_t *)a, (json_t *)b));
}

static json_t *read_scenario(const char *name)
{
	char path[512], err[512] = "";
	snprintf(path, sizeof(path), "etc/scenarios/%s", name);
	json_t *root = scn_read_file(path, err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	return root;
}

/* ---- every written scenario, kept for the schema check ------------------- */

/* With GB_SCENARIO_OUT set (unit.scenario_schemas), each scenario a writer
** returns is also written there as <kind>-<n>.json, and
** scripts/check-scenarios validates them against schemas/scenario-*.
** schema.json: the files workers store and `why --scenario` prints are
** these writers' output. Returns `j`. */
static json_t *keep(const char *kind, json_t *j)
{
	static unsigned n;
	const char *dir = getenv("GB_SCENARIO_OUT");
	if (j == NULL || dir == NULL || dir[0] == '\0')
		return j;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s-%u.json", dir, kind, ++n);
	if (json_dump_file(j, path, JSON_INDENT(1) | JSON_SORT_KEYS |
					    JSON_REAL_PRECISION(17)) != 0)
		fail_msg("cannot write %s", path);
	return j;
}

/* ---- task scenarios ------------------------------------------------------ */

static json_t *task_write(const struct scn_task_scenario *s)
{
	struct prm_set set = {s->params, s->nparams};
	return keep("task", scw_task(s->now, s->seed, &set, s->nuclei,
				     s->nnuclei, &s->task));
}

static json_t *task_decide(const struct scn_task_scenario *s, struct arena *a)
{
	struct prm_set set = {s->params, s->nparams};
	struct tb_params p;
	tb_params_resolve(&set, s->task.gshare, &p);
	struct gb_rng rng;
	gb_rng_seed(&rng, s->seed);
	struct dec_candidate *c =
		arena_alloc(a, (s->nnuclei + 1) * sizeof(*c));
	struct dec_decision d;
	assert_non_null(c);
	assert_int_equal(tb_broker(&s->task, s->nuclei, s->nnuclei, &p, &rng,
				   c, &d),
			 GB_OK);
	return rpt_decision_json(&d);
}

static void task_parse(json_t *root, struct arena *a,
		       struct scn_task_scenario *s)
{
	char err[512] = "";
	if (scn_parse_task_scenario(root, a, s, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
}

/* parse -> write -> text -> parse -> write; returns the second parse. */
static void task_round(json_t *file, struct arena *a,
		       struct scn_task_scenario *s1,
		       struct scn_task_scenario *s2)
{
	task_parse(file, a, s1);
	json_t *w1 = task_write(s1);
	assert_non_null(w1);
	check_json(file, w1, "task", 0, NULL);
	json_t *t = reload(w1);
	task_parse(t, a, s2);
	json_t *w2 = task_write(s2);
	check_same(w1, w2, "task");
	json_t *d1 = task_decide(s1, a), *d2 = task_decide(s2, a);
	check_same(d1, d2, "decision");
	json_decref(w1);
	json_decref(w2);
	json_decref(t);
	json_decref(d1);
	json_decref(d2);
}

static const char task_max[] = "{"
	"\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 9223372036854775807,"
	"\"params\": {\"DISK_THRESHOLD_MC Simul\": 0.1,"
	" \"CAP_RUNNING_USER_JOBS\": null, \"NW_ACTIVE\": 1,"
	" \"INPUT_SIZE_FRACTION\": 5e-324},"
	"\"nuclei\": ["
	" {\"name\": \"N1\", \"status\": \"ACTIVE\", \"bareNucleus\": \"only\","
	"  \"transferBacklog\": 7, \"RW\": 0.30000000000000004,"
	"  \"storages\": [{\"name\": \"N1_TAPE\", \"spaceFree\": 1e300,"
	"   \"spaceExpired\": 2.5, \"spaceTotal\": 1.7976931348623157e308,"
	"   \"tape\": true, \"blacklisted\": true},"
	"   {\"name\": \"N1_DISK\", \"spaceFree\": 0.1, \"spaceTotal\": 0.2}],"
	"  \"local\": {\"mc23:ds.1\": {\"size\": 5e-324, \"files\": 3},"
	"   \"mc23:ds.2\": {\"size\": 0, \"files\": 0}}},"
	" {\"name\": \"N2\", \"status\": \"OFFLINE\","
	"  \"bareNucleus\": \"allow\","
	"  \"storages\": []}],"
	"\"task\": {\"taskID\": 9223372036854775807, \"gshare\": \"MC Simul\","
	" \"taskPriority\": 1000000, \"ioIntensity\": 0.1, \"t1Weight\": -0.0,"
	" \"inputPreStaging\": true, \"taskBrokerOnMaster\": true,"
	" \"fullChain\": \"capable\", \"parentNucleus\": \"N1\","
	" \"normalizedExpOutSize\": 2.5,"
	" \"inputDatasets\": [{\"name\": \"mc23:ds.1\", \"primary\": true,"
	"  \"size\": 1.5, \"files\": 12, \"onTape\": true},"
	"  {\"name\": \"mc23:ds.3\", \"size\": 0, \"files\": 0}]}}";

/* The longest string the parsers accept. */
static const char *longest(char c)
{
	static char buf[4][GB_MAX_STRING];
	static int next;
	char *s = buf[next++ % 4];
	memset(s, c, GB_MAX_STRING - 1);
	s[GB_MAX_STRING - 1] = '\0';
	return s;
}

static const char *const task_files[] = {
	"task-assign.json", "task-full-chain-capable.json",
	"task-full-chain-only.json", "task-locality-relaxed.json",
	"task-pending.json", NULL};

static void test_task(void **state)
{
	struct arena *a = *state;
	const char *const *files = task_files;
	struct scn_task_scenario s1, s2;
	for (size_t i = 0; files[i]; i++) {
		json_t *f = read_scenario(files[i]);
		task_round(f, a, &s1, &s2);
		json_decref(f);
	}
	json_t *f = load_text(task_max);
	json_object_set_new(json_object_get(f, "task"), "parentNucleus",
			    json_string(longest('p')));
	task_round(f, a, &s1, &s2);
	assert_true(same_double(s2.task.t1_weight, -0.0));
	assert_true(same_double(s2.nuclei[0].local[0].size, 5e-324));
	assert_int_equal(s2.seed, (uint64_t)LLONG_MAX);
	assert_int_equal(strlen(s2.task.parent_nucleus), GB_MAX_STRING - 1);
	assert_int_equal(s2.nuclei[1].nstorages, 0);
	/* CAP_RUNNING_USER_JOBS null: unset, written as null again */
	int unset = 0;
	for (size_t i = 0; i < s2.nparams; i++)
		unset |= strcmp(s2.params[i].name, "CAP_RUNNING_USER_JOBS") ==
				 0 && isnan(s2.params[i].value);
	assert_true(unset);
	json_decref(f);
}

/* What the task writer refuses, and a name given twice in params. */
static void test_task_refused(void **state)
{
	struct arena *a = *state;
	struct scn_task_scenario s;
	json_t *f = load_text(task_max);
	task_parse(f, a, &s);
	struct prm_set set = {s.params, s.nparams};
	assert_null(scw_task(s.now, (uint64_t)LLONG_MAX + 1, &set, s.nuclei,
			     s.nnuclei, &s.task));
	assert_null(scw_task(0, s.seed, &set, s.nuclei, s.nnuclei, &s.task));
	assert_null(scw_task(s.now, s.seed, &set, NULL, 1, &s.task));
	assert_null(scw_task(s.now, s.seed, &set, s.nuclei, s.nnuclei, NULL));
	struct tb_task t = s.task;
	t.io_intensity = NAN;
	assert_null(scw_task(s.now, s.seed, &set, s.nuclei, s.nnuclei, &t));
	t = s.task;
	t.full_chain = (enum tb_fullchain)7;
	assert_null(scw_task(s.now, s.seed, &set, s.nuclei, s.nnuclei, &t));
	/* two local entries for one dataset: a map cannot hold both */
	struct tb_nucleus nu = s.nuclei[0];
	struct tb_replica dup[2] = {nu.local[0], nu.local[0]};
	nu.local = dup;
	nu.nlocal = 2;
	assert_null(scw_task(s.now, s.seed, &set, &nu, 1, &s.task));
	/* the last override of a name is the one prm_get reads */
	struct prm_kv kv[] = {{"NQUEUED_NUC_CAP", 1}, {"NQUEUED_NUC_CAP", 2}};
	struct prm_set twice = {kv, 2};
	json_t *w = scw_task(s.now, s.seed, &twice, s.nuclei, s.nnuclei,
			     &s.task);
	assert_non_null(w);
	json_t *back = reload(w);
	struct scn_task_scenario s2;
	task_parse(back, a, &s2);
	struct prm_set set2 = {s2.params, s2.nparams};
	assert_true(prm_get(&set2, "NQUEUED_NUC_CAP") ==
		    prm_get(&twice, "NQUEUED_NUC_CAP"));
	json_decref(w);
	json_decref(back);
	json_decref(f);
}

/* ---- job and analysis scenarios ------------------------------------------ */

/* outDiskCountUnit: the request keeps only whether it ends in PerEvent. */
static const char *const jobs_lossy[] = {"outDiskCountUnit", NULL};

static void jobs_parse(json_t *root, struct arena *a, struct sca_scenario *s,
		       int anal)
{
	char err[512] = "";
	memset(s, 0, sizeof(*s));
	int rc = anal ? sca_parse_scenario(root, a, s, err, sizeof(err))
		      : scj_parse_scenario(root, a, &s->job, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s", err);
}

static json_t *jobs_write(const struct sca_scenario *s, int anal)
{
	const struct scj_scenario *j = &s->job;
	if (anal)
		return keep("analysis",
			    scw_analysis(j->now, j->seed, &j->params, &j->grid,
					 &j->req, &s->state, s->task_class));
	return keep("jobs",
		    scw_jobs(j->now, j->seed, &j->params, &j->grid, &j->req));
}

static json_t *jobs_decide(const struct sca_scenario *s, int anal,
			   struct arena *a)
{
	if (!anal) {
		struct md_jobs *r = arena_alloc(a, sizeof(*r));
		assert_non_null(r);
		assert_int_equal(scj_run(&s->job, a, r), GB_OK);
		return rpj_detail_json(&r->req, r->queues, r->nqueues, &r->dec,
				       &r->plan, &r->params, &r->env);
	}
	struct md_analysis *r = arena_alloc(a, sizeof(*r));
	assert_non_null(r);
	assert_int_equal(sca_run(s, a, r), GB_OK);
	return rpa_decision_json(r);
}

/* parse -> write -> text -> parse -> write and the two decisions; `s1`
** may be given already parsed (file NULL). */
static void jobs_round(json_t *file, struct arena *a, struct sca_scenario *s1,
		       struct sca_scenario *s2, int anal)
{
	if (file)
		jobs_parse(file, a, s1, anal);
	json_t *w1 = jobs_write(s1, anal);
	assert_non_null(w1);
	if (file)
		check_json(file, w1, anal ? "analysis" : "jobs", 0,
			   jobs_lossy);
	json_t *t = reload(w1);
	jobs_parse(t, a, s2, anal);
	json_t *w2 = jobs_write(s2, anal);
	check_same(w1, w2, anal ? "analysis" : "jobs");
	json_t *d1 = jobs_decide(s1, anal, a), *d2 = jobs_decide(s2, anal, a);
	check_same(d1, d2, "decision");
	json_decref(w1);
	json_decref(w2);
	json_decref(t);
	json_decref(d1);
	json_decref(d2);
}

static const char jobs_max[] = "{"
	"\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 12345678901234,"
	"\"params\": {\"NQUEUELIMITSITE_MC Simul\": 0.1, \"NW_ACTIVE\": 1,"
	" \"MIN_WEIGHT\": 5e-324, \"IO_INTENSITY_CUTOFF_USER\": null},"
	"\"queues\": ["
	" {\"name\": \"Q1\", \"status\": \"online\", \"site\": \"S1\","
	"  \"nucleus\": \"N1\", \"coreCount\": 0, \"corepower\": 12.5,"
	"  \"minrss\": 0.1, \"maxrss\": 4000, \"maxwdir\": 1e300,"
	"  \"mintime\": 1, \"maxtime\": 1e9, \"directAccess\": true,"
	"  \"wnconnectivity\": \"full#IPv6\", \"maxDiskIO\": 0.5,"
	"  \"diskIOAvg\": 3, \"fairsharepolicy\": \"type=evgen:0%\","
	"  \"eventService\": \"allowed\", \"dynamicNEvents\": true,"
	"  \"transferringLimit\": 7, \"numSlots\": 0, \"lastPilotAge\": 0,"
	"  \"lastStartAge\": 1715675399,"
	"  \"releases\": [\"22.0.1\", \"21.0.38\"],"
	"  \"storage\": {\"name\": \"S1_DATADISK\", \"spaceFree\": 0.25,"
	"   \"blacklisted\": true},"
	"  \"jobs\": {\"MC Simul\": {\"running\": 1, \"defined\": 2,"
	"   \"assigned\": 3, \"activated\": 4.5, \"starting\": 5,"
	"   \"transferring\": 6, \"nBatchJob\": 7},"
	"   \"User Analysis\": {\"running\": 0.1}},"
	"  \"type\": \"analysis\", \"vp\": true, \"siteClass\": \"hi\","
	"  \"disableReassign\": true, \"transtimehi\": 0.5,"
	"  \"transtimelo\": 1.5, \"workflow\": \"hpc\"},"
	" {\"name\": \"Q2\", \"status\": \"brokeroff\", \"site\": \"S2\","
	"  \"releases\": \"AUTO\", \"lastPilotAge\": 60,"
	"  \"eventService\": \"only\","
	"  \"storage\": {\"name\": \"S2_DATADISK\", \"spaceFree\": 800},"
	"  \"type\": \"production\", \"siteClass\": \"lo\"},"
	" {\"name\": \"Q3\", \"status\": \"test\", \"site\": \"S3\","
	"  \"releases\": [], \"maxDiskIO\": null, \"lastPilotAge\": null,"
	"  \"storage\": {\"name\": \"S3_DATADISK\", \"spaceFree\": 0},"
	"  \"type\": \"other\"},"
	" {\"name\": \"Q4\", \"status\": \"online\", \"site\": \"S1\","
	"  \"coreCount\": 8, \"releases\": \"ANY\", \"lastPilotAge\": 30,"
	"  \"lastStartAge\": 30,"
	"  \"storage\": {\"name\": \"S1_DATADISK\", \"spaceFree\": 900},"
	"  \"jobs\": {\"MC Simul\": {\"running\": 10, \"activated\": 2}}}],"
	"\"sw\": {\"Q2\": {\"cmtconfigs\": [\"x86_64-el9-gcc13-opt\"],"
	"  \"containers\": [\"any\"], \"cvmfs\": [\"atlas\", \"nightlies\"],"
	"  \"architectures\": [{\"type\": \"cpu\", \"arch\": [\"x86_64\"],"
	"   \"vendor\": [\"intel\"], \"instr\": [\"avx2\"]},"
	"   {\"type\": \"gpu\", \"vendor\": [\"nvidia\"],"
	"    \"model\": [\"a100\"]}],"
	"  \"tags\": [{\"cmtconfig\": \"x86_64-el9-gcc13-opt\","
	"   \"container_name\": \"\", \"project\": \"Athena\","
	"   \"release\": \"21.0.38\", \"sources\": [\"/cvmfs/x\"]}]},"
	" \"ALL\": {\"containers\": [\"any\"], \"tags\": []},"
	" \"Q4\": {}},"
	"\"links\": ["
	" {\"site\": \"S1\", \"nucleus\": \"N1\", \"blocked\": true,"
	"  \"queuedFiles\": 3.5, \"mbps1h\": 0.1, \"mbps1d\": null,"
	"  \"mbps1w\": 7, \"closeness\": -1},"
	" {\"site\": \"S2\", \"nucleus\": \"N1\", \"closeness\": 11},"
	" {\"site\": \"S3\", \"nucleus\": \"N1\", \"closeness\": null}],"
	"\"fileReplicas\": {\"f1\": [\"S1_DATADISK\", \"S2_DATADISK\"],"
	" \"f2\": []},"
	"\"task\": {\"taskID\": 9223372036854775807, \"nucleus\": \"N1\","
	" \"gshare\": \"MC Simul\", \"currentPriority\": 999,"
	" \"processingType\": \"simul\", \"ioIntensity\": 0.1,"
	" \"diskIO\": 2.5, \"coreCount\": 8, \"maxCoreCount\": 16,"
	" \"baseRamCount\": 100.5, \"ramCount\": 1999.75,"
	" \"outDiskCount\": 0.3, \"outDiskCountUnit\": \"kBPerEvent\","
	" \"workDiskCount\": 1e-300, \"cpuTime\": 0.7, \"cpuEfficiency\": 0.5,"
	" \"baseWalltime\": 60, \"ipConnectivity\": \"http#IPv4\","
	" \"directAccessOnly\": true, \"useEventService\": true,"
	" \"dynamicNEvents\": true, \"t1Weight\": -1,"
	" \"architecture\":"
	"  \"x86_64-el9-gcc13-opt@el9#x86_64-intel-avx2&nvidia-a100\","
	" \"containerName\": \"atlas/athena:21\", \"onlyTagsForFC\": true,"
	" \"swProject\": \"Athena\", \"swVersion\": \"21.0.38\","
	" \"jobScope\": \"nucleus\", \"swKind\": \"nightly\","
	" \"preassigned\": [\"Q1\", \"Q4\"],"
	" \"preassignSkippedSince\": \"1970-01-01T00:00:01Z\","
	" \"scout\": true, \"merge\": true, \"premerged\": true,"
	" \"jobs\": [{\"jobID\": 1, \"nEvents\": 10, \"inputFiles\": ["
	"   {\"lfn\": \"f1\", \"size\": 0.1}, {\"lfn\": \"f2\", \"size\": 2}]},"
	"  {\"jobID\": 9223372036854775807, \"nEvents\": 1000000000}]}}";

/* jobs_max's request as an analysis task, with the analysis state. */
static json_t *anal_max(void)
{
	json_t *f = load_text(jobs_max);
	apply_patch(f, "task.taskType", "\"anal\"");
	apply_patch(f, "task.gshare", "\"User Analysis\"");
	apply_patch(f, "task.userName", "\"alice\"");
	apply_patch(f, "task.workingGroup", "\"phys-higgs\"");
	apply_patch(f, "task.taskPriority", "5");
	apply_patch(f, "task.ramCountUnit", "\"MB\"");
	apply_patch(f, "task.excludedSite", "[\"S9\"]");
	apply_patch(f, "task.includedSite", "[\"S1\", \"S2\"]");
	apply_patch(f, "task.avoidVP", "true");
	apply_patch(f, "analysis",
		    "{\"owner\": {\"workingGroup\": true, \"runningJobs\": 1,"
		    " \"queuedJobs\": 0.1, \"runningCores\": 3,"
		    " \"queuedCores\": 4, \"quotaExceeded\": false,"
		    " \"shareUsage\": 5e-324, \"shareTarget\": 40,"
		    " \"hiSiteSlots\": 6},"
		    " \"taskClass\": \"C\", \"gridQueued\": 7.25,"
		    " \"gridRunning\": 0.1,"
		    " \"queues\": {\"Q1\": {\"trr\": 0.5, \"nqUser\": 1,"
		    "  \"nrUser\": 2, \"nUsers\": 3, \"taskFailed\": 4,"
		    "  \"taskClosed\": 5, \"taskFinished\": 6.25},"
		    "  \"Q4\": {\"trr\": 1e300}}}");
	return f;
}

static const char *const jobs_files[] = {
	"jobs-assign.json",  "jobs-container.json",    "jobs-network.json",
	"jobs-pending.json", "jobs-release-auto.json", "jobs-numslots.json",
	"jobs-disk-units.json", "jobs-t1weight.json", "jobs-express.json",
	NULL};
static const char *const anal_files[] = {"analysis-assign.json",
					 "analysis-locality-retry.json",
					 "analysis-throttled.json",
					 "analysis-overload.json",
					 "analysis-container.json",
					 "analysis-locality.json", NULL};

static void test_jobs(void **state)
{
	struct arena *a = *state;
	const char *const *files = jobs_files;
	struct sca_scenario s1, s2;
	for (size_t i = 0; files[i]; i++) {
		json_t *f = read_scenario(files[i]);
		jobs_round(f, a, &s1, &s2, 0);
		json_decref(f);
	}
	json_t *f = load_text(jobs_max);
	json_object_set_new(json_object_get(f, "task"), "processingType",
			    json_string(longest('t')));
	json_object_set_new(json_array_get(json_object_get(f, "queues"), 0),
			    "fairsharepolicy", json_string(longest('f')));
	jobs_round(f, a, &s1, &s2, 0);
	const struct gm_grid *g = &s2.job.grid;
	assert_int_equal(g->queues[0].q.last_pilot, s1.job.now);
	assert_int_equal(g->queues[0].q.last_start, 1);
	assert_int_equal(g->queues[2].q.last_pilot, 0);
	assert_true(isnan(g->queues[2].q.max_diskio));
	assert_int_equal(g->queues[2].q.releases, JB_REL_LIST);
	assert_int_equal(g->queues[2].q.nrelease_list, 0);
	assert_true(isnan(g->links[0].l.mbps_1d));
	assert_true(isnan(g->links[2].l.closeness));
	assert_non_null(g->all_sw);
	assert_non_null(g->queues[3].q.sw);
	assert_int_equal(s2.job.req.t.preassign_skipped_since, 1);
	assert_int_equal(s2.job.req.t.out_disk_unit, JB_OUT_KB_PER_EVENT);
	assert_int_equal(strlen(s2.job.req.t.processing_type),
			 GB_MAX_STRING - 1);
	json_decref(f);
}

static void test_analysis(void **state)
{
	struct arena *a = *state;
	const char *const *files = anal_files;
	struct sca_scenario s1, s2;
	for (size_t i = 0; files[i]; i++) {
		json_t *f = read_scenario(files[i]);
		jobs_round(f, a, &s1, &s2, 1);
		json_decref(f);
	}
	json_t *f = anal_max();
	jobs_round(f, a, &s1, &s2, 1);
	assert_int_equal(s2.task_class, AN_CLASS_C);
	assert_true(s2.state.user.user_analysis);
	assert_int_equal(s2.job.req.an.ram_per_core, 0);
	assert_int_equal(s2.state.nqueues, 2);
	assert_true(s2.state.grid_queued == 7.25);
	assert_true(s2.state.grid_running == 0.1);
	json_decref(f);

	/* AJ-11: grandRatio r is written as r queued per 1 running, the
	** queues' sums and a grid with nothing running as they are; each
	** decides the same again. */
	static const struct {
		const char *key, *value;
		double q, r;
	} grid[] = {
		{"grandRatio", "0.3", 0.3, 1},
		{"gridQueued", NULL, 5, 0},
		{NULL, NULL, 0, 0.1}, /* Q1's User Analysis counts */
	};
	for (size_t i = 0; i < sizeof(grid) / sizeof(grid[0]); i++) {
		f = anal_max();
		apply_patch(f, "analysis.gridQueued", NULL);
		apply_patch(f, "analysis.gridRunning", NULL);
		if (grid[i].key && grid[i].value) {
			apply_patch(f, "analysis.grandRatio", grid[i].value);
		} else if (grid[i].key) {
			apply_patch(f, "analysis.gridQueued", "5");
			apply_patch(f, "analysis.gridRunning", "0");
		}
		jobs_parse(f, a, &s1, 1);
		json_t *w = jobs_write(&s1, 1);
		assert_non_null(w);
		json_t *an = json_object_get(w, "analysis");
		assert_true(json_number_value(json_object_get(an, "gridQueued")) ==
			    grid[i].q);
		assert_true(json_number_value(json_object_get(
				    an, "gridRunning")) == grid[i].r);
		assert_null(json_object_get(an, "grandRatio"));
		jobs_round(NULL, a, &s1, &s2, 1);
		json_decref(w);
		json_decref(f);
	}
}

/* Values the job formats cannot say: a time after now is written as age
** 0 (read back as now), a load at a queue not in the grid is left out;
** the decisions stay the same. */
static void test_jobs_unsayable(void **state)
{
	struct arena *a = *state;
	struct sca_scenario s1, s2;
	json_t *f = anal_max();
	jobs_parse(f, a, &s1, 1);
	struct gm_queue *q0 = &s1.job.grid.queues[0];
	q0->q.last_pilot = s1.job.now + 100;
	q0->q.last_start = s1.job.now + 1;
	struct gm_analysis_queue *l =
		arena_alloc(a, (s1.state.nqueues + 1) * sizeof(*l));
	assert_non_null(l);
	memcpy(l, s1.state.queues, s1.state.nqueues * sizeof(*l));
	l[s1.state.nqueues] = (struct gm_analysis_queue){.name = "GONE",
							 .trr = 3};
	s1.state.queues = l;
	s1.state.nqueues++;
	jobs_round(NULL, a, &s1, &s2, 1);
	assert_int_equal(s2.job.grid.queues[0].q.last_pilot, s1.job.now);
	assert_int_equal(s2.job.grid.queues[0].q.last_start, s1.job.now);
	assert_int_equal(s2.state.nqueues, s1.state.nqueues - 1);
	json_decref(f);
}

static void test_jobs_refused(void **state)
{
	struct arena *a = *state;
	struct sca_scenario s;
	json_t *f = anal_max();
	jobs_parse(f, a, &s, 1);
	struct scj_scenario *j = &s.job;
	struct gm_grid g = j->grid;
	struct gm_queue qs[4];
	assert_int_equal(g.nqueues, N(qs));
	memcpy(qs, g.queues, sizeof(qs));
	g.queues = qs;
#define JOBS_NULL() \
	assert_null(scw_jobs(j->now, j->seed, &j->params, &g, &j->req))
	/* a dictionary known only parsed */
	qs[1].sw_json = NULL;
	JOBS_NULL();
	qs[1] = j->grid.queues[1];
	/* a queue named ALL with a dictionary: the key is the pseudo-queue */
	qs[1].q.name = "ALL";
	JOBS_NULL();
	qs[1] = j->grid.queues[1];
	qs[1].sw_json = "{not json";
	JOBS_NULL();
	qs[1] = j->grid.queues[1];
	/* two counts for one gshare */
	struct gm_counts two[2] = {qs[0].counts[0], qs[0].counts[0]};
	qs[0].counts = two;
	qs[0].ncounts = 2;
	JOBS_NULL();
	qs[0] = j->grid.queues[0];
	qs[0].q.last_start = -5;
	JOBS_NULL();
	qs[0] = j->grid.queues[0];
	qs[0].q.corepower = INFINITY;
	JOBS_NULL();
	qs[0] = j->grid.queues[0];
	qs[0].q.releases = (enum jb_releases)9;
	JOBS_NULL();
	qs[0] = j->grid.queues[0];
	struct gm_file files[2] = {j->grid.files[0], j->grid.files[0]};
	g.files = files;
	g.nfiles = 2;
	JOBS_NULL();
	g.files = j->grid.files;
	g.nfiles = j->grid.nfiles;
	assert_null(scw_jobs(j->now, j->seed, &j->params, NULL, &j->req));
	assert_null(scw_jobs(0, j->seed, &j->params, &g, &j->req));
#undef JOBS_NULL
	/* the analysis state must be what the parser would derive */
	struct gm_analysis_state st = s.state;
	json_t *ok = scw_analysis(j->now, j->seed, &j->params, &g, &j->req, &st,
				  s.task_class);
	assert_non_null(ok);
	json_decref(ok);
	assert_null(scw_analysis(j->now, j->seed, &j->params, &g, &j->req,
				 &st, AN_CLASS_A));
	st.user.user_analysis = 0;
	assert_null(scw_analysis(j->now, j->seed, &j->params, &g, &j->req,
				 &st, s.task_class));
	st = s.state;
	struct gm_analysis_queue twice[2] = {st.queues[0], st.queues[0]};
	st.queues = twice;
	st.nqueues = 2;
	assert_null(scw_analysis(j->now, j->seed, &j->params, &g, &j->req,
				 &st, s.task_class));
	struct gm_request prod = j->req;
	prod.an.is_analysis = 0;
	assert_null(scw_analysis(j->now, j->seed, &j->params, &g, &prod,
				 &s.state, s.task_class));
	json_decref(f);
}

/* ---- match scenarios ----------------------------------------------------- */

static void match_parse(json_t *root, struct arena *a, struct scm_scenario *s)
{
	char err[512] = "";
	if (scm_parse_scenario(root, a, s, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
}

/* The index scm_run builds: the TQs with their jobs, then the priorities
** pr_recompute gives (stored 0) or the file's (stored 1). */
static struct tqi_index *index_of(const struct scm_scenario *s, int stored)
{
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	for (size_t i = 0; i < s->ntqs; i++) {
		const struct scm_tq *t = &s->tqs[i];
		assert_int_equal(tqi_tq_put(x, t->tq_id, t->def.owner,
					    t->def.owner_group, t->def.setup,
					    t->segment, t->def.set,
					    stored ? t->priority : 0.0),
				 GB_OK);
		for (size_t k = 0; k < t->njobs; k++)
			assert_int_equal(tqi_job_add(x, t->tq_id,
						     t->jobs[k].job_id,
						     t->jobs[k].user_priority),
					 GB_OK);
	}
	size_t n = tqi_ntqs(x);
	if (stored || n == 0)
		return x;
	struct pr_tq *st = calloc(n, sizeof(*st));
	assert_non_null(st);
	tqi_stats(x, st);
	assert_int_equal(pr_recompute(&s->cfg.pr, s->hist, s->nhist, s->now, st,
				      n, NULL, 0),
			 GB_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tqi_set_priority(x, st[i].tq_id,
						  st[i].priority),
				 GB_OK);
	free(st);
	return x;
}

static json_t *match_write(const struct scm_scenario *s,
			   const struct tqi_index *x)
{
	return keep("pilot", scw_match(s->now, s->seed, &s->cfg.pr, s->cfg.seg,
				       s->cfg.nseg, x, s->hist, s->nhist,
				       &s->pilot));
}

/* scm_result_json without what an index does not keep: a TQ's raw CPU
** time (it holds the segment), which the TQ-05 cpu_time detail names, and
** its description; and without the corrector's note, which says whether
** the priorities were given (a written index) or recomputed. */
static json_t *match_decide(const struct scm_scenario *s, struct arena *a)
{
	struct scm_result r;
	assert_int_equal(scm_run(s, a, &r), GB_OK);
	json_t *j = scm_result_json(s, &r);
	assert_non_null(j);
	json_object_del(json_object_get(j, "corrections"), "note");
	json_t *tqs = json_object_get(j, "taskQueues");
	for (size_t i = 0; i < json_array_size(tqs); i++) {
		json_t *row = json_array_get(tqs, i);
		const char *f =
			json_string_value(json_object_get(row, "filter"));
		json_object_del(row, "cpuTime");
		json_object_del(row, "description");
		if (f && strcmp(f, "cpu_time") == 0)
			json_object_del(row, "detail");
	}
	return j;
}

static int job_cmp(const void *x, const void *y)
{
	const struct scm_job *a = x, *b = y;
	return (a->job_id > b->job_id) - (a->job_id < b->job_id);
}

static void same_str(const char *a, const char *b)
{
	assert_true((a == NULL) == (b == NULL));
	if (a)
		assert_string_equal(a, b);
}

static void same_list(const struct tq_strset *a, const struct tq_strset *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		assert_string_equal(a->v[i], b->v[i]);
}

/* TQ `b` (read back) is TQ `a` of the index built from the file: its
** definition, segment, every job with its UserPriority, and the index's
** priority `prio`. */
static void check_tq(const struct scm_tq *a, const struct scm_tq *b,
		     double prio)
{
	assert_int_equal(a->tq_id, b->tq_id);
	assert_string_equal(a->def.owner, b->def.owner);
	assert_string_equal(a->def.owner_group, b->def.owner_group);
	assert_string_equal(a->def.setup, b->def.setup);
	assert_int_equal(a->segment, b->segment);
	assert_int_equal(b->def.cpu_time, a->segment);
	for (int f = 0; f < TQ_NFIELDS; f++) {
		assert_int_equal(a->def.set[f].n, b->def.set[f].n);
		for (size_t k = 0; k < a->def.set[f].n; k++)
			assert_string_equal(a->def.set[f].v[k],
					    b->def.set[f].v[k]);
	}
	assert_true(b->has_priority);
	assert_true(same_double(b->priority, prio));
	assert_int_equal(a->njobs, b->njobs);
	struct scm_job *ja = malloc((a->njobs + 1) * sizeof(*ja));
	struct scm_job *jb = malloc((b->njobs + 1) * sizeof(*jb));
	assert_non_null(ja);
	assert_non_null(jb);
	if (a->njobs) {
		memcpy(ja, a->jobs, a->njobs * sizeof(*ja));
		memcpy(jb, b->jobs, b->njobs * sizeof(*jb));
		qsort(ja, a->njobs, sizeof(*ja), job_cmp);
		qsort(jb, b->njobs, sizeof(*jb), job_cmp);
	}
	for (size_t k = 0; k < a->njobs; k++) {
		assert_int_equal(ja[k].job_id, jb[k].job_id);
		assert_int_equal(ja[k].user_priority, jb[k].user_priority);
	}
	free(ja);
	free(jb);
}

static void check_config(const struct scm_scenario *a,
			 const struct scm_scenario *b)
{
	const struct pr_config *x = &a->cfg.pr, *y = &b->cfg.pr;
	assert_int_equal(x->corrections, y->corrections);
	assert_true(same_double(x->default_share, y->default_share));
	assert_int_equal(x->ngroups, y->ngroups);
	for (size_t i = 0; i < x->ngroups; i++) {
		assert_string_equal(x->groups[i].name, y->groups[i].name);
		assert_true(same_double(x->groups[i].share,
					y->groups[i].share));
		assert_int_equal(x->groups[i].job_sharing,
				 y->groups[i].job_sharing);
	}
	assert_int_equal(x->ninst, y->ninst);
	for (size_t i = 0; i < x->ninst; i++) {
		const struct pr_instance *p = &x->inst[i], *q = &y->inst[i];
		assert_string_equal(p->name, q->name);
		same_str(p->group, q->group);
		assert_true(same_double(p->max_global, q->max_global));
		assert_int_equal(p->nslices, q->nslices);
		for (size_t k = 0; k < p->nslices; k++) {
			assert_string_equal(p->slices[k].name,
					    q->slices[k].name);
			assert_int_equal(p->slices[k].timespan,
					 q->slices[k].timespan);
			assert_true(same_double(p->slices[k].weight,
						q->slices[k].weight));
			assert_true(same_double(p->slices[k].max_correction,
						q->slices[k].max_correction));
		}
	}
	assert_int_equal(a->cfg.nseg, b->cfg.nseg);
	assert_memory_equal(a->cfg.seg, b->cfg.seg,
			    a->cfg.nseg * sizeof(*a->cfg.seg));
	assert_int_equal(a->nhist, b->nhist);
	for (size_t i = 0; i < a->nhist; i++) {
		assert_int_equal(a->hist[i].t, b->hist[i].t);
		assert_string_equal(a->hist[i].group, b->hist[i].group);
		assert_string_equal(a->hist[i].owner, b->hist[i].owner);
		assert_true(same_double(a->hist[i].running,
					b->hist[i].running));
	}
	const struct cdt_pilot *p = &a->pilot, *q = &b->pilot;
	same_str(p->pilot_id, q->pilot_id);
	same_str(p->d.setup, q->d.setup);
	assert_int_equal(p->d.cpu_time, q->d.cpu_time);
	same_str(p->site, q->site);
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		assert_int_equal(p->d.any[f], q->d.any[f]);
		same_list(&p->d.want[f], &q->d.want[f]);
		same_list(&p->d.banned[f], &q->d.banned[f]);
	}
	same_list(&p->d.required, &q->d.required);
	same_list(&p->d.groups, &q->d.groups);
	same_list(&p->d.owners, &q->d.owners);
}

static int tq_id_cmp(const void *x, const void *y)
{
	const struct scm_tq *a = x, *b = y;
	return (a->tq_id > b->tq_id) - (a->tq_id < b->tq_id);
}

/* s1 parsed; index -> write -> text -> parse (s2) -> index with the
** stored priorities -> write, and the checks above. */
static void match_round(struct scm_scenario *s1, struct scm_scenario *s2,
			struct arena *a)
{
	struct tqi_index *x1 = index_of(s1, 0);
	json_t *w1 = match_write(s1, x1);
	assert_non_null(w1);
	json_t *t = reload(w1);
	match_parse(t, a, s2);
	struct tqi_index *x2 = index_of(s2, 1);
	json_t *w2 = match_write(s2, x2);
	check_same(w1, w2, "match");
	check_config(s1, s2);
	assert_int_equal(s1->ntqs, s2->ntqs);
	qsort(s1->tqs, s1->ntqs, sizeof(*s1->tqs), tq_id_cmp);
	size_t nv = 0;
	const struct tq_view *v = tqi_views(x1, &nv);
	assert_int_equal(nv, s2->ntqs);
	for (size_t i = 0; i < nv; i++)
		check_tq(&s1->tqs[i], &s2->tqs[i], v[i].priority);
	json_t *d1 = match_decide(s1, a), *d2 = match_decide(s2, a);
	check_same(d1, d2, "decision");
	tqi_free(x1);
	tqi_free(x2);
	json_decref(w1);
	json_decref(w2);
	json_decref(t);
	json_decref(d1);
	json_decref(d2);
}

static const char *const match_files[] = {
	"match-assign.json", "match-corrections.json", "match-descriptions.json",
	"match-empty.json", "match-nomatch.json", NULL};

static void test_match(void **state)
{
	struct arena *a = *state;
	const char *const *files = match_files;
	size_t beyond = 0;
	for (size_t i = 0; files[i]; i++) {
		json_t *f = read_scenario(files[i]);
		struct scm_scenario s1, s2;
		match_parse(f, a, &s1);
		for (size_t k = 0; k < s1.ntqs; k++)
			beyond += s1.tqs[k].njobs > TQ_PICK_FROM;
		match_round(&s1, &s2, a);
		json_decref(f);
	}
	/* levels longer than the ten ids a view shows were written whole */
	assert_true(beyond > 0);
}

/* History no slice counts at now is left out; the match stays the same. */
static void test_match_unsayable(void **state)
{
	struct arena *a = *state;
	json_t *f = read_scenario("match-corrections.json");
	struct scm_scenario s1, s2;
	match_parse(f, a, &s1);
	assert_true(s1.nhist > 0);
	struct pr_sample *h = arena_alloc(a, (s1.nhist + 2) * sizeof(*h));
	assert_non_null(h);
	memcpy(h, s1.hist, s1.nhist * sizeof(*h));
	h[s1.nhist] = s1.hist[0];
	h[s1.nhist].t = s1.now + 1;
	h[s1.nhist + 1] = s1.hist[0];
	h[s1.nhist + 1].t = s1.now - CDT_MAX_TIME - 1;
	struct pr_sample *orig = s1.hist;
	size_t norig = s1.nhist;
	s1.hist = h;
	s1.nhist += 2;
	struct tqi_index *x = index_of(&s1, 0);
	json_t *w = match_write(&s1, x);
	assert_non_null(w);
	json_t *t = reload(w);
	match_parse(t, a, &s2);
	assert_int_equal(s2.nhist, norig);
	json_t *d1 = match_decide(&s1, a);
	s1.hist = orig;
	s1.nhist = norig;
	json_t *d2 = match_decide(&s2, a);
	check_same(d1, d2, "decision");
	tqi_free(x);
	json_decref(w);
	json_decref(t);
	json_decref(d1);
	json_decref(d2);
	json_decref(f);
}

static void test_match_refused(void **state)
{
	struct arena *a = *state;
	json_t *f = read_scenario("match-corrections.json");
	struct scm_scenario s;
	match_parse(f, a, &s);
	struct tqi_index *x = index_of(&s, 0);
	json_t *ok = match_write(&s, x);
	assert_non_null(ok);
	json_decref(ok);
	struct pr_config cfg = s.cfg.pr;
#define MATCH_NULL(c, sg, ns, p)                                           \
	assert_null(scw_match(s.now, s.seed, c, sg, ns, x, s.hist, s.nhist, \
			      p))
	cfg.default_share = 7;
	MATCH_NULL(&cfg, s.cfg.seg, s.cfg.nseg, &s.pilot);
	cfg = s.cfg.pr;
	assert_true(cfg.ninst > 0 && cfg.inst[0].nslices > 0);
	struct pr_instance in[PR_MAX_INSTANCES];
	memcpy(in, cfg.inst, cfg.ninst * sizeof(*in));
	cfg.inst = in;
	in[0].slices[0].name = "Group";
	MATCH_NULL(&cfg, s.cfg.seg, s.cfg.nseg, &s.pilot);
	in[0] = s.cfg.pr.inst[0];
	if (in[0].nslices > 1) {
		in[0].slices[1].name = in[0].slices[0].name;
		MATCH_NULL(&cfg, s.cfg.seg, s.cfg.nseg, &s.pilot);
		in[0] = s.cfg.pr.inst[0];
	}
	in[0].max_global = NAN;
	MATCH_NULL(&cfg, s.cfg.seg, s.cfg.nseg, &s.pilot);
	in[0] = s.cfg.pr.inst[0];
	/* segments not usable, and a TQ whose segment is not among them */
	long long bad_seg[] = {500, 500};
	MATCH_NULL(&s.cfg.pr, bad_seg, 2, &s.pilot);
	long long other[] = {1, 2, 3};
	MATCH_NULL(&s.cfg.pr, other, 3, &s.pilot);
	MATCH_NULL(&s.cfg.pr, s.cfg.seg, s.cfg.nseg, NULL);
	assert_true(s.ntqs > 0);
	assert_int_equal(tqi_set_priority(x, s.tqs[0].tq_id, -1), GB_OK);
	MATCH_NULL(&s.cfg.pr, s.cfg.seg, s.cfg.nseg, &s.pilot);
#undef MATCH_NULL
	struct pr_sample h = s.hist[0];
	h.owner = NULL;
	assert_int_equal(tqi_set_priority(x, s.tqs[0].tq_id, 1), GB_OK);
	assert_null(scw_match(s.now, s.seed, &s.cfg.pr, s.cfg.seg, s.cfg.nseg,
			      x, &h, 1, &s.pilot));
	tqi_free(x);
	json_decref(f);
}

/* The optional per-TQ "priority": stored as given; every TQ or none. */
static const char match_min[] = "{"
	"\"now\": \"2024-05-14T12:00:00Z\", \"seed\": 1, \"taskQueues\": ["
	" {\"id\": 1, \"ownerDN\": \"/CN=a\", \"ownerGroup\": \"g\","
	"  \"setup\": \"S\", \"cpuTime\": 500, \"priority\": 0.1,"
	"  \"jobs\": [{\"jobID\": 11}]},"
	" {\"id\": 2, \"ownerDN\": \"/CN=b\", \"ownerGroup\": \"g\","
	"  \"setup\": \"S\", \"cpuTime\": 500, \"priority\": 0}],"
	"\"pilot\": {\"setup\": \"S\", \"cpuTime\": 1000, \"site\": \"X\"}}";

static void test_match_priority(void **state)
{
	struct arena *a = *state;
	struct scm_scenario s;
	char err[512];
	json_t *f = load_text(match_min);
	match_parse(f, a, &s);
	assert_true(s.tqs[0].has_priority && s.tqs[1].has_priority);
	assert_true(same_double(s.tqs[0].priority, 0.1));
	assert_true(same_double(s.tqs[1].priority, 0));
	static const struct {
		const char *path, *value;
		int rc;
		const char *err;
	} cases[] = {
		{"taskQueues[1].priority", NULL, GB_EMISSING,
		 "taskQueues[1].priority: missing (taskQueues[0] has one"},
		{"taskQueues[0].priority", NULL, GB_EINVAL,
		 "taskQueues[1].priority: taskQueues[0] has none"},
		{"taskQueues[0].priority", "-1", GB_ERANGE,
		 "taskQueues[0].priority: expected a number >= 0, got -1"},
		{"taskQueues[0].priority", "\"1\"", GB_ETYPE,
		 "taskQueues[0].priority: expected a number, got string"},
	};
	for (size_t i = 0; i < N(cases); i++) {
		json_t *g = load_text(match_min);
		apply_patch(g, cases[i].path, cases[i].value);
		err[0] = '\0';
		assert_int_equal(scm_parse_scenario(g, a, &s, err, sizeof(err)),
				 cases[i].rc);
		if (strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("got '%s', expected '%s...'", err,
				 cases[i].err);
		json_decref(g);
	}
	/* none at all (or null) is a file without stored priorities */
	apply_patch(f, "taskQueues[0].priority", "null");
	apply_patch(f, "taskQueues[1].priority", NULL);
	match_parse(f, a, &s);
	assert_false(s.tqs[0].has_priority || s.tqs[1].has_priority);
	assert_true(same_double(s.tqs[0].priority, 0));
	json_decref(f);
}

/* ---- timeout scenarios --------------------------------------------------- */

static void timeout_parse(json_t *root, struct arena *a,
			  struct sct_scenario *s)
{
	char err[512] = "";
	if (sct_parse_scenario(root, a, s, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
}

/* Job i of s alone: what scw_timeout is given for it. */
static json_t *timeout_write(const struct sct_scenario *s, size_t i)
{
	const struct sct_job *j = &s->jobs[i];
	const struct sct_queue *q = j->qidx >= 0 ? &s->queues[j->qidx] : NULL;
	return keep("timeout",
		    scw_timeout(s->now, &s->params, &j->j, j->task_id,
				j->gshare, q ? q->name : NULL,
				q ? &q->q : NULL, j->sub_status));
}

static void check_timeout_job(const struct sct_scenario *a, size_t i,
			      const struct sct_scenario *b)
{
	const struct sct_job *x = &a->jobs[i], *y = &b->jobs[0];
	assert_int_equal(b->njobs, 1);
	assert_int_equal(a->now, b->now);
	assert_int_equal(x->j.job_id, y->j.job_id);
	assert_int_equal(x->j.status, y->j.status);
	assert_int_equal(x->j.status_since, y->j.status_since);
	assert_int_equal(x->j.created_at, y->j.created_at);
	assert_int_equal(x->j.last_heartbeat, y->j.last_heartbeat);
	assert_int_equal(x->j.current_priority, y->j.current_priority);
	assert_string_equal(x->j.workflow, y->j.workflow);
	assert_int_equal(x->j.own_stageout, y->j.own_stageout);
	assert_string_equal(x->sub_status, y->sub_status);
	same_str(x->queue, y->queue);
	assert_true((x->qidx < 0) == (y->qidx < 0));
	if (x->qidx < 0)
		return;
	const struct to_queue *p = &a->queues[x->qidx].q, *q = &b->queues[0].q;
	assert_int_equal(p->paused, q->paused);
	assert_int_equal(p->disable_reassign, q->disable_reassign);
	assert_int_equal(p->last_start, q->last_start);
	assert_true(same_double(p->transtimehi, q->transtimehi));
	assert_true(same_double(p->transtimelo, q->transtimelo));
}

/* Every job of s alone through write -> text -> parse -> write, with the
** job's verdict in both. */
static void timeout_rounds(const struct sct_scenario *s, struct arena *a)
{
	struct sct_result r;
	assert_int_equal(sct_run(s, a, &r), GB_OK);
	json_t *all = sct_result_json(s, &r);
	assert_non_null(all);
	for (size_t i = 0; i < s->njobs; i++) {
		json_t *w1 = timeout_write(s, i);
		assert_non_null(w1);
		json_t *t = reload(w1);
		struct sct_scenario s2;
		timeout_parse(t, a, &s2);
		check_timeout_job(s, i, &s2);
		json_t *w2 = timeout_write(&s2, 0);
		check_same(w1, w2, "timeout");
		struct sct_result r2;
		assert_int_equal(sct_run(&s2, a, &r2), GB_OK);
		json_t *one = sct_result_json(&s2, &r2);
		assert_non_null(one);
		check_same(json_array_get(json_object_get(all, "jobs"), i),
			   json_array_get(json_object_get(one, "jobs"), 0),
			   "verdict");
		json_decref(one);
		json_decref(w1);
		json_decref(w2);
		json_decref(t);
	}
	json_decref(all);
}

static const char timeout_max[] = "{"
	"\"kind\": \"timeout\", \"now\": \"2024-05-14T08:30:00Z\","
	"\"params\": {\"HEARTBEAT_TIMEOUT_hpc\": 0.1},"
	"\"queues\": {\"HPC\": {\"status\": \"paused\","
	"  \"disableReassign\": true,"
	"  \"lastStart\": \"1970-01-01T00:00:01Z\", \"transtimehi\": 0.5,"
	"  \"transtimelo\": 1e-300, \"workflow\": \"hpc\"},"
	" \"PLAIN\": {\"status\": \"offline\"}},"
	"\"jobs\": ["
	" {\"jobID\": 9223372036854775807, \"status\": \"transferring\","
	"  \"queue\": \"HPC\", \"statusSince\": \"1970-01-01T00:00:01Z\","
	"  \"createdAt\": \"9999-12-31T23:59:59Z\","
	"  \"lastHeartbeat\": \"2024-05-14T08:29:59Z\","
	"  \"currentPriority\": -1000000, \"jobSubStatus\": \"toStageOut\"},"
	" {\"jobID\": 2, \"status\": \"running\", \"queue\": \"PLAIN\","
	"  \"statusSince\": \"2024-05-01T00:00:00Z\","
	"  \"currentPriority\": 900},"
	" {\"jobID\": 3, \"status\": \"cancelled\","
	"  \"statusSince\": \"2024-05-01T00:00:00Z\","
	"  \"jobSubStatus\": \"\"}]}";

static const char *const timeout_files[] = {"timeout-rules.json", NULL};

static void test_timeout(void **state)
{
	struct arena *a = *state;
	struct sct_scenario s;
	json_t *f = read_scenario(timeout_files[0]);
	timeout_parse(f, a, &s);
	assert_true(s.njobs > 10);
	timeout_rounds(&s, a);
	json_decref(f);
	f = load_text(timeout_max);
	timeout_parse(f, a, &s);
	timeout_rounds(&s, a);
	/* the worker keeps only whether there is a jobSubStatus */
	json_t *w = scw_timeout(s.now, &s.params, &s.jobs[0].j, 0, NULL, "HPC",
				&s.queues[0].q, NULL);
	assert_non_null(w);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(w, "jobs"),
						   0),
				    "jobSubStatus")),
			    SCW_OWN_STAGEOUT);
	json_decref(w);
	json_decref(f);
}

static void test_timeout_refused(void **state)
{
	struct arena *a = *state;
	struct sct_scenario s;
	json_t *f = load_text(timeout_max);
	timeout_parse(f, a, &s);
	const struct to_queue *q = &s.queues[0].q;
	struct to_job j = s.jobs[0].j;
	const struct prm_set *p = &s.params;
	/* a job at a queue without a row: no queue, as to_check sees it */
	struct to_job plain = s.jobs[1].j;
	json_t *w = scw_timeout(s.now, p, &plain, 0, NULL, "PLAIN", NULL, "");
	assert_non_null(w);
	assert_int_equal(json_object_size(json_object_get(w, "queues")), 0);
	assert_null(json_object_get(json_array_get(json_object_get(w, "jobs"),
						   0),
				    "queue"));
	json_decref(w);
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, NULL, q, NULL));
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", NULL, NULL));
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", q, ""));
	assert_null(scw_timeout(s.now, p, NULL, 0, NULL, "HPC", q, NULL));
	assert_null(scw_timeout(0, p, &j, 0, NULL, "HPC", q, NULL));
	j.created_at = 0;
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", q, NULL));
	j = s.jobs[0].j;
	j.status_since = 0;
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", q, NULL));
	j = s.jobs[0].j;
	j.last_heartbeat = -1;
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", q, NULL));
	j = s.jobs[0].j;
	j.status = TO_NSTATUS;
	assert_null(scw_timeout(s.now, p, &j, 0, NULL, "HPC", q, NULL));
	json_decref(f);
}

/* Every sample file is in one of the lists above, so none goes
** unwritten. */
static void test_every_file(void **state)
{
	(void)state;
	const char *const *lists[] = {task_files, jobs_files, anal_files,
				      match_files, timeout_files};
	DIR *dir = opendir("etc/scenarios");
	assert_non_null(dir);
	for (struct dirent *de; (de = readdir(dir)) != NULL;) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		int known = 0;
		for (size_t k = 0; k < N(lists); k++)
			known |= listed(lists[k], de->d_name);
		if (!known)
			fail_msg("%s: not written by any test here",
				 de->d_name);
	}
	closedir(dir);
}

/* Each test gets an arena of its own, freed after it. */
static int arena_setup(void **state)
{
	struct arena *a = malloc(sizeof(*a));
	if (a == NULL)
		return -1;
	arena_init(a, ARENA_CAP);
	*state = a;
	return 0;
}

static int arena_teardown(void **state)
{
	arena_free(*state);
	free(*state);
	return 0;
}

#define T(f) cmocka_unit_test_setup_teardown(f, arena_setup, arena_teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_task),
		T(test_task_refused),
		T(test_jobs),
		T(test_analysis),
		T(test_jobs_unsayable),
		T(test_jobs_refused),
		T(test_match),
		T(test_match_unsayable),
		T(test_match_refused),
		T(test_match_priority),
		T(test_timeout),
		T(test_timeout_refused),
		cmocka_unit_test(test_every_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
