/*
** test_decision.c — reasons, stages and their rendering.
*/
#include "gbtest.h"

#include "decision.h"

static void test_reject_restore_and_alive(void **state)
{
	(void)state;
	struct dec_candidate c[3];
	struct dec_decision d;
	dec_init(&d, c, 3);
	assert_int_equal(d.chosen, -1);
	assert_int_equal(dec_alive(&d), 3);
	assert_int_equal(dec_reject(&c[1], "space", "TB-04", "space",
				    "%s: %.0f GB <= %.0f GB", "DISK", 5, 10,
				    0, 0),
			 0);
	assert_true(dec_dropped(&c[1]));
	assert_true(isnan(c[1].weight));
	assert_int_equal(dec_alive(&d), 2);
	assert_string_equal(c[1].stage, "space");
	/* Extra reasons are counted beyond the kept ones. */
	for (int i = 0; i < 5; i++)
		dec_reject(&c[1], "other", "TB-07", "x", "n %.0f", NULL, i, 0,
			   0, 0);
	assert_int_equal(c[1].nreasons, 6);
	assert_string_equal(c[1].stage, "space"); /* first drop wins */
	dec_restore(&c[1]);
	assert_false(dec_dropped(&c[1]));
	assert_int_equal(c[1].nreasons, 0);
	assert_int_equal(dec_alive(&d), 3);
}

static void test_reason_format(void **state)
{
	(void)state;
	static const struct {
		struct dec_reason r;
		const char *want;
	} cases[] = {
		{{"TB-04", "space", "%s: %.0f GB <= %.0f GB", "DATADISK",
		  {102250, 102400, 0, 0}},
		 "DATADISK: 102250 GB <= 102400 GB"},
		{{"TB-02", "transfer_backlog", "%.0f files > %.0f", NULL,
		  {2001, 2000, 0, 0}},
		 "2001 files > 2000"},
		{{"TB-07", "input_size", "%.1f%% of %.4g GB", NULL,
		  {10, 100, 0, 0}},
		 "10.0% of 100 GB"},
		{{"X", "y", NULL, NULL, {0, 0, 0, 0}}, ""},
	};
	char buf[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dec_reason_format(&cases[i].r, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
	/* Truncation keeps a terminated string. */
	dec_reason_format(&cases[0].r, buf, 8);
	assert_string_equal(buf, "DATADIS");
}

static void test_stage_format(void **state)
{
	(void)state;
	struct dec_stage s = {"memory", "PJ-15", 120, 80};
	char buf[96];
	dec_stage_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "  120 ->  80 candidates,  33% cut : memory");
	struct dec_stage z = {"status", "TB-01", 0, 0};
	dec_stage_format(&z, buf, sizeof(buf));
	assert_string_equal(buf, "    0 ->   0 candidates,   0% cut : status");
}

static void test_stage_overflow_ignored(void **state)
{
	(void)state;
	struct dec_decision d;
	dec_init(&d, NULL, 0);
	for (int i = 0; i < DEC_MAX_STAGES + 5; i++)
		dec_stage(&d, "s", "R", i, i);
	assert_int_equal(d.nstages, DEC_MAX_STAGES);
	assert_string_equal(dec_outcome_name(DEC_ASSIGNED), "assigned");
	assert_string_equal(dec_outcome_name(DEC_PENDING), "pending");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reject_restore_and_alive),
		cmocka_unit_test(test_reason_format),
		cmocka_unit_test(test_stage_format),
		cmocka_unit_test(test_stage_overflow_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
