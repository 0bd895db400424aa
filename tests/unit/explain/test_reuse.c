/*
** test_reuse.c — exr_load gives what json_loadb gives, and reuses exactly
** the members and elements whose text did not change.
**
** Table-driven: each case is a sequence of texts read by one reader; after
** each, the value must equal json_loadb's, and the case says which
** members (and which elements of "queues") must be the previous text's
** very values and how many bytes were reused. The example scenarios of
** etc/scenarios/ are read compacted as store_inputs.h stores them, then
** changed one field at a time.
**
** Runs with the repository root as working directory (ctest sets it).
*/
#include "gbtest.h"

#include <stdlib.h>

#include <jansson.h>

#include "explain/reuse.h"
#include "explain/scenario.h"

/* A large "queues" array (over EXR_ELEMENTS_MIN bytes): n queues, each
** with a padding string so that the array is large; queue k's "jobs"
** is jobs[k]. */
static char *queues_text(const char *seed, const int *jobs, size_t n)
{
	json_t *o = json_object();
	json_t *q = json_array();
	for (size_t k = 0; k < n; k++) {
		char name[32], pad[256];
		snprintf(name, sizeof(name), "Q%zu", k);
		memset(pad, 'x', sizeof(pad) - 1);
		pad[sizeof(pad) - 1] = '\0';
		json_array_append_new(q, json_pack("{s:s,s:i,s:s}", "name",
						   name, "jobs", jobs[k],
						   "pad", pad));
	}
	json_object_set_new(o, "now", json_string("2026-11-27T00:00:00Z"));
	json_object_set_new(o, "queues", q);
	json_object_set_new(o, "seed", json_loads(seed, JSON_DECODE_ANY,
						  NULL));
	char *t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

/* Load `t` with `r` and with json_loadb; both values equal, their
** members in the same order. */
static json_t *load_checked(struct exr_reader *r, const char *t)
{
	char err[256];
	json_t *a = exr_load(r, t, strlen(t), err, sizeof(err));
	json_t *b = json_loadb(t, strlen(t), 0, NULL);
	if (a == NULL)
		fail_msg("exr_load: %s", err);
	assert_non_null(b);
	assert_true(json_equal(a, b));
	char *da = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
	char *db = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
	assert_string_equal(da, db);
	free(da);
	free(db);
	json_decref(b);
	return a;
}

static void test_queues_elements(void **state)
{
	(void)state;
	enum { NQ = 40 };
	int j0[NQ], j1[NQ];
	for (int k = 0; k < NQ; k++)
		j0[k] = j1[k] = k;
	j1[7] = 1000; /* one queue's counts move */
	static const struct {
		const char *seed0, *seed1;
		int seed_same;
	} cases[] = {
		{"12", "12", 1},
		{"12", "123", 0}, /* a number that grew: not the same value */
		{"12", "1", 0},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char *t0 = queues_text(cases[c].seed0, j0, NQ);
		char *t1 = queues_text(cases[c].seed1, j1, NQ);
		struct exr_reader *r = exr_new();
		assert_non_null(r);
		json_t *a = load_checked(r, t0);
		json_t *b = load_checked(r, t1);
		json_t *qa = json_object_get(a, "queues");
		json_t *qb = json_object_get(b, "queues");
		/* a new array; every element but the changed one shared */
		assert_ptr_not_equal(qa, qb);
		for (size_t k = 0; k < NQ; k++) {
			if (k == 7)
				assert_ptr_not_equal(json_array_get(qa, k),
						     json_array_get(qb, k));
			else
				assert_ptr_equal(json_array_get(qa, k),
						 json_array_get(qb, k));
		}
		assert_ptr_equal(json_object_get(a, "now"),
				 json_object_get(b, "now"));
		if (cases[c].seed_same)
			assert_ptr_equal(json_object_get(a, "seed"),
					 json_object_get(b, "seed"));
		else
			assert_ptr_not_equal(json_object_get(a, "seed"),
					     json_object_get(b, "seed"));
		/* the same text again: every member shared, the array too */
		json_t *c2 = load_checked(r, t1);
		assert_ptr_equal(json_object_get(c2, "queues"), qb);
		struct exr_stats st;
		exr_get_stats(r, &st);
		assert_int_equal(st.scenarios, 3);
		assert_int_equal(st.fallbacks, 0);
		assert_int_equal(st.bytes,
				 (long long)(strlen(t0) + 2 * strlen(t1)));
		/* the third text is reused whole but for the braces, keys,
		** colons and commas; the second all but one element and
		** perhaps the seed */
		assert_true(st.bytes_reused > (long long)strlen(t1) * 3 / 2);
		assert_true(st.bytes_reused < st.bytes - (long long)strlen(t0));
		json_decref(a);
		json_decref(b);
		json_decref(c2);
		exr_free(r);
		free(t0);
		free(t1);
	}
}

/* A scenario of 20 queue entries, entry 5 being `e5`; the others padded
** so that "queues" is a large array. */
static char *entries_text(const char *e5)
{
	size_t cap = 20 * 400 + strlen(e5) + 128, o = 0;
	char *t = malloc(cap);
	assert_non_null(t);
	o += (size_t)snprintf(t + o, cap - o, "{\"now\":\"n\",\"queues\":[");
	for (int k = 0; k < 20; k++) {
		if (k == 5)
			o += (size_t)snprintf(t + o, cap - o, "%s", e5);
		else
			o += (size_t)snprintf(t + o, cap - o,
					      "{\"name\":\"Q%d\",\"age\":%d,"
					      "\"pad\":\"%0300d\"}",
					      k, k, 0);
		o += (size_t)snprintf(t + o, cap - o, k < 19 ? "," : "]");
	}
	snprintf(t + o, cap - o, ",\"seed\":1}");
	return t;
}

/* An entry that is the previous one with the same keys in the same order
** and some members' values changed is made from it (its other members
** shared); any other change is parsed. Either way the value is
** json_loadb's, order included. */
static void test_patched_elements(void **state)
{
	(void)state;
	static const struct {
		const char *before, *after;
		int patched; /* 1: made from the previous entry */
	} cases[] = {
		/* ages when `now` moves */
		{"{\"name\":\"Q5\",\"age\":100,\"pad\":\"p\"}",
		 "{\"name\":\"Q5\",\"age\":99999,\"pad\":\"p\"}", 1},
		{"{\"a\":1,\"b\":2,\"pad\":\"p\"}",
		 "{\"a\":10,\"b\":-2.5,\"pad\":\"p\"}", 1},
		{"{\"a\":123,\"pad\":\"p\"}", "{\"a\":1,\"pad\":\"p\"}", 1},
		{"{\"a\":1,\"pad\":\"p\"}", "{\"a\":1e300,\"pad\":\"p\"}", 1},
		{"{\"pad\":\"p\",\"z\":7}", "{\"pad\":\"p\",\"z\":-7}", 1},
		{"{ \"a\" : 1 , \"pad\":\"p\"}", "{ \"a\" : 22 , \"pad\":\"p\"}",
		 1},
		/* job counts of another share; any value of a member */
		{"{\"jobs\":{\"x\":1},\"pad\":\"p\"}",
		 "{\"jobs\":{\"y\":{\"r\":2}},\"pad\":\"p\"}", 1},
		{"{\"l\":[1,2],\"pad\":\"p\"}", "{\"l\":[1,3],\"pad\":\"p\"}", 1},
		{"{\"name\":\"Q5\",\"pad\":\"p\"}",
		 "{\"name\":\"Q6\",\"pad\":\"p\"}", 1},
		{"{\"a\":1,\"pad\":\"p\"}", "{\"a\":\"1\",\"pad\":\"p\"}", 1},
		{"{\"a\":1,\"pad\":\"p\"}", "{\"a\":true,\"pad\":\"p\"}", 1},
		{"{\"a\":null,\"pad\":\"p\"}", "{\"a\":1,\"pad\":\"p\"}", 1},
		/* other keys, or keys in another order: parsed */
		{"{\"age\":1,\"pad\":\"p\"}", "{\"agf\":1,\"pad\":\"p\"}", 0},
		{"{\"a\":1,\"pad\":\"p\"}", "{\"a\":1,\"b\":2,\"pad\":\"p\"}", 0},
		{"{\"a\":1,\"b\":2,\"pad\":\"p\"}", "{\"a\":1,\"pad\":\"p\"}", 0},
		{"{\"a\":1,\"b\":2,\"pad\":\"p\"}",
		 "{\"b\":2,\"a\":3,\"pad\":\"p\"}", 0},
		/* a key twice: the value kept is the last one's */
		{"{\"a\":1,\"a\":2,\"pad\":\"p\"}",
		 "{\"a\":3,\"a\":2,\"pad\":\"p\"}", 0},
		{"{\"a\":1,\"b\":2,\"pad\":\"p\"}",
		 "{\"a\":1,\"a\":3,\"pad\":\"p\"}", 0},
		{"{\"a\\\"b\":1,\"pad\":\"p\"}",
		 "{\"a\\\"b\":2,\"pad\":\"p\"}", 0},
		{"[1,2]", "[1,3]", 0},
		{"{\"a\":1,\"pad\":\"p\"}", "{\"a\":1,\"pad\":\"p\"} ", 0},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char *t0 = entries_text(cases[c].before);
		char *t1 = entries_text(cases[c].after);
		struct exr_reader *r = exr_new();
		json_t *a = load_checked(r, t0);
		json_t *b = load_checked(r, t1);
		struct exr_stats st;
		exr_get_stats(r, &st);
		if (st.elements_patched != cases[c].patched)
			fail_msg("case %zu: %lld patched, %d expected", c,
				 st.elements_patched, cases[c].patched);
		json_t *e0 = json_array_get(json_object_get(a, "queues"), 5);
		json_t *e1 = json_array_get(json_object_get(b, "queues"), 5);
		if (cases[c].patched) {
			/* the unchanged members are the previous values */
			assert_ptr_not_equal(e0, e1);
			assert_ptr_equal(json_object_get(e0, "pad"),
					 json_object_get(e1, "pad"));
		}
		/* the previous scenario's value is untouched */
		json_t *again = json_loads(t0, 0, NULL);
		assert_true(json_equal(a, again));
		json_decref(again);
		json_decref(a);
		json_decref(b);
		exr_free(r);
		free(t0);
		free(t1);
	}
	/* a changed number json_loadb refuses: the text is refused */
	static const char *const bad[] = {
		"{\"a\":1-2,\"pad\":\"p\"}",
		"{\"a\":99999999999999999999999,\"pad\":\"p\"}",
		"{\"a\":01,\"pad\":\"p\"}",
	};
	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		char *t0 = entries_text("{\"a\":1,\"pad\":\"p\"}");
		char *t1 = entries_text(bad[c]);
		struct exr_reader *r = exr_new();
		json_t *a = load_checked(r, t0);
		char err[256] = "";
		assert_null(json_loads(t1, 0, NULL));
		json_t *b = exr_load(r, t1, strlen(t1), err, sizeof(err));
		if (b != NULL)
			fail_msg("bad %zu taken", c);
		assert_true(err[0] != '\0');
		json_decref(a);
		exr_free(r);
		free(t0);
		free(t1);
	}
}

