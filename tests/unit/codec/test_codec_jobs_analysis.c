/*
** test_codec_jobs_analysis.c — the analysis fields of a job.broker request
** (taskType "anal": userName, workingGroup, taskPriority, ramCountUnit,
** excludedSite, includedSite, avoidVP) on the wire.
**
** The production fields are test_codec_jobs.c's; here only what r->an
** holds after decoding, what is refused (code, field and the start of the
** problem, as a producer reads them in the dead-letter header), the
** limits, and that what `gridbroker job submit` encodes decodes to the
** same request. A production request keeps r->an at its defaults and
** ignores the analysis keys, as the JSON request parser does, so
** `explain` and the worker accept the same production requests.
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
#include "gb_error.h"
#include "model/gridmodel.h"

#define ARENA_CAP (16u << 20)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *base_analysis =
	"{\"taskID\": 36200001, \"gshare\": \"User Analysis\","
	" \"currentPriority\": 1000, \"coreCount\": 1,"
	" \"taskType\": \"anal\", \"userName\": \"alice\","
	" \"workingGroup\": \"phys-higgs\", \"taskPriority\": 2000,"
	" \"ramCountUnit\": \"MB\","
	" \"excludedSite\": [\"BNL\", \"CERN\"],"
	" \"includedSite\": [\"INFN-T1\", \"RAL\", \"TRIUMF\"],"
	" \"avoidVP\": true,"
	" \"jobs\": [{\"jobID\": 5001}, {\"jobID\": 5002}]}";

static const char *base_prod =
	"{\"taskID\": 36100001, \"nucleus\": \"CERN-PROD\","
	" \"gshare\": \"MC Simul\", \"jobs\": [{\"jobID\": 4711}]}";

#include "jsonmsg.h"

static int decode(const msgpack_sbuffer *sb, struct arena *a,
		  struct gm_request *r, struct cod_error *err)
{
	arena_init(a, ARENA_CAP);
	return cdj_decode_request(sb->data, sb->size, a, r, NULL, err);
}

/* `got` has the analysis part `want`. */
static void check_analysis(const struct gm_analysis *got, const struct gm_analysis *want,
		       const char *what)
{
	if (got->is_analysis != want->is_analysis ||
	    got->task_priority != want->task_priority ||
	    got->ram_per_core != want->ram_per_core ||
	    got->avoid_vp != want->avoid_vp ||
	    got->nexcluded != want->nexcluded ||
	    got->nincluded != want->nincluded)
		fail_msg("%s: anal %d prio %ld ram/core %d avoidVP %d "
			 "excluded %zu included %zu, want %d %ld %d %d %zu "
			 "%zu",
			 what, got->is_analysis, got->task_priority,
			 got->ram_per_core, got->avoid_vp, got->nexcluded,
			 got->nincluded, want->is_analysis,
			 want->task_priority, want->ram_per_core,
			 want->avoid_vp, want->nexcluded, want->nincluded);
	if ((got->user == NULL) != (want->user == NULL) ||
	    (got->user && strcmp(got->user, want->user)))
		fail_msg("%s: userName '%s', want '%s'", what,
			 got->user ? got->user : "(null)",
			 want->user ? want->user : "(null)");
	if ((got->working_group == NULL) != (want->working_group == NULL) ||
	    (got->working_group &&
	     strcmp(got->working_group, want->working_group)))
		fail_msg("%s: workingGroup '%s', want '%s'", what,
			 got->working_group ? got->working_group : "(null)",
			 want->working_group ? want->working_group
					     : "(null)");
	if (got->nexcluded == 0 && got->excluded_sites != NULL)
		fail_msg("%s: no excluded sites but an array", what);
	if (got->nincluded == 0 && got->included_sites != NULL)
		fail_msg("%s: no included sites but an array", what);
	for (size_t i = 0; i < want->nexcluded; i++)
		if (strcmp(got->excluded_sites[i], want->excluded_sites[i]))
			fail_msg("%s: excludedSite[%zu] '%s', want '%s'", what,
				 i, got->excluded_sites[i],
				 want->excluded_sites[i]);
	for (size_t i = 0; i < want->nincluded; i++)
		if (strcmp(got->included_sites[i], want->included_sites[i]))
			fail_msg("%s: includedSite[%zu] '%s', want '%s'", what,
				 i, got->included_sites[i],
				 want->included_sites[i]);
}

