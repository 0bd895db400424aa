/*
** test_codec_jobs.c — the job.broker request and the jobs.* events.
**
** Decode cases start from one valid request (JSON for readability, packed
** to msgpack by pack_json; it is the JSON form of full_request()) with one
** patch applied: a field at a path set to a JSON value, or deleted. String
** markers stand for what JSON cannot say: "#nan", "#inf", "#-inf"
** (float64), "#bin:3" (3 bytes of binary), "#hex:c328" (a string of those
** raw bytes), "#x:300" (a string of 300 'x'). Cases JSON cannot express
** (duplicate keys, non-string keys, lying lengths, huge arrays) are
** written as bytes. Events are unpacked with msgpack-c itself and read
** field by field, so the test does not trust the codec to read its own
** output.
*/
#include "gbtest.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>
#include <msgpack.h>

#include "base/arena.h"
#include "codec/codec.h"
#include "codec/codec_jobs.h"
#include "decision.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "jobbroker.h"

#define ARENA_CAP (64u << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *base_req =
	"{\"taskID\": 36100002, \"nucleus\": \"BNL-ATLAS\","
	" \"gshare\": \"MC Reco\", \"jobScope\": \"nucleus\","
	" \"currentPriority\": 870, \"processingType\": \"reprocessing\","
	" \"ioIntensity\": 450.25, \"diskIO\": 3.5, \"coreCount\": 8,"
	" \"maxCoreCount\": 16, \"baseRamCount\": 500, \"ramCount\": 1900.75,"
	" \"outDiskCount\": 0.8, \"outDiskCountUnit\": \"kB\","
	" \"workDiskCount\": 2000, \"cpuTime\": 41.5, \"cpuEfficiency\": 87.5,"
	" \"baseWalltime\": 300, \"ipConnectivity\": \"full#IPv4\","
	" \"directAccessOnly\": true, \"useEventService\": true,"
	" \"dynamicNEvents\": true, \"t1Weight\": -1,"
	" \"architecture\": \"x86_64-el9-gcc13-opt#x86_64-intel-avx2\","
	" \"containerName\": \"\", \"onlyTagsForFC\": true,"
	" \"swProject\": \"Athena\", \"swVersion\": \"24.0.30\","
	" \"swKind\": \"nightly\","
	" \"preassigned\": [\"BNL_PROD\", \"CERN-P1\"],"
	" \"preassignSkippedSince\": 1715600000, \"scout\": true,"
	" \"merge\": true, \"premerged\": true,"
	" \"jobs\": ["
	"  {\"jobID\": 4711000001, \"nEvents\": 1000, \"inputFiles\": ["
	"   {\"lfn\": \"mc23.EVNT.e8514._000001.pool.root.1\","
	"    \"size\": 2048.5},"
	"   {\"lfn\": \"mc23.EVNT.e8514._000002.pool.root.1\","
	"    \"size\": 0.25}]},"
	"  {\"jobID\": 4711000002, \"nEvents\": 0, \"inputFiles\": []},"
	"  {\"jobID\": 4711000003, \"nEvents\": 250, \"inputFiles\": ["
	"   {\"lfn\": \"mc23.EVNT.e8514._000002.pool.root.1\","
	"    \"size\": 0.25}]}]}";

static const struct gm_input files_a[] = {
	{"mc23.EVNT.e8514._000001.pool.root.1", 2048.5},
	{"mc23.EVNT.e8514._000002.pool.root.1", 0.25},
};
static const struct gm_job jobs_a[] = {
	{4711000001LL, 1000, files_a, 2},
	{4711000002LL, 0, NULL, 0},
	{4711000003LL, 250, files_a + 1, 1},
};
static const char *const preassigned_a[] = {"BNL_PROD", "CERN-P1"};

/* The request base_req describes. */
static struct gm_request full_request(void)
{
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	r.t = (struct jb_task){
		.task_id = 36100002, .gshare = "MC Reco",
		.nucleus = "BNL-ATLAS", .scope = TB_SCOPE_NUCLEUS_ONLY,
		.priority = 870, .processing_type = "reprocessing",
		.io_intensity = 450.25, .diskio = 3.5, .core_count = 8,
		.max_core_count = 16, .base_ram = 500, .ram_count = 1900.75,
		.out_disk_count = 0.8, .out_disk_unit = JB_OUT_RATIO,
		.work_disk_count = 2000, .cpu_time = 41.5,
		.cpu_efficiency = 87.5, .base_time = 300,
		.ip_connectivity = "full#IPv4", .direct_access_only = 1,
		.use_es = 1, .dynamic_nevents = 1, .t1_weight = -1,
		.scout = 1, .merge = 1, .premerged = 1,
		.preassigned = preassigned_a, .npreassigned = 2,
		.preassign_skipped_since = 1715600000,
	};
	r.need.container_name = "";
	r.need.only_tags_fc = 1;
	r.need.sw_project = "Athena";
	r.need.sw_version = "24.0.30";
	r.need.kind = RC_NIGHTLY;
	r.architecture = "x86_64-el9-gcc13-opt#x86_64-intel-avx2";
	r.jobs = jobs_a;
	r.njobs = 3;
	return r;
}

/* `out` carries every field of `in` (decode(encode(in)) == in). */
#define SAME_I(f) assert_int_equal(out->f, in->f)
#define SAME_D(f) assert_near(out->f, in->f, 0)
#define SAME_S(f) assert_string_equal(out->f, in->f)
#define SAME_OPT_S(f)                                                      \
	do {                                                               \
		if (in->f)                                                 \
			SAME_S(f);                                         \
		else                                                       \
			assert_null(out->f);                               \
	} while (0)

static void check_same(const struct gm_request *in,
		       const struct gm_request *out)
{
	SAME_I(t.task_id);
	SAME_OPT_S(t.nucleus);
	SAME_OPT_S(t.gshare);
	SAME_I(t.priority);
	SAME_S(t.processing_type);
	SAME_D(t.io_intensity);
	SAME_D(t.diskio);
	SAME_I(t.core_count);
	SAME_I(t.max_core_count);
	SAME_D(t.base_ram);
	SAME_D(t.ram_count);
	SAME_D(t.out_disk_count);
	SAME_I(t.out_disk_unit);
	SAME_D(t.work_disk_count);
	SAME_D(t.cpu_time);
	SAME_D(t.cpu_efficiency);
	SAME_D(t.base_time);
	SAME_S(t.ip_connectivity);
	SAME_I(t.direct_access_only);
	SAME_I(t.use_es);
	SAME_I(t.dynamic_nevents);
	SAME_D(t.t1_weight);
	SAME_I(t.scout);
	SAME_I(t.merge);
	SAME_I(t.premerged);
	SAME_I(t.npreassigned);
	for (size_t i = 0; i < in->t.npreassigned; i++)
		SAME_S(t.preassigned[i]);
	SAME_I(t.preassign_skipped_since);
	SAME_S(architecture);
	SAME_S(need.container_name);
	SAME_I(need.only_tags_fc);
	SAME_S(need.sw_project);
	SAME_S(need.sw_version);
	SAME_I(need.kind);
	SAME_I(njobs);
	for (size_t j = 0; j < in->njobs; j++) {
		SAME_I(jobs[j].job_id);
		SAME_I(jobs[j].nevents);
		SAME_I(jobs[j].ninputs);
		for (size_t k = 0; k < in->jobs[j].ninputs; k++) {
			SAME_S(jobs[j].inputs[k].lfn);
			SAME_D(jobs[j].inputs[k].size_mb);
		}
	}
}

/* ---- JSON -> msgpack, with markers ------------------------------------- */

#include "jsonmsg.h"

