/*
** test_priority.c — DIRAC TQ priorities (PR-01..PR-03) and the WMSHistory
** corrector (PR-04..PR-07) with the seed's numbers.
**
** The corrector tests use the seed's example instance (MaxGlobalCorrection-
** Factor 3, WeekSlice 604800 s weight 80 max 2, HourSlice 3600 s weight 20
** max 5) and the worked example of the DIRAC code notes (groups A and B of
** share 1000, week usage 300/100, hour 50/50 -> 0.7333 and 1.8), then
** single-slice instances built so that each clamp is hit. Priority tests
** build a handful of TQs with plain numbers and check every output field;
** the end-to-end test works a small grid by hand in its comment and also
** checks pr_recompute's one-pass usage against pr_usage + pr_correct.
*/
#include "gbtest.h"

#include <stdlib.h>

#include "gb_error.h"
#include "priority.h"
#include "rng.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOW 1700000000LL
#define WEEK 604800LL
#define HOUR 3600LL
#define EPS 1e-12

static struct pr_tq tq_of(long long id, const char *owner, const char *group,
			  long long njobs, double psum)
{
	return (struct pr_tq){.tq_id = id,
			      .owner = owner,
			      .owner_group = group,
			      .njobs = njobs,
			      .prio_sum = psum,
			      .priority = -7};
}

/* The seed's example instance. */
static struct pr_instance seed_instance(const char *name, const char *group)
{
	struct pr_instance in = {
		.name = name, .group = group, .max_global = 3, .nslices = 2};
	in.slices[0] = (struct pr_slice){"WeekSlice", WEEK, 80, 2};
	in.slices[1] = (struct pr_slice){"HourSlice", HOUR, 20, 5};
	return in;
}

static struct pr_instance one_slice(const char *name, const char *group,
				    double max_corr, double max_global)
{
	struct pr_instance in = {.name = name,
				 .group = group,
				 .max_global = max_global,
				 .nslices = 1};
	in.slices[0] = (struct pr_slice){"HourSlice", HOUR, 1, max_corr};
	return in;
}

static const struct pr_group LHCB[] = {
	{"lhcb_user", 1000, 0},
	{"lhcb_prod", 1000, 1},
	{"lhcb_data", 40000, 1},
	{"tiny", 0.002, 1},
};

static struct pr_config cfg_of(const struct pr_instance *in, size_t ninst,
			       int corrections)
{
	return (struct pr_config){.corrections = corrections,
				  .default_share = 500,
				  .groups = LHCB,
				  .ngroups = N(LHCB),
				  .inst = in,
				  .ninst = ninst};
}

static void recompute(const struct pr_config *cfg, const struct pr_sample *h,
		      size_t nh, struct pr_tq *t, size_t n, char *note,
		      size_t notelen)
{
	int rc = pr_recompute(cfg, h, nh, NOW, t, n, note, notelen);
	if (rc != GB_OK)
		fail_msg("pr_recompute: %s", gb_strerror(rc));
}

/* ---- PR-01..PR-03 --------------------------------------------------------- */

/* PR-01: a JOB_SHARING group's N TQs get S/N each, whoever owns them. */
static void test_pr01_job_sharing_split(void **state)
{
	(void)state;
	static const struct {
		const char *group;
		double s;
		size_t n;
	} cases[] = {
		{"lhcb_prod", 1000, 1}, {"lhcb_prod", 1000, 2},
		{"lhcb_prod", 1000, 5}, {"lhcb_data", 40000, 3},
	};
	static const char *owners[] = {"alice", "bob", "carol"};
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_tq t[8];
		for (size_t i = 0; i < cases[c].n; i++)
			t[i] = tq_of((long long)i, owners[i % 3], cases[c].group,
				     3, 3);
		recompute(&cfg, NULL, 0, t, cases[c].n, NULL, 0);
		for (size_t i = 0; i < cases[c].n; i++) {
			assert_near(t[i].priority,
				    cases[c].s / (double)cases[c].n, EPS);
			assert_near(t[i].entity_share, cases[c].s, EPS);
			assert_near(t[i].j, 1.0 / (double)cases[c].n, EPS);
			assert_near(t[i].group_share, cases[c].s, EPS);
			assert_near(t[i].group_corr, 1, 0);
			assert_near(t[i].user_corr, 1, 0);
		}
	}
}

/* PR-02: U users with N_u TQs each: S / (N_u x U). */
static void test_pr02_per_user_split(void **state)
{
	(void)state;
	static const char *users[] = {"alice", "bob", "carol", "dave"};
	static const struct {
		size_t nusers;
		size_t ntq[4];
	} cases[] = {
		{1, {1}},       {1, {4}},          {2, {1, 1}},
		{2, {1, 3}},    {3, {2, 2, 2}},    {4, {1, 2, 3, 4}},
	};
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_tq t[16];
		size_t n = 0;
		/* Interleave the users so the grouping is not given. */
		for (size_t r = 0; r < 4; r++)
			for (size_t u = 0; u < cases[c].nusers; u++)
				if (r < cases[c].ntq[u]) {
					t[n] = tq_of((long long)n, users[u],
						     "lhcb_user", 1, 1);
					n++;
				}
		recompute(&cfg, NULL, 0, t, n, NULL, 0);
		for (size_t i = 0; i < n; i++) {
			size_t u = 0;
			while (strcmp(users[u], t[i].owner) != 0)
				u++;
			double share = 1000.0 / (double)cases[c].nusers;
			assert_near(t[i].entity_share, share, EPS);
			assert_near(t[i].priority,
				    share / (double)cases[c].ntq[u], EPS);
		}
	}

	/* PR-02: the seed's unequal case in plain numbers: S/2 and S/6. */
	struct pr_tq t[] = {
		tq_of(1, "alice", "lhcb_user", 2, 2),
		tq_of(2, "bob", "lhcb_user", 1, 1),
		tq_of(3, "bob", "lhcb_user", 1, 1),
		tq_of(4, "bob", "lhcb_user", 1, 1),
	};
	recompute(&cfg, NULL, 0, t, N(t), NULL, 0);
	assert_near(t[0].priority, 500, EPS);
	for (size_t i = 1; i < 4; i++)
		assert_near(t[i].priority, 1000.0 / 6, EPS);

	/* PR-02, PR-03 with unequal task queues outside JOB_SHARING: alice's
	** two TQs split her S/2 by their average UserPriorities, whatever
	** their job counts (with sums, 4,999 and 1 jobs gave 499.9 and 0.1);
	** bob's one TQ keeps his S/2. */
	static const struct {
		long long njobs[3];
		double psum[3], priority[3];
	} unequal[] = {
		{{4999, 1, 10}, {4999, 1, 10}, {250, 250, 500}},
		{{1, 4999, 3}, {1, 4999, 3}, {250, 250, 500}},
		/* averages 3 and 1: 3/4 and 1/4 of alice's 500 */
		{{10, 2, 7}, {30, 2, 7}, {375, 125, 500}},
		{{1, 1000, 1}, {3, 1000, 10}, {375, 125, 500}},
	};
	for (size_t c = 0; c < N(unequal); c++) {
		struct pr_tq u[] = {
			tq_of(1, "alice", "lhcb_user", unequal[c].njobs[0],
			      unequal[c].psum[0]),
			tq_of(2, "alice", "lhcb_user", unequal[c].njobs[1],
			      unequal[c].psum[1]),
			tq_of(3, "bob", "lhcb_user", unequal[c].njobs[2],
			      unequal[c].psum[2]),
		};
		recompute(&cfg, NULL, 0, u, N(u), NULL, 0);
		for (size_t i = 0; i < N(u); i++)
			if (fabs(u[i].priority - unequal[c].priority[i]) >
			    EPS * unequal[c].priority[i])
				fail_msg("unequal case %zu, TQ %zu: priority %g, "
					 "want %g",
					 c, i, u[i].priority,
					 unequal[c].priority[i]);
	}
}