static const char *const excluded_a[] = {"BNL", "CERN"};
static const char *const included_a[] = {"INFN-T1", "RAL", "TRIUMF"};

/* What base_analysis says. */
static struct gm_analysis full_analysis(void)
{
	return (struct gm_analysis){
		.is_analysis = 1, .user = "alice",
		.working_group = "phys-higgs", .task_priority = 2000,
		.ram_per_core = 0, .excluded_sites = excluded_a,
		.nexcluded = 2, .included_sites = included_a, .nincluded = 3,
		.avoid_vp = 1,
	};
}

/* A production request's r->an: zero but for the two defaults. */
static const struct gm_analysis prod_analysis = {.task_priority = 1000,
					 .ram_per_core = 1};

/* ---- decoding ------------------------------------------------------------ */

/* Every field; then the defaults, with each field deleted or nil. */
static void test_decode_fields_and_defaults(void **state)
{
	(void)state;
	struct gm_analysis full = full_analysis();
	struct gm_analysis no_wg = full, prio = full, ram = full, no_ex = full,
		       no_in = full, vp = full;
	no_wg.working_group = NULL;
	prio.task_priority = 1000;
	ram.ram_per_core = 1;
	no_ex.excluded_sites = NULL;
	no_ex.nexcluded = 0;
	no_in.included_sites = NULL;
	no_in.nincluded = 0;
	vp.avoid_vp = 0;
	struct gm_analysis mb_per_core = full;
	mb_per_core.ram_per_core = 1;
	struct gm_analysis prio0 = full, prio_max = full;
	prio0.task_priority = 0;
	prio_max.task_priority = 1000000;
	const struct {
		const char *base, *path, *value; /* value NULL: deleted */
		const struct gm_analysis *want;
	} cases[] = {
		{base_analysis, NULL, NULL, &full},
		{base_analysis, "workingGroup", NULL, &no_wg},
		{base_analysis, "workingGroup", "null", &no_wg},
		{base_analysis, "taskPriority", NULL, &prio},
		{base_analysis, "taskPriority", "null", &prio},
		{base_analysis, "taskPriority", "0", &prio0},
		{base_analysis, "taskPriority", "1000000", &prio_max},
		{base_analysis, "ramCountUnit", NULL, &ram},
		{base_analysis, "ramCountUnit", "null", &ram},
		{base_analysis, "ramCountUnit", "\"MBPerCore\"", &mb_per_core},
		{base_analysis, "excludedSite", NULL, &no_ex},
		{base_analysis, "excludedSite", "null", &no_ex},
		{base_analysis, "excludedSite", "[]", &no_ex},
		{base_analysis, "includedSite", NULL, &no_in},
		{base_analysis, "includedSite", "[]", &no_in},
		{base_analysis, "avoidVP", NULL, &vp},
		{base_analysis, "avoidVP", "false", &vp},
		{base_analysis, "unknownAnalysisKey", "[1, 2]", &full},
		/* production: absent, "prod" and nil taskType */
		{base_prod, NULL, NULL, &prod_analysis},
		{base_prod, "taskType", "\"prod\"", &prod_analysis},
		{base_prod, "taskType", "null", &prod_analysis},
		/* a production request's analysis keys are ignored like
		** unknown keys (as the JSON request parser ignores them),
		** even malformed ones: PJ-* reads none of them */
		{base_analysis, "taskType", "\"prod\"", &prod_analysis},
		{base_analysis, "taskType", NULL, &prod_analysis},
		{base_prod, "userName", "\"\"", &prod_analysis},
		{base_prod, "taskPriority", "-1", &prod_analysis},
		{base_prod, "includedSite", "[\"X\", \"X\"]", &prod_analysis},
		{base_prod, "avoidVP", "\"yes\"", &prod_analysis},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, cases[i].base, cases[i].path, cases[i].value);
		struct arena a;
		struct gm_request r;
		struct cod_error err;
		int rc = decode(&sb, &a, &r, &err);
		if (rc != GB_OK)
			fail_msg("case %zu: %s '%s: %s'", i, gb_errname(rc),
				 err.field, err.problem);
		msgpack_sbuffer_destroy(&sb); /* nothing may point into it */
		char what[96];
		snprintf(what, sizeof(what), "case %zu (%s = %s)", i,
			 cases[i].path ? cases[i].path : "-",
			 cases[i].value ? cases[i].value : "(deleted)");
		check_analysis(&r.an, cases[i].want, what);
		/* the production part is untouched by the analysis fields */
		assert_int_equal(r.njobs, cases[i].base == base_analysis ? 2 : 1);
		arena_free(&a);
	}
}

