/*
** test_netweight.c — NW-01..NW-04 with the numbers of the reference.
**
** Step boundaries are checked on both sides (200 -> 1.9, 200.1 -> 2.0),
** the closeness normalisation at its ends and default, the queued term at
** half the cap, both importances, and which throughput window is used.
*/
#include "gbtest.h"

#include "netweight.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct nw_params P_DEFAULT = {150, 0.5};

static struct nw_link link_of(double queued, double h1, double d1, double w1,
			      double closeness)
{
	return (struct nw_link){queued, h1, d1, w1, closeness};
}

/* NW-02: the throughput step function, both sides of every boundary. */
static void test_nw02_throughput_steps(void **state)
{
	(void)state;
	static const struct {
		double mbps, w;
	} cases[] = {
		{1000, 2.0}, {200.1, 2.0}, {200, 1.9}, {100.1, 1.9},
		{100, 1.8},  {75.1, 1.8},  {75, 1.6},  {50.1, 1.6},
		{50, 1.5},   {20.1, 1.5},  {20, 1.3},  {10.1, 1.3},
		{10, 1.2},   {2.1, 1.2},   {2, 1.1},   {1.1, 1.1},
		{1, 1.0},    {0.5, 1.0},   {0, 1.0},   {-3, 1.0},
	};
	for (size_t i = 0; i < N(cases); i++)
		if (nw_throughput_step(cases[i].mbps) != cases[i].w)
			fail_msg("NW-02 step(%g) = %g, expected %g",
				 cases[i].mbps, nw_throughput_step(cases[i].mbps),
				 cases[i].w);
	assert_near(nw_throughput_step(NAN), 1.0, 0);
}

/* NW-03: 1 + (11 - closeness) / 11, clamped, default 7.7 when missing. */
static void test_nw03_closeness_weight(void **state)
{
	(void)state;
	static const struct {
		double closeness, w;
	} cases[] = {
		{0, 2.0},     {11, 1.0},     {5.5, 1.5},   {7.7, 1.3},
		{1, 1 + 10.0 / 11},          {-1, 2.0},    {20, 1.0},
	};
	for (size_t i = 0; i < N(cases); i++)
		assert_near(nw_closeness_weight(cases[i].closeness), cases[i].w,
			    1e-12);
	assert_near(nw_closeness_weight(NAN), 1.3, 1e-12);
	assert_near(NW_CLOSENESS_DEFAULT, 0.7 * 11, 1e-12);
}

/* NW-02: queuedWeight = 2 - queued / cap, combined with the importance. */
static void test_nw02_queued_and_importance(void **state)
{
	(void)state;
	struct nw_weight w;
	/* 75 files of a cap of 150, 1h throughput 150 Mbps -> t = 1.9. */
	struct nw_link l = link_of(75, 150, NAN, NAN, 3);
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.queued, 1.5, 1e-12);
	assert_near(w.throughput, 1.9, 1e-12);
	assert_near(w.weight, 0.5 * 1.5 + 0.5 * 1.9, 1e-12);
	assert_near(w.queued_files, 75, 0);

	/* Importance 0.2: 0.2 x 1.5 + 0.8 x 1.9 = 1.82. */
	struct nw_params p = {150, 0.2};
	nw_compute(&l, 0, &p, &w);
	assert_near(w.weight, 1.82, 1e-12);

	/* Importance 1 and 0 pick one term each. */
	p.queue_importance = 1;
	nw_compute(&l, 0, &p, &w);
	assert_near(w.weight, 1.5, 1e-12);
	p.queue_importance = 0;
	nw_compute(&l, 0, &p, &w);
	assert_near(w.weight, 1.9, 1e-12);

	/* An empty link queue gives the full 2. */
	l.queued_files = 0;
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.queued, 2.0, 1e-12);
	assert_near(w.weight, 1.95, 1e-12);

	/* A cap of 300 halves the penalty of the same 75 files. */
	l.queued_files = 75;
	p = (struct nw_params){300, 0.5};
	nw_compute(&l, 0, &p, &w);
	assert_near(w.queued, 1.75, 1e-12);
}

/* NW-01: the freshest window that exists; closeness only when none does. */
static void test_nw01_window_choice(void **state)
{
	(void)state;
	static const struct {
		double h1, d1, w1;
		const char *window;
		double mbps, t;
	} cases[] = {
		{250, 60, 5, "1h", 250, 2.0},  /* all present -> 1h */
		{NAN, 60, 5, "1d", 60, 1.6},   /* 1h missing -> 1d */
		{NAN, NAN, 5, "1w", 5, 1.2},   /* only 1w */
		{30, NAN, NAN, "1h", 30, 1.5}, /* 1h without the coarser ones */
		{0, 60, 5, "1h", 0, 1.0},      /* a measured 0 is a figure */
		{NAN, NAN, NAN, NULL, NAN, 1 + (11 - 3.0) / 11}, /* NW-03 */
	};
	for (size_t i = 0; i < N(cases); i++) {
		struct nw_link l =
			link_of(0, cases[i].h1, cases[i].d1, cases[i].w1, 3);
		struct nw_weight w;
		nw_compute(&l, 0, &P_DEFAULT, &w);
		if (cases[i].window == NULL) {
			assert_null(w.mbps_window);
			assert_true(isnan(w.mbps));
		} else {
			assert_non_null(w.mbps_window);
			assert_string_equal(w.mbps_window, cases[i].window);
			assert_near(w.mbps, cases[i].mbps, 0);
		}
		assert_near(w.throughput, cases[i].t, 1e-12);
		assert_near(w.weight, 0.5 * 2.0 + 0.5 * cases[i].t, 1e-12);
		assert_near(w.closeness, 3, 0);
	}
}

