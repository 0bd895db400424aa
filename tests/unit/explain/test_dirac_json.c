/*
** test_dirac_json.c — the DIRAC configuration, jobs and pilots from JSON
** (dirac_json.c), and the DIRAC parts of etc/grid-sample.json and
** etc/dirac-sample.json.
**
** Runs with the repository root as working directory (ctest sets it). The
** seed's ShareCorrections example (dirac-priority-schema) must parse to
** the seed's numbers, and the sample grid must hold exactly that example.
** Errors are tables of {patch applied to a small valid document, expected
** code and message}, so every message names its JSON path.
*/
#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/arena.h"
#include "codec/codec_tq.h"
#include "explain/dirac_json.h"
#include "gb_error.h"
#include "priority.h"
#include "explain/scenario.h"
#include "taskqueue.h"

#define ARENA_CAP (64u << 20)

/* ---- helpers ------------------------------------------------------------- */

#include "jsonpatch.h"

/* The seed's example (dirac-priority-schema), with the groups of DIRAC's
** JobsPriorities documentation. */
static const char *seed_config =
	"{\"groups\": ["
	"  {\"name\": \"lhcb_user\", \"share\": 10000, \"jobSharing\": false},"
	"  {\"name\": \"lhcb_mc\", \"share\": 300, \"jobSharing\": true},"
	"  {\"name\": \"lhcb_data\", \"share\": 40000, \"jobSharing\": true}],"
	" \"shareCorrections\": {\"enabled\": true,"
	"  \"ShareCorrectorsToStart\": [\"WMSHistory\"],"
	"  \"WMSHistory\": {"
	"   \"GroupsInstance\": {\"MaxGlobalCorrectionFactor\": 3,"
	"    \"WeekSlice\": {\"TimeSpan\": 604800, \"Weight\": 80,"
	"                   \"MaxCorrection\": 2},"
	"    \"HourSlice\": {\"TimeSpan\": 3600, \"Weight\": 20,"
	"                   \"MaxCorrection\": 5}},"
	"   \"lhcb_userInstance\": {\"Group\": \"lhcb_user\","
	"    \"MaxGlobalCorrectionFactor\": 3,"
	"    \"WeekSlice\": {\"TimeSpan\": 604800, \"Weight\": 80,"
	"                   \"MaxCorrection\": 2},"
	"    \"HourSlice\": {\"TimeSpan\": 3600, \"Weight\": 20,"
	"                   \"MaxCorrection\": 5}}}},"
	" \"cpuSegments\": [500, 5000, 50000, 300000]}";

static void check_seed_numbers(const struct dj_config *c)
{
	static const struct {
		const char *name;
		double share;
		int sharing;
	} groups[] = {{"lhcb_user", 10000, 0},
		      {"lhcb_mc", 300, 1},
		      {"lhcb_data", 40000, 1}};
	assert_int_equal(c->pr.ngroups, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(c->pr.groups[i].name, groups[i].name);
		assert_near(c->pr.groups[i].share, groups[i].share, 0);
		assert_int_equal(c->pr.groups[i].job_sharing,
				 groups[i].sharing);
	}
	assert_true(c->pr.corrections);
	assert_true(c->started);
	assert_near(c->pr.default_share, PR_DEFAULT_SHARE, 0);
	assert_int_equal(c->pr.ninst, 2);
	static const char *const inames[] = {"GroupsInstance",
					     "lhcb_userInstance"};
	for (size_t i = 0; i < 2; i++) {
		const struct pr_instance *in = &c->pr.inst[i];
		assert_string_equal(in->name, inames[i]);
		/* PR-07: the first corrects between groups, the second the
		** users of lhcb_user */
		if (i == 0)
			assert_null(in->group);
		else
			assert_string_equal(in->group, "lhcb_user");
		assert_near(in->max_global, 3, 0);
		assert_int_equal(in->nslices, 2);
		/* in file order; weights as written, pr_correct normalises */
		assert_string_equal(in->slices[0].name, "WeekSlice");
		assert_int_equal(in->slices[0].timespan, 604800);
		assert_near(in->slices[0].weight, 80, 0);
		assert_near(in->slices[0].max_correction, 2, 0);
		assert_string_equal(in->slices[1].name, "HourSlice");
		assert_int_equal(in->slices[1].timespan, 3600);
		assert_near(in->slices[1].weight, 20, 0);
		assert_near(in->slices[1].max_correction, 5, 0);
	}
	/* TQ-02: the 2009 segments */
	assert_int_equal(c->nseg, 4);
	static const long long seg[] = {500, 5000, 50000, 300000};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(c->seg[i], seg[i]);
}

/* ---- configuration -------------------------------------------------------- */

