/*
** test_jsonutil.c — the record parser of base/jsonutil.h builds a field's
** path only when the field fails: every kind of row, valid and invalid,
** parsed at a nested path gives the value, code and "PATH: problem" text
** it gave when the path was built up front, with an error buffer and
** without one (then the same code and nothing written), and a valid
** record leaves the buffer as it was.
*/
#include "gbtest.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/jsonutil.h"
#include "gb_error.h"

struct rec {
	double num;
	long lng;
	int flag;
	const char *str;
	const char *conn;
	const char *const *list;
	size_t nlist;
	int word;
	long long t;
	long long age;
};

static const char *const words[] = {"none", "allowed", "only", NULL};

#define R struct rec
static const struct ju_fld flds[] = {
	JU_NUMF("num", R, num, JU_F_POS, 0, 10, 1),
	JU_LNG("lng", R, lng, -1, 100, -1),
	JU_BOOL("flag", R, flag),
	JU_STR("str", R, str, JU_F_REQ | JU_F_NONEMPTY, NULL),
	JU_STRCHK("conn", R, conn, 0, "", ju_ipconn_ok, JU_IPCONN_EXPECT),
	JU_LIST("list", R, list, nlist, JU_F_NONEMPTY, 3),
	JU_ENUM("word", R, word, words),
	JU_TIME("t", R, t, 0),
	JU_AGE("age", R, age, 1e6),
	JU_TEXT("note"),
	JU_FLD_END,
};
#undef R

#define NOW 1715675400LL

static const struct {
	const char *json; /* the record at queues[4] */
	int rc;
	const char *msg; /* the whole error text; "" for none */
} cases[] = {
	{"{\"str\": \"a\", \"num\": 2.5, \"lng\": 7, \"flag\": true,"
	 " \"conn\": \"full#IPv6\", \"list\": [\"x\", \"y\"],"
	 " \"word\": \"only\","
	 " \"t\": \"2024-05-14T08:30:00Z\", \"age\": 60, \"note\": \"hi\"}",
	 GB_OK, ""},
	{"{\"str\": \"a\"}", GB_OK, ""},
	{"{}", GB_EMISSING, "queues[4].str: missing"},
	{"{\"str\": null}", GB_ETYPE,
	 "queues[4].str: expected string, got null"},
	{"{\"str\": \"\"}", GB_ERANGE,
	 "queues[4].str: expected a non-empty string"},
	{"{\"str\": 3}", GB_ETYPE,
	 "queues[4].str: expected string, got integer"},
	{"{\"str\": \"a\", \"num\": 0}", GB_ERANGE,
	 "queues[4].num: expected a number in (0, 10], got 0"},
	{"{\"str\": \"a\", \"num\": \"1\"}", GB_ETYPE,
	 "queues[4].num: expected a number, got string"},
	{"{\"str\": \"a\", \"lng\": 1.5}", GB_ETYPE,
	 "queues[4].lng: expected integer, got real"},
	{"{\"str\": \"a\", \"lng\": 101}", GB_ERANGE,
	 "queues[4].lng: expected an integer in [-1, 100], got 101"},
	{"{\"str\": \"a\", \"flag\": 1}", GB_ETYPE,
	 "queues[4].flag: expected boolean, got integer"},
	{"{\"str\": \"a\", \"conn\": \"fast\"}", GB_ERANGE,
	 "queues[4].conn: expected " JU_IPCONN_EXPECT ", got 'fast'"},
	{"{\"str\": \"a\", \"list\": [\"x\", \"\"]}", GB_ERANGE,
	 "queues[4].list[1]: expected a non-empty string"},
	{"{\"str\": \"a\", \"list\": [\"x\", 2]}", GB_ETYPE,
	 "queues[4].list[1]: expected string, got integer"},
	{"{\"str\": \"a\", \"list\": [\"x\", \"y\", \"z\", \"w\"]}", GB_ETOOBIG,
	 "queues[4].list: array of 4 exceeds the limit of 3"},
	{"{\"str\": \"a\", \"word\": \"some\"}", GB_ERANGE,
	 "queues[4].word: unknown value 'some' (expected \"none\", "
	 "\"allowed\", \"only\")"},
	{"{\"str\": \"a\", \"t\": \"noon\"}", GB_ERANGE,
	 "queues[4].t: expected an RFC 3339 time such as "
	 "2024-05-14T08:30:00Z, got 'noon'"},
	{"{\"str\": \"a\", \"age\": -1}", GB_ERANGE,
	 "queues[4].age: expected a number in [0, 1e+06], got -1"},
	{"{\"str\": \"a\", \"note\": 1}", GB_ETYPE,
	 "queues[4].note: expected string, got integer"},
	{"{\"str\": \"a\", \"nte\": \"x\"}", GB_EINVAL,
	 "queues[4].nte: unknown field"},
};

