/*
** test_scenario_jobs.c — job scenarios, grids and requests from JSON
** (scenario_jobs.c), the explain renderers (report_jobs.c) and the example
** scenarios in etc/scenarios/jobs-*.json.
**
** Runs with the repository root as working directory (ctest sets it). Error
** messages are checked as a table of {patch applied to a small valid
** scenario, expected code and message}, so every path names its field.
** Each example file is decided through scj_run, the code path of
** `gridbroker explain`, and checked against the outcome it was written to
** show (its "description" says the same in words).
*/
#include "gbtest.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "gb_error.h"
#include "report/record.h"
#include "report/render.h"
#include "report/report_jobs.h"
#include "explain/scenario.h"
#include "explain/scenario_jobs.h"

#define ARENA_CAP (256u << 20)

/* ---- helpers ------------------------------------------------------------- */

#include "jsonpatch.h"

/* ---- a small valid scenario ---------------------------------------------- */

static const char *base_scenario =
	"{\"now\": \"2024-05-14T08:30:00Z\", \"seed\": 9,"
	" \"params\": {\"NW_ACTIVE\": 1},"
	" \"queues\": ["
	"  {\"name\": \"Q1\", \"status\": \"online\", \"site\": \"S1\","
	"   \"nucleus\": \"NUC\", \"coreCount\": 8, \"corepower\": 12.5,"
	"   \"maxrss\": 2000, \"maxwdir\": 30000, \"maxtime\": 86400,"
	"   \"releases\": \"AUTO\", \"directAccess\": true,"
	"   \"wnconnectivity\": \"full#IPv6\", \"maxDiskIO\": 300,"
	"   \"diskIOAvg\": 20, \"eventService\": \"allowed\","
	"   \"numSlots\": 0, \"lastPilotAge\": 120, \"lastStartAge\": null,"
	"   \"storage\": {\"name\": \"S1_DATADISK\", \"spaceFree\": 800},"
	"   \"jobs\": {\"MC Simul\": {\"running\": 100, \"activated\": 7},"
	"            \"MC Reco\": {\"running\": 3}}},"
	"  {\"name\": \"Q2\", \"status\": \"brokeroff\", \"site\": \"S2\","
	"   \"releases\": [\"21.0.38\"],"
	"   \"storage\": {\"name\": \"S2_DATADISK\", \"spaceFree\": 300,"
	"                \"blacklisted\": true}}],"
	" \"sw\": {"
	"  \"Q1\": {\"cmtconfigs\": [\"x86_64-centos7-gcc8-opt\"],"
	"    \"containers\": [\"any\"], \"cvmfs\": [\"atlas\"],"
	"    \"architectures\": [{\"type\": \"cpu\", \"arch\": [\"x86_64\"],"
	"      \"vendor\": [\"intel\", \"excl\"], \"instr\": [\"avx2\"]},"
	"      {\"type\": \"gpu\", \"vendor\": [\"nvidia\"], \"model\": []}],"
	"    \"tags\": [{\"cmtconfig\": \"x86_64-centos7-gcc8-opt\","
	"      \"container_name\": \"\", \"project\": \"Athena\","
	"      \"release\": \"21.0.38\", \"sources\": [\"/a\", \"/b\"],"
	"      \"tag\": \"VO-atlas-Athena-21.0.38\"}]},"
	"  \"ALL\": {\"tags\": [{\"container_name\": \"img\","
	"      \"sources\": [\"/cvmfs/img\"]}]}},"
	" \"links\": ["
	"  {\"site\": \"S2\", \"nucleus\": \"NUC\", \"blocked\": false,"
	"   \"queuedFiles\": 4, \"mbps1h\": null, \"mbps1d\": 80,"
	"   \"closeness\": 3},"
	"  {\"site\": \"S2\", \"nucleus\": \"OTHER\", \"closeness\": -1}],"
	" \"fileReplicas\": {\"f.1\": [\"S1_DATADISK\", \"S2_DATADISK\"],"
	"                   \"f.2\": []},"
	" \"task\": {\"taskID\": 7, \"nucleus\": \"NUC\","
	"   \"gshare\": \"MC Simul\", \"currentPriority\": 500,"
	"   \"processingType\": \"simul\", \"coreCount\": 8,"
	"   \"ramCount\": 1000, \"outDiskCount\": 300,"
	"   \"outDiskCountUnit\": \"kBPerEvent\", \"cpuTime\": 10,"
	"   \"ipConnectivity\": \"http#IPv6\","
	"   \"architecture\": \"x86_64-centos7-gcc8-opt#x86_64-intel\","
	"   \"swProject\": \"Athena\", \"swVersion\": \"21.0.38\","
	"   \"swKind\": \"nightly\", \"jobScope\": \"nucleus\","
	"   \"preassigned\": [\"Q1\"],"
	"   \"preassignSkippedSince\": \"2024-05-13T08:30:00Z\","
	"   \"merge\": true,"
	"   \"jobs\": [{\"jobID\": 11, \"nEvents\": 100, \"inputFiles\":"
	"     [{\"lfn\": \"f.1\", \"size\": 1500}, {\"lfn\": \"f.2\","
	"       \"size\": 500}]},"
	"     {\"jobID\": 12, \"nEvents\": 50}]}}";

#define NOW 1715675400LL /* 2024-05-14T08:30:00Z */

static void parse_ok(json_t *root, struct arena *a, struct scj_scenario *sc)
{
	char err[512] = "";
	int rc = scj_parse_scenario(root, a, sc, err, sizeof(err));
	if (rc != GB_OK)
		fail_msg("%s: %s", gb_errname(rc), err);
}