#define TS(got) "expected string, got " got
#define TI(got) "expected integer, got " got
#define R_NE "expected a non-empty string"
#define R_PRIO "expected an integer in [0, 1000000], got "

/* One patch each: refused with this code, field and problem. */
static void test_decode_refused(void **state)
{
	(void)state;
	static const struct {
		const char *base, *path, *value; /* value NULL: deleted */
		int rc;
		const char *field;               /* NULL: the path */
		const char *problem;             /* prefix */
	} cases[] = {
		{"a", "userName", NULL, GB_EMISSING, NULL,
		 "required when taskType is anal"},
		{"a", "userName", "null", GB_EMISSING, NULL,
		 "required when taskType is anal"},
		{"a", "userName", "\"\"", GB_ERANGE, NULL, R_NE},
		{"a", "userName", "7", GB_ETYPE, NULL, TS("integer")},
		{"a", "userName", "\"#x:256\"", GB_ETOOBIG, NULL,
		 "string of 256 bytes exceeds the limit of 255"},
		{"a", "userName", "\"#hex:c328\"", GB_ERANGE, NULL,
		 "string is not valid UTF-8"},
		{"a", "taskType", "\"user\"", GB_ERANGE, NULL,
		 "unknown value 'user'; expected prod or anal"},
		{"a", "taskType", "\"Anal\"", GB_ERANGE, NULL,
		 "unknown value 'Anal'; expected prod or anal"},
		{"a", "taskType", "\"analysis\"", GB_ERANGE, NULL,
		 "unknown value 'analysis'; expected prod or anal"},
		{"a", "taskType", "1", GB_ETYPE, NULL, TS("integer")},
		{"a", "workingGroup", "\"\"", GB_ERANGE, NULL, R_NE},
		{"a", "workingGroup", "[\"g\"]", GB_ETYPE, NULL, TS("array")},
		{"a", "taskPriority", "-1", GB_ERANGE, NULL, R_PRIO "-1"},
		{"a", "taskPriority", "1000001", GB_ERANGE, NULL,
		 R_PRIO "1000001"},
		{"a", "taskPriority", "2000.0", GB_ETYPE, NULL, TI("float")},
		{"a", "taskPriority", "\"2000\"", GB_ETYPE, NULL,
		 TI("string")},
		{"a", "ramCountUnit", "\"GB\"", GB_ERANGE, NULL,
		 "unknown value 'GB'; expected MBPerCore or MB"},
		{"a", "ramCountUnit", "\"mb\"", GB_ERANGE, NULL,
		 "unknown value 'mb'; expected MBPerCore or MB"},
		{"a", "ramCountUnit", "2", GB_ETYPE, NULL, TS("integer")},
		{"a", "excludedSite", "\"BNL\"", GB_ETYPE, NULL,
		 "expected array, got string"},
		{"a", "includedSite", "{}", GB_ETYPE, NULL,
		 "expected array, got map"},
		{"a", "includedSite", "[\"RAL\", \"\"]", GB_ERANGE,
		 "includedSite[1]", R_NE},
		{"a", "excludedSite", "[1]", GB_ETYPE, "excludedSite[0]",
		 TS("integer")},
		{"a", "excludedSite", "[null]", GB_ETYPE, "excludedSite[0]",
		 TS("null")},
		{"a", "includedSite", "[\"INFN-T1\", \"RAL\", \"INFN-T1\"]",
		 GB_EDUP, "includedSite[2]",
		 "duplicate site (also includedSite[0])"},
		{"a", "excludedSite", "[\"B\", \"A\", \"C\", \"A\"]", GB_EDUP,
		 "excludedSite[3]", "duplicate site (also excludedSite[1])"},
		{"a", "avoidVP", "1", GB_ETYPE, NULL,
		 "expected boolean, got integer"},
		{"a", "avoidVP", "\"yes\"", GB_ETYPE, NULL,
		 "expected boolean, got string"},
		{"p", "taskType", "\"anal \"", GB_ERANGE, NULL,
		 "unknown value 'anal '; expected prod or anal"},
		/* an anal request with no userName, valid otherwise */
		{"p", "taskType", "\"anal\"", GB_EMISSING, "userName",
		 "required when taskType is anal"},
	};
	for (size_t i = 0; i < NELEM(cases); i++) {
		msgpack_sbuffer sb;
		make_msg(&sb, cases[i].base[0] == 'a' ? base_analysis : base_prod,
			 cases[i].path, cases[i].value);
		struct arena a;
		struct gm_request r;
		struct cod_error err;
		int got = decode(&sb, &a, &r, &err);
		const char *field =
			cases[i].field ? cases[i].field : cases[i].path;
		if (got != cases[i].rc || strcmp(err.field, field) ||
		    strncmp(err.problem, cases[i].problem,
			    strlen(cases[i].problem)))
			fail_msg("case %zu (%s = %.40s): got %s '%s: %s', "
				 "want %s '%s: %s'",
				 i, cases[i].path,
				 cases[i].value ? cases[i].value : "(deleted)",
				 gb_errname(got), err.field, err.problem,
				 gb_errname(cases[i].rc), field,
				 cases[i].problem);
		msgpack_sbuffer_destroy(&sb);
		arena_free(&a);
	}
}