/* PR-03: J = the TQ's average UserPriority / the sum of the entity's TQs'
** averages (DIRAC's SUM/COUNT per TQ); 1/N when all 0. */
static void test_pr03_j_factor(void **state)
{
	(void)state;
	static const struct {
		size_t n;
		double psum[4], j[4];
	} cases[] = {
		{2, {30, 10}, {0.75, 0.25}},
		{3, {0, 0, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{1, {5}, {1}},
		{4, {1, 2, 2, 5}, {0.1, 0.2, 0.2, 0.5}},
	};
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_tq t[4];
		for (size_t i = 0; i < cases[c].n; i++)
			t[i] = tq_of((long long)i, "alice", "lhcb_user", 7,
				     cases[c].psum[i]);
		recompute(&cfg, NULL, 0, t, cases[c].n, NULL, 0);
		for (size_t i = 0; i < cases[c].n; i++) {
			assert_near(t[i].j, cases[c].j[i], EPS);
			assert_near(t[i].priority, 1000 * cases[c].j[i], EPS);
		}
	}

	/* PR-01, PR-03 with unequal task queues: in a JOB_SHARING group the
	** averages are summed over the whole group, and a TQ's share does not
	** grow with its job count: the seed's 1/N whatever the sizes. */
	static const struct {
		long long njobs[2];
		double psum[2], priority[2];
	} sharing[] = {
		{{30, 10}, {30, 10}, {500, 500}},
		{{4999, 1}, {4999, 1}, {500, 500}},
		/* averages 3 and 1: 3/4 and 1/4, whatever the job counts */
		{{10, 2}, {30, 2}, {750, 250}},
		{{1, 1000}, {3, 1000}, {750, 250}},
	};
	for (size_t c = 0; c < N(sharing); c++) {
		struct pr_tq s[] = {
			tq_of(1, "alice", "lhcb_prod", sharing[c].njobs[0],
			      sharing[c].psum[0]),
			tq_of(2, "bob", "lhcb_prod", sharing[c].njobs[1],
			      sharing[c].psum[1]),
		};
		recompute(&cfg, NULL, 0, s, N(s), NULL, 0);
		assert_near(s[0].priority, sharing[c].priority[0], EPS);
		assert_near(s[1].priority, sharing[c].priority[1], EPS);
	}
}

/* PR-02, PR-03: TQs without waiting jobs get 0 and count for nothing. */
static void test_pr03_empty_tqs_not_counted(void **state)
{
	(void)state;
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	struct pr_tq t[] = {
		tq_of(1, "alice", "lhcb_user", 3, 6),
		tq_of(2, "alice", "lhcb_user", 0, 99), /* stale sum: ignored */
		tq_of(3, "bob", "lhcb_user", 0, 0),    /* not in U */
		tq_of(4, "carol", "lhcb_user", 2, 2),
		tq_of(5, "carol", "lhcb_user", 1, 2),
		tq_of(6, "prod", "lhcb_prod", 4, 4),
		tq_of(7, "prod", "lhcb_prod", 0, 0), /* not in N */
		tq_of(8, "prod", "lhcb_prod", 4, 4),
	};
	recompute(&cfg, NULL, 0, t, N(t), NULL, 0);
	/* U = 2 (alice, carol): 500 each; alice's only TQ with jobs gets J 1. */
	assert_near(t[0].priority, 500, EPS);
	assert_near(t[0].j, 1, EPS);
	assert_near(t[1].priority, 0, 0);
	assert_near(t[1].j, 0, 0);
	assert_near(t[1].entity_share, 500, EPS);
	assert_near(t[1].group_share, 1000, EPS);
	assert_near(t[2].priority, 0, 0);
	assert_near(t[2].entity_share, 0, 0);
	assert_near(t[2].group_share, 1000, EPS);
	assert_near(t[2].user_corr, 1, 0);
	/* carol: averages 2/2 = 1 and 2/1 = 2 of her 500: 1/3 and 2/3 */
	assert_near(t[3].priority, 500.0 / 3, EPS);
	assert_near(t[4].priority, 1000.0 / 3, EPS);
	/* JOB_SHARING: N = 2. */
	assert_near(t[5].priority, 500, EPS);
	assert_near(t[6].priority, 0, 0);
	assert_near(t[7].priority, 500, EPS);

	/* A group whose TQs are all empty: everything 0 but the share. */
	struct pr_tq e[] = {tq_of(1, "prod", "lhcb_data", 0, 0)};
	recompute(&cfg, NULL, 0, e, N(e), NULL, 0);
	assert_near(e[0].priority, 0, 0);
	assert_near(e[0].entity_share, 0, 0);
	assert_near(e[0].group_share, 40000, EPS);
}

/* PR-01, PR-02: an unknown group gets the default share, split per user. */
static void test_pr02_unknown_group_default_share(void **state)
{
	(void)state;
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	struct pr_tq t[] = {
		tq_of(1, "alice", "lhcb_sgm", 1, 1),
		tq_of(2, "bob", "lhcb_sgm", 1, 1),
	};
	recompute(&cfg, NULL, 0, t, N(t), NULL, 0);
	for (size_t i = 0; i < N(t); i++) {
		assert_near(t[i].group_share, 500, EPS);
		assert_near(t[i].entity_share, 250, EPS); /* not JOB_SHARING */
		assert_near(t[i].priority, 250, EPS);
	}
	cfg.default_share = PR_DEFAULT_SHARE;
	recompute(&cfg, NULL, 0, t, N(t), NULL, 0);
	assert_near(t[0].priority, 500, EPS);
}

/* PR-03: a computed priority below PR_MIN_PRIORITY is raised to it. */
static void test_pr03_floor(void **state)
{
	(void)state;
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	struct pr_tq t[] = {
		/* 0.002 / 4 = 0.0005 < 0.001 */
		tq_of(1, "a", "tiny", 1, 1), tq_of(2, "a", "tiny", 1, 1),
		tq_of(3, "a", "tiny", 1, 1), tq_of(4, "a", "tiny", 1, 1),
		/* J = 0 next to a TQ holding the whole sum */
		tq_of(5, "alice", "lhcb_user", 5, 0),
		tq_of(6, "alice", "lhcb_user", 5, 5),
	};
	recompute(&cfg, NULL, 0, t, N(t), NULL, 0);
	for (size_t i = 0; i < 4; i++)
		assert_near(t[i].priority, PR_MIN_PRIORITY, 0);
	assert_near(t[4].j, 0, 0);
	assert_near(t[4].priority, PR_MIN_PRIORITY, 0);
	assert_near(t[5].priority, 1000, EPS);
}

/* Sum of j over the TQs with jobs of `group` (and `owner`, unless NULL);
** *es gets their entity share, *count how many there were. */
static double sum_j(const struct pr_tq *t, size_t n, const char *group,
		    const char *owner, double *es, size_t *count)
{
	double sum = 0;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].njobs == 0 || strcmp(t[i].owner_group, group) != 0 ||
		    (owner != NULL && strcmp(t[i].owner, owner) != 0))
			continue;
		sum += t[i].j;
		*es = t[i].entity_share;
		(*count)++;
	}
	return sum;
}