/* Decode with a fresh arena of `cap` bytes (the caller frees it). */
static int decode(const msgpack_sbuffer *sb, size_t cap, struct arena *a,
		  struct gm_request *r, struct cdj_extra *x,
		  struct cod_error *err)
{
	arena_init(a, cap);
	return cdj_decode_request(sb->data, sb->size, a, r, x, err);
}

/* Decoding `sb` gives `rc` with exactly `field` and a problem starting
** with `problem`. */
static void expect(const msgpack_sbuffer *sb, size_t cap, int rc,
		   const char *field, const char *problem, const char *what)
{
	struct arena a;
	struct gm_request r;
	struct cod_error err;
	int got = decode(sb, cap, &a, &r, NULL, &err);
	if (got != rc || strcmp(err.field, field) ||
	    strncmp(err.problem, problem, strlen(problem)))
		fail_msg("%s: got %s '%s: %s', want %s '%s: %s'", what,
			 gb_errname(got), err.field, err.problem,
			 gb_errname(rc), field, problem);
	arena_free(&a);
}

/* ---- valid requests ------------------------------------------------------ */

static void test_decode_all_fields(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_req, NULL, NULL);
	struct arena a;
	struct gm_request r;
	struct cdj_extra x;
	struct cod_error err;
	int rc = decode(&sb, ARENA_CAP, &a, &r, &x, &err);
	if (rc != GB_OK)
		fail_msg("%s: %s: %s", gb_errname(rc), err.field, err.problem);
	msgpack_sbuffer_destroy(&sb); /* nothing may point into it */
	struct gm_request want = full_request();
	check_same(&want, &r);
	assert_int_equal(x.has_scope, 1);
	assert_int_equal(r.t.scope, TB_SCOPE_NUCLEUS_ONLY);
	/* left for gm_resolve */
	assert_null(r.t.jobs);
	assert_int_equal(r.t.njobs, 0);
	assert_null(r.t.sw);
	assert_near(r.t.total_input_gb, 0, 0);
	assert_int_equal(r.need.arch.sw_platform[0], '\0');
	arena_free(&a);
}

/* The smallest request; nil counts as absent for optional fields. */
static void test_decode_defaults(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb,
		 "{\"taskID\": 7, \"currentPriority\": null,"
		 " \"jobs\": [{\"jobID\": 1, \"inputFiles\": null}],"
		 " \"nucleus\": null, \"jobScope\": null, \"coreCount\": null,"
		 " \"cpuEfficiency\": null, \"swKind\": null,"
		 " \"preassigned\": null, \"preassignSkippedSince\": null}",
		 NULL, NULL);
	struct arena a;
	struct gm_request r;
	struct cdj_extra x = {.has_scope = 9};
	struct cod_error err;
	assert_int_equal(decode(&sb, ARENA_CAP, &a, &r, &x, &err), GB_OK);
	struct gm_request want;
	memset(&want, 0, sizeof(want));
	want.t = (struct jb_task){.task_id = 7, .priority = 0,
				  .processing_type = "", .core_count = 1,
				  .cpu_efficiency = 100,
				  .ip_connectivity = ""};
	want.architecture = "";
	want.need = (struct rc_need){.container_name = "", .sw_project = "",
				     .sw_version = "", .kind = RC_RELEASE};
	struct gm_job job = {1, 0, NULL, 0};
	want.jobs = &job;
	want.njobs = 1;
	check_same(&want, &r);
	assert_int_equal(x.has_scope, 0);
	assert_int_equal(r.t.scope, TB_SCOPE_SATELLITES);
	assert_null(r.t.preassigned);
	arena_free(&a);
	/* `extra` may be NULL */
	arena_init(&a, ARENA_CAP);
	assert_int_equal(cdj_decode_request(sb.data, sb.size, &a, &r, NULL,
					    &err),
			 GB_OK);
	msgpack_sbuffer_destroy(&sb);
	arena_free(&a);
}

/* The enum words and the outDiskCountUnit rule. */
static void test_decode_words(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* NULL: deleted */
		int has_scope, scope, per_event, kind;
	} cases[] = {
		{"jobScope", "\"satellites\"", 1, TB_SCOPE_SATELLITES, 0, 1},
		{"jobScope", "\"nucleus\"", 1, TB_SCOPE_NUCLEUS_ONLY, 0, 1},
		{"jobScope", "\"nucleus-only\"", 1, TB_SCOPE_NUCLEUS_ONLY, 0,
		 1},
		{"jobScope", NULL, 0, TB_SCOPE_SATELLITES, 0, 1},
		{"outDiskCountUnit", "\"kBPerEvent\"", 1, 1,
		 JB_OUT_KB_PER_EVENT, 1},
		{"outDiskCountUnit", "\"MBPerEvent\"", 1, 1,
		 JB_OUT_MB_PER_EVENT, 1},
		{"outDiskCountUnit", "\"GBPerEvent\"", 1, 1,
		 JB_OUT_GB_PER_EVENT, 1},
		{"outDiskCountUnit", "\"\"", 1, 1, 0, 1},
		{"outDiskCountUnit", "\"PerEventkB\"", 1, 1, 0, 1},
		{"outDiskCountUnit", NULL, 1, 1, 0, 1},
		{"swKind", "\"release\"", 1, 1, 0, RC_RELEASE},
		{"swKind", NULL, 1, 1, 0, RC_RELEASE},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_req, cases[i].path, cases[i].value);
		struct arena a;
		struct gm_request r;
		struct cdj_extra x;
		struct cod_error err;
		int rc = decode(&sb, ARENA_CAP, &a, &r, &x, &err);
		if (rc != GB_OK || x.has_scope != cases[i].has_scope ||
		    (int)r.t.scope != cases[i].scope ||
		    (int)r.t.out_disk_unit != cases[i].per_event ||
		    (int)r.need.kind != cases[i].kind)
			fail_msg("case %zu (%s): rc %s, has_scope %d, "
				 "scope %d, per_event %d, kind %d",
				 i, cases[i].path, gb_errname(rc), x.has_scope,
				 (int)r.t.scope, (int)r.t.out_disk_unit,
				 (int)r.need.kind);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* ---- one patch each: accepted edges, every field's errors ---------- */

#define TS(got) "expected string, got " got
#define TI(got) "expected integer, got " got
#define TN(got) "expected a number, got " got
#define TB(got) "expected boolean, got " got
#define R_GE0 "expected a number >= 0, got "
#define R_EFF "expected a number in (0, 100], got "
#define R_IP "'; expected full, http or none, optionally with #IPv4 or #IPv6"
#define R_ARCH                                                             \
	"not an RC-02 architecture: a piece longer than 63 bytes or a "    \
	"separator (@ # &) twice"
#define R_LONG "string of 300 bytes exceeds the limit of 255"
/* A case at `path`: accepted; refused naming `path`; refused naming
** `field`. */
#define OK(path, v) {path, v, GB_OK, "", ""}
#define E(path, v, rc, problem) {path, v, rc, NULL, problem}
#define F(path, v, rc, field, problem) {path, v, rc, field, problem}