static void test_valid_base(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scj_scenario sc;
	parse_ok(root, &a, &sc);
	json_decref(root); /* nothing may point into the JSON */
	assert_int_equal(sc.now, NOW);
	assert_int_equal(sc.seed, 9);
	assert_int_equal(sc.params.n, 1);
	assert_string_equal(sc.params.kv[0].name, "NW_ACTIVE");

	const struct gm_grid *g = &sc.grid;
	assert_int_equal(g->nqueues, 2);
	const struct jb_queue *q1 = &g->queues[0].q, *q2 = &g->queues[1].q;
	assert_string_equal(q1->name, "Q1");
	assert_string_equal(q1->nucleus, "NUC");
	assert_int_equal(q1->core_count, 8);
	assert_near(q1->corepower, 12.5, 0);
	assert_near(q1->max_rss_per_core, 2000, 0);
	assert_int_equal(q1->releases, JB_REL_AUTO);
	assert_true(q1->direct_access);
	assert_near(q1->max_diskio, 300, 0);
	assert_int_equal(q1->es, JB_ES_ALLOWED);
	assert_int_equal(q1->num_slots, 0);
	assert_int_equal(q1->last_pilot, NOW - 120);
	assert_int_equal(q1->last_start, 0); /* null: never */
	assert_string_equal(q1->storage, "S1_DATADISK");
	assert_false(q1->storage_blacklisted);
	assert_int_equal(g->queues[0].ncounts, 2);
	assert_near(g->queues[0].counts[0].k.activated, 7, 0);
	assert_near(g->queues[0].counts[0].k.defined, 0, 0);
	/* defaults of a queue that gives only the required fields */
	assert_string_equal(q2->status, "brokeroff");
	assert_string_equal(q2->nucleus, "");
	assert_int_equal(q2->core_count, 1);
	assert_near(q2->corepower, 10, 0);
	assert_true(isnan(q2->max_diskio));
	assert_int_equal(q2->num_slots, -1);
	assert_int_equal(q2->es, JB_ES_NONE);
	assert_int_equal(q2->last_pilot, 0);
	assert_string_equal(q2->wnconnectivity, "");
	assert_int_equal(q2->releases, JB_REL_LIST);
	assert_int_equal(q2->nrelease_list, 1);
	assert_string_equal(q2->release_list[0], "21.0.38");
	assert_true(q2->storage_blacklisted);
	assert_int_equal(g->queues[1].ncounts, 0);
	assert_null(q2->sw);
	assert_null(g->queues[1].sw_json);

	/* RC-01 dictionary */
	const struct rc_sw *sw = q1->sw;
	assert_non_null(sw);
	assert_int_equal(sw->ncmtconfigs, 1);
	assert_non_null(sw->cpu);
	assert_int_equal(sw->cpu->nvendor, 2);
	assert_string_equal(sw->cpu->vendor[1], "excl");
	assert_non_null(sw->gpu);
	assert_int_equal(sw->gpu->nmodel, 0);
	assert_int_equal(sw->ntags, 1);
	assert_int_equal(sw->tags[0].nsources, 2);
	assert_string_equal(sw->tags[0].release, "21.0.38");
	assert_non_null(g->all_sw);
	assert_string_equal(g->all_sw->tags[0].sources[0], "/cvmfs/img");
	assert_string_equal(g->all_sw->tags[0].project, "");
	/* compact text with sorted keys, as stored in MariaDB */
	assert_non_null(strstr(g->queues[0].sw_json,
			       "{\"architectures\":[{\"arch\":[\"x86_64\"],"));
	assert_null(strchr(g->all_sw_json, ' '));

	/* links and replicas */
	assert_int_equal(g->nlinks, 2);
	assert_true(isnan(g->links[0].l.mbps_1h));
	assert_near(g->links[0].l.mbps_1d, 80, 0);
	assert_true(isnan(g->links[0].l.mbps_1w));
	assert_near(g->links[1].l.closeness, -1, 0);
	assert_near(g->links[1].l.queued_files, 0, 0);
	assert_int_equal(g->nfiles, 2);
	assert_int_equal(g->files[1].nstorages, 0);

	/* the request */
	const struct gm_request *r = &sc.req;
	assert_int_equal(r->t.task_id, 7);
	assert_string_equal(r->t.gshare, "MC Simul");
	assert_int_equal(r->t.scope, TB_SCOPE_NUCLEUS_ONLY);
	assert_int_equal(r->t.out_disk_unit, JB_OUT_KB_PER_EVENT);
	assert_near(r->t.cpu_efficiency, 100, 0); /* default */
	assert_int_equal(r->need.kind, RC_NIGHTLY);
	assert_string_equal(r->need.sw_version, "21.0.38");
	assert_string_equal(r->need.container_name, "");
	assert_int_equal(r->t.npreassigned, 1);
	assert_int_equal(r->t.preassign_skipped_since, NOW - 86400);
	assert_true(r->t.merge);
	assert_false(r->t.scout);
	assert_int_equal(r->njobs, 2);
	assert_int_equal(r->jobs[0].ninputs, 2);
	assert_near(r->jobs[0].inputs[1].size_mb, 500, 0);
	assert_int_equal(r->jobs[1].ninputs, 0);
	assert_null(r->t.jobs); /* gm_resolve's business */
	arena_free(&a);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete */
		int rc;
		const char *msg;
	} cases[] = {
		{"now", "\"noon\"", GB_ERANGE,
		 "now: expected an RFC 3339 time such as 2024-05-14T08:30:00Z"},
		{"seed", "-1", GB_ERANGE, "seed: expected an integer >= 0, got -1"},
		{"seed", NULL, GB_EMISSING, "seed: missing"},
		{"nuclei", "[]", GB_EINVAL, "nuclei: unknown field"},
		{"params.NW_ACTIVE", "3", GB_ERANGE,
		 "params.NW_ACTIVE: expected 0 or 1, got 3"},
		{"params.NOPE", "1", GB_ENOTFOUND, "params.NOPE: unknown parameter"},
		{"queues", "{}", GB_ETYPE, "queues: expected array, got object"},
		{"queues[1]", "3", GB_ETYPE, "queues[1]: expected object, got integer"},
		{"queues[0].maxrss", "-1", GB_ERANGE,
		 "queues[0].maxrss: expected a number >= 0, got -1"},
		{"queues[0].maxrs", "1", GB_EINVAL, "queues[0].maxrs: unknown field"},
		{"queues[0].corepower", "0", GB_ERANGE,
		 "queues[0].corepower: expected a number > 0, got 0"},
		{"queues[0].coreCount", "2.5", GB_ETYPE,
		 "queues[0].coreCount: expected integer, got real"},
		{"queues[0].numSlots", "-2", GB_ERANGE,
		 "queues[0].numSlots: expected an integer in [-1, 1000000000], got -2"},
		{"queues[1].name", "\"Q1\"", GB_EDUP,
		 "queues[1].name: duplicate queue name 'Q1' (also queues[0])"},
		{"queues[1].name", "\"\"", GB_ERANGE,
		 "queues[1].name: expected a non-empty string"},
		{"queues[0].status", "\"up\"", GB_ERANGE,
		 "queues[0].status: unknown value 'up' (expected \"online\", "
		 "\"offline\", \"brokeroff\", \"test\", \"standby\", \"paused\")"},
		{"queues[1].site", NULL, GB_EMISSING, "queues[1].site: missing"},
		{"queues[0].releases", "\"SOME\"", GB_ERANGE,
		 "queues[0].releases: expected \"ANY\", \"AUTO\" or a list"},
		{"queues[0].releases", "7", GB_ETYPE,
		 "queues[0].releases: expected string or array, got integer"},
		{"queues[1].releases", "[\"21.0.38\", \"\"]", GB_ERANGE,
		 "queues[1].releases[1]: expected a non-empty string"},
		{"queues[0].eventService", "\"yes\"", GB_ERANGE,
		 "queues[0].eventService: unknown value 'yes'"},
		{"queues[0].wnconnectivity", "\"fast#IPv6\"", GB_ERANGE,
		 "queues[0].wnconnectivity: expected \"\" or full|http|none"},
		{"queues[0].lastPilotAge", "-5", GB_ERANGE,
		 "queues[0].lastPilotAge: expected a number in [0, 1e+10], got -5"},
		{"queues[0].directAccess", "1", GB_ETYPE,
		 "queues[0].directAccess: expected boolean, got integer"},
		{"queues[1].storage", NULL, GB_EMISSING, "queues[1].storage: missing"},
		{"queues[1].storage.spaceFree", NULL, GB_EMISSING,
		 "queues[1].storage.spaceFree: missing"},
		{"queues[1].storage.size", "1", GB_EINVAL,
		 "queues[1].storage.size: unknown field"},
		{"queues[0].jobs", "[]", GB_ETYPE,
		 "queues[0].jobs: expected object, got array"},
		{"queues[0].jobs.MC Simul.running", "-3", GB_ERANGE,
		 "queues[0].jobs[\"MC Simul\"].running: expected a number >= 0, "
		 "got -3"},
		{"queues[0].jobs.MC Simul.queued", "3", GB_EINVAL,
		 "queues[0].jobs[\"MC Simul\"].queued: unknown field"},
		{"sw.Q3", "{}", GB_ENOTFOUND,
		 "sw[\"Q3\"]: no queue of that name in queues"},
		{"sw.Q1.releases", "[]", GB_EINVAL, "sw[\"Q1\"].releases: unknown field"},
		{"sw.Q1.cvmfs", "\"atlas\"", GB_ETYPE,
		 "sw[\"Q1\"].cvmfs: expected array, got string"},
		{"sw.Q1.cvmfs", "[1]", GB_ETYPE,
		 "sw[\"Q1\"].cvmfs[0]: expected string, got integer"},
		{"sw.Q1.architectures[2]", "{\"arch\": []}", GB_EMISSING,
		 "sw[\"Q1\"].architectures[2].type: missing"},
		{"sw.Q1.architectures[2]", "{\"type\": \"tpu\"}", GB_ERANGE,
		 "sw[\"Q1\"].architectures[2].type: unknown value 'tpu'"},
		{"sw.Q1.architectures[2]", "{\"type\": \"cpu\"}", GB_EDUP,
		 "sw[\"Q1\"].architectures[2]: a second \"cpu\" dictionary"},
		{"sw.Q1.architectures[1].instr", "[]", GB_EINVAL,
		 "sw[\"Q1\"].architectures[1].instr: unknown field"},
		{"sw.Q1.tags[0].sources", "[\"/a\", 2]", GB_ETYPE,
		 "sw[\"Q1\"].tags[0].sources[1]: expected string, got integer"},
		{"sw.Q1.tags[0].version", "\"1\"", GB_EINVAL,
		 "sw[\"Q1\"].tags[0].version: unknown field"},
		{"links[1].nucleus", "\"NUC\"", GB_EDUP,
		 "links[1]: duplicate link 'S2 -> NUC' (also links[0])"},
		{"links[0].closeness", "-0.5", GB_ERANGE,
		 "links[0].closeness: expected -1 (blocked) or a number in [0, 11]"},
		{"links[0].closeness", "12", GB_ERANGE,
		 "links[0].closeness: expected a number in [-1, 11], got 12"},
		{"links[0].site", NULL, GB_EMISSING, "links[0].site: missing"},
		{"links[0].mbps1w", "\"fast\"", GB_ETYPE,
		 "links[0].mbps1w: expected a number, got string"},
		{"fileReplicas", "{\"f.3\": [\"A\", \"B\", \"A\"]}", GB_EDUP,
		 "fileReplicas[\"f.3\"][2]: duplicate storage 'A' (also "
		 "fileReplicas[\"f.3\"][0])"},
		{"fileReplicas", "{\"f.3\": \"A\"}", GB_ETYPE,
		 "fileReplicas[\"f.3\"]: expected array, got string"},
		{"fileReplicas", "{\"f.3\": null}", GB_ETYPE,
		 "fileReplicas[\"f.3\"]: expected array, got null"},
		{"task", NULL, GB_EMISSING, "task: missing"},
		{"task.nucleus", NULL, GB_EMISSING, "task.nucleus: missing"},
		{"task.gshare", "\"\"", GB_ERANGE,
		 "task.gshare: expected a non-empty string"},
		{"task.taskID", "0", GB_ERANGE,
		 "task.taskID: expected a positive integer, got 0"},
		{"task.ioIntensty", "1", GB_EINVAL, "task.ioIntensty: unknown field"},
		{"task.coreCount", "0", GB_ERANGE,
		 "task.coreCount: expected an integer in [1, 1000000], got 0"},
		{"task.cpuEfficiency", "0", GB_ERANGE,
		 "task.cpuEfficiency: expected a number in (0, 100], got 0"},
		{"task.cpuEfficiency", "150", GB_ERANGE,
		 "task.cpuEfficiency: expected a number in (0, 100], got 150"},
		{"task.currentPriority", "-1", GB_ERANGE,
		 "task.currentPriority: expected an integer in [0, 1000000]"},
		{"task.ipConnectivity", "\"http#IPv5\"", GB_ERANGE,
		 "task.ipConnectivity: expected \"\" or full|http|none"},
		{"task.architecture", "\"a@b@c\"", GB_ERANGE,
		 "task.architecture: expected sw_platform<@base_platform>"},
		{"task.jobScope", "\"world\"", GB_ERANGE,
		 "task.jobScope: unknown value 'world' (expected \"satellites\", "
		 "\"nucleus\")"},
		{"task.swKind", "\"cache\"", GB_ERANGE,
		 "task.swKind: unknown value 'cache'"},
		{"task.preassigned", "[\"Q1\", \"\"]", GB_ERANGE,
		 "task.preassigned[1]: expected a non-empty string"},
		{"task.preassignSkippedSince", "1715000000", GB_ETYPE,
		 "task.preassignSkippedSince: expected string, got integer"},
		{"task.preassignSkippedSince", "\"yesterday\"", GB_ERANGE,
		 "task.preassignSkippedSince: expected an RFC 3339 time"},
		{"task.outDiskCountUnit", "5", GB_ETYPE,
		 "task.outDiskCountUnit: expected string, got integer"},
		{"task.jobs", NULL, GB_EMISSING, "task.jobs: missing"},
		{"task.jobs", "[]", GB_ERANGE, "task.jobs: expected at least one job"},
		{"task.jobs[1].jobID", "11", GB_EDUP,
		 "task.jobs[1].jobID: duplicate jobID '11' (also task.jobs[0])"},
		{"task.jobs[1].jobID", NULL, GB_EMISSING,
		 "task.jobs[1].jobID: missing"},
		{"task.jobs[1].nEvents", "-1", GB_ERANGE,
		 "task.jobs[1].nEvents: expected an integer in [0, 1000000000]"},
		{"task.jobs[0].inputFiles[1].lfn", "\"f.1\"", GB_EDUP,
		 "task.jobs[0].inputFiles[1].lfn: duplicate input file 'f.1' "
		 "(also task.jobs[0].inputFiles[0])"},
		{"task.jobs[0].inputFiles[0].size", NULL, GB_EMISSING,
		 "task.jobs[0].inputFiles[0].size: missing"},
		{"task.jobs[0].inputFiles[0].size", "-2", GB_ERANGE,
		 "task.jobs[0].inputFiles[0].size: expected a number >= 0, got -2"},
		{"task.jobs[0].inputFiles[0].guid", "\"x\"", GB_EINVAL,
		 "task.jobs[0].inputFiles[0].guid: unknown field"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(base_scenario);
		apply_patch(root, cases[i].path, cases[i].value);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scj_scenario sc;
		char err[512] = "";
		int rc = scj_parse_scenario(root, &a, &sc, err, sizeof(err));
		if (rc != cases[i].rc || strstr(err, cases[i].msg) != err)
			fail_msg("case %zu (%s): got %s '%s', want %s '%s...'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* Limits built in code: they bound what a file makes the parser hold. */
static void test_limits(void **state)
{
	(void)state;
	static const char *const msgs[] = {
		"task.jobs: array of 10001 exceeds the limit of 10000",
		"task.jobs[0].inputFiles: array of 201 exceeds the limit of 200",
		"queues[0].jobs: 257 entries exceed the limit of 256",
	};
	for (size_t i = 0; i < 3; i++) {
		json_t *root = load_text(base_scenario);
		json_t *jobs = json_object_get(json_object_get(root, "task"),
					       "jobs");
		json_t *files = json_object_get(json_array_get(jobs, 0),
						"inputFiles");
		json_t *shares = json_object_get(
			json_array_get(json_object_get(root, "queues"), 0),
			"jobs");
		/* one beyond each limit; the base already has two of each */
		size_t limit = i == 0 ? SCJ_MAX_JOBS
			       : i == 1 ? SCJ_MAX_INPUTS
					: SCJ_MAX_GSHARES;
		for (size_t k = 2; k <= limit; k++) {
			char name[32];
			snprintf(name, sizeof(name), "x%zu", k);
			if (i == 0)
				json_array_append_new(
					jobs, json_pack("{s:I}", "jobID",
							(json_int_t)(100 + k)));
			else if (i == 1)
				json_array_append_new(
					files, json_pack("{s:s,s:i}", "lfn",
							 name, "size", 1));
			else
				json_object_set_new(shares, name,
						    json_object());
		}
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scj_scenario sc;
		char err[512] = "";
		assert_int_equal(scj_parse_scenario(root, &a, &sc, err,
						    sizeof(err)),
				 GB_ETOOBIG);
		assert_string_equal(err, msgs[i]);
		json_decref(root);
		arena_free(&a);
	}
	/* strings: the codec's limit, so submit and worker agree */
	json_t *root = load_text(base_scenario);
	char big[COD_MAX_STRING + 1];
	memset(big, 'a', COD_MAX_STRING);
	big[COD_MAX_STRING] = '\0';
	json_object_set_new(json_object_get(root, "task"), "processingType",
			    json_string(big));
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scj_scenario sc;
	char err[512] = "";
	assert_int_equal(scj_parse_scenario(root, &a, &sc, err, sizeof(err)),
			 GB_ETOOBIG);
	assert_string_equal(err, "task.processingType: string of 256 bytes "
				 "exceeds the limit of 255");
	json_decref(root);
	arena_free(&a);
}

/* A request for `job submit`: nucleus and gshare may come from the task
** record; a scenario needs them. */
static void test_request_outside_scenario(void **state)
{
	(void)state;
	json_t *obj = load_text("{\"taskID\": 5, \"jobs\": [{\"jobID\": 1}]}");
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct gm_request r;
	char err[256] = "";
	assert_int_equal(scj_parse_request(obj, "request", &a, 0, &r, err,
					   sizeof(err)),
			 GB_OK);
	assert_null(r.t.nucleus);
	assert_null(r.t.gshare);
	assert_int_equal(r.t.scope, TB_SCOPE_SATELLITES);
	assert_int_equal(r.t.core_count, 1);
	assert_int_equal(r.njobs, 1);
	assert_int_equal(r.jobs[0].nevents, 0);
	assert_int_equal(scj_parse_request(obj, "request", &a, 1, &r, err,
					   sizeof(err)),
			 GB_EMISSING);
	assert_string_equal(err, "request.nucleus: missing");
	assert_int_equal(scj_parse_request(NULL, "request", &a, 0, &r, err,
					   sizeof(err)),
			 GB_EMISSING);
	json_decref(obj);
	arena_free(&a);
}

/* What the store keeps (sw_json) parses back to the same dictionary. */
static void test_sw_text_round_trip(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scj_scenario sc;
	parse_ok(root, &a, &sc);
	const struct rc_sw *x = sc.grid.queues[0].q.sw;
	struct rc_sw y;
	char err[256] = "";
	assert_int_equal(gm_parse_sw_text(sc.grid.queues[0].sw_json, "sw", &a,
					   &y, err, sizeof(err)),
			 GB_OK);
	assert_int_equal(y.ncmtconfigs, x->ncmtconfigs);
	assert_string_equal(y.cmtconfigs[0], x->cmtconfigs[0]);
	assert_int_equal(y.ncontainers, x->ncontainers);
	assert_int_equal(y.ncvmfs, x->ncvmfs);
	assert_int_equal(y.cpu->narch, x->cpu->narch);
	assert_string_equal(y.cpu->vendor[1], x->cpu->vendor[1]);
	assert_string_equal(y.cpu->instr[0], x->cpu->instr[0]);
	assert_int_equal(y.gpu->nvendor, x->gpu->nvendor);
	assert_int_equal(y.ntags, x->ntags);
	assert_string_equal(y.tags[0].project, x->tags[0].project);
	assert_string_equal(y.tags[0].sources[1], x->tags[0].sources[1]);
	/* and the ALL text */
	assert_int_equal(gm_parse_sw_text(sc.grid.all_sw_json, "ALL", &a, &y,
					   err, sizeof(err)),
			 GB_OK);
	assert_string_equal(y.tags[0].container_name, "img");

	static const struct {
		const char *text;
		int rc;
		const char *msg;
	} bad[] = {
		{"{\"cvmfs\": [", GB_EDECODE, "q7: invalid JSON at 1:11"},
		{"[]", GB_ETYPE, "q7: expected object, got array"},
		{"{\"cvmfs\": {}}", GB_ETYPE,
		 "q7.cvmfs: expected array, got object"},
		{"{\"a\": 1, \"a\": 2}", GB_EDECODE, "q7: invalid JSON"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = gm_parse_sw_text(bad[i].text, "q7", &a, &y, err,
					   sizeof(err));
		if (rc != bad[i].rc || strstr(err, bad[i].msg) != err)
			fail_msg("case %zu: %s '%s'", i, gb_errname(rc), err);
	}
	json_decref(root);
	arena_free(&a);
}

static void test_is_job_scenario(void **state)
{
	(void)state;
	json_t *j = load_text(base_scenario);
	assert_true(scj_is_job_scenario(j));
	json_object_del(j, "queues");
	assert_false(scj_is_job_scenario(j));
	json_decref(j);
	j = load_text("[]");
	assert_false(scj_is_job_scenario(j));
	json_decref(j);
	assert_false(scj_is_job_scenario(NULL));
}

/* ---- etc/scenarios/jobs-*.json ------------------------------------------- */

struct expect {
	const char *file;
	enum dec_outcome outcome;
	const char *best;    /* the best queues as a set, comma-separated */
	const char *drops;   /* "QUEUE:RULE:code" of the first reason */
	const char *detail;  /* a substring of one drop's first reason */
	const char *activated; /* queues whose jobs are all activated */
};

static const struct expect examples[] = {
	{"jobs-assign.json", DEC_ASSIGNED,
	 "BNL_PROD_UCORE,AGLT2_UCORE,MWT2_UCORE,SWT2_CPB_UCORE,NET2_UCORE",
	 "BNL_PROD_TEST_UCORE:PJ-01:test_queue,"
	 "OU_OSCER_ATLAS_UCORE:PJ-04:status,UTA_SWT2_UCORE:PJ-05:link_blocked,"
	 "WT2_SCORE:PJ-13:cpucore,IU_OSG_AUTO_UCORE:RC-01:no_sw,"
	 "SLAC_UCORE:PJ-15:highmemory,CA-SFU-T2_UCORE:PJ-17:disk,"
	 "CA-VICTORIA_UCORE:PJ-18:space,LUCILLE_UCORE:PJ-21:longwalltime,"
	 "TRIUMF_UCORE:PJ-26:nopilot,OU_OCHEP_SWT2_UCORE:PJ-33:cap",
	 "memory 13680 MB > maxrss 12000 MB (8 cores)", "BNL_PROD_UCORE"},
	{"jobs-pending.json", DEC_PENDING, "",
	 "CERN-PROD_UCORE:PJ-04:status,CERN-P1_UCORE:PJ-26:nopilot,"
	 "DESY-HH_UCORE:PJ-15:lowmemory,FZK-LCG2_UCORE:PJ-10:zeroshare,"
	 "IN2P3-CC_UCORE:PJ-22:network,PIC_UCORE:PJ-23:nones,"
	 "RAL-LCG2_UCORE:PJ-24:transferring,NDGF-T1_UCORE:PJ-12:diskIO,"
	 "SARA-MATRIX_UCORE:PJ-19:blacklist",
	 "memory 7200 MB < minrss 32000 MB (8 cores)", ""},
	{"jobs-release-auto.json", DEC_ASSIGNED,
	 "AGLT2_CPU_UCORE,NET2_TAGS_UCORE",
	 "AGLT2_UCORE:RC-03:gpu_vendor,NET2_NOARCH_UCORE:RC-03:cpu,"
	 "SLAC_ANY_UCORE:PJ-14:hw_unchecked,"
	 "CERN-ARM_UCORE:RC-03:cpu_arch,MWT2_AMD_UCORE:RC-03:cpu_vendor,"
	 "SWT2_CPB_AVX512_UCORE:RC-03:cpu_instr,BU_OLD_UCORE:RC-07:release,"
	 "UTA_SLC6_UCORE:RC-06:platform,OU_NOSW_UCORE:RC-01:no_sw,"
	 "WT2_LIST_UCORE:PJ-14:cache",
	 "the queue's 2 gpu vendors are exclusive (excl)", NULL},
	{"jobs-container.json", DEC_ASSIGNED,
	 "AGLT2_GPU,MWT2_GPU,BNL_GPU,SLAC_GPU",
	 "NET2_GPU:RC-05:container,SWT2_CPB_CPU:RC-03:gpu,"
	 "UTA_AMD_GPU:RC-03:gpu_vendor,CERN-A100_GPU:RC-03:gpu_model",
	 "container atlas/athena:22.0.1 matches none", NULL},
	/* PJ-28: 800 slots on 8 cores are 100 running, cap 200 < 260. */
	{"jobs-numslots.json", DEC_ASSIGNED,
	 "NET2_MCORE,MWT2_MCORE_SLOTS,AGLT2_MCORE_ZERO,SWT2_MCORE_SLOTS",
	 "BNL_MCORE_SLOTS:PJ-33:cap,UTA_MCORE_NOPILOT:PJ-26:nopilot",
	 "activated+starting 260 > cap 200 = max(NQUEUELIMITSITE 20, 2 x "
	 "running 100)", NULL},
	/* PJ-17: 2 MB per event x 1000 + 1000 = 3000 MB; maxwdir x 8 / 8.
	** PJ-12: 3200 kB/s over 8 cores. */
	{"jobs-disk-units.json", DEC_ASSIGNED,
	 "BNL_MCORE,MWT2_UCORE,NDGF-T1_MCORE",
	 "AGLT2_MCORE:PJ-17:disk,SARA-MATRIX_MCORE:PJ-12:diskIO",
	 "disk 3000 MB >= 2900 MB: maxwdir 2900 MB x task/queue cores 1",
	 NULL},
	/* PJ-25: t1Weight -0.5 < 0 keeps normal jobs at the nucleus. */
	{"jobs-t1weight.json", DEC_ASSIGNED, "BNL_PROD_UCORE",
	 "AGLT2_UCORE:PJ-25:t1weight,MWT2_UCORE:PJ-25:t1weight,"
	 "NET2_UCORE:PJ-25:t1weight,SWT2_CPB_UCORE:PJ-25:t1weight,"
	 "OU_OCHEP_SWT2_UCORE:PJ-25:t1weight,TRIUMF_UCORE:PJ-25:t1weight,"
	 "BNL_PROD_TEST_UCORE:PJ-01:test_queue,"
	 "OU_OSCER_ATLAS_UCORE:PJ-04:status,UTA_SWT2_UCORE:PJ-05:link_blocked,"
	 "WT2_SCORE:PJ-13:cpucore,IU_OSG_AUTO_UCORE:RC-01:no_sw,"
	 "SLAC_UCORE:PJ-15:highmemory,CA-SFU-T2_UCORE:PJ-17:disk,"
	 "CA-VICTORIA_UCORE:PJ-18:space,LUCILLE_UCORE:PJ-21:longwalltime",
	 "t1Weight -0.5 < 0: only queues at the nucleus", "BNL_PROD_UCORE"},
	/* PJ-33/PJ-34/PJ-36: priority 1000 is express, so no cap: the three
	** nucleus queues over or at the cap of 20 all take jobs. */
	{"jobs-express.json", DEC_ASSIGNED,
	 "CERN-PROD_MCORE,CERN-PROD_HIMEM,CERN-P1_MCORE",
	 "DESY-HH_MCORE:PJ-08:high_priority",
	 "priority 1000 (>= 800) or scout 0: only queues at the nucleus",
	 "CERN-PROD_MCORE,CERN-PROD_HIMEM,CERN-P1_MCORE"},
	{"jobs-network.json", DEC_ASSIGNED,
	 "CERN-PROD_UCORE,DESY-HH_UCORE,PIC_UCORE,GRIF_UCORE,"
	 "BEIJING-LCG2_UCORE",
	 "IFIC-LCG2_UCORE:PJ-27:lowNetworkWeight,"
	 "praguelcg2_UCORE:PJ-27:lowNetworkWeight,"
	 "TW-FTT_UCORE:PJ-27:lowNetworkWeight,"
	 "UKI-NORTHGRID-MAN-HEP_UCORE:PJ-06:link_unusable",
	 "network weight 1.65 < NW_THRESHOLD x NW_WEIGHT_MULTIPLIER 1.7", NULL},
};

static int in_list(const char *name, const char *list)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

static size_t list_len(const char *list)
{
	size_t n = list[0] != '\0';
	for (const char *p = list; *p; p++)
		n += *p == ',';
	return n;
}

static void check_example(const struct expect *x, const struct md_jobs *res)
{
	const struct dec_decision *d = &res->dec;
	if (d->outcome != x->outcome)
		fail_msg("%s: %s", x->file, dec_outcome_name(d->outcome));
	assert_int_equal(res->plan.nbest, list_len(x->best));
	for (size_t b = 0; b < res->plan.nbest; b++)
		if (!in_list(d->cands[res->plan.best[b]].name, x->best))
			fail_msg("%s: %s among the best", x->file,
				 d->cands[res->plan.best[b]].name);
	int detail_seen = 0;
	size_t ndrops = 0;
	for (size_t i = 0; i < d->ncands; i++) {
		const struct dec_candidate *c = &d->cands[i];
		if (!dec_dropped(c)) {
			assert_true(in_list(c->name, x->best));
			continue;
		}
		char buf[256];
		snprintf(buf, sizeof(buf), "%s:%s:%s", c->name,
			 c->reasons[0].rule, c->reasons[0].code);
		if (!in_list(buf, x->drops))
			fail_msg("%s: dropped as %s", x->file, buf);
		ndrops++;
		dec_reason_format(&c->reasons[0], buf, sizeof(buf));
		detail_seen |= strstr(buf, x->detail) != NULL;
	}
	assert_int_equal(ndrops, list_len(x->drops));
	if (!detail_seen)
		fail_msg("%s: no reason says '%s'", x->file, x->detail);
	/* every job placed when assigned; statuses follow locality */
	size_t placed = 0;
	for (size_t j = 0; j < res->req.njobs; j++) {
		long qi = res->plan.job_queue[j];
		if (qi < 0)
			continue;
		placed++;
		int act = res->plan.job_status[j] == JB_JOB_ACTIVATED;
		if (x->activated)
			assert_int_equal(act,
					 in_list(d->cands[qi].name, x->activated));
	}
	assert_int_equal(placed, res->plan.nassigned);
	assert_int_equal(placed,
			 x->outcome == DEC_ASSIGNED ? res->req.njobs : 0);
	if (x->outcome == DEC_PENDING)
		assert_int_equal(d->retry_after_s, JB_PENDING_RETRY_S);
}

/* The JSON says the same as the decision: every queue once, the jobs. */
static void check_json(const struct md_jobs *res)
{
	json_t *j = rpj_decision_json(&res->req, res->queues, res->nqueues,
				      &res->dec, &res->plan);
	assert_non_null(j);
	json_t *cands = json_object_get(j, "candidates");
	assert_int_equal(json_array_size(cands), res->nqueues);
	for (size_t i = 0; i < res->nqueues; i++) {
		json_t *c = json_array_get(cands, i);
		assert_string_equal(json_string_value(json_object_get(c, "name")),
				    res->queues[i].name);
		int dropped = json_is_null(json_object_get(c, "weight"));
		assert_int_equal(dropped, dec_dropped(&res->dec.cands[i]));
		assert_int_equal(json_array_size(json_object_get(c, "reasons")) > 0,
				 dropped);
	}
	size_t jobs = 0;
	json_t *as = json_object_get(j, "assignments");
	for (size_t i = 0; i < json_array_size(as); i++) {
		json_t *a = json_array_get(as, i);
		size_t n = json_array_size(json_object_get(a, "jobIDs"));
		assert_int_equal(json_integer_value(json_object_get(a, "count")),
				 n);
		jobs += n;
	}
	assert_int_equal(jobs, res->plan.nassigned);
	assert_int_equal(json_integer_value(json_object_get(j, "nJobs")),
			 res->req.njobs);
	assert_int_equal(json_integer_value(json_object_get(j, "nQueues")),
			 res->nqueues);
	assert_int_equal(json_array_size(json_object_get(j, "unassigned")),
			 res->req.njobs - res->plan.nassigned);
	assert_int_equal(json_array_size(json_object_get(j, "best")),
			 res->plan.nbest);
	assert_int_equal(json_array_size(json_object_get(j, "stages")),
			 res->dec.nstages);
	assert_int_equal(json_object_get(j, "retryAfter") != NULL,
			 res->dec.outcome == DEC_PENDING);
	json_decref(j);

	j = rpj_detail_json(&res->req, res->queues, res->nqueues, &res->dec,
			    &res->plan, &res->params, &res->env);
	assert_non_null(j);
	json_t *p = json_object_get(j, "params");
	assert_near(json_number_value(json_object_get(p, "NQUEUED_SAT_CAP")),
		    res->params.nqueued_sat_cap, 0);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(j, "env"), "now")),
			 res->env.now);
	json_decref(j);
}

/* The text of the record: the best queues, every dropped queue, the
** stage lines, the decision. */
static void check_table(const struct md_jobs *res)
{
	char *rec = rec_jobs(res, NULL);
	assert_non_null(rec);
	json_t *j = json_loads(rec, 0, NULL);
	assert_non_null(j);
	free(rec);
	const struct rn_head h = {.kind = "jobs", .subject = "1",
				  .outcome = "-"};
	char *buf = rn_render(&h, j);
	assert_non_null(buf);
	json_decref(j);
	assert_non_null(strstr(buf, "\nstages:\n"));
	for (size_t i = 0; i < res->nqueues; i++)
		assert_non_null(strstr(buf, res->queues[i].name));
	char line[160];
	for (size_t s = 0; s < res->dec.nstages; s++) {
		dec_stage_format(&res->dec.stages[s], line, sizeof(line));
		assert_non_null(strstr(buf, line));
	}
	snprintf(line, sizeof(line), ", %zu job%s, %zu queue%s\n",
		 res->req.njobs, res->req.njobs == 1 ? "" : "s", res->nqueues,
		 res->nqueues == 1 ? "" : "s");
	assert_non_null(strstr(buf, line));
	assert_non_null(strstr(buf, res->dec.outcome == DEC_ASSIGNED
					    ? "\ndecision: assigned "
					    : "\ndecision: pending, "));
	free(buf);
}

static void test_examples(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		char path[256], err[512] = "";
		snprintf(path, sizeof(path), "etc/scenarios/%s",
			 examples[i].file);
		json_t *root = scn_read_file(path, err, sizeof(err));
		if (root == NULL)
			fail_msg("%s", err);
		assert_true(scj_is_job_scenario(root));
		assert_true(json_is_string(json_object_get(root, "description")));
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scj_scenario sc;
		struct md_jobs res, again;
		parse_ok(root, &a, &sc);
		assert_int_equal(scj_run(&sc, &a, &res), GB_OK);
		check_example(&examples[i], &res);
		check_json(&res);
		check_table(&res);
		/* the same seed gives the same placement */
		assert_int_equal(scj_run(&sc, &a, &again), GB_OK);
		assert_memory_equal(res.plan.job_queue, again.plan.job_queue,
				    res.req.njobs * sizeof(long));
		json_decref(root);
		arena_free(&a);
	}
}

