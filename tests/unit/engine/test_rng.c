/*
** test_rng.c — the seeded generator: reproducibility, range, and that the
** weighted draw is proportional to the weights (a chi-square check with a
** fixed seed, so the test is deterministic and still meaningful).
*/
#include "gbtest.h"

#include "rng.h"

static void test_same_seed_same_stream(void **state)
{
	(void)state;
	struct gb_rng a, b, c;
	gb_rng_seed(&a, 7);
	gb_rng_seed(&b, 7);
	gb_rng_seed(&c, 8);
	int differ = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = gb_rng_next(&a), y = gb_rng_next(&b);
		assert_true(x == y);
		differ += x != gb_rng_next(&c);
	}
	assert_true(differ > 990);
}

static void test_uniform_and_below_ranges(void **state)
{
	(void)state;
	struct gb_rng r;
	gb_rng_seed(&r, 1);
	double sum = 0;
	int hits[7] = {0};
	for (int i = 0; i < 70000; i++) {
		double u = gb_rng_uniform(&r);
		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
		uint64_t k = gb_rng_below(&r, 7);
		assert_true(k < 7);
		hits[k]++;
	}
	assert_near(sum / 70000, 0.5, 0.01);
	for (int k = 0; k < 7; k++)
		assert_near(hits[k], 10000, 0.05);
}

static void test_weighted_is_proportional(void **state)
{
	(void)state;
	const double w[] = {1, 0, 2, NAN, 3, -1, 4, INFINITY};
	const double p[] = {0.1, 0, 0.2, 0, 0.3, 0, 0.4, 0};
	struct gb_rng r;
	gb_rng_seed(&r, 2026);
	long n = 100000, hits[8] = {0};
	for (long i = 0; i < n; i++) {
		long k = gb_rng_weighted(&r, w, 8, 0);
		assert_true(k >= 0 && k < 8);
		hits[k]++;
	}
	double chi2 = 0;
	for (int k = 0; k < 8; k++) {
		if (p[k] == 0) {
			assert_int_equal(hits[k], 0); /* zero, NaN, <0, inf */
			continue;
		}
		double e = p[k] * (double)n;
		chi2 += (hits[k] - e) * (hits[k] - e) / e;
	}
	/* 3 degrees of freedom: P(chi2 > 16.27) = 0.001. */
	assert_true(chi2 < 16.27);
}

static void test_weighted_with_stride(void **state)
{
	(void)state;
	struct item {
		int id;
		double weight;
		char pad[20];
	} items[3] = {{1, 0, ""}, {2, 5, ""}, {3, NAN, ""}};
	struct gb_rng r;
	gb_rng_seed(&r, 3);
	for (int i = 0; i < 100; i++)
		assert_int_equal(gb_rng_weighted(&r, &items[0].weight, 3,
						 sizeof(items[0])),
				 1);
	const double none[] = {0, NAN, -2};
	assert_int_equal(gb_rng_weighted(&r, none, 3, 0), -1);
	assert_int_equal(gb_rng_weighted(&r, none, 0, 0), -1);
}

static void test_hash_is_stable(void **state)
{
	(void)state;
	/* FNV-1a reference values. */
	assert_true(gb_hash64("") == 0xcbf29ce484222325ULL);
	assert_true(gb_hash64("a") == 0xaf63dc4c8601ec8cULL);
	assert_true(gb_hash64("task-1") != gb_hash64("task-2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_stream),
		cmocka_unit_test(test_uniform_and_below_ranges),
		cmocka_unit_test(test_weighted_is_proportional),
		cmocka_unit_test(test_weighted_with_stride),
		cmocka_unit_test(test_hash_is_stable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