static void test_decode_cases(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete the field */
		int rc;
		const char *field; /* NULL: the same as path */
		const char *problem;
	} cases[] = {
		/* accepted: the edges of each range, unknown keys */
		OK("taskID", "9223372036854775807"),
		OK("currentPriority", "1000000"),
		OK("currentPriority", "0"),
		OK("currentPriority", NULL), /* optional: 0 */
		OK("jobs[0].nEvents", NULL), /* optional: 0 */
		OK("coreCount", "1000000"),
		OK("jobs[0].nEvents", "1000000000"),
		OK("cpuEfficiency", "100"),
		OK("cpuEfficiency", "0.001"),
		OK("t1Weight", "-1e300"),
		OK("ipConnectivity", "\"\""),
		OK("ipConnectivity", "\"http\""),
		OK("ipConnectivity", "\"none#IPv6\""),
		OK("ipConnectivity", "\"HTTP#ipv6\""),
		OK("architecture", "\"\""),
		OK("architecture",
		  "\"x86_64-centos7-gcc8-opt@centos7#x86_64-intel-avx2"
		  "&nvidia-kt100\""),
		/* a 63-byte piece is accepted, a 64-byte one (below) not */
		OK("architecture", "\"x#aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		   "aaaaaaaaaaaaaaaaaaaaaaaaaaaa\""),
		OK("preassigned", "[]"),
		OK("preassignSkippedSince", "0"),
		OK("preassignSkippedSince", "253402300799"),
		OK("jobs[0].inputFiles[0].size", "0"),
		OK("swVersion", "\"#x:255\""),
		OK("future", "{\"a\": [1, \"#bin:3\", {\"b\": null}]}"),
		OK("jobs[1].future", "[1.5]"),
		OK("jobs[0].inputFiles[0].checksum", "\"ad:1234\""),
		/* missing */
		E("taskID", NULL, GB_EMISSING, "missing"),
		E("jobs", NULL, GB_EMISSING, "missing"),
		E("jobs[1].jobID", NULL, GB_EMISSING, "missing"),
		E("jobs[0].inputFiles[1].lfn", NULL, GB_EMISSING, "missing"),
		E("jobs[2].inputFiles[0].size", NULL, GB_EMISSING, "missing"),
		/* wrong types, one per field */
		E("taskID", "\"36100002\"", GB_ETYPE, TI("string")),
		E("taskID", "36100002.0", GB_ETYPE, TI("float")),
		E("taskID", "null", GB_ETYPE, TI("null")),
		E("nucleus", "5", GB_ETYPE, TS("integer")),
		E("gshare", "true", GB_ETYPE, TS("boolean")),
		E("jobScope", "1", GB_ETYPE, TS("integer")),
		E("currentPriority", "870.0", GB_ETYPE, TI("float")),
		E("processingType", "[]", GB_ETYPE, TS("array")),
		E("ioIntensity", "\"fast\"", GB_ETYPE, TN("string")),
		E("diskIO", "{}", GB_ETYPE, TN("map")),
		E("coreCount", "8.0", GB_ETYPE, TI("float")),
		E("maxCoreCount", "\"16\"", GB_ETYPE, TI("string")),
		E("baseRamCount", "true", GB_ETYPE, TN("boolean")),
		E("ramCount", "\"#bin:3\"", GB_ETYPE, TN("binary")),
		E("outDiskCount", "\"0.8\"", GB_ETYPE, TN("string")),
		E("outDiskCountUnit", "1", GB_ETYPE, TS("integer")),
		E("workDiskCount", "[]", GB_ETYPE, TN("array")),
		E("cpuTime", "\"41.5\"", GB_ETYPE, TN("string")),
		E("cpuEfficiency", "\"90\"", GB_ETYPE, TN("string")),
		E("baseWalltime", "false", GB_ETYPE, TN("boolean")),
		E("ipConnectivity", "4", GB_ETYPE, TS("integer")),
		E("directAccessOnly", "1", GB_ETYPE, TB("integer")),
		E("useEventService", "\"true\"", GB_ETYPE, TB("string")),
		E("dynamicNEvents", "0", GB_ETYPE, TB("integer")),
		E("t1Weight", "\"-1\"", GB_ETYPE, TN("string")),
		E("architecture", "1", GB_ETYPE, TS("integer")),
		E("containerName", "1", GB_ETYPE, TS("integer")),
		E("onlyTagsForFC", "1", GB_ETYPE, TB("integer")),
		E("swProject", "{}", GB_ETYPE, TS("map")),
		E("swVersion", "24.0", GB_ETYPE, TS("float")),
		E("swKind", "1", GB_ETYPE, TS("integer")),
		E("preassigned", "\"BNL_PROD\"", GB_ETYPE,
		  "expected array, got string"),
		E("preassigned[1]", "5", GB_ETYPE, TS("integer")),
		E("preassignSkippedSince", "\"2024-05-13T11:33:20Z\"", GB_ETYPE,
		  TI("string")),
		E("scout", "1", GB_ETYPE, TB("integer")),
		E("merge", "\"no\"", GB_ETYPE, TB("string")),
		E("premerged", "[]", GB_ETYPE, TB("array")),
		E("jobs", "{}", GB_ETYPE, "expected array, got map"),
		E("jobs[1]", "5", GB_ETYPE, "expected a map, got integer"),
		E("jobs[0].jobID", "\"4711\"", GB_ETYPE, TI("string")),
		E("jobs[0].nEvents", "1000.0", GB_ETYPE, TI("float")),
		E("jobs[0].inputFiles", "{}", GB_ETYPE,
		  "expected array, got map"),
		E("jobs[0].inputFiles[1]", "\"x\"", GB_ETYPE,
		  "expected a map, got string"),
		E("jobs[0].inputFiles[0].lfn", "1", GB_ETYPE, TS("integer")),
		E("jobs[0].inputFiles[0].size", "\"big\"", GB_ETYPE,
		  TN("string")),
		/* out of range */
		E("taskID", "0", GB_ERANGE,
		  "expected a positive integer, got 0"),
		E("taskID", "-1", GB_ERANGE,
		  "expected a positive integer, got -1"),
		E("nucleus", "\"\"", GB_ERANGE, "expected a non-empty string"),
		E("gshare", "\"\"", GB_ERANGE, "expected a non-empty string"),
		E("jobScope", "\"global\"", GB_ERANGE,
		  "unknown value 'global'; expected satellites or nucleus"),
		E("jobScope", "\"Nucleus\"", GB_ERANGE,
		  "unknown value 'Nucleus'; expected satellites or nucleus"),
		E("currentPriority", "1000001", GB_ERANGE,
		  "expected an integer in [0, 1000000], got 1000001"),
		E("currentPriority", "-1", GB_ERANGE,
		  "expected an integer in [0, 1000000], got -1"),
		E("ioIntensity", "-1", GB_ERANGE, R_GE0 "-1"),
		E("diskIO", "\"#nan\"", GB_ERANGE, R_GE0 "NaN"),
		E("coreCount", "0", GB_ERANGE,
		  "expected an integer in [1, 1000000], got 0"),
		E("coreCount", "1000001", GB_ERANGE,
		  "expected an integer in [1, 1000000], got 1000001"),
		E("maxCoreCount", "-1", GB_ERANGE,
		  "expected an integer in [0, 1000000], got -1"),
		E("baseRamCount", "\"#inf\"", GB_ERANGE, R_GE0 "Inf"),
		E("ramCount", "-0.5", GB_ERANGE, R_GE0 "-0.5"),
		E("outDiskCount", "-1", GB_ERANGE, R_GE0 "-1"),
		E("workDiskCount", "-1", GB_ERANGE, R_GE0 "-1"),
		E("cpuTime", "\"#-inf\"", GB_ERANGE, R_GE0 "-Inf"),
		E("cpuEfficiency", "0", GB_ERANGE, R_EFF "0"),
		E("cpuEfficiency", "100.5", GB_ERANGE, R_EFF "100.5"),
		E("cpuEfficiency", "-5", GB_ERANGE, R_EFF "-5"),
		E("cpuEfficiency", "\"#nan\"", GB_ERANGE,
		  "expected a finite number, got NaN"),
		E("baseWalltime", "-1", GB_ERANGE, R_GE0 "-1"),
		E("ipConnectivity", "\"fast\"", GB_ERANGE,
		  "unknown value 'fast" R_IP),
		E("ipConnectivity", "\"full#IPv5\"", GB_ERANGE,
		  "unknown value 'full#IPv5" R_IP),
		E("ipConnectivity", "\"http#\"", GB_ERANGE,
		  "unknown value 'http#" R_IP),
		E("ipConnectivity", "\"#IPv6\"", GB_ERANGE,
		  "unknown value '#IPv6" R_IP),
		E("t1Weight", "\"#inf\"", GB_ERANGE,
		  "expected a finite number, got Inf"),
		E("architecture", "\"x86_64@centos7@el9\"", GB_ERANGE, R_ARCH),
		E("architecture",
		  "\"x#aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaaaaaaaaaaaaaaaaa\"", /* 64 bytes */
		  GB_ERANGE, R_ARCH),
		E("swKind", "\"stable\"", GB_ERANGE,
		  "unknown value 'stable'; expected release or nightly"),
		E("preassigned[0]", "\"\"", GB_ERANGE,
		  "expected a non-empty string"),
		E("preassignSkippedSince", "-1", GB_ERANGE,
		  "expected an integer in [0, 253402300799], got -1"),
		E("preassignSkippedSince", "253402300800", GB_ERANGE,
		  "expected an integer in [0, 253402300799], got 253402300800"),
		E("jobs", "[]", GB_ERANGE, "expected at least one job"),
		E("jobs[0].jobID", "0", GB_ERANGE,
		  "expected a positive integer, got 0"),
		E("jobs[0].nEvents", "-1", GB_ERANGE,
		  "expected an integer in [0, 1000000000], got -1"),
		E("jobs[0].nEvents", "1000000001", GB_ERANGE,
		  "expected an integer in [0, 1000000000], got 1000000001"),
		E("jobs[0].inputFiles[1].size", "-2", GB_ERANGE, R_GE0 "-2"),
		E("jobs[0].inputFiles[0].lfn", "\"\"", GB_ERANGE,
		  "expected a non-empty string"),
		E("gshare", "\"#hex:c328\"", GB_ERANGE,
		  "string is not valid UTF-8"),
		E("swVersion", "\"#hex:410042\"", GB_ERANGE,
		  "string contains a NUL byte"),
		/* oversize strings, wherever a string goes */
		E("nucleus", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("gshare", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("processingType", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("outDiskCountUnit", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("ipConnectivity", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("architecture", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("containerName", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("swProject", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("swVersion", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("preassigned[1]", "\"#x:300\"", GB_ETOOBIG, R_LONG),
		E("jobs[0].inputFiles[1].lfn", "\"#x:300\"", GB_ETOOBIG,
		  R_LONG),
		/* duplicates that would change the decision */
		E("jobs[2].jobID", "4711000001", GB_EDUP,
		  "duplicate jobID (also jobs[0])"),
		E("jobs[0].inputFiles[1].lfn",
		  "\"mc23.EVNT.e8514._000001.pool.root.1\"", GB_EDUP,
		  "duplicate file (also jobs[0].inputFiles[0])"),
		E("preassigned[1]", "\"BNL_PROD\"", GB_EDUP,
		  "duplicate queue (also preassigned[0])"),
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, base_req, cases[i].path, cases[i].value);
		char what[160];
		snprintf(what, sizeof(what), "case %zu (%s = %s)", i,
			 cases[i].path,
			 cases[i].value ? cases[i].value : "(deleted)");
		const char *field =
			cases[i].field ? cases[i].field : cases[i].path;
		expect(&sb, ARENA_CAP, cases[i].rc, field, cases[i].problem,
		       what);
		msgpack_sbuffer_destroy(&sb);
	}
}

/* ---- byte-level cases ------------------------------------------------ */

static void pk_s(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str_with_body(pk, s, strlen(s));
}

/* taskID and currentPriority; `extra` more root entries follow. */
static void pack_head(msgpack_packer *pk, size_t extra)
{
	msgpack_pack_map(pk, 2 + extra);
	pk_s(pk, "taskID");
	msgpack_pack_int(pk, 7);
	pk_s(pk, "currentPriority");
	msgpack_pack_int(pk, 900);
}

/* One job {jobID, nEvents} and `extra` more entries of its map. */
static void pack_job(msgpack_packer *pk, long long id, size_t extra)
{
	msgpack_pack_map(pk, 2 + extra);
	pk_s(pk, "jobID");
	msgpack_pack_long_long(pk, id);
	pk_s(pk, "nEvents");
	msgpack_pack_int(pk, 100);
}

/* "jobs": [one job with `nfiles` files named by `fmt`] ("%zu" = index). */
static void pack_jobs_files(msgpack_packer *pk, size_t nfiles,
			    const char *fmt)
{
	pk_s(pk, "jobs");
	msgpack_pack_array(pk, 1);
	pack_job(pk, 1, 1);
	pk_s(pk, "inputFiles");
	msgpack_pack_array(pk, nfiles);
	char lfn[300];
	for (size_t k = 0; k < nfiles; k++) {
		snprintf(lfn, sizeof(lfn), fmt, k);
		msgpack_pack_map(pk, 2);
		pk_s(pk, "lfn");
		pk_s(pk, lfn);
		pk_s(pk, "size");
		msgpack_pack_int(pk, 2);
	}
}

/* Duplicate keys in each kind of map, a non-string key, deep nesting. */
static void test_decode_key_rules(void **state)
{
	(void)state;
	for (int c = 0; c < 8; c++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		pack_head(&pk, c == 1 ? 3 : c == 2 || c == 3 ? 1 : 2);
		if (c == 2 || c == 3) { /* in a job, in a file */
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, 1);
			pack_job(&pk, 1, 1);
			pk_s(&pk, c == 2 ? "nEvents" : "inputFiles");
			if (c == 2) {
				msgpack_pack_int(&pk, 5);
			} else {
				msgpack_pack_array(&pk, 1);
				msgpack_pack_map(&pk, 3);
				pk_s(&pk, "lfn");
				pk_s(&pk, "f1");
				pk_s(&pk, "size");
				msgpack_pack_int(&pk, 1);
				pk_s(&pk, "lfn");
				pk_s(&pk, "f2");
			}
		} else {
			pack_jobs_files(&pk, 0, "");
		}
		static const int levels[] = {COD_MAX_DEPTH - 1, COD_MAX_DEPTH,
					     100000};
		switch (c) {
		case 0: /* a known root key twice */
			pk_s(&pk, "taskID");
			msgpack_pack_int(&pk, 8);
			expect(&sb, ARENA_CAP, GB_EDUP, "taskID",
			       "duplicate key", "root");
			break;
		case 1: /* an unknown root key twice */
			pk_s(&pk, "future");
			msgpack_pack_int(&pk, 1);
			pk_s(&pk, "future");
			msgpack_pack_int(&pk, 2);
			expect(&sb, ARENA_CAP, GB_EDUP, "future",
			       "duplicate key", "unknown");
			break;
		case 2:
			expect(&sb, ARENA_CAP, GB_EDUP, "jobs[0].nEvents",
			       "duplicate key", "job");
			break;
		case 3:
			expect(&sb, ARENA_CAP, GB_EDUP,
			       "jobs[0].inputFiles[0].lfn", "duplicate key",
			       "file");
			break;
		case 4: /* a non-string key */
			msgpack_pack_int(&pk, 5);
			msgpack_pack_int(&pk, 6);
			expect(&sb, ARENA_CAP, GB_ETYPE, "",
			       "map key of type integer; keys must be strings",
			       "integer key");
			break;
		default: /* junk nested 7 (fine), 8 and 100000 arrays deep */
			pk_s(&pk, "junk");
			for (int k = 0; k < levels[c - 5]; k++)
				msgpack_pack_array(&pk, 1);
			msgpack_pack_nil(&pk);
			if (c == 5)
				expect(&sb, ARENA_CAP, GB_OK, "", "",
				       "depth 7");
			else
				expect(&sb, ARENA_CAP, GB_ETOOBIG,
				       "junk[0][0][0][0][0][0][0]",
				       "nesting deeper than 8", "too deep");
		}
		msgpack_sbuffer_destroy(&sb);
	}
}

/* Real (not lying) arrays at and beyond the limits. */
static void test_decode_size_limits(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		size_t n;
		int rc;
		const char *field, *problem;
	} cases[] = {
		{"jobs", CDJ_MAX_JOBS, GB_OK, "", ""},
		{"jobs", CDJ_MAX_JOBS + 1, GB_ETOOBIG, "jobs",
		 "array of 10001 exceeds the limit of 10000"},
		{"files", CDJ_MAX_FILES, GB_OK, "", ""},
		{"files", CDJ_MAX_FILES + 1, GB_ETOOBIG, "jobs[0].inputFiles",
		 "array of 201 exceeds the limit of 200"},
		{"preassigned", CDJ_MAX_PREASSIGNED, GB_OK, "", ""},
		{"preassigned", CDJ_MAX_PREASSIGNED + 1, GB_ETOOBIG,
		 "preassigned", "array of 1001 exceeds the limit of 1000"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		msgpack_packer pk;
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		size_t n = cases[i].n;
		int jobs = strcmp(cases[i].what, "jobs") == 0;
		int files = strcmp(cases[i].what, "files") == 0;
		pack_head(&pk, jobs || files ? 1 : 2);
		if (jobs) { /* n jobs of one file each */
			pk_s(&pk, "jobs");
			msgpack_pack_array(&pk, n);
			for (size_t k = 0; k < n; k++) {
				pack_job(&pk, (long long)k + 1, 1);
				pk_s(&pk, "inputFiles");
				msgpack_pack_array(&pk, 1);
				msgpack_pack_map(&pk, 2);
				pk_s(&pk, "lfn");
				pk_s(&pk, "EVNT.pool.root.1");
				pk_s(&pk, "size");
				msgpack_pack_double(&pk, 1.5);
			}
		} else {
			pack_jobs_files(&pk, files ? n : 1, "f%zu");
		}
		if (!jobs && !files) {
			pk_s(&pk, "preassigned");
			msgpack_pack_array(&pk, n);
			char name[32];
			for (size_t k = 0; k < n; k++) {
				snprintf(name, sizeof(name), "QUEUE_%zu", k);
				pk_s(&pk, name);
			}
		}
		struct arena a;
		struct gm_request r;
		struct cod_error err;
		int rc = decode(&sb, ARENA_CAP, &a, &r, NULL, &err);
		if (rc != cases[i].rc || strcmp(err.field, cases[i].field) ||
		    strcmp(err.problem, cases[i].problem))
			fail_msg("case %zu (%s x %zu): got %s '%s: %s'", i,
				 cases[i].what, n, gb_errname(rc), err.field,
				 err.problem);
		if (rc == GB_OK && jobs) {
			assert_int_equal(r.njobs, n);
			assert_int_equal(r.jobs[n - 1].job_id, (long long)n);
			assert_near(r.jobs[n - 1].inputs[0].size_mb, 1.5, 0);
		} else if (rc == GB_OK && files) {
			assert_int_equal(r.jobs[0].ninputs, n);
			assert_string_equal(r.jobs[0].inputs[n - 1].lfn,
					    "f199");
		} else if (rc == GB_OK) {
			assert_int_equal(r.t.npreassigned, n);
			assert_string_equal(r.t.preassigned[n - 1],
					    "QUEUE_999");
		}
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The arena cap bounds decoding: the object tree is charged before the
** unpack, the copies as they are made. */
static void test_decode_arena_cap(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	msgpack_packer pk;
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_head(&pk, 1);
	/* long names: few values, many bytes to copy */
	char fmt[260];
	memset(fmt, 'x', 246);
	memcpy(fmt + 246, "%03zu", 6);
	pack_jobs_files(&pk, CDJ_MAX_FILES, fmt);
	/* the tree alone is over a 16 KiB cap */
	expect(&sb, 16384, GB_ETOOBIG, "", "decoding needs about ", "16 KiB");
	/* the tree fits in 40 KB, the 200 x 250-byte copies do not */
	struct arena a;
	struct gm_request r;
	struct cod_error err;
	assert_int_equal(decode(&sb, 40000, &a, &r, NULL, &err), GB_ENOMEM);
	assert_string_equal(err.problem, "out of decoding memory");
	assert_non_null(strstr(err.field, "jobs[0].inputFiles"));
	assert_true(a.used <= a.cap);
	arena_free(&a);
	expect(&sb, ARENA_CAP, GB_OK, "", "", "64 MiB");
	msgpack_sbuffer_destroy(&sb);
}

/* Malformed bytes: lying lengths, reserved bytes, empty, trailing data. */
static void test_decode_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned char bytes[16];
		size_t len;
		const char *field, *problem;
	} cases[] = {
		{"jobs array32 claim",
		 {0x81, 0xa4, 'j', 'o', 'b', 's', 0xdd, 0xff, 0xff, 0xff,
		  0xff},
		 11, "jobs",
		 "array claims 4294967295 elements but only 0 bytes follow"},
		{"map16 claim", {0xde, 0xff, 0xff, 0xc0}, 4, "",
		 "map claims 65535 elements but only 1 bytes follow"},
		{"str8 claim", {0x81, 0xa1, 'x', 0xd9, 0x20, 'a'}, 6, "x",
		 "truncated: the message ends inside this value"},
		{"reserved byte", {0x81, 0xa1, 'x', 0xc1}, 4, "x",
		 "invalid msgpack type byte 0xc1"},
		{"empty", {0}, 0, "", "empty message"},
		{"trailing", {0x80, 0xc0, 0xc0}, 3, "",
		 "trailing data after the message (2 bytes)"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb = {cases[i].len, (char *)cases[i].bytes,
				      sizeof(cases[i].bytes)};
		expect(&sb, ARENA_CAP, GB_EDECODE, cases[i].field,
		       cases[i].problem, cases[i].name);
	}
	/* a valid request and one byte more; a root that is not a map */
	msgpack_sbuffer sb;
	make_msg(&sb, base_req, NULL, NULL);
	msgpack_sbuffer_write(&sb, "\xc0", 1);
	expect(&sb, ARENA_CAP, GB_EDECODE, "",
	       "trailing data after the message (1 bytes)", "trailing");
	msgpack_sbuffer_destroy(&sb);
	make_msg(&sb, "[1, 2]", NULL, NULL);
	expect(&sb, ARENA_CAP, GB_ETYPE, "", "expected a map, got array",
	       "array root");
	msgpack_sbuffer_destroy(&sb);
	struct gm_request r;
	struct cod_error err;
	assert_int_equal(cdj_decode_request("\x80", 1, NULL, &r, NULL, &err),
			 GB_EINVAL);
}

/* Every proper prefix of a valid request is refused as malformed; so are
** single-byte corruptions refused with a decoder code or decoded, never a
** crash (the heap copies are exact, so ASan sees any overread). */
static void test_decode_truncated_and_garbage(void **state)
{
	(void)state;
	msgpack_sbuffer sb;
	make_msg(&sb, base_req, NULL, NULL);
	for (size_t len = 0; len < sb.size; len++) {
		char *copy = malloc(len ? len : 1);
		assert_non_null(copy);
		memcpy(copy, sb.data, len);
		msgpack_sbuffer part = {len, copy, len};
		char what[48];
		snprintf(what, sizeof(what), "prefix of %zu/%zu", len,
			 sb.size);
		struct arena a;
		struct gm_request r;
		struct cod_error err;
		if (decode(&part, ARENA_CAP, &a, &r, NULL, &err) != GB_EDECODE)
			fail_msg("%s: %s: %s", what, err.field, err.problem);
		arena_free(&a);
		free(copy);
	}
	unsigned long long x = 0x9e3779b97f4a7c15ULL;
	size_t ok = 0, refused = 0;
	for (int iter = 0; iter < 4000; iter++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		char *copy = malloc(sb.size);
		assert_non_null(copy);
		memcpy(copy, sb.data, sb.size);
		copy[x % sb.size] = (char)(x >> 32);
		msgpack_sbuffer bad = {sb.size, copy, sb.size};
		struct arena a;
		struct gm_request r;
		struct cod_error err;
		int rc = decode(&bad, ARENA_CAP, &a, &r, NULL, &err);
		if (rc == GB_OK) {
			assert_true(r.njobs >= 1 && r.njobs <= CDJ_MAX_JOBS);
			assert_true(r.t.task_id >= 1);
			ok++;
		} else if (rc == GB_EDECODE || rc == GB_ETYPE ||
			   rc == GB_EMISSING || rc == GB_ERANGE ||
			   rc == GB_ETOOBIG || rc == GB_EDUP) {
			assert_true(err.problem[0] != '\0');
			refused++;
		} else {
			fail_msg("iteration %d: %s", iter, gb_errname(rc));
		}
		arena_free(&a);
		free(copy);
	}
	/* both happen: a changed string byte keeps the request valid */
	assert_true(ok > 0 && refused > 0);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- request encoding ---------------------------------------------------- */

static void test_encode_round_trip(void **state)
{
	(void)state;
	/* v: bit 0 jobScope sent, bit 1 the other enum values and flags,
	** bit 2 nucleus and gshare left to the worker */
	for (int v = 0; v < 8; v++) {
		struct gm_request in = full_request();
		struct cdj_extra xin = {.has_scope = v & 1};
		if (v & 2) {
			in.t.scope = TB_SCOPE_SATELLITES;
			in.t.out_disk_unit = JB_OUT_GB_PER_EVENT;
			in.need.kind = RC_RELEASE;
			in.t.preassigned = NULL;
			in.t.npreassigned = 0;
			in.t.preassign_skipped_since = 0;
			in.t.priority = 0;
			in.t.direct_access_only = in.t.use_es = 0;
			in.t.dynamic_nevents = in.need.only_tags_fc = 0;
			in.t.scout = in.t.merge = in.t.premerged = 0;
		}
		if (v & 4)
			in.t.nucleus = in.t.gshare = NULL;
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdj_encode_request_ext(&in, &xin, &sb), GB_OK);
		struct arena a;
		struct gm_request out;
		struct cdj_extra xout;
		struct cod_error err;
		int rc = decode(&sb, ARENA_CAP, &a, &out, &xout, &err);
		if (rc != GB_OK)
			fail_msg("variant %d: %s '%s: %s'", v, gb_errname(rc),
				 err.field, err.problem);
		check_same(&in, &out);
		assert_int_equal(xout.has_scope, xin.has_scope);
		assert_int_equal(out.t.scope, xin.has_scope
						      ? in.t.scope
						      : TB_SCOPE_SATELLITES);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}

	/* Without an extra, only a nucleus-only scope is sent; NULL optional
	** strings go out as "" (what the decoder gives). */
	for (int nuc = 0; nuc < 2; nuc++) {
		struct gm_request in = full_request();
		in.t.scope = nuc ? TB_SCOPE_NUCLEUS_ONLY : TB_SCOPE_SATELLITES;
		in.t.processing_type = in.t.ip_connectivity = NULL;
		in.architecture = in.need.container_name = NULL;
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		assert_int_equal(cdj_encode_request(&in, &sb), GB_OK);
		struct arena a;
		struct gm_request out;
		struct cdj_extra xout;
		struct cod_error err;
		assert_int_equal(decode(&sb, ARENA_CAP, &a, &out, &xout, &err),
				 GB_OK);
		in.t.processing_type = in.t.ip_connectivity = "";
		in.architecture = in.need.container_name = "";
		check_same(&in, &out);
		assert_int_equal(xout.has_scope, nuc);
		assert_int_equal(out.t.scope, in.t.scope);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* The encoder refuses what the decoder would refuse. */
static void test_encode_rejects_invalid(void **state)
{
	(void)state;
	static const struct gm_input dup_files[] = {{"f", 1}, {"f", 2}};
	static const struct gm_input neg_file[] = {{"f", -1}};
	static const struct gm_input empty_lfn[] = {{"", 1}};
	static const struct gm_job dup_ids[] = {{5, 1, NULL, 0},
						{5, 1, NULL, 0}};
	static const char *const dup_pre[] = {"Q", "Q"};
	static const char *const empty_pre[] = {""};
	static char long_str[300];
	memset(long_str, 'x', sizeof(long_str) - 1);
	for (int c = 0; c < 25; c++) {
		struct gm_request r = full_request();
		struct gm_job jobs[3];
		memcpy(jobs, jobs_a, sizeof(jobs));
		r.jobs = jobs;
		switch (c) {
		case 0: r.t.task_id = 0; break;
		case 1: r.t.nucleus = ""; break;
		case 2: r.t.gshare = long_str; break;
		case 3: r.t.priority = -1; break;
		case 4: r.t.io_intensity = -1; break;
		case 5: r.t.diskio = NAN; break;
		case 6: r.t.core_count = 0; break;
		case 7: r.t.max_core_count = -1; break;
		case 8: r.t.ram_count = INFINITY; break;
		case 9: r.t.cpu_efficiency = 0; break;
		case 10: r.t.cpu_efficiency = 101; break;
		case 11: r.t.ip_connectivity = "wifi"; break;
		case 12: r.t.t1_weight = NAN; break;
		case 13: r.architecture = "a@b@c"; break;
		case 14: r.need.kind = (enum rc_kind)7; break;
		case 15: r.t.preassigned = dup_pre; break;
		case 16: r.t.preassigned = empty_pre; r.t.npreassigned = 1;
			break;
		case 17: r.t.preassign_skipped_since = -1; break;
		case 18: r.njobs = 0; break;
		case 19: r.jobs = dup_ids; r.njobs = 2; break;
		case 20: jobs[1].inputs = dup_files; jobs[1].ninputs = 2;
			break;
		case 21: jobs[0].inputs = neg_file; jobs[0].ninputs = 1;
			break;
		case 22: jobs[2].inputs = empty_lfn; break;
		case 23: jobs[1].nevents = -1; break;
		case 24: r.t.core_count = 1000001; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdj_encode_request_ext(&r, NULL, &sb) != GB_EINVAL)
			fail_msg("case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	assert_int_equal(cdj_encode_request(NULL, &sb), GB_EINVAL);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- events: unpacked with msgpack-c ------------------------------------- */

static const msgpack_object *mget(const msgpack_object *m, const char *k)
{
	assert_int_equal(m->type, MSGPACK_OBJECT_MAP);
	for (uint32_t i = 0; i < m->via.map.size; i++) {
		const msgpack_object *key = &m->via.map.ptr[i].key;
		if (key->type == MSGPACK_OBJECT_STR &&
		    key->via.str.size == strlen(k) &&
		    memcmp(key->via.str.ptr, k, key->via.str.size) == 0)
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

static void mstr(const msgpack_object *m, const char *k, const char *want)
{
	const msgpack_object *v = mget(m, k);
	if (v == NULL || v->type != MSGPACK_OBJECT_STR ||
	    v->via.str.size != strlen(want) ||
	    memcmp(v->via.str.ptr, want, v->via.str.size) != 0)
		fail_msg("%s is not the string '%s'", k, want);
}

static long long mint(const msgpack_object *m, const char *k)
{
	const msgpack_object *v = mget(m, k);
	if (v == NULL || (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER &&
			  v->type != MSGPACK_OBJECT_NEGATIVE_INTEGER))
		fail_msg("%s is not an integer", k);
	return v->via.i64;
}

static const msgpack_object *marr(const msgpack_object *m, const char *k,
				  uint32_t n)
{
	const msgpack_object *v = mget(m, k);
	if (v == NULL || v->type != MSGPACK_OBJECT_ARRAY ||
	    v->via.array.size != n)
		fail_msg("%s is not an array of %u", k, (unsigned)n);
	return v->via.array.ptr;
}

/* An assignment entry: queue, weight, status and its job IDs. */
static void check_group(const msgpack_object *g, const char *queue,
			double weight, const char *status,
			const long long *ids, uint32_t n)
{
	assert_int_equal(g->via.map.size, 4);
	mstr(g, "queue", queue);
	const msgpack_object *w = mget(g, "weight");
	assert_true(w && w->type == MSGPACK_OBJECT_FLOAT64);
	assert_near(w->via.f64, weight, 0);
	mstr(g, "status", status);
	const msgpack_object *j = marr(g, "jobIDs", n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(j[i].via.i64, ids[i]);
}

/* Five queues: two weighted (best order BNL then AGLT2), three dropped;
** five jobs: BNL gets 0, 2, 4 (input local), AGLT2 job 1, job 3 none. */
struct fixture {
	struct jb_queue queues[5];
	struct dec_candidate cands[5];
	struct dec_decision dec;
	struct gm_job jobs[5];
	struct gm_request req;
	long job_queue[5];
	enum jb_job_status job_status[5];
	struct jb_plan plan;
	struct cdj_event ev;
};

static void fixture_init(struct fixture *f)
{
	static const char *const names[5] = {"AGLT2_UCORE", "BNL_PROD",
					     "CERN-P1_test", "MWT2_UCORE",
					     "TOKYO-LCG2_MCORE"};
	static const long jq[5] = {1, 0, 1, -1, 1};
	static const enum jb_job_status js[5] = {
		JB_JOB_ACTIVATED, JB_JOB_ASSIGNED, JB_JOB_ACTIVATED,
		JB_JOB_UNASSIGNED, JB_JOB_ACTIVATED};
	memset(f, 0, sizeof(*f));
	dec_init(&f->dec, f->cands, 5);
	for (size_t i = 0; i < 5; i++) {
		f->queues[i].name = f->cands[i].name = names[i];
		f->jobs[i] = (struct gm_job){4711000001LL + (long long)i, 100,
					     NULL, 0};
	}
	f->cands[0].weight = 0.125;
	f->cands[1].weight = 0.5;
	dec_reject(&f->cands[2], "candidates", "PJ-01", "test_queue",
		   "name %s contains 'test'", names[2], 0, 0, 0, 0);
	dec_reject(&f->cands[3], "memory", "PJ-15", "highmemory",
		   "memory %g MB > maxrss %g MB", NULL, 16200, 16000, 0, 0);
	dec_reject(&f->cands[4], "memory", "PJ-15", "highmemory",
		   "memory %g MB > maxrss %g MB", NULL, 16200, 2000, 0, 0);
	dec_reject(&f->cands[4], "disk", "PJ-17", "disk",
		   "disk %g MB > %g MB", NULL, 9000, 5000, 0, 0);
	dec_stage(&f->dec, "candidates", "PJ-01", 5, 4);
	dec_stage(&f->dec, "memory", "PJ-15", 4, 2);
	dec_stage(&f->dec, "distribution", "PJ-36", 2, 2);
	f->dec.outcome = DEC_ASSIGNED;
	f->dec.chosen = 1;
	f->req.t.task_id = 36100001;
	f->req.t.gshare = "MC Simul";
	f->req.t.nucleus = "BNL-ATLAS";
	f->req.jobs = f->jobs;
	f->req.njobs = 5;
	f->plan.best[0] = 1;
	f->plan.best[1] = 0;
	f->plan.nbest = 2;
	f->plan.job_queue = f->job_queue;
	f->plan.job_status = f->job_status;
	memcpy(f->job_queue, jq, sizeof(jq));
	memcpy(f->job_status, js, sizeof(js));
	f->plan.nassigned = 4;
	f->ev = (struct cdj_event){
		.event = "jobs.assigned", .decision_id = 1042,
		.request_id = "jobs-36100001-1715675400123456789-4711",
		.req = &f->req, .queues = f->queues, .dec = &f->dec,
		.plan = &f->plan, .decided_at = 1715675400,
		.retry_at = 1715675400 + JB_PENDING_RETRY_S,
	};
}

/* Encode and unpack; the caller destroys `up` and `sb`. */
static const msgpack_object *encode_event(const struct cdj_event *ev,
					  msgpack_sbuffer *sb,
					  msgpack_unpacked *up)
{
	msgpack_sbuffer_init(sb);
	assert_int_equal(cdj_encode_event(ev, sb), GB_OK);
	msgpack_unpacked_init(up);
	size_t off = 0;
	assert_int_equal(msgpack_unpack_next(up, sb->data, sb->size, &off),
			 MSGPACK_UNPACK_SUCCESS);
	assert_int_equal(off, sb->size);
	return &up->data;
}

/* The head and the tail (stages, histogram, rejected) of the fixture's
** events. */
static void check_fixture_event(const msgpack_object *m)
{
	mstr(m, "event", "jobs.assigned");
	assert_int_equal(mint(m, "decisionId"), 1042);
	mstr(m, "requestId", "jobs-36100001-1715675400123456789-4711");
	assert_int_equal(mint(m, "taskID"), 36100001);
	mstr(m, "gshare", "MC Simul");
	mstr(m, "nucleus", "BNL-ATLAS");
	mstr(m, "decidedAt", "2024-05-14T08:30:00Z");
	assert_int_equal(mint(m, "decidedAtUnix"), 1715675400);
	assert_null(mget(m, "retryAfter"));
	assert_null(mget(m, "njobs"));
	const msgpack_object *st = marr(m, "stages", 3);
	mstr(&st[1], "name", "memory");
	mstr(&st[1], "rule", "PJ-15");
	assert_int_equal(mint(&st[1], "in"), 4);
	assert_int_equal(mint(&st[1], "out"), 2);
	/* PJ-15 twice, then the ties by rule: PJ-01, PJ-17 */
	const msgpack_object *h = marr(m, "reasons", 3);
	static const struct {
		const char *rule, *code;
		long long count;
	} want[] = {{"PJ-15", "highmemory", 2}, {"PJ-01", "test_queue", 1},
		    {"PJ-17", "disk", 1}};
	for (size_t i = 0; i < 3; i++) {
		mstr(&h[i], "rule", want[i].rule);
		mstr(&h[i], "code", want[i].code);
		assert_int_equal(mint(&h[i], "count"), want[i].count);
	}
	const msgpack_object *rej = marr(m, "rejected", 3);
	mstr(&rej[0], "name", "CERN-P1_test");
	mstr(&rej[0], "rule", "PJ-01");
	mstr(&rej[0], "detail", "name CERN-P1_test contains 'test'");
	mstr(&rej[2], "name", "TOKYO-LCG2_MCORE");
	mstr(&rej[2], "code", "highmemory");
	mstr(&rej[2], "detail", "memory 16200 MB > maxrss 2000 MB");
}

/* PJ-36: jobs grouped per queue in best order, job IDs in request order;
** a job no queue took is listed and the retry time given. */
static void test_event_assigned_with_leftover(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	msgpack_sbuffer sb;
	msgpack_unpacked up;
	const msgpack_object *m = encode_event(&f.ev, &sb, &up);
	check_fixture_event(m);
	assert_int_equal(m->via.map.size, 14);
	const msgpack_object *g = marr(m, "assignments", 2);
	static const long long bnl[] = {4711000001LL, 4711000003LL,
					4711000005LL};
	static const long long aglt2[] = {4711000002LL};
	check_group(&g[0], "BNL_PROD", 0.5, "activated", bnl, 3);
	check_group(&g[1], "AGLT2_UCORE", 0.125, "assigned", aglt2, 1);
	assert_int_equal(marr(m, "unassigned", 1)[0].via.i64, 4711000004LL);
	mstr(m, "retryAt", "2024-05-14T09:30:00Z");
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
}

/* Every job placed: no retryAt at all; a queue whose jobs differ in
** status gets one entry per status, "assigned" first; a best queue that
** got no job has no entry. */
static void test_event_assigned_all(void **state)
{
	(void)state;
	struct fixture f;
	fixture_init(&f);
	f.job_queue[3] = 1;
	f.job_status[3] = JB_JOB_ASSIGNED;
	f.plan.nassigned = 5;
	f.ev.retry_at = 0;
	msgpack_sbuffer sb;
	msgpack_unpacked up;
	const msgpack_object *m = encode_event(&f.ev, &sb, &up);
	check_fixture_event(m);
	assert_int_equal(m->via.map.size, 13);
	assert_null(mget(m, "retryAt"));
	marr(m, "unassigned", 0);
	const msgpack_object *g = marr(m, "assignments", 3);
	static const long long bnl_assigned[] = {4711000004LL};
	static const long long bnl_activated[] = {4711000001LL, 4711000003LL,
						  4711000005LL};
	static const long long aglt2[] = {4711000002LL};
	check_group(&g[0], "BNL_PROD", 0.5, "assigned", bnl_assigned, 1);
	check_group(&g[1], "BNL_PROD", 0.5, "activated", bnl_activated, 3);
	check_group(&g[2], "AGLT2_UCORE", 0.125, "assigned", aglt2, 1);
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	for (size_t j = 0; j < 5; j++) {
		f.job_queue[j] = 1;
		f.job_status[j] = JB_JOB_ACTIVATED;
	}
	m = encode_event(&f.ev, &sb, &up);
	g = marr(m, "assignments", 1);
	mstr(&g[0], "queue", "BNL_PROD");
	marr(&g[0], "jobIDs", 5);
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
}

/* PJ-35: every queue dropped; retryAfter, retryAt and njobs, the
** histogram over all reasons and at most 50 rejected queues. */
static void test_event_pending(void **state)
{
	(void)state;
	enum { N = 60 };
	static struct jb_queue queues[N];
	static struct dec_candidate cands[N];
	static char names[N][24];
	struct dec_decision d;
	dec_init(&d, cands, N);
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "QUEUE_%02zu", i);
		queues[i].name = cands[i].name = names[i];
		if (i < 10) {
			dec_reject(&cands[i], "status", "PJ-04", "status",
				   "status %s is not online", "offline", 0, 0,
				   0, 0);
			continue;
		}
		dec_reject(&cands[i], "queue limit", "PJ-34", "cap",
			   "queued %.0f > 2 x running %.0f", NULL, 500, 100, 0,
			   0);
		if (i % 2)
			dec_reject(&cands[i], "queue cap", "PJ-33", "cap",
				   "activated+starting %.0f > cap %.0f", NULL,
				   300, 200, 0, 0);
	}
	dec_stage(&d, "status", "PJ-04", N, N - 10);
	dec_stage(&d, "queue limit", "PJ-34", N - 10, 0);
	d.outcome = DEC_PENDING;
	d.retry_after_s = JB_PENDING_RETRY_S;
	struct gm_job jobs[2] = {{11, 10, NULL, 0}, {12, 10, NULL, 0}};
	struct gm_request req;
	memset(&req, 0, sizeof(req));
	req.t = (struct jb_task){.task_id = 36100009, .gshare = "Validation",
				 .nucleus = "INFN-T1"};
	req.jobs = jobs;
	req.njobs = 2;
	long jq[2] = {-1, -1};
	enum jb_job_status js[2] = {JB_JOB_UNASSIGNED, JB_JOB_UNASSIGNED};
	struct jb_plan plan = {.job_queue = jq, .job_status = js};
	struct cdj_event ev = {
		.event = "jobs.pending", .decision_id = 1043, .req = &req,
		.queues = queues, .dec = &d, .plan = &plan,
		.decided_at = 1715675400,
		.retry_at = 1715675400 + JB_PENDING_RETRY_S,
	};
	msgpack_sbuffer sb;
	msgpack_unpacked up;
	const msgpack_object *m = encode_event(&ev, &sb, &up);
	assert_int_equal(m->via.map.size, 14);
	mstr(m, "event", "jobs.pending");
	assert_int_equal(mget(m, "requestId")->type, MSGPACK_OBJECT_NIL);
	mstr(m, "nucleus", "INFN-T1");
	mstr(m, "decidedAt", "2024-05-14T08:30:00Z");
	assert_int_equal(mint(m, "retryAfter"), 3600);
	mstr(m, "retryAt", "2024-05-14T09:30:00Z");
	assert_int_equal(mint(m, "njobs"), 2);
	assert_null(mget(m, "assignments"));
	assert_null(mget(m, "unassigned"));
	marr(m, "stages", 2);
	/* (PJ-34, cap) x50 before (PJ-33, cap) x25 before (PJ-04) x10 */
	const msgpack_object *h = marr(m, "reasons", 3);
	static const struct {
		const char *rule;
		long long count;
	} want[] = {{"PJ-34", 50}, {"PJ-33", 25}, {"PJ-04", 10}};
	for (size_t i = 0; i < 3; i++) {
		mstr(&h[i], "rule", want[i].rule);
		assert_int_equal(mint(&h[i], "count"), want[i].count);
	}
	const msgpack_object *rej = marr(m, "rejected", 50);
	mstr(&rej[0], "name", "QUEUE_00");
	mstr(&rej[0], "detail", "status offline is not online");
	mstr(&rej[49], "name", "QUEUE_49");
	mstr(&rej[49], "detail", "queued 500 > 2 x running 100");
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
}

static void test_event_rejects_invalid(void **state)
{
	(void)state;
	for (int c = 0; c < 10; c++) {
		struct fixture f;
		fixture_init(&f);
		switch (c) {
		case 0: f.ev.dec = NULL; break;
		case 1: f.ev.plan = NULL; break;
		case 2: f.req.t.nucleus = NULL; break;
		case 3: f.req.t.gshare = NULL; break;
		case 4: f.job_queue[0] = 3; break;	/* not a best queue */
		case 5: f.plan.best[1] = 5; break;	/* out of range */
		case 6: f.job_status[0] = JB_JOB_UNASSIGNED; break;
		case 7: f.ev.retry_at = 0; break;	/* jobs left over */
		case 8: f.plan.job_status = NULL; break;
		case 9: f.ev.event = NULL; break;
		}
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdj_encode_event(&f.ev, &sb) != GB_EINVAL)
			fail_msg("case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_all_fields),
		cmocka_unit_test(test_decode_defaults),
		cmocka_unit_test(test_decode_words),
		cmocka_unit_test(test_decode_cases),
		cmocka_unit_test(test_decode_key_rules),
		cmocka_unit_test(test_decode_size_limits),
		cmocka_unit_test(test_decode_arena_cap),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_decode_truncated_and_garbage),
		cmocka_unit_test(test_encode_round_trip),
		cmocka_unit_test(test_encode_rejects_invalid),
		cmocka_unit_test(test_event_assigned_with_leftover),
		cmocka_unit_test(test_event_assigned_all),
		cmocka_unit_test(test_event_pending),
		cmocka_unit_test(test_event_rejects_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