/* jobs-express.json on both sides of PJ-27's priority 1000: express, the
** three nucleus queues take the 20 jobs and the note says there is no cap;
** at 999 the same queues meet the cap of max(20, 2 x 10) = 20: PJ-33
** (60 activated + starting), PJ-34 (45 defined + activated) and PJ-36
** (room for one job at 19 activated). */
static void test_express_example_both_sides(void **state)
{
	(void)state;
	static const struct {
		long prio;
		size_t placed, nbest, at_p1;
		int note;
	} sides[] = {{1000, 20, 3, 0, 1}, {999, 1, 1, 1, 0}};
	for (size_t k = 0; k < sizeof(sides) / sizeof(sides[0]); k++) {
		char err[512] = "";
		json_t *root = scn_read_file("etc/scenarios/jobs-express.json",
					     err, sizeof(err));
		if (root == NULL)
			fail_msg("%s", err);
		json_object_set_new(json_object_get(root, "task"),
				    "currentPriority",
				    json_integer(sides[k].prio));
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct scj_scenario sc;
		struct md_jobs res;
		parse_ok(root, &a, &sc);
		assert_int_equal(scj_run(&sc, &a, &res), GB_OK);
		const struct dec_decision *d = &res.dec;
		assert_int_equal(res.plan.nassigned, sides[k].placed);
		assert_int_equal(res.plan.nbest, sides[k].nbest);
		assert_int_equal(strstr(d->note, "no PJ-33/PJ-34/PJ-36 cap") !=
					 NULL,
				 sides[k].note);
		size_t at_p1 = 0;
		for (size_t j = 0; j < res.req.njobs; j++) {
			long qi = res.plan.job_queue[j];
			at_p1 += qi >= 0 &&
				 strcmp(d->cands[qi].name, "CERN-P1_MCORE") == 0;
		}
		if (sides[k].at_p1 > 0)
			assert_int_equal(at_p1, sides[k].at_p1);
		else
			assert_true(at_p1 > 1); /* past PJ-36's one job */
		for (size_t i = 0; i < d->ncands; i++) {
			const struct dec_candidate *c = &d->cands[i];
			const char *n = c->name;
			if (strcmp(n, "DESY-HH_MCORE") == 0) {
				assert_string_equal(c->reasons[0].rule,
						    "PJ-08");
			} else if (sides[k].prio >= 1000 ||
				   strcmp(n, "CERN-P1_MCORE") == 0) {
				assert_false(dec_dropped(c));
			} else {
				int mcore = strcmp(n, "CERN-PROD_MCORE") == 0;
				assert_true(dec_dropped(c));
				assert_string_equal(c->reasons[0].rule,
						    mcore ? "PJ-33" : "PJ-34");
				assert_string_equal(c->reasons[0].code, "cap");
				assert_near(c->reasons[0].v[0], mcore ? 60 : 45,
					    0);
				assert_near(c->reasons[0].v[1], 20, 0);
			}
		}
		json_decref(root);
		arena_free(&a);
	}
}

