/*
** test_why_render.c — `gridbroker why`'s text from stored decision records
** (why_render.c) and the record's size bound (decrec.c): exact text per
** kind, table-driven. The records are written as the brokerages write
** them (candidates, stages, throttle, TQ-10 counts).
*/
#include "gbtest.h"

#include <stdlib.h>
#include <string.h>

#include "report/decrec.h"
#include "gb_error.h"
#include "report/why_render.h"

/* 2024-05-14T08:30:00Z */
#define T0 1715675400LL

/* A PJ-15 memory cut of 120 -> 80, the summary line of the issue. */
static const char STAGE_MEM[] =
	"{\"name\":\"memory\",\"rule\":\"PJ-15\",\"in\":120,\"out\":80,"
	"\"cut\":{\"rule\":\"PJ-15\",\"code\":\"highmemory\",\"count\":31}}";

static void test_stage_line(void **state)
{
	(void)state;
	static const struct {
		const char *stage, *want;
	} cases[] = {
		{STAGE_MEM, "  120 ->  80 candidates,  33% cut : memory "
			    "[PJ-15 highmemory x31]"},
		/* nothing cut: no bracket, even with a cut object */
		{"{\"name\":\"status\",\"rule\":\"TB-01\",\"in\":5,\"out\":5}",
		 "    5 ->   5 candidates,   0% cut : status"},
		{"{\"name\":\"space\",\"in\":3,\"out\":0}",
		 "    3 ->   0 candidates, 100% cut : space"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *s = json_loads(cases[i].stage, 0, NULL);
		char buf[256];
		assert_true(wr_stage_line(s, buf, sizeof(buf)) > 0);
		assert_string_equal(buf, cases[i].want);
		json_decref(s);
	}
	char buf[64];
	json_t *s = json_loads("{\"in\":1}", 0, NULL);
	assert_int_equal(wr_stage_line(s, buf, sizeof(buf)), GB_EINVAL);
	json_decref(s);
}

/* A pending task: two nuclei dropped at two stages (TB-01, TB-04). */
static const char TASK_PENDING[] =
	"{\"decision\":\"pending\",\"nucleus\":null,\"retryAfter\":1800,"
	"\"note\":null,\"candidates\":["
	"{\"name\":\"NUC-A\",\"weight\":null,\"stage\":\"status\",\"reasons\":"
	"[{\"rule\":\"TB-01\",\"code\":\"status\",\"detail\":\"status OFFLINE "
	"is not ACTIVE\"}],\"weightDetail\":null},"
	"{\"name\":\"NUC-BB\",\"weight\":null,\"stage\":\"space\",\"reasons\":"
	"[{\"rule\":\"TB-04\",\"code\":\"space\",\"detail\":\"free 90 GB <= "
	"DISK_THRESHOLD 100 GB\"}],\"weightDetail\":null}],"
	"\"stages\":[{\"name\":\"status\",\"rule\":\"TB-01\",\"in\":2,\"out\":1},"
	"{\"name\":\"space\",\"rule\":\"TB-04\",\"in\":1,\"out\":0}]}";

/* An assigned task: one survivor chosen, one not. */
static const char TASK_ASSIGNED[] =
	"{\"decision\":\"assigned\",\"nucleus\":\"CERN\",\"candidates\":["
	"{\"name\":\"CERN\",\"weight\":0.25,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":{\"rule\":\"TB-11\",\"code\":\"weight\",\"detail\":"
	"\"free/total 0.5 / RW 2\"}},"
	"{\"name\":\"BNL\",\"weight\":0.125,\"stage\":null,\"reasons\":[],"
	"\"weightDetail\":null}],"
	"\"stages\":[{\"name\":\"weighted choice\",\"rule\":\"TB-12\",\"in\":2,"
	"\"out\":1}]}";

/* A throttled analysis task (no candidates, no stages). */
static const char ANAL_THROTTLED[] =
	"{\"taskID\":7,\"user\":\"bob\",\"decision\":\"throttled\","
	"\"retryAfter\":1200,\"throttle\":{\"throttled\":true,\"rule\":"
	"\"AJ-04\",\"code\":\"share_class_c\",\"value\":93,\"limit\":90},"
	"\"candidates\":[],\"stages\":[],\"assignments\":[],"
	"\"unassigned\":[701,702]}";

/* A pilot nothing matched (route_match.c's record). */
static const char PILOT_NOMATCH[] =
	"{\"decision\":\"nomatch\",\"code\":\"no_tq_matched\",\"reason\":"
	"\"no task queue matched: 4 considered; setup excluded 4\","
	"\"tq\":null,\"job\":null,\"considered\":4,\"matched\":0,\"empty\":0,"
	"\"stages\":[{\"name\":\"setup\",\"rule\":\"TQ-05\",\"in\":4,\"out\":0,"
	"\"cut\":{\"rule\":\"TQ-05\",\"code\":\"setup\",\"count\":4}}]}";

static void check_render(const struct wr_head *h, const char *json,
			 const char *want)
{
	json_t *d = json ? json_loads(json, 0, NULL) : NULL;
	assert_true(json == NULL || d != NULL);
	char *got = wr_render(h, d);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	json_decref(d);
}

static void test_render_kinds(void **state)
{
	(void)state;
	static const struct {
		struct wr_head h;
		const char *json, *want;
	} cases[] = {
		{{1, "task", "42", "r-1", "pending", NULL, T0, 0}, TASK_PENDING,
		 "task 42: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-1, digest -, decision 1\n"
		 "stages:\n"
		 "    2 ->   1 candidates,  50% cut : status\n"
		 "    1 ->   0 candidates, 100% cut : space\n"
		 "rejected:\n"
		 "  NAME   RULE   CODE               DETAIL\n"
		 "-- dropped at status (TB-01): 1 --\n"
		 "  NUC-A  TB-01  status             status OFFLINE is not "
		 "ACTIVE\n"
		 "-- dropped at space (TB-04): 1 --\n"
		 "  NUC-BB TB-04  space              free 90 GB <= "
		 "DISK_THRESHOLD 100 GB\n"
		 "retry after 1800 s\n"},
		{{2, "task", "43", "r-2", "assigned", "CERN", T0, 0},
		 TASK_ASSIGNED,
		 "task 43: assigned, chosen CERN, at 2024-05-14T08:30:00Z, "
		 "request r-2, digest -, decision 2\n"
		 "stages:\n"
		 "    2 ->   1 candidates,  50% cut : weighted choice\n"
		 "weights of the surviving candidates:\n"
		 "  NAME WEIGHT     DETAIL\n"
		 "* CERN 0.25       free/total 0.5 / RW 2\n"
		 "  BNL  0.125      \n"},
		{{3, "jobs", "7", "r-3", "pending", NULL, T0, 701},
		 ANAL_THROTTLED,
		 "jobs 7: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-3, digest -, decision 3\n"
		 "job 701: unassigned\n"
		 "throttled: AJ-04 share_class_c 93 > 90 (owner bob)\n"
		 "retry after 1200 s\n"},
		{{4, "pilot", "p-1", "m-1", "nomatch", NULL, T0, 0},
		 PILOT_NOMATCH,
		 "pilot p-1: nomatch, chosen -, at 2024-05-14T08:30:00Z, "
		 "request m-1, digest -, decision 4\n"
		 "stages:\n"
		 "    4 ->   0 candidates, 100% cut : setup [TQ-05 setup x4]\n"
		 "task queues: 4 considered, 0 matched, 0 of them empty\n"
		 "TQ-10 no_tq_matched: no task queue matched: 4 considered; "
		 "setup excluded 4\n"},
		/* a row without a readable record */
		{{5, "task", "44", NULL, "pending", NULL, T0, 0}, NULL,
		 "task 44: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "-, digest -, decision 5\n"
		 "(no readable record stored with this decision)\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_render(&cases[i].h, cases[i].json, cases[i].want);
}

/* dr_finish: digest, stage cuts, and a bound that truncates the list into
** per-rule aggregates, which the text then shows. */
static void test_record_bound(void **state)
{
	(void)state;
	/* 200 nuclei dropped by TB-04 with long details: ~40 KB. */
	json_t *d = json_loads(TASK_PENDING, 0, NULL);
	json_t *cands = json_object_get(d, "candidates");
	json_array_clear(cands);
	char name[32], detail[200];
	memset(detail, 'x', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "NUC-%03d", i);
		json_array_append_new(
			cands, json_pack("{s:s,s:n,s:s,s:[{s:s,s:s,s:s}]}",
					 "name", name, "weight", "stage",
					 "space", "reasons", "rule", "TB-04",
					 "code", "space", "detail", detail));
	}
	json_t *st = json_object_get(d, "stages");
	json_array_clear(st);
	json_array_append_new(st, json_pack("{s:s,s:s,s:i,s:i}", "name",
					    "space", "rule", "TB-04", "in", 200,
					    "out", 0));
	char want_digest[65];
	assert_int_equal(dr_digest(d, want_digest), GB_OK);

	/* Under a 64 KiB cap the record is whole, with its cut. */
	char *whole = dr_finish(json_deep_copy(d), DR_RECORD_MAX);
	assert_non_null(whole);
	assert_true(strlen(whole) <= DR_RECORD_MAX);
	assert_non_null(strstr(whole, "\"truncated\":false"));
	assert_non_null(strstr(whole, "\"cut\":{\"rule\":\"TB-04\","
				      "\"code\":\"space\",\"count\":200}"));
	free(whole);

	/* Under 8 KiB the candidates become one aggregate. */
	char *small = dr_finish(d, 8192);
	assert_non_null(small);
	assert_true(strlen(small) <= 8192);
	json_t *r = json_loads(small, 0, NULL);
	free(small);
	assert_non_null(r);
	json_t *rec = json_object_get(r, "record");
	assert_string_equal(json_string_value(json_object_get(rec, "digest")),
			    want_digest);
	assert_true(json_is_true(json_object_get(rec, "truncated")));
	assert_int_equal(json_integer_value(json_object_get(rec, "omitted")),
			 200);
	assert_int_equal(json_array_size(json_object_get(r, "candidates")), 0);

	struct wr_head h = {9, "task", "45", "r-9", "pending", NULL, T0, 0};
	char *got = wr_render(&h, r);
	char want[1024];
	snprintf(want, sizeof(want),
		 "task 45: pending, chosen -, at 2024-05-14T08:30:00Z, request "
		 "r-9, digest %.16s, decision 9\n"
		 "stages:\n"
		 "  200 ->   0 candidates, 100%% cut : space [TB-04 space x200]\n"
		 "rejected, per rule (candidates not listed):\n"
		 "  space        TB-04  space                 200  e.g. "
		 "NUC-000: %s\n"
		 "record truncated at 8192 bytes: 200 candidates not listed "
		 "one by one\n"
		 "retry after 1800 s\n",
		 want_digest, detail);
	assert_string_equal(got, want);
	free(got);
	json_decref(r);

	/* Digest: key order does not matter, a number does. */
	json_t *a = json_loads("{\"a\":1,\"b\":2.5}", 0, NULL);
	json_t *b = json_loads("{\"b\":2.5,\"a\":1}", 0, NULL);
	json_t *c = json_loads("{\"b\":2.5,\"a\":2}", 0, NULL);
	char da[65], db[65], dc[65];
	assert_int_equal(dr_digest(a, da), GB_OK);
	assert_int_equal(dr_digest(b, db), GB_OK);
	assert_int_equal(dr_digest(c, dc), GB_OK);
	assert_string_equal(da, db);
	assert_string_not_equal(da, dc);
	assert_int_equal(strlen(da), 64);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	assert_null(dr_finish(NULL, DR_RECORD_MAX));
	assert_null(dr_finish(json_object(), 100)); /* cap too small */
}

static void test_json(void **state)
{
	(void)state;
	struct wr_head h = {7, "pilot", "p-1", "m-1", "matched", "job 5 (TQ 2)",
			    T0, 0};
	json_t *o = wr_json(&h, NULL);
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"chosen\":\"job 5 (TQ 2)\",\"decidedAt\":"
			       "\"2024-05-14T08:30:00Z\",\"decision\":7,"
			       "\"kind\":\"pilot\",\"outcome\":\"matched\","
			       "\"record\":null,\"requestId\":\"m-1\","
			       "\"subject\":\"p-1\"}");
	free(s);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_line),
		cmocka_unit_test(test_render_kinds),
		cmocka_unit_test(test_record_bound),
		cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