/* PR-01..PR-03 invariants on random grids: J adds up to 1 per entity, the
** owners' shares add up to the group's, priority = max(share x J, floor)
** and empty TQs get 0. */
static void test_pr01_pr03_random_invariants(void **state)
{
	(void)state;
	static const char *groups[] = {"lhcb_user", "lhcb_prod", "lhcb_sgm"};
	static const double shares[] = {1000, 1000, 500};
	static const char *owners[] = {"alice", "bob", "carol", "dave"};
	struct pr_config cfg = cfg_of(NULL, 0, 0);
	struct gb_rng rng;
	gb_rng_seed(&rng, 42);
	for (int round = 0; round < 200; round++) {
		struct pr_tq t[40];
		size_t n = 1 + gb_rng_below(&rng, 40);
		for (size_t i = 0; i < n; i++)
			t[i] = tq_of((long long)i,
				     owners[gb_rng_below(&rng, 4)],
				     groups[gb_rng_below(&rng, 3)],
				     (long long)gb_rng_below(&rng, 3),
				     (double)gb_rng_below(&rng, 4));
		recompute(&cfg, NULL, 0, t, n, NULL, 0);
		for (size_t i = 0; i < n; i++)
			assert_near(t[i].priority,
				    t[i].njobs == 0
					    ? 0
					    : fmax(t[i].entity_share * t[i].j,
						   PR_MIN_PRIORITY),
				    EPS);
		double es = 0;
		size_t cnt;
		/* lhcb_prod is JOB_SHARING: one entity of share S. */
		double j = sum_j(t, n, "lhcb_prod", NULL, &es, &cnt);
		if (cnt > 0) {
			assert_near(j, 1, 1e-9);
			assert_near(es, 1000, EPS);
		}
		for (size_t g = 0; g < N(groups); g += 2) {
			double total = 0;
			for (size_t o = 0; o < N(owners); o++) {
				j = sum_j(t, n, groups[g], owners[o], &es,
					  &cnt);
				if (cnt == 0)
					continue;
				assert_near(j, 1, 1e-9);
				total += es;
			}
			if (total > 0)
				assert_near(total, shares[g], 1e-9);
		}
	}
}

/* ---- PR-05, PR-06: the corrector --------------------------------------- */

/* PR-05, PR-06: the worked example of the DIRAC code notes, section 4.4. */
static void test_pr05_pr06_worked_example(void **state)
{
	(void)state;
	struct pr_instance in = seed_instance("GroupsInstance", NULL);
	struct pr_entity e[] = {
		{.name = "A", .share = 1000, .usage = {300, 50}},
		{.name = "B", .share = 1000, .usage = {100, 50}},
	};
	assert_int_equal(pr_correct(&in, e, N(e)), GB_OK);
	/* Week: A 0.5 / 0.75 = 0.667 inside [0.5, 2]; B 0.5 / 0.25 = 2. */
	assert_near(e[0].slice_corr[0], 2.0 / 3, EPS);
	assert_near(e[1].slice_corr[0], 2.0, EPS);
	/* Hour: 0.5 / 0.5 = 1 for both. */
	assert_near(e[0].slice_corr[1], 1.0, EPS);
	assert_near(e[1].slice_corr[1], 1.0, EPS);
	assert_true(isnan(e[0].slice_corr[2]));
	/* 0.8 x 0.667 + 0.2 x 1 = 0.7333; 0.8 x 2 + 0.2 x 1 = 1.8. */
	assert_near(e[0].correction, 0.7333333333333333, EPS);
	assert_near(e[1].correction, 1.8, EPS);
}