/* Texts the walk does not take are parsed whole: same value, counted. */
static void test_fallbacks(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int ok;       /* json_loadb takes it */
		int fallback; /* parsed whole */
	} cases[] = {
		{"{\"a\":1,\"b\":[1,2,3]}", 1, 0},
		{" { \"a\" : 1 ,\n \"b\" : [ 1 , 2 ] } ", 1, 0},
		{"{}", 1, 0},
		{"{\"a\\u0062\":1}", 1, 1},      /* an escape in a key */
		{"[1,2]", 1, 1},                 /* not an object */
		{"{\"a\":1} x", 0, 1},           /* trailing bytes */
		{"{\"a\":[1,2}", 0, 1},          /* bad brackets */
		{"{\"a\":\"x\\\"}\"}", 1, 0},    /* a quote escaped in a value */
		{"{\"a\":tru}", 0, 1},           /* a bad literal */
		{"{\"a\":\"unterminated}", 0, 1},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct exr_reader *r = exr_new();
		char err[256] = "";
		const char *t = cases[c].text;
		json_t *a = exr_load(r, t, strlen(t), err, sizeof(err));
		json_t *b = json_loadb(t, strlen(t), 0, NULL);
		if (cases[c].ok) {
			if (a == NULL || b == NULL || !json_equal(a, b))
				fail_msg("case %zu: %s", c, err);
		} else {
			assert_null(b);
			if (a != NULL)
				fail_msg("case %zu taken", c);
			assert_true(err[0] != '\0');
		}
		struct exr_stats st;
		exr_get_stats(r, &st);
		if (cases[c].ok)
			assert_int_equal(st.fallbacks, cases[c].fallback);
		json_decref(a);
		json_decref(b);
		exr_free(r);
	}
}