/* A JSON array of n distinct site names (n x up to 10 bytes). */
static char *site_list(size_t n)
{
	char *s = malloc(n * 12 + 3);
	assert_non_null(s);
	size_t k = 0;
	s[k++] = '[';
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(s + k, "%s\"S%zu\"", i ? "," : "", i);
	s[k++] = ']';
	s[k] = '\0';
	return s;
}

/* CDJ_MAX_SITES names are accepted, one more is refused before anything
** is allocated for them. */
static void test_site_limits(void **state)
{
	(void)state;
	static const char *const keys[] = {"excludedSite", "includedSite"};
	for (size_t k = 0; k < NELEM(keys); k++) {
		for (size_t n = CDJ_MAX_SITES; n <= CDJ_MAX_SITES + 1; n++) {
			char *list = site_list(n);
			msgpack_sbuffer sb;
			make_msg(&sb, base_analysis, keys[k], list);
			free(list);
			struct arena a;
			struct gm_request r;
			struct cod_error err;
			int rc = decode(&sb, &a, &r, &err);
			if (n == CDJ_MAX_SITES) {
				if (rc != GB_OK)
					fail_msg("%s x %zu: %s '%s: %s'",
						 keys[k], n, gb_errname(rc),
						 err.field, err.problem);
				size_t got = k ? r.an.nincluded
					       : r.an.nexcluded;
				assert_int_equal(got, n);
			} else {
				assert_int_equal(rc, GB_ETOOBIG);
				assert_string_equal(err.field, keys[k]);
				assert_string_equal(err.problem,
						    "array of 1001 exceeds "
						    "the limit of 1000");
			}
			msgpack_sbuffer_destroy(&sb);
			arena_free(&a);
		}
	}
	assert_int_equal(CDJ_MAX_SITES, 1000);
}

/* ---- encoding ------------------------------------------------------------ */

static const struct gm_job one_job[] = {{4711, 100, NULL, 0},
					{4712, 100, NULL, 0}};

/* A valid request with analysis part `an`. */
static struct gm_request make_request(const struct gm_analysis *an)
{
	struct gm_request r;
	memset(&r, 0, sizeof(r));
	r.t.task_id = 36200001;
	r.t.gshare = "User Analysis";
	r.t.priority = 1000;
	r.t.core_count = 1;
	r.t.cpu_efficiency = 100;
	r.need.kind = RC_RELEASE;
	r.jobs = one_job;
	r.njobs = 2;
	r.an = *an;
	return r;
}

/* The encoded request as JSON (the caller frees it). */
static json_t *wire(const msgpack_sbuffer *sb)
{
	json_t *j = cod_to_json(sb->data, sb->size);
	assert_non_null(j);
	return j;
}