/* PR-05: a slice ratio is clamped to [1/MaxCorrection, MaxCorrection]. */
static void test_pr05_slice_clamps(void **state)
{
	(void)state;
	static const struct {
		double share[2], usage[2], corr[2];
	} cases[] = {
		/* 0.25/0.9 = 0.278 -> 1/2; 0.75/0.1 = 7.5 -> 2 */
		{{1, 3}, {90, 10}, {0.5, 2}},
		/* 0.5/0.1 = 5 -> 2; 0.5/0.9 = 0.556 inside */
		{{1, 1}, {10, 90}, {2, 0.5 / 0.9}},
		/* exactly at the bound: 0.5/0.25 = 2 */
		{{1, 1}, {25, 75}, {2, 0.5 / 0.75}},
		{{1, 1}, {50, 50}, {1, 1}},
		/* the share's scale does not matter */
		{{1000, 3000}, {90, 10}, {0.5, 2}},
	};
	struct pr_instance in = one_slice("I", NULL, 2, 100);
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_entity e[2];
		for (size_t i = 0; i < 2; i++)
			e[i] = (struct pr_entity){.share = cases[c].share[i],
						  .usage = {cases[c].usage[i]}};
		assert_int_equal(pr_correct(&in, e, 2), GB_OK);
		for (size_t i = 0; i < 2; i++) {
			assert_near(e[i].slice_corr[0], cases[c].corr[i], EPS);
			assert_near(e[i].correction, cases[c].corr[i], EPS);
		}
	}
}

/* PR-06: the weighted sum is clamped to [1/G, G]. */
static void test_pr06_global_clamps(void **state)
{
	(void)state;
	/* One slice, M = 20, G = 3; shares 1:8:1, usage 60:39:1.
	** A 0.1/0.6 = 0.167 -> 1/3; B 0.8/0.39 = 2.05; C 0.1/0.01 = 10 -> 3. */
	struct pr_instance in = one_slice("I", NULL, 20, 3);
	struct pr_entity e[] = {
		{.share = 1, .usage = {60}},
		{.share = 8, .usage = {39}},
		{.share = 1, .usage = {1}},
	};
	assert_int_equal(pr_correct(&in, e, N(e)), GB_OK);
	assert_near(e[0].slice_corr[0], 0.1 / 0.6, EPS);
	assert_near(e[0].correction, 1.0 / 3, EPS);
	assert_near(e[1].correction, 0.8 / 0.39, EPS);
	assert_near(e[2].slice_corr[0], 10, EPS);
	assert_near(e[2].correction, 3, EPS);

	/* Two slices of M = 10 both giving 5: the sum 5 is clamped to 3. */
	struct pr_instance two = one_slice("I", NULL, 10, 3);
	two.nslices = 2;
	two.slices[1] = (struct pr_slice){"DaySlice", 86400, 1, 10};
	struct pr_entity f[] = {
		{.share = 1, .usage = {10, 10}},
		{.share = 1, .usage = {90, 90}},
	};
	assert_int_equal(pr_correct(&two, f, N(f)), GB_OK);
	assert_near(f[0].slice_corr[0], 5, EPS);
	assert_near(f[0].slice_corr[1], 5, EPS);
	assert_near(f[0].correction, 3, EPS);
	assert_near(f[1].correction, 0.5 / 0.9, EPS);
}

/* PR-05: "running three times more jobs than its share gets one third". */
static void test_pr05_seed_three_times_one_third(void **state)
{
	(void)state;
	struct pr_instance in = one_slice("I", NULL, 5, 5);
	/* Share 10 %, running 30 % of the jobs. */
	struct pr_entity e[] = {
		{.share = 100, .usage = {30}},
		{.share = 900, .usage = {70}},
	};
	assert_int_equal(pr_correct(&in, e, N(e)), GB_OK);
	assert_near(e[0].correction, 1.0 / 3, EPS);
	assert_near(e[1].correction, 0.9 / 0.7, EPS);
}

/* PR-05: an entity absent from a slice gets M_k, weighted like the rest. */
static void test_pr05_absent_entity_weighted(void **state)
{
	(void)state;
	struct pr_instance in = seed_instance("GroupsInstance", NULL);
	struct pr_entity e[] = {
		{.share = 1000, .usage = {0, 50}},
		{.share = 1000, .usage = {100, 50}},
	};
	assert_int_equal(pr_correct(&in, e, N(e)), GB_OK);
	/* A: 0.8 x 2 + 0.2 x 1 = 1.8 (DIRAC's unweighted M gives 2.2). */
	assert_near(e[0].slice_corr[0], 2, EPS);
	assert_near(e[0].correction, 1.8, EPS);
	/* B: 0.5 / 1 = 0.5 = 1/M; 0.8 x 0.5 + 0.2 x 1 = 0.6. */
	assert_near(e[1].correction, 0.6, EPS);
}

/* PR-06: a slice without history is skipped and the weights renormalised;
** no history at all leaves every correction at 1. */
static void test_pr06_empty_slices(void **state)
{
	(void)state;
	struct pr_instance in = seed_instance("GroupsInstance", NULL);
	struct pr_entity e[] = {
		{.share = 1000, .usage = {0, 75}},
		{.share = 1000, .usage = {0, 25}},
	};
	assert_int_equal(pr_correct(&in, e, N(e)), GB_OK);
	/* The hour slice alone, weight 1: 0.5/0.75 and 0.5/0.25 (M = 5). */
	assert_true(isnan(e[0].slice_corr[0]));
	assert_near(e[0].correction, 2.0 / 3, EPS);
	assert_near(e[1].correction, 2.0, EPS);

	struct pr_entity z[] = {{.share = 1}, {.share = 3}};
	assert_int_equal(pr_correct(&in, z, N(z)), GB_OK);
	for (size_t i = 0; i < N(z); i++) {
		assert_near(z[i].correction, 1, 0);
		assert_true(isnan(z[i].slice_corr[0]));
		assert_true(isnan(z[i].slice_corr[1]));
	}
	assert_int_equal(pr_correct(&in, NULL, 0), GB_OK);
}