static void test_paths_only_on_error(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = json_loads(cases[i].json, 0, NULL);
		assert_non_null(o);
		struct arena a;
		arena_init(&a, 1u << 20);
		char err[256];
		memset(err, 'x', sizeof(err) - 1);
		err[sizeof(err) - 1] = '\0';
		const struct ju_ctx loud = {&a, err, sizeof(err), 0, NOW};
		const struct ju_ctx quiet = {&a, NULL, 0, 0, NOW};
		struct rec r, q;
		memset(&r, 0, sizeof(r));
		memset(&q, 0, sizeof(q));
		int rc = ju_parse_record(&loud, o, "queues[4]", flds, NULL, &r);
		int qrc = ju_parse_record(&quiet, o, "queues[4]", flds, NULL,
					  &q);
		if (rc != cases[i].rc || qrc != rc)
			fail_msg("case %zu: got %s / %s quiet, want %s: '%s'",
				 i, gb_errname(rc), gb_errname(qrc),
				 gb_errname(cases[i].rc), err);
		if (rc == GB_OK) {
			/* nothing written on success */
			assert_int_equal(strspn(err, "x"), sizeof(err) - 1);
			assert_string_equal(r.str, "a");
			assert_string_equal(q.str, "a");
			assert_true(r.num == q.num && r.lng == q.lng &&
				    r.flag == q.flag && r.word == q.word &&
				    r.t == q.t && r.age == q.age &&
				    r.nlist == q.nlist);
		} else if (strcmp(err, cases[i].msg) != 0) {
			fail_msg("case %zu: '%s', want '%s'", i, err,
				 cases[i].msg);
		}
		json_decref(o);
		arena_free(&a);
	}
}

/* The values of the full case, and the defaults of the short one. */
static void test_values(void **state)
{
	(void)state;
	struct arena a;
	arena_init(&a, 1u << 20);
	const struct ju_ctx c = {&a, NULL, 0, 0, NOW};
	struct rec r;
	json_t *o = json_loads(cases[0].json, 0, NULL);
	assert_int_equal(ju_parse_record(&c, o, "q", flds, NULL, &r), GB_OK);
	assert_true(r.num == 2.5);
	assert_int_equal(r.lng, 7);
	assert_int_equal(r.flag, 1);
	assert_string_equal(r.conn, "full#IPv6");
	assert_int_equal(r.nlist, 2);
	assert_string_equal(r.list[1], "y");
	assert_int_equal(r.word, 2);
	assert_int_equal(r.t, NOW);
	assert_int_equal(r.age, NOW - 60);
	json_decref(o);
	o = json_loads(cases[1].json, 0, NULL);
	assert_int_equal(ju_parse_record(&c, o, "q", flds, NULL, &r), GB_OK);
	assert_true(r.num == 1);
	assert_int_equal(r.lng, -1);
	assert_int_equal(r.flag, 0);
	assert_string_equal(r.conn, "");
	assert_null(r.list);
	assert_int_equal(r.nlist, 0);
	assert_int_equal(r.word, 0);
	assert_int_equal(r.t, 0);
	assert_int_equal(r.age, 0);
	json_decref(o);
	arena_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_only_on_error),
		cmocka_unit_test(test_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