/* NW-03: no metrics and no closeness -> 7.7 -> 1.3; no link row at all ->
** queued 0 and the same default. */
static void test_nw03_missing_metrics(void **state)
{
	(void)state;
	struct nw_weight w;
	struct nw_link l = link_of(15, NAN, NAN, NAN, NAN);
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.closeness, 7.7, 1e-12);
	assert_near(w.throughput, 1.3, 1e-12);
	assert_near(w.queued, 1.9, 1e-12);
	assert_near(w.weight, 0.5 * 1.9 + 0.5 * 1.3, 1e-12);

	nw_compute(NULL, 0, &P_DEFAULT, &w);
	assert_near(w.queued_files, 0, 0);
	assert_near(w.queued, 2.0, 1e-12);
	assert_near(w.closeness, 7.7, 1e-12);
	assert_near(w.throughput, 1.3, 1e-12);
	assert_near(w.weight, 1.65, 1e-12);
	assert_null(w.mbps_window);

	/* Closeness 0 and 11 at the ends; the blocked mark -1 clamps to 0
	** (PJ-05 drops blocked links before the weight is used). */
	l = link_of(0, NAN, NAN, NAN, 0);
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.throughput, 2.0, 1e-12);
	l.closeness = 11;
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.throughput, 1.0, 1e-12);
	l.closeness = -1;
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.throughput, 2.0, 1e-12);

	/* A negative or NAN queued count counts as none. */
	l = link_of(-4, NAN, NAN, NAN, 0);
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.queued, 2.0, 1e-12);
	l.queued_files = NAN;
	nw_compute(&l, 0, &P_DEFAULT, &w);
	assert_near(w.queued, 2.0, 1e-12);
}

/* NW-04: at the nucleus both terms are 2.5 whatever the link says. */
static void test_nw04_at_nucleus(void **state)
{
	(void)state;
	static const double imps[] = {0, 0.2, 0.5, 0.7, 1};
	struct nw_link l = link_of(140, 0.5, NAN, NAN, 11);
	for (size_t i = 0; i < N(imps); i++) {
		struct nw_params p = {150, imps[i]};
		struct nw_weight w;
		nw_compute(&l, 1, &p, &w);
		assert_near(w.weight, 2.5, 0);
		assert_near(w.queued, 2.5, 0);
		assert_near(w.throughput, 2.5, 0);
		assert_true(isnan(w.closeness));
		assert_true(isnan(w.mbps));
		assert_null(w.mbps_window);
		assert_near(w.queued_files, 140, 0);
		/* The maximum: no satellite reaches it. */
		struct nw_link best = link_of(0, 1000, 1000, 1000, 0);
		struct nw_weight s;
		nw_compute(&best, 0, &p, &s);
		assert_true(s.weight < w.weight);
	}
	struct nw_weight w;
	nw_compute(NULL, 1, &P_DEFAULT, &w);
	assert_near(w.weight, NW_AT_NUCLEUS, 0);
	assert_near(w.queued_files, 0, 0);
}

/* NW-02 guards: unusable parameters fall back to the catalogue defaults
** (cap 150, importance 0.5) or are clamped; the result stays finite. */
static void test_nw02_parameter_guards(void **state)
{
	(void)state;
	struct nw_link l = link_of(75, 150, NAN, NAN, 3);
	struct nw_weight ref, w;
	nw_compute(&l, 0, &P_DEFAULT, &ref);
	static const struct nw_params same[] = {
		{0, 0.5}, {-10, 0.5}, {NAN, 0.5}, {150, NAN},
	};
	for (size_t i = 0; i < N(same); i++) {
		nw_compute(&l, 0, &same[i], &w);
		assert_near(w.weight, ref.weight, 1e-12);
	}
	nw_compute(&l, 0, NULL, &w);
	assert_near(w.weight, ref.weight, 1e-12);
	struct nw_params hi = {150, 3}, lo = {150, -2};
	nw_compute(&l, 0, &hi, &w);
	assert_near(w.weight, 1.5, 1e-12);
	nw_compute(&l, 0, &lo, &w);
	assert_near(w.weight, 1.9, 1e-12);
	assert_true(isfinite(w.weight));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nw02_throughput_steps),
		cmocka_unit_test(test_nw03_closeness_weight),
		cmocka_unit_test(test_nw02_queued_and_importance),
		cmocka_unit_test(test_nw01_window_choice),
		cmocka_unit_test(test_nw03_missing_metrics),
		cmocka_unit_test(test_nw04_at_nucleus),
		cmocka_unit_test(test_nw02_parameter_guards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