/* PR-05, PR-06: pr_correct refuses what would make the numbers meaningless. */
static void test_pr05_correct_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		int nslices;
		double weight, max_corr, max_global, share, usage;
		long long timespan;
	} cases[] = {
		{"no slices", 0, 1, 2, 3, 1, 1, HOUR},
		{"too many slices", PR_MAX_SLICES + 1, 1, 2, 3, 1, 1, HOUR},
		{"weight 0", 1, 0, 2, 3, 1, 1, HOUR},
		{"weight < 0", 1, -1, 2, 3, 1, 1, HOUR},
		{"weight NAN", 1, NAN, 2, 3, 1, 1, HOUR},
		{"timespan 0", 1, 1, 2, 3, 1, 1, 0},
		{"max_correction < 1", 1, 1, 0.9, 3, 1, 1, HOUR},
		{"max_global < 1", 1, 1, 2, 0.5, 1, 1, HOUR},
		{"max_global inf", 1, 1, 2, INFINITY, 1, 1, HOUR},
		{"share 0", 1, 1, 2, 3, 0, 1, HOUR},
		{"share < 0", 1, 1, 2, 3, -1, 1, HOUR},
		{"share NAN", 1, 1, 2, 3, NAN, 1, HOUR},
		{"usage < 0", 1, 1, 2, 3, 1, -1, HOUR},
		{"usage NAN", 1, 1, 2, 3, 1, NAN, HOUR},
		{"usage inf", 1, 1, 2, 3, 1, INFINITY, HOUR},
	};
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_instance in = {.name = "I",
					 .max_global = cases[c].max_global,
					 .nslices = (size_t)cases[c].nslices};
		for (size_t k = 0; k < PR_MAX_SLICES; k++)
			in.slices[k] = (struct pr_slice){
				"S", cases[c].timespan, cases[c].weight,
				cases[c].max_corr};
		struct pr_entity e[] = {
			{.share = 1, .usage = {1}},
			{.share = cases[c].share, .usage = {cases[c].usage}},
		};
		if (pr_correct(&in, e, N(e)) != GB_EINVAL)
			fail_msg("%s: accepted", cases[c].what);
	}
	struct pr_instance ok = one_slice("I", NULL, 2, 3);
	assert_int_equal(pr_correct(NULL, NULL, 0), GB_EINVAL);
	assert_int_equal(pr_correct(&ok, NULL, 1), GB_EINVAL);
}

/* ---- PR-04: history ------------------------------------------------------ */

/* PR-04: pr_usage sums the samples with now - timespan < t <= now. */
static void test_pr04_usage_window(void **state)
{
	(void)state;
	static const struct pr_sample h[] = {
		{NOW - HOUR, "g", "a", 1},     /* on the open end: out */
		{NOW - HOUR + 1, "g", "a", 2}, /* first second in */
		{NOW, "g", "a", 4},            /* now: in */
		{NOW + 1, "g", "a", 8},        /* future: out */
		{NOW, "g", "b", 16},
		{NOW, "h", "a", 32},
	};
	static const struct {
		long long span;
		const char *group, *owner;
		double sum;
	} cases[] = {
		{HOUR, "g", "a", 6},      {HOUR, "g", NULL, 22},
		{HOUR, NULL, NULL, 54},   {HOUR, NULL, "a", 38},
		{HOUR + 1, "g", "a", 7},  {1, "g", "a", 4},
		{0, "g", "a", 0},         {HOUR, "x", NULL, 0},
		{HOUR, "g", "zz", 0},
	};
	for (size_t c = 0; c < N(cases); c++)
		assert_near(pr_usage(h, N(h), NOW, cases[c].span,
				     cases[c].group, cases[c].owner),
			    cases[c].sum, 0);
	assert_near(pr_usage(NULL, 0, NOW, HOUR, NULL, NULL), 0, 0);
}

/* ---- PR-07: instances ----------------------------------------------------- */

/* History of lhcb_user: alice 300 and bob 100 over the week, 50 and 50 in
** the last hour (samples two hours ago and now); lhcb_prod runs a lot. */
static const struct pr_sample USER_HIST[] = {
	{NOW - 7200, "lhcb_user", "alice", 250},
	{NOW - 7200, "lhcb_user", "bob", 50},
	{NOW, "lhcb_user", "alice", 50},
	{NOW, "lhcb_user", "bob", 50},
	{NOW, "lhcb_prod", "prodmgr", 500},
};

/* PR-07: an in-group instance corrects the owners of its group only. */
static void test_pr07_in_group_instance(void **state)
{
	(void)state;
	struct pr_instance in[] = {seed_instance("lhcb_userInstance",
						 "lhcb_user")};
	struct pr_config cfg = cfg_of(in, N(in), 1);
	struct pr_tq t[] = {
		tq_of(1, "alice", "lhcb_user", 4, 4),
		tq_of(2, "bob", "lhcb_user", 2, 2),
		tq_of(3, "prodmgr", "lhcb_prod", 10, 10),
	};
	char note[128];
	recompute(&cfg, USER_HIST, N(USER_HIST), t, N(t), note, sizeof(note));
	assert_string_equal(note, "");
	/* The worked example's factors on 1000 / 2 each. */
	assert_near(t[0].user_corr, 0.7333333333333333, EPS);
	assert_near(t[0].priority, 500 * 0.7333333333333333, EPS);
	assert_near(t[1].user_corr, 1.8, EPS);
	assert_near(t[1].priority, 900, EPS);
	assert_near(t[0].group_corr, 1, 0);
	/* lhcb_prod untouched. */
	assert_near(t[2].priority, 1000, EPS);
	assert_near(t[2].user_corr, 1, 0);
	assert_near(t[2].group_corr, 1, 0);
}

/* PR-07: no instance for a JOB_SHARING group; PR-04: corrections off. */
static void test_pr07_job_sharing_instance_ignored(void **state)
{
	(void)state;
	struct pr_instance in[] = {
		seed_instance("lhcb_prodInstance", "lhcb_prod"),
		/* a group without waiting jobs: changes nothing */
		seed_instance("lhcb_sgmInstance", "lhcb_sgm"),
	};
	struct pr_config cfg = cfg_of(in, N(in), 1);
	struct pr_tq t[] = {
		tq_of(1, "alice", "lhcb_user", 4, 4),
		tq_of(2, "bob", "lhcb_user", 2, 2),
		tq_of(3, "prodmgr", "lhcb_prod", 10, 10),
	};
	char note[128];
	recompute(&cfg, USER_HIST, N(USER_HIST), t, N(t), note, sizeof(note));
	assert_string_equal(
		note, "lhcb_prodInstance: group has JOB_SHARING, ignored (PR-07)");
	static const double want[] = {500, 500, 1000};
	for (size_t i = 0; i < N(t); i++) {
		assert_near(t[i].priority, want[i], EPS);
		assert_near(t[i].user_corr, 1, 0);
		assert_near(t[i].group_corr, 1, 0);
	}

	/* PR-04: with corrections off the lhcb_user instance does nothing. */
	struct pr_instance u[] = {seed_instance("lhcb_userInstance",
						"lhcb_user")};
	cfg = cfg_of(u, N(u), 0);
	recompute(&cfg, USER_HIST, N(USER_HIST), t, N(t), note, sizeof(note));
	assert_string_equal(note, "");
	for (size_t i = 0; i < N(t); i++)
		assert_near(t[i].priority, want[i], EPS);
}