static void test_encode_round_trip(void **state)
{
	(void)state;
	struct gm_analysis full = full_analysis();
	struct gm_analysis bare = {.is_analysis = 1, .user = "bob",
			       .task_priority = 0, .ram_per_core = 1};
	struct gm_analysis prod_junk = full; /* sent as a production request */
	prod_junk.is_analysis = 0;
	prod_junk.user = NULL;           /* not checked for production */
	prod_junk.task_priority = -7;
	const struct {
		const struct gm_analysis *in, *want;
		size_t nkeys; /* of the encoded map: nucleus and jobScope
				 are left out (NULL, satellites) */
	} cases[] = {
		{&full, &full, 41},
		{&bare, &bare, 41},
		{&prod_analysis, &prod_analysis, 34},
		{&prod_junk, &prod_analysis, 34},
	};
	for (size_t c = 0; c < NELEM(cases); c++) {
		struct gm_request in = make_request(cases[c].in);
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		int rc = cdj_encode_request(&in, &sb);
		if (rc != GB_OK)
			fail_msg("case %zu: %s", c, gb_errname(rc));
		json_t *j = wire(&sb);
		if (json_object_size(j) != cases[c].nkeys)
			fail_msg("case %zu: %zu keys, want %zu", c,
				 json_object_size(j), cases[c].nkeys);
		assert_string_equal(
			json_string_value(json_object_get(j, "taskType")),
			cases[c].in->is_analysis ? "anal" : "prod");
		if (cases[c].in->is_analysis) {
			assert_string_equal(json_string_value(json_object_get(
						    j, "ramCountUnit")),
					    cases[c].in->ram_per_core
						    ? "MBPerCore"
						    : "MB");
			json_t *wg = json_object_get(j, "workingGroup");
			assert_non_null(wg);
			assert_true(cases[c].in->working_group
					    ? json_is_string(wg)
					    : json_is_null(wg));
			assert_true(json_is_array(
				json_object_get(j, "excludedSite")));
		} else {
			assert_null(json_object_get(j, "userName"));
			assert_null(json_object_get(j, "includedSite"));
		}
		json_decref(j);

		struct arena a;
		struct gm_request out;
		struct cod_error err;
		rc = decode(&sb, &a, &out, &err);
		if (rc != GB_OK)
			fail_msg("case %zu: %s '%s: %s'", c, gb_errname(rc),
				 err.field, err.problem);
		msgpack_sbuffer_destroy(&sb);
		char what[32];
		snprintf(what, sizeof(what), "round trip %zu", c);
		check_analysis(&out.an, cases[c].want, what);
		assert_int_equal(out.t.task_id, in.t.task_id);
		assert_int_equal(out.njobs, 2);
		arena_free(&a);
	}
}

/* The encoder refuses an analysis request the decoder would refuse. */
static void test_encode_rejects(void **state)
{
	(void)state;
	static const char *const dup_sites[] = {"RAL", "BNL", "RAL"};
	static const char *const empty_site[] = {"RAL", ""};
	static char long_str[300];
	memset(long_str, 'x', sizeof(long_str) - 1);
	for (int c = 0; c < 12; c++) {
		struct gm_analysis an = full_analysis();
		switch (c) {
		case 0: an.user = NULL; break;
		case 1: an.user = ""; break;
		case 2: an.user = long_str; break;
		case 3: an.working_group = ""; break;
		case 4: an.task_priority = -1; break;
		case 5: an.task_priority = 1000001; break;
		case 6: an.ram_per_core = 2; break;
		case 7: an.included_sites = dup_sites; an.nincluded = 3;
			break;
		case 8: an.excluded_sites = empty_site; an.nexcluded = 2;
			break;
		case 9: an.excluded_sites = NULL; an.nexcluded = 1; break;
		case 10: an.nincluded = CDJ_MAX_SITES + 1; break;
		case 11: an.user = "\xc3\x28"; break;
		}
		struct gm_request r = make_request(&an);
		msgpack_sbuffer sb;
		msgpack_sbuffer_init(&sb);
		if (cdj_encode_request(&r, &sb) != GB_EINVAL)
			fail_msg("case %d was encoded", c);
		msgpack_sbuffer_destroy(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_fields_and_defaults),
		cmocka_unit_test(test_decode_refused),
		cmocka_unit_test(test_site_limits),
		cmocka_unit_test(test_encode_round_trip),
		cmocka_unit_test(test_encode_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
