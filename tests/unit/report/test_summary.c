/*
** test_summary.c — the counting and tables of `gridbroker summary`: rows
** merge by key, a full table counts new keys as other, the sort order,
** rejection reasons found in each stored explanation shape (candidates'
** reasons, a pilot's rejected map, nested stages) with their counts, and
** the exact text of the pivot and list tables.
*/
#include "gbtest.h"

#include <stdlib.h>

#include "gb_error.h"
#include "report/summary.h"

/* A table on the heap: it is large (SM_MAX_ROWS rows). */
static struct sm_table *new_table(void)
{
	struct sm_table *t = malloc(sizeof(*t));
	assert_non_null(t);
	sm_init(t);
	return t;
}

static void test_add_merge_sort(void **state)
{
	(void)state;
	struct sm_table *t = new_table();
	sm_add(t, "CERN-PROD", "assigned", 2);
	sm_add(t, NULL, "pending", 1);
	sm_add(t, "BNL-ATLAS", "assigned", 5);
	sm_add(t, "CERN-PROD", "assigned", 3);
	sm_add(t, "AGLT2", "assigned", 5);
	assert_int_equal(t->nrows, 4);
	assert_int_equal(t->total, 16);
	sm_sort(t);
	/* 5, 5 (by name), 5, then 1 */
	static const struct {
		const char *k1, *k2;
		long long n;
	} want[] = {
		{"AGLT2", "assigned", 5},
		{"BNL-ATLAS", "assigned", 5},
		{"CERN-PROD", "assigned", 5},
		{"", "pending", 1},
	};
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(t->rows[i].k1, want[i].k1);
		assert_string_equal(t->rows[i].k2, want[i].k2);
		assert_int_equal(t->rows[i].n, want[i].n);
	}
	free(t);
}

static void test_full_table_counts_other(void **state)
{
	(void)state;
	struct sm_table *t = new_table();
	char k[32];
	for (int i = 0; i < SM_MAX_ROWS + 3; i++) {
		snprintf(k, sizeof(k), "Q%04d", i);
		sm_add(t, k, "assigned", 2);
	}
	sm_add(t, "Q0000", "assigned", 1); /* an existing key still merges */
	assert_int_equal(t->nrows, SM_MAX_ROWS);
	assert_int_equal(t->other, 6);
	assert_int_equal(t->total, 2 * (SM_MAX_ROWS + 3) + 1);
	assert_int_equal(t->rows[0].n, 3);
	free(t);
}

static void test_key_cut_at_utf8_boundary(void **state)
{
	(void)state;
	struct sm_table *t = new_table();
	/* 94 ASCII bytes, then a 2-byte character that does not fit */
	char k[128];
	memset(k, 'a', 94);
	strcpy(k + 94, "\xc3\xa9zz");
	sm_add(t, k, "x", 1);
	assert_int_equal(strlen(t->rows[0].k1), 94);
	free(t);
}