/* Every jobs-*.json is a job scenario described above; no task scenario is. */
static void test_example_files_listed(void **state)
{
	(void)state;
	DIR *dir = opendir("etc/scenarios");
	assert_non_null(dir);
	size_t njobs = 0;
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
		int is_jobs = strncmp(de->d_name, "jobs-", 5) == 0;
		assert_int_equal(scj_is_job_scenario(root), is_jobs);
		if (is_jobs) {
			int listed = 0;
			for (size_t i = 0;
			     i < sizeof(examples) / sizeof(examples[0]); i++)
				listed |= strcmp(examples[i].file,
						 de->d_name) == 0;
			if (!listed)
				fail_msg("%s has no expectation here",
					 de->d_name);
			njobs++;
		}
		json_decref(root);
	}
	closedir(dir);
	assert_int_equal(njobs, sizeof(examples) / sizeof(examples[0]));
}

/* The JSON refuses arguments that disagree instead of reading past. */
static void test_render_inconsistent(void **state)
{
	(void)state;
	json_t *root = load_text(base_scenario);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct scj_scenario sc;
	struct md_jobs res;
	parse_ok(root, &a, &sc);
	assert_int_equal(scj_run(&sc, &a, &res), GB_OK);
	assert_null(rpj_decision_json(&res.req, res.queues, res.nqueues + 1,
				      &res.dec, &res.plan));
	assert_null(rpj_decision_json(NULL, res.queues, res.nqueues, &res.dec,
				      &res.plan));
	struct jb_plan bad = res.plan;
	bad.nbest = 1;
	bad.best[0] = (long)res.nqueues;
	assert_null(rpj_decision_json(&res.req, res.queues, res.nqueues,
				      &res.dec, &bad));
	json_decref(root);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_base),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_request_outside_scenario),
		cmocka_unit_test(test_sw_text_round_trip),
		cmocka_unit_test(test_is_job_scenario),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_express_example_both_sides),
		cmocka_unit_test(test_example_files_listed),
		cmocka_unit_test(test_render_inconsistent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