/* PR-07: two between-groups instances apply in turn, factors multiply. */
static void test_pr07_instances_in_turn(void **state)
{
	(void)state;
	static const struct pr_group g[] = {{"A", 1000, 0}, {"B", 1000, 0}};
	struct pr_instance in[] = {one_slice("First", NULL, 10, 10),
				   one_slice("Second", NULL, 10, 10)};
	struct pr_config cfg = {.corrections = 1,
				.default_share = 1,
				.groups = g,
				.ngroups = N(g),
				.inst = in,
				.ninst = N(in)};
	static const struct pr_sample h[] = {{NOW, "A", "a", 75},
					     {NOW, "B", "b", 25}};
	struct pr_tq t[] = {tq_of(1, "a", "A", 1, 1), tq_of(2, "b", "B", 1, 1)};
	recompute(&cfg, h, N(h), t, N(t), NULL, 0);
	/* First: 0.5/0.75 = 2/3, 0.5/0.25 = 2. Second sees shares 2/3 : 2,
	** i.e. 0.25 : 0.75: 0.25/0.75 = 1/3, 0.75/0.25 = 3. */
	assert_near(t[0].group_corr, 2.0 / 9, EPS);
	assert_near(t[1].group_corr, 6, EPS);
	assert_near(t[0].priority, 1000 * 2.0 / 9, EPS);
	assert_near(t[1].priority, 6000, EPS);
	assert_near(t[0].group_share, 1000, EPS);

	/* The same with two in-group instances of lhcb_user: equal shares,
	** then 2/3 : 2, so the owners end at 2/9 and 6 of 1000 / 2. */
	struct pr_instance ig[] = {one_slice("First", "lhcb_user", 10, 10),
				   one_slice("Second", "lhcb_user", 10, 10)};
	cfg = cfg_of(ig, N(ig), 1);
	static const struct pr_sample hu[] = {{NOW, "lhcb_user", "alice", 75},
					      {NOW, "lhcb_user", "bob", 25}};
	struct pr_tq u[] = {tq_of(1, "alice", "lhcb_user", 1, 1),
			    tq_of(2, "bob", "lhcb_user", 1, 1)};
	recompute(&cfg, hu, N(hu), u, N(u), NULL, 0);
	assert_near(u[0].user_corr, 2.0 / 9, EPS);
	assert_near(u[1].user_corr, 6, EPS);
	assert_near(u[0].priority, 500 * 2.0 / 9, EPS);
	assert_near(u[1].priority, 3000, EPS);
	assert_near(u[0].group_corr, 1, 0);
}