/* PR-04..PR-07: the seed's corrector example parses to its numbers. */
static void test_pr07_seed_example(void **state)
{
	(void)state;
	json_t *root = load_text(seed_config);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct dj_config c;
	char err[256] = "";
	assert_true(dj_has_config(root));
	if (dj_parse_config(root, &a, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	check_seed_numbers(&c);
	assert_ptr_equal(dj_group(&c.pr, "lhcb_mc"), &c.pr.groups[1]);
	assert_null(dj_group(&c.pr, "lhcb_prod"));
	assert_null(dj_group(&c.pr, NULL));
	json_decref(root);
	arena_free(&a);
}

/* The sample grid's DIRAC part is exactly the seed's example. */
static void test_grid_sample_is_seed(void **state)
{
	(void)state;
	char err[512] = "";
	json_t *root = scn_read_file("etc/grid-sample.json", err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct dj_config c;
	assert_true(dj_has_config(root));
	if (dj_parse_config(root, &a, &c, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	check_seed_numbers(&c);
	json_decref(root);
	arena_free(&a);
}

static void parse_ok(const char *text, struct arena *a, struct dj_config *c)
{
	json_t *root = load_text(text);
	char err[256] = "";
	if (dj_parse_config(root, a, c, err, sizeof(err)) != GB_OK)
		fail_msg("%s: %s", text, err);
	json_decref(root);
}

/* What is not written takes DIRAC's defaults. */
static void test_defaults(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct dj_config c;
	parse_ok("{\"nuclei\": []}", &a, &c);
	assert_int_equal(c.pr.ngroups, 0);
	assert_int_equal(c.pr.ninst, 0);
	assert_false(c.pr.corrections);
	assert_int_equal(c.nseg, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(c.seg[i], tq_default_segments[i]);

	/* a slice with nothing set; an instance without a maximum; the
	** corrector list as DIRAC's CS writes it, one string */
	parse_ok("{\"shareCorrections\": {\"enabled\": true,"
		 " \"ShareCorrectorsToStart\": \"WMSHistory\","
		 " \"WMSHistory\": {\"I\": {\"S\": {}}}},"
		 " \"groups\": [{\"name\": \"g\", \"share\": 5}]}",
		 &a, &c);
	assert_true(c.pr.corrections);
	assert_int_equal(c.pr.groups[0].job_sharing, 0);
	assert_near(c.pr.inst[0].max_global, 5, 0);
	assert_int_equal(c.pr.inst[0].slices[0].timespan, 604800);
	assert_near(c.pr.inst[0].slices[0].weight, 1, 0);
	assert_near(c.pr.inst[0].slices[0].max_correction, 3, 0);

	/* the name DIRAC's code reads for the maximum */
	parse_ok("{\"shareCorrections\": {\"enabled\": true,"
		 " \"ShareCorrectorsToStart\": [\"WMSHistory\"],"
		 " \"WMSHistory\": {\"I\": {\"MaxGlobalCorrection\": 4,"
		 "  \"S\": {}}}}}",
		 &a, &c);
	assert_near(c.pr.inst[0].max_global, 4, 0);

	/* disabled, or enabled without WMSHistory started: no correction */
	parse_ok("{\"shareCorrections\": {\"enabled\": false,"
		 " \"ShareCorrectorsToStart\": [\"WMSHistory\"],"
		 " \"WMSHistory\": {\"I\": {\"S\": {}}}}}",
		 &a, &c);
	assert_false(c.pr.corrections);
	assert_true(c.started);
	parse_ok("{\"shareCorrections\": {\"enabled\": true,"
		 " \"WMSHistory\": {\"I\": {\"S\": {}}}}}",
		 &a, &c);
	assert_false(c.pr.corrections);
	assert_false(c.started);
	assert_int_equal(c.pr.ninst, 1);

	/* TQ-02 segments of one's own */
	parse_ok("{\"cpuSegments\": [360, 1800, 3600]}", &a, &c);
	assert_int_equal(c.nseg, 3);
	assert_int_equal(c.seg[2], 3600);
	arena_free(&a);
}

static void test_has_config(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int has;
	} cases[] = {
		{"{\"nuclei\": []}", 0},
		{"{\"groups\": []}", 1},
		{"{\"shareCorrections\": {}}", 1},
		{"{\"cpuSegments\": [1]}", 1},
		{"[]", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *j = load_text(cases[i].text);
		assert_int_equal(dj_has_config(j), cases[i].has);
		json_decref(j);
	}
	assert_int_equal(dj_has_config(NULL), 0);
}

#define W "shareCorrections.WMSHistory."

static void test_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value; /* value NULL: delete */
		int rc;
		const char *msg;
	} cases[] = {
		{"groups", "{}", GB_ETYPE, "groups: expected array, got object"},
		{"groups", "null", GB_ETYPE, "groups: expected array, got null"},
		{"groups[1]", "7", GB_ETYPE,
		 "groups[1]: expected object, got integer"},
		{"groups[1].share", "0", GB_ERANGE,
		 "groups[1].share: expected a number > 0, got 0"},
		{"groups[1].share", NULL, GB_EMISSING, "groups[1].share: missing"},
		{"groups[0].name", "\"\"", GB_ERANGE,
		 "groups[0].name: expected a non-empty string"},
		{"groups[2].name", "\"lhcb_user\"", GB_EDUP,
		 "groups[2].name: duplicate group 'lhcb_user' (also groups[0])"},
		{"groups[0].jobSharing", "\"yes\"", GB_ETYPE,
		 "groups[0].jobSharing: expected boolean, got string"},
		{"groups[0].nam", "\"x\"", GB_EINVAL,
		 "groups[0].nam: unknown field"},
		{"shareCorrections", "[]", GB_ETYPE,
		 "shareCorrections: expected object, got array"},
		{"shareCorrections.enabled", NULL, GB_EMISSING,
		 "shareCorrections.enabled: missing"},
		{"shareCorrections.enabled", "1", GB_ETYPE,
		 "shareCorrections.enabled: expected boolean, got integer"},
		{"shareCorrections.Enabled", "true", GB_EINVAL,
		 "shareCorrections.Enabled: unknown field"},
		{"shareCorrections.ShareCorrectorsToStart", "[\"Monitoring\"]",
		 GB_ERANGE,
		 "shareCorrections.ShareCorrectorsToStart[0]: unknown corrector "
		 "'Monitoring' (expected \"WMSHistory\")"},
		{"shareCorrections.ShareCorrectorsToStart", "\"WMSHistry\"",
		 GB_ERANGE,
		 "shareCorrections.ShareCorrectorsToStart: unknown corrector "
		 "'WMSHistry'"},
		{"shareCorrections.ShareCorrectorsToStart", "3", GB_ETYPE,
		 "shareCorrections.ShareCorrectorsToStart: expected array, got "
		 "integer"},
		{"shareCorrections.WMSHistory", "[]", GB_ETYPE,
		 "shareCorrections.WMSHistory: expected object, got array"},
		{W "GroupsInstance", "5", GB_ETYPE,
		 W "GroupsInstance: expected object, got integer"},
		{W "GroupsInstance.WeekSlice.Weight", "0", GB_ERANGE,
		 W "GroupsInstance.WeekSlice.Weight: expected a number > 0, "
		   "got 0"},
		{W "GroupsInstance.HourSlice.MaxCorrection", "0.5", GB_ERANGE,
		 W "GroupsInstance.HourSlice.MaxCorrection: expected a number "
		   ">= 1, got 0.5"},
		{W "GroupsInstance.WeekSlice.TimeSpan", "0", GB_ERANGE,
		 W "GroupsInstance.WeekSlice.TimeSpan: expected an integer in "
		   "[1, 253402300799], got 0"},
		{W "GroupsInstance.WeekSlice.TimeSpan", "3600.5", GB_ETYPE,
		 W "GroupsInstance.WeekSlice.TimeSpan: expected integer, got "
		   "real"},
		{W "GroupsInstance.WeekSlice.Span", "1", GB_EINVAL,
		 W "GroupsInstance.WeekSlice.Span: unknown field"},
		{W "GroupsInstance.MaxGlobalCorrectionFactor", "0.5", GB_ERANGE,
		 W "GroupsInstance.MaxGlobalCorrectionFactor: expected a number "
		   ">= 1, got 0.5"},
		{W "GroupsInstance.MaxGlobalCorrection", "2", GB_EDUP,
		 W "GroupsInstance.MaxGlobalCorrection: give "
		   "MaxGlobalCorrectionFactor or MaxGlobalCorrection, not both"},
		{W "GroupsInstance.Comment", "\"x\"", GB_EINVAL,
		 W "GroupsInstance.Comment: unknown field (a time slice is an "
		   "object, got string)"},
		{W "lhcb_userInstance.Group", "\"\"", GB_ERANGE,
		 W "lhcb_userInstance.Group: expected a non-empty string"},
		{W "lhcb_userInstance.Group", "[\"lhcb_user\"]", GB_ETYPE,
		 W "lhcb_userInstance.Group: expected string, got array"},
		{W "lhcb_userInstance.Group", NULL, GB_EDUP,
		 W "lhcb_userInstance: second instance between groups (also "
		   "GroupsInstance)"},
		{W "againUser", "{\"Group\": \"lhcb_user\", \"S\": {}}", GB_EDUP,
		 W "againUser: second instance for group 'lhcb_user' (also "
		   "lhcb_userInstance)"},
		{W "Empty", "{\"Group\": \"lhcb_mc\"}", GB_EMISSING,
		 W "Empty: no time slice"},
		{"cpuSegments", "{}", GB_ETYPE,
		 "cpuSegments: expected array, got object"},
		{"cpuSegments", "[]", GB_ERANGE,
		 "cpuSegments: expected at least one segment"},
		{"cpuSegments", "[500, 500]", GB_ERANGE,
		 "cpuSegments[1]: expected more than 500 (segments strictly "
		 "increase), got 500"},
		{"cpuSegments", "[5000, 500]", GB_ERANGE,
		 "cpuSegments[1]: expected more than 5000"},
		{"cpuSegments", "[0]", GB_ERANGE,
		 "cpuSegments[0]: expected an integer in [1, 1000000000000], "
		 "got 0"},
		{"cpuSegments", "[1.5]", GB_ETYPE,
		 "cpuSegments[0]: expected integer, got real"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(seed_config);
		apply_patch(root, cases[i].path, cases[i].value);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct dj_config c;
		char err[512] = "";
		int rc = dj_parse_config(root, &a, &c, err, sizeof(err));
		if (rc != cases[i].rc || strncmp(err, cases[i].msg,
						 strlen(cases[i].msg)) != 0)
			fail_msg("case %zu (%s): got %s '%s', expected %s '%s'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* The limits that need a long document to reach. */
static void test_config_limits(void **state)
{
	(void)state;
	json_t *root = load_text(seed_config);
	json_t *seg = json_array();
	for (int i = 1; i <= TQ_MAX_SEGMENTS + 1; i++)
		json_array_append_new(seg, json_integer(i * 100));
	json_object_set_new(root, "cpuSegments", seg);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct dj_config c;
	char err[512] = "";
	assert_int_equal(dj_parse_config(root, &a, &c, err, sizeof(err)),
			 GB_ETOOBIG);
	assert_string_equal(err, "cpuSegments: array of 33 exceeds the limit "
				 "of 32");
	json_array_remove(seg, 0);
	assert_int_equal(dj_parse_config(root, &a, &c, err, sizeof(err)),
			 GB_OK);
	assert_int_equal(c.nseg, TQ_MAX_SEGMENTS);

	json_t *inst = json_object_get(
		json_object_get(json_object_get(root, "shareCorrections"),
				"WMSHistory"),
		"GroupsInstance");
	for (int k = 0; k < PR_MAX_SLICES; k++) {
		char name[16];
		snprintf(name, sizeof(name), "S%d", k);
		json_object_set_new(inst, name, json_object());
	}
	assert_int_equal(dj_parse_config(root, &a, &c, err, sizeof(err)),
			 GB_ETOOBIG);
	assert_string_equal(err, "shareCorrections.WMSHistory.GroupsInstance.S6: "
				 "more than 8 time slices");
	json_decref(root);
	arena_free(&a);
}

/* ---- jobs ---------------------------------------------------------------- */

/* The requirement keys are the engine's field names, in its order. */
static void test_requirement_keys(void **state)
{
	(void)state;
	static const char *const scalars[] = {"ownerDN", "ownerGroup", "setup",
					      "cpuTime"};
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(dj_requirement_keys[i], scalars[i]);
	for (int f = 0; f < TQ_NFIELDS; f++)
		assert_string_equal(dj_requirement_keys[4 + f],
				    tq_field_names[f]);
	assert_null(dj_requirement_keys[4 + TQ_NFIELDS]);
}

static const char *base_job =
	"{\"jobID\": 5, \"ownerDN\": \"/DC=ch/CN=alice\","
	" \"ownerGroup\": \"lhcb_user\", \"setup\": \"LHCb-Production\","
	" \"cpuTime\": 100, \"description\": \"a test job\","
	" \"sites\": [\"LCG.RAL.uk\", \"LCG.CERN.cern\", \"LCG.RAL.uk\"],"
	" \"bannedSites\": [], \"platforms\": null}";

/* TQ-03: sets are normalised (sorted, unique), so equal sets compare
** equal whatever order a user wrote. */
static void test_job(void **state)
{
	(void)state;
	json_t *root = load_text(base_job);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_job j;
	char err[256] = "";
	if (dj_parse_job(root, "job", &a, &j, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_int_equal(j.job_id, 5);
	assert_string_equal(j.owner, "/DC=ch/CN=alice");
	assert_string_equal(j.owner_group, "lhcb_user");
	assert_string_equal(j.setup, "LHCb-Production");
	assert_int_equal(j.cpu_time, 100); /* raw: the worker segments it */
	assert_int_equal(j.user_priority, 1);
	assert_int_equal(j.set[TQ_F_SITES].n, 2);
	assert_string_equal(j.set[TQ_F_SITES].v[0], "LCG.CERN.cern");
	assert_string_equal(j.set[TQ_F_SITES].v[1], "LCG.RAL.uk");
	for (int f = 1; f < TQ_NFIELDS; f++)
		assert_int_equal(j.set[f].n, 0);
	json_object_set_new(root, "userPriority", json_integer(0));
	assert_int_equal(dj_parse_job(root, "job", &a, &j, err, sizeof(err)),
			 GB_OK);
	assert_int_equal(j.user_priority, 0);
	json_decref(root);
	arena_free(&a);
}

static void test_job_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value;
		int rc;
		const char *msg;
	} cases[] = {
		{"jobID", "0", GB_ERANGE,
		 "job.jobID: expected a positive integer, got 0"},
		{"jobID", NULL, GB_EMISSING, "job.jobID: missing"},
		{"userPriority", "11", GB_ERANGE,
		 "job.userPriority: expected an integer in [0, 10], got 11"},
		{"cpuTime", NULL, GB_EMISSING, "job.cpuTime: missing"},
		{"cpuTime", "0", GB_ERANGE,
		 "job.cpuTime: expected an integer in [1, 1000000000000], got 0"},
		{"ownerGroup", "3", GB_ETYPE,
		 "job.ownerGroup: expected string, got integer"},
		{"ownerDN", "\"\"", GB_ERANGE,
		 "job.ownerDN: expected a non-empty string"},
		{"setup", NULL, GB_EMISSING, "job.setup: missing"},
		{"sites", "[\"A\", \"\"]", GB_ERANGE,
		 "job.sites[1]: expected a non-empty string"},
		{"platforms", "\"x86_64-el9\"", GB_ETYPE,
		 "job.platforms: expected array, got string"},
		{"gridMiddlewares", "[1]", GB_ETYPE,
		 "job.gridMiddlewares[0]: expected string, got integer"},
		{"bannedSite", "[\"A\"]", GB_EINVAL,
		 "job.bannedSite: unknown field"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(base_job);
		apply_patch(root, cases[i].path, cases[i].value);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_job j;
		char err[512] = "";
		int rc = dj_parse_job(root, "job", &a, &j, err, sizeof(err));
		if (rc != cases[i].rc || strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu (%s): got %s '%s', expected %s '%s'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
	/* CDT_MAX_SET values per set, as the decoder allows */
	json_t *root = load_text(base_job);
	json_t *sites = json_array();
	for (int i = 0; i <= CDT_MAX_SET; i++) {
		char s[16];
		snprintf(s, sizeof(s), "S%d", i);
		json_array_append_new(sites, json_string(s));
	}
	json_object_set_new(root, "sites", sites);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_job j;
	char err[512] = "";
	assert_int_equal(dj_parse_job(root, "job", &a, &j, err, sizeof(err)),
			 GB_ETOOBIG);
	assert_string_equal(err, "job.sites: array of 1001 exceeds the limit "
				 "of 1000");
	json_decref(root);
	arena_free(&a);
}

static void test_jobs_list(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int rc;
		const char *msg;
		size_t n;
	} cases[] = {
		{"[{\"jobID\": 1, \"ownerDN\": \"a\", \"ownerGroup\": \"g\","
		 " \"setup\": \"S\", \"cpuTime\": 1},"
		 " {\"jobID\": 2, \"ownerDN\": \"a\", \"ownerGroup\": \"g\","
		 " \"setup\": \"S\", \"cpuTime\": 1}]",
		 GB_OK, "", 2},
		{"[{\"jobID\": 7, \"ownerDN\": \"a\", \"ownerGroup\": \"g\","
		 " \"setup\": \"S\", \"cpuTime\": 1},"
		 " {\"jobID\": 8, \"ownerDN\": \"a\", \"ownerGroup\": \"g\","
		 " \"setup\": \"S\", \"cpuTime\": 1},"
		 " {\"jobID\": 7, \"ownerDN\": \"b\", \"ownerGroup\": \"g\","
		 " \"setup\": \"S\", \"cpuTime\": 9}]",
		 GB_EDUP, "jobs[2].jobID: duplicate jobID '7' (also jobs[0])", 0},
		{"[]", GB_ERANGE, "jobs: expected at least one job", 0},
		{"{}", GB_ETYPE, "jobs: expected array, got object", 0},
		{"[{\"jobID\": 1}]", GB_EMISSING, "jobs[0].ownerDN: missing", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(cases[i].text);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_job *jobs = NULL;
		size_t n = 0;
		char err[512] = "";
		int rc = dj_parse_jobs(root, "jobs", &a, &jobs, &n, err,
				       sizeof(err));
		if (rc != cases[i].rc || strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu: got %s '%s'", i, gb_errname(rc),
				 err);
		assert_int_equal(n, cases[i].n);
		json_decref(root);
		arena_free(&a);
	}
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_job *jobs = NULL;
	size_t n = 0;
	char err[128] = "";
	assert_int_equal(dj_parse_jobs(NULL, "jobs", &a, &jobs, &n, err,
				       sizeof(err)),
			 GB_EMISSING);
	assert_string_equal(err, "jobs: missing");
	arena_free(&a);
}

/* ---- pilots -------------------------------------------------------------- */

static const char *base_pilot =
	"{\"pilotID\": \"p1\", \"setup\": \"LHCb-Production\","
	" \"cpuTime\": 86400, \"site\": \"LCG.CERN.cern\","
	" \"gridCE\": \"ce503.cern.ch\", \"platform\": \"x86_64-el9\","
	" \"pilotType\": \"private\", \"ownerGroup\": \"lhcb_user\","
	" \"ownerDN\": \"/DC=ch/CN=alice\", \"description\": \"test\"}";

static void test_pilot(void **state)
{
	(void)state;
	json_t *root = load_text(base_pilot);
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_pilot p;
	char err[256] = "";
	if (dj_parse_pilot(root, "pilot", &a, &p, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(p.pilot_id, "p1");
	assert_string_equal(p.d.setup, "LHCb-Production");
	assert_int_equal(p.d.cpu_time, 86400);
	assert_string_equal(p.site, "LCG.CERN.cern");
	assert_int_equal(p.d.want[TQ_P_GRID_CE].n, 1);
	assert_string_equal(p.d.want[TQ_P_GRID_CE].v[0], "ce503.cern.ch");
	assert_string_equal(p.d.want[TQ_P_PLATFORM].v[0], "x86_64-el9");
	assert_string_equal(p.d.want[TQ_P_PILOT_TYPE].v[0], "private");
	assert_string_equal(p.d.groups.v[0], "lhcb_user");
	assert_string_equal(p.d.owners.v[0], "/DC=ch/CN=alice");
	/* a generic pilot says only what it must */
	json_t *min = load_text("{\"setup\": \"S\", \"cpuTime\": 1}");
	assert_int_equal(dj_parse_pilot(min, "pilot", &a, &p, err, sizeof(err)),
			 GB_OK);
	assert_null(p.pilot_id);
	assert_string_equal(p.site, "ANY");
	for (int f = 0; f < TQ_NPFIELDS; f++) {
		assert_int_equal(p.d.want[f].n, 0);
		assert_int_equal(p.d.any[f], 0);
	}
	assert_int_equal(p.d.groups.n, 0);
	assert_int_equal(p.d.owners.n, 0);
	json_decref(min);
	/* lists, ANY and tags as pilot.match takes them */
	min = load_text("{\"setup\": \"S\", \"cpuTime\": 1,"
			" \"site\": [\"B\", \"A\"], \"platform\": \"any\","
			" \"tags\": [\"MP\", \"GPU\"], \"requiredTags\": \"GPU\","
			" \"bannedSite\": [\"C\"], \"jobType\": [\"User\"]}");
	if (dj_parse_pilot(min, "pilot", &a, &p, err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_string_equal(p.site, "B");
	assert_int_equal(p.d.want[TQ_P_SITE].n, 2);
	assert_int_equal(p.d.any[TQ_P_PLATFORM], 1);
	assert_int_equal(p.d.want[TQ_P_TAG].n, 2);
	assert_int_equal(p.d.required.n, 1);
	assert_int_equal(p.d.banned[TQ_P_SITE].n, 1);
	assert_string_equal(p.d.want[TQ_P_JOB_TYPE].v[0], "User");
	json_decref(min);
	/* required tags not among the tags: refused as pilot.match is */
	min = load_text("{\"setup\": \"S\", \"cpuTime\": 1,"
			" \"tags\": \"MP\", \"requiredTags\": [\"GPU\"]}");
	assert_int_equal(dj_parse_pilot(min, "pilot", &a, &p, err, sizeof(err)),
			 GB_ERANGE);
	assert_non_null(strstr(err, "pilot.requiredTags[0]"));
	json_decref(min);
	json_decref(root);
	arena_free(&a);
}

/* Pack the JSON pilot `j` (an object of strings, integers and arrays of
** strings) as pilot.match's msgpack. */
static void pack_pilot_json(msgpack_packer *pk, json_t *j)
{
	if (json_is_object(j)) {
		msgpack_pack_map(pk, json_object_size(j));
		const char *k;
		json_t *v;
		json_object_foreach(j, k, v)
		{
			msgpack_pack_str_with_body(pk, k, strlen(k));
			pack_pilot_json(pk, v);
		}
	} else if (json_is_array(j)) {
		msgpack_pack_array(pk, json_array_size(j));
		for (size_t i = 0; i < json_array_size(j); i++)
			pack_pilot_json(pk, json_array_get(j, i));
	} else if (json_is_string(j)) {
		const char *t = json_string_value(j);
		msgpack_pack_str_with_body(pk, t, strlen(t));
	} else {
		assert_true(json_is_integer(j));
		msgpack_pack_long_long(pk, json_integer_value(j));
	}
}

static int strset_same(const struct tq_strset *a, const struct tq_strset *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return 0;
	return 1;
}

/*
** A scenario's pilot is read as pilot.match reads it: every list field
** pilot.match takes (the six fields a pilot constrains, their six bans,
** requiredTags, ownerGroup, ownerDN), as a string, a list, a list with
** ANY and [], gives the same pilot through dj_parse_pilot (JSON) and
** cdt_decode_pilot (msgpack), and the field is one the scenario reader
** knows (an unknown one is refused).
*/
static void test_pilot_fields_as_pilot_match(void **state)
{
	(void)state;
	const char *keys[2 * TQ_NPFIELDS + 3];
	size_t nk = 0;
	for (int f = 0; f < TQ_NPFIELDS; f++)
		keys[nk++] = tq_pfield_names[f];
	for (int f = 0; f < TQ_NPFIELDS; f++)
		keys[nk++] = tq_pfield_ban_names[f];
	keys[nk++] = "requiredTags";
	keys[nk++] = "ownerGroup";
	keys[nk++] = "ownerDN";
	static const char *const forms[] = {
		"\"V1\"", "[\"V1\", \"V2\"]", "[\"V2\", \"aNy\"]", "[]", "\"Any\""};
	for (size_t k = 0; k < nk; k++)
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			char text[512];
			/* requiredTags needs the tags, ownerDN its group */
			snprintf(text, sizeof(text),
				 "{\"pilotID\": \"p\", \"setup\": \"S\", "
				 "\"cpuTime\": 7, \"%s\": %s%s}",
				 keys[k], forms[i],
				 strcmp(keys[k], "requiredTags") == 0
					 ? ", \"tags\": \"ANY\""
				 : strcmp(keys[k], "ownerDN") == 0
					 ? ", \"ownerGroup\": \"g\""
					 : "");
			json_t *j = load_text(text);
			struct arena a;
			arena_init(&a, ARENA_CAP);
			struct cdt_pilot pj, pm;
			char err[256] = "";
			if (dj_parse_pilot(j, "pilot", &a, &pj, err, sizeof(err)) !=
			    GB_OK)
				fail_msg("%s: scenario reader: %s", text, err);
			msgpack_sbuffer sb;
			msgpack_sbuffer_init(&sb);
			msgpack_packer pk;
			msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
			pack_pilot_json(&pk, j);
			struct cod_error cerr;
			if (cdt_decode_pilot(sb.data, sb.size, &a, &pm, &cerr) !=
			    GB_OK)
				fail_msg("%s: pilot.match: %s: %s", text,
					 cerr.field, cerr.problem);
			int same = strcmp(pj.site, pm.site) == 0 &&
				   strset_same(&pj.d.required, &pm.d.required) &&
				   strset_same(&pj.d.groups, &pm.d.groups) &&
				   strset_same(&pj.d.owners, &pm.d.owners);
			size_t nvals = pj.d.required.n + pj.d.groups.n +
				       pj.d.owners.n;
			for (int f = 0; f < TQ_NPFIELDS; f++) {
				same = same && pj.d.any[f] == pm.d.any[f] &&
				       strset_same(&pj.d.want[f], &pm.d.want[f]) &&
				       strset_same(&pj.d.banned[f],
						   &pm.d.banned[f]);
				nvals += pj.d.want[f].n + pj.d.banned[f].n +
					 (size_t)pj.d.any[f];
			}
			if (!same)
				fail_msg("%s: the scenario reader and pilot.match "
					 "read different pilots",
					 text);
			/* the field was read, not skipped (only [] says
			** nothing; the added group or tags ANY is one more) */
			size_t extra = strcmp(keys[k], "ownerDN") == 0 ||
				       strcmp(keys[k], "requiredTags") == 0;
			if ((nvals > extra) != (strcmp(forms[i], "[]") != 0))
				fail_msg("%s: %zu values read", text, nvals);
			msgpack_sbuffer_destroy(&sb);
			json_decref(j);
			arena_free(&a);
		}
}

static void test_pilot_errors(void **state)
{
	(void)state;
	static const struct {
		const char *path, *value;
		int rc;
		const char *msg;
	} cases[] = {
		{"site", "5", GB_ETYPE,
		 "pilot.site: expected string or array, got integer"},
		{"setup", "\"\"", GB_ERANGE,
		 "pilot.setup: expected a non-empty string"},
		{"cpuTime", "-1", GB_ERANGE,
		 "pilot.cpuTime: expected an integer in [1, 1000000000000], "
		 "got -1"},
		{"cpuTime", "\"1d\"", GB_ETYPE,
		 "pilot.cpuTime: expected integer, got string"},
		{"gridCE", "\"\"", GB_ERANGE,
		 "pilot.gridCE: expected a non-empty string"},
		{"pilotid", "\"x\"", GB_EINVAL, "pilot.pilotid: unknown field"},
		/* TQ-04: an owner without a group would restrict nothing */
		{"ownerGroup", NULL, GB_EMISSING,
		 "pilot.ownerGroup: required when ownerDN is given"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = load_text(base_pilot);
		apply_patch(root, cases[i].path, cases[i].value);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct cdt_pilot p;
		char err[512] = "";
		int rc = dj_parse_pilot(root, "pilot", &a, &p, err, sizeof(err));
		if (rc != cases[i].rc || strcmp(err, cases[i].msg) != 0)
			fail_msg("case %zu (%s): got %s '%s', expected %s '%s'",
				 i, cases[i].path, gb_errname(rc), err,
				 gb_errname(cases[i].rc), cases[i].msg);
		json_decref(root);
		arena_free(&a);
	}
}

/* ---- etc/dirac-sample.json ------------------------------------------------ */

/*
** The quick-start file: its jobs and pilots parse, its jobs fall into six
** task queues (TQ-01 with the TQ-02 segments; its description says which),
** and they encode and decode through job.submit unchanged.
*/
static void test_tq01_sample_file(void **state)
{
	(void)state;
	char err[512] = "";
	json_t *root = scn_read_file("etc/dirac-sample.json", err, sizeof(err));
	if (root == NULL)
		fail_msg("%s", err);
	assert_false(dj_has_config(root));
	struct arena a;
	arena_init(&a, ARENA_CAP);
	struct cdt_job *jobs = NULL;
	size_t n = 0;
	if (dj_parse_jobs(json_object_get(root, "jobs"), "jobs", &a, &jobs, &n,
			  err, sizeof(err)) != GB_OK)
		fail_msg("%s", err);
	assert_int_equal(n, 20);
	char sig[20][2048];
	size_t distinct = 0;
	for (size_t i = 0; i < n; i++) {
		struct tq_def d = {jobs[i].owner, jobs[i].owner_group,
				   jobs[i].setup,
				   tq_cpu_segment(jobs[i].cpu_time,
						  tq_default_segments, 4),
				   {{0}}};
		memcpy(d.set, jobs[i].set, sizeof(d.set));
		size_t len = 0;
		assert_int_equal(tq_canon(&d, sig[i], sizeof(sig[i]), &len),
				 GB_OK);
		int seen = 0;
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(sig[k], sig[i]) == 0;
		distinct += !seen;
	}
	assert_int_equal(distinct, 6);

	msgpack_sbuffer sb;
	msgpack_sbuffer_init(&sb);
	struct cdt_submit sub = {jobs, n}, back;
	assert_int_equal(cdt_encode_submit(&sub, &sb), GB_OK);
	struct cod_error cerr;
	assert_int_equal(cdt_decode_submit(sb.data, sb.size, &a, &back, &cerr),
			 GB_OK);
	assert_int_equal(back.njobs, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(back.jobs[i].job_id, jobs[i].job_id);
		assert_int_equal(back.jobs[i].user_priority,
				 jobs[i].user_priority);
		for (int f = 0; f < TQ_NFIELDS; f++)
			assert_int_equal(back.jobs[i].set[f].n,
					 jobs[i].set[f].n);
	}
	msgpack_sbuffer_destroy(&sb);

	json_t *pilots = json_object_get(root, "pilots");
	assert_int_equal(json_array_size(pilots), 8);
	size_t private = 0;
	for (size_t i = 0; i < json_array_size(pilots); i++) {
		struct cdt_pilot p;
		char path[32];
		snprintf(path, sizeof(path), "pilots[%zu]", i);
		if (dj_parse_pilot(json_array_get(pilots, i), path, &a, &p, err,
				   sizeof(err)) != GB_OK)
			fail_msg("%s", err);
		assert_non_null(p.pilot_id);
		private += p.d.groups.n > 0;
	}
	assert_int_equal(private, 3);
	json_decref(root);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pr07_seed_example),
		cmocka_unit_test(test_grid_sample_is_seed),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_has_config),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_limits),
		cmocka_unit_test(test_requirement_keys),
		cmocka_unit_test(test_job),
		cmocka_unit_test(test_job_errors),
		cmocka_unit_test(test_jobs_list),
		cmocka_unit_test(test_pilot),
		cmocka_unit_test(test_pilot_errors),
		cmocka_unit_test(test_pilot_fields_as_pilot_match),
		cmocka_unit_test(test_tq01_sample_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