/* After a text that failed, nothing of the one before is reused. */
static void test_after_failure(void **state)
{
	(void)state;
	struct exr_reader *r = exr_new();
	const char *good = "{\"a\":{\"x\":1},\"b\":2}";
	const char *bad = "{\"a\":{\"x\":1},\"b\":}";
	char err[256];
	json_t *a = exr_load(r, good, strlen(good), err, sizeof(err));
	assert_non_null(a);
	assert_null(exr_load(r, bad, strlen(bad), err, sizeof(err)));
	json_t *b = exr_load(r, good, strlen(good), err, sizeof(err));
	assert_non_null(b);
	assert_ptr_not_equal(json_object_get(a, "a"), json_object_get(b, "a"));
	json_decref(a);
	json_decref(b);
	exr_free(r);
}

/* Every example scenario, compact and sorted as stored, then with one
** field changed: equal to json_loadb each time, with reuse. */
static void test_examples(void **state)
{
	(void)state;
	static const char *const files[] = {
		"jobs-assign.json", "jobs-release-auto.json",
		"analysis-assign.json", "task-assign.json",
		"match-assign.json", "timeout-rules.json",
	};
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[256], err[512] = "";
		snprintf(path, sizeof(path), "etc/scenarios/%s", files[f]);
		json_t *root = scn_read_file(path, err, sizeof(err));
		if (root == NULL)
			fail_msg("%s", err);
		char *t0 = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
		json_object_set_new(root, "seed", json_integer(987654321));
		char *t1 = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
		struct exr_reader *r = exr_new();
		json_t *a = load_checked(r, t0);
		json_t *b = load_checked(r, t1);
		struct exr_stats st;
		exr_get_stats(r, &st);
		assert_int_equal(st.fallbacks, 0);
		/* all but the seed and the structure around the members */
		if (st.bytes_reused < (long long)strlen(t1) - 200)
			fail_msg("%s: %lld of %zu bytes reused", files[f],
				 st.bytes_reused, strlen(t1));
		json_decref(a);
		json_decref(b);
		json_decref(root);
		exr_free(r);
		free(t0);
		free(t1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queues_elements),
		cmocka_unit_test(test_patched_elements),
		cmocka_unit_test(test_fallbacks),
		cmocka_unit_test(test_after_failure),
		cmocka_unit_test(test_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