/*
** PR-01..PR-07 end to end: GroupsInstance and lhcb_userInstance (the seed's
** configuration), default share 500.
**
** History (week = 2 h ago + now, hour = now):
**   lhcb_prod  week 250 + 50 = 300, hour 50
**   lhcb_user  week 100 (alice 25 + 25 = 50, bob 25, carol 25),
**              hour 50 (alice 25, bob 25)
**   lhcb_sgm   none; lhcb_old has only an empty TQ, so its 1000 running
**   are in no total; bob's sample of two weeks ago is in no window.
** Between groups, shares 1000 : 1000 : 500 = 0.4 : 0.4 : 0.2:
**   prod  week 0.4/0.75 = 0.5333, hour 0.4/0.5 = 0.8
**         C = 0.8 x 0.5333 + 0.2 x 0.8 = 0.5867 (44/75)
**   user  week 0.4/0.25 = 1.6, hour 0.8: C = 1.28 + 0.16 = 1.44
**   sgm   absent from both: 0.8 x 2 + 0.2 x 5 = 2.6
** Inside lhcb_user (alice, bob; carol has no waiting jobs, so her 25 count
** for the group but not between its owners: week total 75):
**   alice 0.8 x 0.5/(50/75) + 0.2 x 1 = 0.8 x 0.75 + 0.2 = 0.8
**   bob   0.8 x 0.5/(25/75) + 0.2 x 1 = 0.8 x 1.5 + 0.2 = 1.4
** Priorities:
**   prod  1000 x 44/75 = 586.67, J 1/2 and 1/2 (30 and 10 jobs, each of
**         UserPriority 1: the averages are equal) -> 293.33 each
**   user  1000 x 1.44 / U=2 = 720; alice x 0.8 = 576;
**         bob x 1.4 = 1008 over J 0.5, 0.5 -> 504, 504; empty TQs 0
**   sgm   500 x 2.6 = 1300, one user, one TQ -> 1300
*/
static void test_pr04_end_to_end(void **state)
{
	(void)state;
	struct pr_instance in[] = {
		seed_instance("GroupsInstance", NULL),
		seed_instance("lhcb_userInstance", "lhcb_user"),
	};
	struct pr_config cfg = cfg_of(in, N(in), 1);
	static const struct pr_sample h[] = {
		{NOW - 7200, "lhcb_prod", "prodmgr", 250},
		{NOW - 7200, "lhcb_user", "alice", 25},
		{NOW - 7200, "lhcb_user", "carol", 25},
		{NOW, "lhcb_prod", "prodmgr", 50},
		{NOW, "lhcb_user", "alice", 25},
		{NOW, "lhcb_user", "bob", 25},
		{NOW, "lhcb_old", "olduser", 1000},
		{NOW - 2 * WEEK, "lhcb_user", "bob", 1e6},
	};
	/* Not sorted by group or owner on purpose. */
	struct pr_tq t[] = {
		tq_of(1, "bob", "lhcb_user", 4, 4),
		tq_of(2, "prodmgr", "lhcb_prod", 30, 30),
		tq_of(3, "dave", "lhcb_sgm", 3, 3),
		tq_of(4, "carol", "lhcb_user", 0, 0),
		tq_of(5, "alice", "lhcb_user", 5, 5),
		tq_of(6, "prodmgr2", "lhcb_prod", 10, 10),
		tq_of(7, "bob", "lhcb_user", 0, 0),
		tq_of(8, "bob", "lhcb_user", 4, 4),
		tq_of(9, "olduser", "lhcb_old", 0, 0),
	};
	char note[128];
	recompute(&cfg, h, N(h), t, N(t), note, sizeof(note));
	assert_string_equal(note, "");
	static const struct {
		double group_share, group_corr, user_corr, entity_share, j,
			priority;
	} want[] = {
		{1000, 1.44, 1.4, 1008, 0.5, 504},
		{1000, 44.0 / 75, 1, 1000 * 44.0 / 75, 0.5, 880.0 / 3},
		{500, 2.6, 1, 1300, 1, 1300},
		{1000, 1.44, 1, 0, 0, 0},
		{1000, 1.44, 0.8, 576, 1, 576},
		{1000, 44.0 / 75, 1, 1000 * 44.0 / 75, 0.5, 880.0 / 3},
		{1000, 1.44, 1.4, 1008, 0, 0},
		{1000, 1.44, 1.4, 1008, 0.5, 504},
		{500, 1, 1, 0, 0, 0},
	};
	for (size_t i = 0; i < N(t); i++) {
		assert_near(t[i].group_share, want[i].group_share, EPS);
		assert_near(t[i].group_corr, want[i].group_corr, EPS);
		assert_near(t[i].user_corr, want[i].user_corr, EPS);
		assert_near(t[i].entity_share, want[i].entity_share, EPS);
		assert_near(t[i].j, want[i].j, EPS);
		assert_near(t[i].priority, want[i].priority, EPS);
	}

	/* The one-pass usage of pr_recompute agrees with pr_usage. */
	static const char *gr[] = {"lhcb_prod", "lhcb_user", "lhcb_sgm"};
	static const double sh[] = {1000, 1000, 500};
	static const size_t tq_of_group[] = {1, 0, 2};
	struct pr_entity e[3];
	for (size_t g = 0; g < 3; g++) {
		e[g] = (struct pr_entity){.name = gr[g], .share = sh[g]};
		for (size_t k = 0; k < in[0].nslices; k++)
			e[g].usage[k] = pr_usage(h, N(h), NOW,
						 in[0].slices[k].timespan,
						 gr[g], NULL);
	}
	assert_int_equal(pr_correct(&in[0], e, 3), GB_OK);
	for (size_t g = 0; g < 3; g++)
		assert_near(t[tq_of_group[g]].group_corr, e[g].correction,
			    EPS);
	static const char *users[] = {"alice", "bob"};
	static const size_t tq_of_user[] = {4, 0};
	for (size_t u = 0; u < 2; u++) {
		e[u] = (struct pr_entity){.name = users[u], .share = 1};
		for (size_t k = 0; k < in[1].nslices; k++)
			e[u].usage[k] = pr_usage(h, N(h), NOW,
						 in[1].slices[k].timespan,
						 "lhcb_user", users[u]);
	}
	assert_int_equal(pr_correct(&in[1], e, 2), GB_OK);
	for (size_t u = 0; u < 2; u++)
		assert_near(t[tq_of_user[u]].user_corr, e[u].correction, EPS);
}

/* ---- validation --------------------------------------------------------- */

struct cfx {
	struct pr_group g[2];
	struct pr_instance in[2];
	struct pr_config cfg;
};

static void cfx_init(struct cfx *f)
{
	f->g[0] = (struct pr_group){"lhcb_user", 1000, 0};
	f->g[1] = (struct pr_group){"lhcb_prod", 1000, 1};
	f->in[0] = seed_instance("GroupsInstance", NULL);
	/* An instance for a JOB_SHARING group is valid, only ignored. */
	f->in[1] = seed_instance("lhcb_prodInstance", "lhcb_prod");
	f->cfg = (struct pr_config){1, PR_DEFAULT_SHARE, f->g, 2, f->in, 2};
}

static void m_default_zero(struct cfx *f) { f->cfg.default_share = 0; }
static void m_default_nan(struct cfx *f) { f->cfg.default_share = NAN; }
static void m_group_table(struct cfx *f) { f->cfg.groups = NULL; }
static void m_group_noname(struct cfx *f) { f->g[1].name = NULL; }
static void m_group_empty(struct cfx *f) { f->g[1].name = ""; }
static void m_group_share(struct cfx *f) { f->g[1].share = -1; }
static void m_group_inf(struct cfx *f) { f->g[0].share = INFINITY; }
static void m_group_twice(struct cfx *f) { f->g[1].name = "lhcb_user"; }
static void m_ninst(struct cfx *f) { f->cfg.ninst = PR_MAX_INSTANCES + 1; }
static void m_inst_table(struct cfx *f) { f->cfg.inst = NULL; }
static void m_inst_noname(struct cfx *f) { f->in[0].name = NULL; }
static void m_inst_twice(struct cfx *f) { f->in[1].name = "GroupsInstance"; }
static void m_inst_group(struct cfx *f) { f->in[1].group = ""; }
static void m_max_global(struct cfx *f) { f->in[0].max_global = 0.5; }
static void m_no_slices(struct cfx *f) { f->in[0].nslices = 0; }
static void m_many_slices(struct cfx *f)
{
	f->in[0].nslices = PR_MAX_SLICES + 1;
}
static void m_timespan(struct cfx *f) { f->in[1].slices[1].timespan = 0; }
static void m_weight(struct cfx *f) { f->in[0].slices[0].weight = 0; }
static void m_max_corr(struct cfx *f)
{
	f->in[0].slices[1].max_correction = 0.5;
}

