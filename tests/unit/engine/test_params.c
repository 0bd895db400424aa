/*
** test_params.c — the parameter catalogue: defaults, suffixes, checks.
*/
#include "gbtest.h"

#include "gb_error.h"
#include "params.h"

static void test_defaults_of_the_reference(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		double def;
	} cases[] = {
		{"NQUEUED_NUC_CAP", 2000},
		{"DISK_THRESHOLD", 102400}, /* 100 TB in GB */
		{"INPUT_SIZE_THRESHOLD", 1},
		{"INPUT_SIZE_FRACTION", 10},
		{"INPUT_NUM_THRESHOLD", 100},
		{"INPUT_NUM_FRACTION", 10},
		{"MIN_IO_INTENSITY_WITH_LOCAL_DATA", 200},
		{"MIN_INPUT_SIZE_WITH_LOCAL_DATA", 10000},
		{"MAX_TASK_PRIO_WITH_LOCAL_DATA", 800},
		{"NQUEUED_SAT_CAP", 150},
		{"NW_THRESHOLD", 1.7},
		{"BASE_QUEUE_RATIO_ON_PQ", 0.05},
		{"FAST_REBRO_THRESHOLD_NQNR_RATIO", 3},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_near(prm_get(NULL, cases[i].name), cases[i].def, 1e-12);
	assert_true(isnan(prm_get(NULL, "CAP_RUNNING_USER_JOBS")));
	assert_true(isnan(prm_get(NULL, "NO_SUCH_PARAMETER")));
}

static void test_every_row_is_consistent(void **state)
{
	(void)state;
	size_t n = 0;
	for (const struct prm_def *d = prm_table; d->name; d++, n++) {
		assert_non_null(d->component);
		assert_non_null(d->help);
		assert_true(d->min <= d->max);
		if (!isnan(d->def))
			assert_int_equal(prm_check(d->name, d->def), GB_OK);
		assert_ptr_equal(prm_find(d->name), d);
	}
	assert_true(n > 40);
}

static void test_overrides_and_suffixes(void **state)
{
	(void)state;
	const struct prm_kv kv[] = {
		{"DISK_THRESHOLD", 5000},
		{"DISK_THRESHOLD_MC 16 simul", 800},
		{"HEARTBEAT_TIMEOUT_analysis", 4},
		{"NQUEUED_NUC_CAP", 1},
		{"NQUEUED_NUC_CAP", 2}, /* the last one wins */
	};
	const struct prm_set set = {kv, 5};
	assert_near(prm_get(&set, "NQUEUED_NUC_CAP"), 2, 0);
	assert_near(prm_get_sfx(&set, "DISK_THRESHOLD", "MC 16 simul"), 800, 0);
	assert_near(prm_get_sfx(&set, "DISK_THRESHOLD", "Validation"), 5000, 0);
	assert_near(prm_get_sfx(&set, "DISK_THRESHOLD", NULL), 5000, 0);
	assert_near(prm_get_sfx(&set, "HEARTBEAT_TIMEOUT", "analysis"), 4, 0);
	assert_near(prm_get_sfx(&set, "HEARTBEAT_TIMEOUT", "production"), 2, 0);
}

static void test_find_and_check(void **state)
{
	(void)state;
	/* A suffix must not shadow a longer real name. */
	const struct prm_def *d = prm_find("FAST_REBRO_THRESHOLD_NQUEUE_FRAC");
	assert_non_null(d);
	assert_string_equal(d->name, "FAST_REBRO_THRESHOLD_NQUEUE_FRAC");
	d = prm_find("FAST_REBRO_THRESHOLD_NQUEUE_MC 16 simul");
	assert_string_equal(d->name, "FAST_REBRO_THRESHOLD_NQUEUE");
	assert_null(prm_find("NQUEUED_NUC_CAP_X")); /* no suffix allowed */
	assert_null(prm_find("DISK_THRESHOLD_"));
	assert_int_equal(prm_check("INPUT_SIZE_FRACTION", 101), GB_ERANGE);
	assert_int_equal(prm_check("INPUT_SIZE_FRACTION", -1), GB_ERANGE);
	assert_int_equal(prm_check("INPUT_SIZE_FRACTION", NAN), GB_ERANGE);
	assert_int_equal(prm_check("CAP_RUNNING_USER_JOBS", NAN), GB_OK);
	assert_int_equal(prm_check("NW_ACTIVE", 0.5), GB_ERANGE);
	assert_int_equal(prm_check("BOGUS", 1), GB_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_of_the_reference),
		cmocka_unit_test(test_every_row_is_consistent),
		cmocka_unit_test(test_overrides_and_suffixes),
		cmocka_unit_test(test_find_and_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