static const struct {
	const char *name, *json;
	long long found;
	size_t nrows;
	const char *k1, *k2; /* the largest row after sorting */
	long long n;
} reason_cases[] = {
	{"task candidates",
	 "{\"candidates\":[{\"name\":\"A\",\"reasons\":[{\"rule\":\"TB-01\","
	 "\"code\":\"status\"}]},{\"name\":\"B\",\"reasons\":[{\"rule\":"
	 "\"TB-01\",\"code\":\"status\"},{\"rule\":\"TB-03\",\"code\":"
	 "\"space\"}]},{\"name\":\"C\",\"reasons\":[],\"weightDetail\":"
	 "{\"rule\":\"TB-11\",\"code\":\"weight\"}}]}",
	 3, 2, "TB-01", "status", 2},
	{"pilot rejected map",
	 "{\"considered\":9,\"rejected\":{\"site\":4,\"platform\":2,"
	 "\"cpu\":0}}",
	 6, 2, "pilot filter", "site", 4},
	{"nested stages",
	 "{\"stages\":[{\"name\":\"memory\",\"queues\":[{\"reasons\":"
	 "[{\"rule\":\"PJ-15\",\"code\":\"highmemory\"}]}]}]}",
	 1, 1, "PJ-15", "highmemory", 1},
	{"pilot record stages",
	 "{\"decision\":\"nomatch\",\"rejectedBy\":{\"setup\":7,\"site\":2},"
	 "\"stages\":[{\"name\":\"setup\",\"rule\":\"TQ-05\",\"in\":9,"
	 "\"out\":2,\"cut\":{\"rule\":\"TQ-05\",\"code\":\"setup\","
	 "\"count\":7}},{\"name\":\"site\",\"rule\":\"TQ-06\",\"in\":2,"
	 "\"out\":0,\"cut\":{\"rule\":\"TQ-06\",\"code\":\"site\","
	 "\"count\":2}}]}",
	 9, 2, "TQ-05", "setup", 7},
	{"truncated record",
	 "{\"record\":{\"truncated\":true,\"omitted\":150},\"rejected\":"
	 "[{\"stage\":\"memory\",\"rule\":\"PJ-15\",\"code\":"
	 "\"highmemory\",\"count\":120,\"example\":\"Q1\"},{\"stage\":"
	 "\"io\",\"rule\":\"PJ-11\",\"code\":\"io\",\"count\":30}]}",
	 150, 2, "PJ-15", "highmemory", 120},
	{"a rule outside reasons is no rejection",
	 "{\"rule\":\"TO-09\",\"action\":\"fail\"}", 0, 0, NULL, NULL, 0},
	{"reason without code", "{\"reasons\":[{\"rule\":\"AJ-17\"}]}", 1, 1,
	 "AJ-17", "", 1},
};

static void test_reasons(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(reason_cases) / sizeof(reason_cases[0]);
	     i++) {
		struct sm_table *t = new_table();
		long long got = sm_add_reasons(t, reason_cases[i].json);
		if (got != reason_cases[i].found)
			fail_msg("%s: found %lld, want %lld",
				 reason_cases[i].name, got,
				 reason_cases[i].found);
		assert_int_equal(t->nrows, reason_cases[i].nrows);
		if (reason_cases[i].k1) {
			sm_sort(t);
			assert_string_equal(t->rows[0].k1, reason_cases[i].k1);
			assert_string_equal(t->rows[0].k2, reason_cases[i].k2);
			assert_int_equal(t->rows[0].n, reason_cases[i].n);
		}
		free(t);
	}
	struct sm_table *t = new_table();
	assert_int_equal(sm_add_reasons(t, "{not json"), GB_EDECODE);
	assert_int_equal(t->nrows, 0);
	free(t);
}

/* What `print` writes, as a string the caller frees. */
static char *printed(void (*print)(FILE *, const struct sm_table *),
		     const struct sm_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	print(f, t);
	fclose(f);
	return buf;
}

static void pivot2(FILE *f, const struct sm_table *t)
{
	static const char *const cols[] = {"assigned", "pending"};
	sm_print_pivot(f, t, "nucleus", "(none yet)", cols, 2, 1, 2);
}

static void list3(FILE *f, const struct sm_table *t)
{
	sm_print_list(f, t, "rule", "code", 2);
}

static void test_print(void **state)
{
	(void)state;
	struct sm_table *t = new_table();
	sm_add(t, "CERN-PROD", "assigned", 3);
	sm_add(t, NULL, "pending", 2);
	sm_add(t, "CERN-PROD", "brokering", 1);
	sm_add(t, "DESY-HH", "assigned", 1);
	sm_sort(t);
	char *s = printed(pivot2, t);
	assert_string_equal(
		s, "  nucleus                        assigned    pending      "
		   "other      total\n"
		   "  CERN-PROD                             3          0     "
		   "     1          4\n"
		   "  (none yet)                            0          2     "
		   "     0          2\n"
		   "  ... 1 more\n"
		   "  total                                 4          2     "
		   "     1          7\n");
	free(s);
	s = printed(list3, t);
	assert_string_equal(
		s, "  rule           code                                    "
		   "        count  share\n"
		   "  CERN-PROD      assigned                                "
		   "            3  42.9%\n"
		   "  -              pending                                 "
		   "            2  28.6%\n"
		   "  ... 2 more\n"
		   "  total                                                  "
		   "            7\n");
	free(s);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_merge_sort),
		cmocka_unit_test(test_full_table_counts_other),
		cmocka_unit_test(test_key_cut_at_utf8_boundary),
		cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_print),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