static void test_pr_config_check(void **state)
{
	(void)state;
	static const struct {
		void (*mutate)(struct cfx *);
		const char *err;
	} cases[] = {
		{m_default_zero, "default share 0 must be > 0"},
		{m_default_nan, "default share"},
		{m_group_table, "2 groups but no group table"},
		{m_group_noname, "group 1: name missing"},
		{m_group_empty, "group 1: name missing"},
		{m_group_share, "group lhcb_prod: share -1 must be > 0"},
		{m_group_inf, "group lhcb_user: share inf"},
		{m_group_twice, "group lhcb_user: listed twice"},
		{m_ninst, "65 corrector instances, at most 64"},
		{m_inst_table, "2 instances but no instance table"},
		{m_inst_noname, "instance 0: name missing"},
		{m_inst_twice, "instance GroupsInstance: listed twice"},
		{m_inst_group, "instance lhcb_prodInstance: Group must be"},
		{m_max_global, "instance GroupsInstance: MaxGlobalCorrection"},
		{m_no_slices, "instance GroupsInstance: needs 1 to"},
		{m_many_slices, "instance GroupsInstance: needs 1 to"},
		{m_timespan, "instance lhcb_prodInstance, slice HourSlice: "
			     "TimeSpan must be > 0"},
		{m_weight, "slice WeekSlice: Weight must be > 0"},
		{m_max_corr, "slice HourSlice: MaxCorrection must be >= 1"},
	};
	struct cfx f;
	char err[160];
	cfx_init(&f);
	assert_int_equal(pr_config_check(&f.cfg, err, sizeof(err)), GB_OK);
	assert_string_equal(err, "");
	for (size_t c = 0; c < N(cases); c++) {
		cfx_init(&f);
		cases[c].mutate(&f);
		int rc = pr_config_check(&f.cfg, err, sizeof(err));
		if (rc != GB_EINVAL || strstr(err, cases[c].err) == NULL)
			fail_msg("case %zu: rc %d, err '%s', want '%s'", c, rc,
				 err, cases[c].err);
		/* pr_recompute refuses the same configuration. */
		struct pr_tq t[] = {tq_of(1, "alice", "lhcb_user", 1, 1)};
		assert_int_equal(pr_recompute(&f.cfg, NULL, 0, NOW, t, 1,
					      NULL, 0),
				 GB_EINVAL);
		assert_near(t[0].priority, -7, 0);
	}
	assert_int_equal(pr_config_check(NULL, err, sizeof(err)), GB_EINVAL);
	assert_string_equal(err, "no configuration");
	assert_int_equal(pr_config_check(NULL, NULL, 0), GB_EINVAL);
}

/* pr_recompute validates every input before writing any output. */
static void test_pr_recompute_rejects_inputs(void **state)
{
	(void)state;
	struct pr_instance in[] = {seed_instance("GroupsInstance", NULL)};
	struct pr_config cfg = cfg_of(in, N(in), 1);
	static const struct {
		const char *what;
		long long njobs;
		double psum, psum2, running;
		int null_owner, null_group, null_sample_group;
	} cases[] = {
		{"njobs < 0", -1, 1, 1, 1, 0, 0, 0},
		{"prio_sum < 0", 1, -1, 1, 1, 0, 0, 0},
		{"prio_sum NAN", 1, NAN, 1, 1, 0, 0, 0},
		{"prio_sum inf", 1, INFINITY, 1, 1, 0, 0, 0},
		{"prio sums overflow", 1, 1e308, 1e308, 1, 0, 0, 0},
		{"owner NULL", 1, 1, 1, 1, 1, 0, 0},
		{"group NULL", 1, 1, 1, 1, 0, 1, 0},
		{"running < 0", 1, 1, 1, -1, 0, 0, 0},
		{"running NAN", 1, 1, 1, NAN, 0, 0, 0},
		{"sample group NULL", 1, 1, 1, 1, 0, 0, 1},
	};
	for (size_t c = 0; c < N(cases); c++) {
		struct pr_tq t[] = {
			tq_of(1, cases[c].null_owner ? NULL : "alice",
			      cases[c].null_group ? NULL : "lhcb_user",
			      cases[c].njobs, cases[c].psum),
			tq_of(2, "alice", "lhcb_user", 1, cases[c].psum2),
		};
		struct pr_sample h[] = {
			{NOW, cases[c].null_sample_group ? NULL : "lhcb_user",
			 "alice", cases[c].running},
		};
		char note[32] = "stale";
		if (pr_recompute(&cfg, h, 1, NOW, t, N(t), note,
				 sizeof(note)) != GB_EINVAL)
			fail_msg("%s: accepted", cases[c].what);
		assert_string_equal(note, "");
		assert_near(t[0].priority, -7, 0);
		assert_near(t[1].priority, -7, 0);
	}
	struct pr_tq t[] = {tq_of(1, "alice", "lhcb_user", 1, 1)};
	assert_int_equal(pr_recompute(&cfg, NULL, 0, NOW, NULL, 1, NULL, 0),
			 GB_EINVAL);
	assert_int_equal(pr_recompute(&cfg, NULL, 1, NOW, t, 1, NULL, 0),
			 GB_EINVAL);
	assert_int_equal(pr_recompute(NULL, NULL, 0, NOW, t, 1, NULL, 0),
			 GB_EINVAL);
	assert_int_equal(pr_recompute(&cfg, NULL, 0, NOW, NULL, 0, NULL, 0),
			 GB_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pr01_job_sharing_split),
		cmocka_unit_test(test_pr02_per_user_split),
		cmocka_unit_test(test_pr03_j_factor),
		cmocka_unit_test(test_pr03_empty_tqs_not_counted),
		cmocka_unit_test(test_pr02_unknown_group_default_share),
		cmocka_unit_test(test_pr03_floor),
		cmocka_unit_test(test_pr01_pr03_random_invariants),
		cmocka_unit_test(test_pr05_pr06_worked_example),
		cmocka_unit_test(test_pr05_slice_clamps),
		cmocka_unit_test(test_pr06_global_clamps),
		cmocka_unit_test(test_pr05_seed_three_times_one_third),
		cmocka_unit_test(test_pr05_absent_entity_weighted),
		cmocka_unit_test(test_pr06_empty_slices),
		cmocka_unit_test(test_pr05_correct_rejects),
		cmocka_unit_test(test_pr04_usage_window),
		cmocka_unit_test(test_pr07_in_group_instance),
		cmocka_unit_test(test_pr07_job_sharing_instance_ignored),
		cmocka_unit_test(test_pr07_instances_in_turn),
		cmocka_unit_test(test_pr04_end_to_end),
		cmocka_unit_test(test_pr_config_check),
		cmocka_unit_test(test_pr_recompute_rejects_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
