/*
** test_analysis.c — the analysis throttle (AJ-01..AJ-04), stabilizer
** (AJ-21..AJ-23) and basic weights (AJ-24..AJ-27) with the seed's numbers
** and the catalogue defaults (BASE_QUEUE_LENGTH_PER_PQ 100,
** BASE_EXPECTED_WAIT_HOUR_ON_PQ 8, STATIC_MAX_QUEUE_RUNNING_RATIO 2,
** MAX_EXPECTED_WAIT_HOUR 12, BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER 5,
** BASE_QUEUE_RATIO_ON_PQ 0.05, USER_USAGE_THRESHOLD_A 1000).
**
** Every limit is checked on both sides: equal to the limit is not
** throttled (or skipped), just above is. Each term of the AJ-22 and AJ-23
** maxima wins in at least one stabilizer row; the expected values are
** worked by hand in the row comments.
*/
#include "gbtest.h"

#include <limits.h>

#include "analysis.h"
#include "gb_error.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOW 1700000000LL
#define SIX_HOURS 21600LL
#define EPS 1e-12

static struct prm_set set_of(const struct prm_kv *kv, size_t n)
{
	return (struct prm_set){kv, n};
}

/* A User Analysis load with nothing over any limit; rows change fields. */
static struct an_user_load quiet_load(void)
{
	return (struct an_user_load){.working_group = 0,
				     .running_jobs = 0,
				     .queued_jobs = 0,
				     .running_cores = 0,
				     .queued_cores = 0,
				     .quota_exceeded = 0,
				     .user_analysis = 1,
				     .task_class = AN_CLASS_C,
				     .share_usage = 0,
				     .share_target = 100,
				     .hi_site_slots = 0};
}

static void check_throttle(const char *name, const struct an_user_load *u,
			   const struct prm_set *set, const char *rule,
			   const char *code, double value, double limit)
{
	struct an_throttle t = {.throttled = -1, .rule = "junk"};
	int rc = an_throttle_check(u, set, &t);
	if (rc != GB_OK)
		fail_msg("%s: rc %d", name, rc);
	if (!rule) {
		if (t.throttled != 0 || t.rule != NULL || t.code != NULL)
			fail_msg("%s: throttled by %s/%s (%g > %g)", name,
				 t.rule ? t.rule : "-", t.code ? t.code : "-",
				 t.value, t.limit);
		return;
	}
	if (t.throttled != 1 || !t.rule || strcmp(t.rule, rule) != 0 ||
	    !t.code || strcmp(t.code, code) != 0)
		fail_msg("%s: got %d %s/%s, expected %s/%s", name, t.throttled,
			 t.rule ? t.rule : "-", t.code ? t.code : "-", rule,
			 code);
	assert_near(t.value, value, EPS);
	assert_near(t.limit, limit, EPS);
}

/* AJ-02: the user's caps, each of the four comparisons on both sides. */
static void test_aj02_user_caps(void **state)
{
	(void)state;
	static const struct prm_kv kv[] = {
		{"CAP_RUNNING_USER_JOBS", 100},
		{"CAP_RUNNING_USER_CORES", 800},
		/* group caps far lower: a user task must not read them */
		{"CAP_RUNNING_GROUP_JOBS", 1},
		{"CAP_RUNNING_GROUP_CORES", 1},
	};
	struct prm_set set = set_of(kv, N(kv));
	static const struct {
		const char *name;
		double rj, qj, rc, qc;
		const char *code; /* NULL: not throttled */
		double value, limit;
	} rows[] = {
		{"AJ-02 running jobs = cap", 100, 200, 800, 1600, NULL, 0, 0},
		{"AJ-02 running jobs > cap", 101, 0, 0, 0, "running_jobs", 101,
		 100},
		{"AJ-02 queued jobs > 2 x cap", 0, 201, 0, 0, "queued_jobs",
		 201, 200},
		{"AJ-02 running cores > cap", 0, 0, 801, 0, "running_cores",
		 801, 800},
		{"AJ-02 queued cores > 2 x cap", 0, 0, 0, 1601, "queued_cores",
		 1601, 1600},
		/* jobs are checked before cores */
		{"AJ-02 jobs before cores", 101, 0, 801, 0, "running_jobs", 101,
		 100},
		{"AJ-02 running before queued", 101, 201, 0, 0, "running_jobs",
		 101, 100},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct an_user_load u = quiet_load();
		u.running_jobs = rows[i].rj;
		u.queued_jobs = rows[i].qj;
		u.running_cores = rows[i].rc;
		u.queued_cores = rows[i].qc;
		check_throttle(rows[i].name, &u, &set,
			       rows[i].code ? "AJ-02" : NULL, rows[i].code,
			       rows[i].value, rows[i].limit);
	}
}

/* AJ-01: a working group's counts are compared with the GROUP caps. */
static void test_aj01_group_caps(void **state)
{
	(void)state;
	static const struct prm_kv kv[] = {
		{"CAP_RUNNING_GROUP_JOBS", 50},
		{"CAP_RUNNING_GROUP_CORES", 400},
		{"CAP_RUNNING_USER_JOBS", 10},
		{"CAP_RUNNING_USER_CORES", 10},
	};
	struct prm_set set = set_of(kv, N(kv));
	static const struct {
		const char *name;
		int wg;
		double rj, qj, rc, qc;
		const char *code;
		double value, limit;
	} rows[] = {
		{"AJ-01 group at its caps", 1, 50, 100, 400, 800, NULL, 0, 0},
		{"AJ-01 group running jobs > cap", 1, 51, 0, 0, 0,
		 "running_jobs", 51, 50},
		{"AJ-01 group queued jobs > 2 x cap", 1, 0, 101, 0, 0,
		 "queued_jobs", 101, 100},
		{"AJ-01 group running cores > cap", 1, 0, 0, 401, 0,
		 "running_cores", 401, 400},
		{"AJ-01 group queued cores > 2 x cap", 1, 0, 0, 0, 801,
		 "queued_cores", 801, 800},
		/* the same counts for a user hit the user caps */
		{"AJ-01 user reads the user caps", 0, 50, 0, 0, 0,
		 "running_jobs", 50, 10},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct an_user_load u = quiet_load();
		u.working_group = rows[i].wg;
		u.running_jobs = rows[i].rj;
		u.queued_jobs = rows[i].qj;
		u.running_cores = rows[i].rc;
		u.queued_cores = rows[i].qc;
		check_throttle(rows[i].name, &u, &set,
			       rows[i].code ? "AJ-02" : NULL, rows[i].code,
			       rows[i].value, rows[i].limit);
	}
}

/* AJ-02: unset caps (the catalogue default) never throttle; a cap of 0
** is a real cap. */
static void test_aj02_unset_caps(void **state)
{
	(void)state;
	struct an_user_load u = quiet_load();
	u.running_jobs = u.queued_jobs = 1e9;
	u.running_cores = u.queued_cores = 1e9;
	check_throttle("AJ-02 defaults, user", &u, NULL, NULL, NULL, 0, 0);
	u.working_group = 1;
	check_throttle("AJ-02 defaults, group", &u, NULL, NULL, NULL, 0, 0);

	/* only the user jobs cap set: cores and group stay unchecked */
	static const struct prm_kv jobs_only[] = {
		{"CAP_RUNNING_USER_JOBS", 1e9}};
	struct prm_set set = set_of(jobs_only, N(jobs_only));
	u.working_group = 0;
	u.queued_jobs = 2e9;
	check_throttle("AJ-02 cores unset", &u, &set, NULL, NULL, 0, 0);
	u.working_group = 1;
	check_throttle("AJ-02 group unset", &u, &set, NULL, NULL, 0, 0);

	static const struct prm_kv zero[] = {{"CAP_RUNNING_USER_CORES", 0}};
	set = set_of(zero, N(zero));
	u = quiet_load();
	check_throttle("AJ-02 cap 0, nothing running", &u, &set, NULL, NULL, 0,
		       0);
	u.running_cores = 1;
	check_throttle("AJ-02 cap 0, one core", &u, &set, "AJ-02",
		       "running_cores", 1, 0);
}

/* AJ-03: the quota flag, after the caps and before the share. */
static void test_aj03_quota(void **state)
{
	(void)state;
	static const struct prm_kv kv[] = {{"CAP_RUNNING_USER_JOBS", 100}};
	struct prm_set set = set_of(kv, N(kv));
	struct an_user_load u = quiet_load();
	u.quota_exceeded = 1;
	check_throttle("AJ-03 quota", &u, &set, "AJ-03", "quota", 1, 0);
	u.user_analysis = 0;
	check_throttle("AJ-03 quota, other share", &u, &set, "AJ-03", "quota",
		       1, 0);
	u.running_jobs = 101;
	check_throttle("AJ-03 caps first", &u, &set, "AJ-02", "running_jobs",
		       101, 100);
	u = quiet_load();
	u.quota_exceeded = 1;
	u.share_usage = 1000; /* class C far over 90 % */
	check_throttle("AJ-03 before AJ-04", &u, &set, "AJ-03", "quota", 1, 0);
}

/* AJ-04: the class thresholds on both sides, class A's slot rule, the
** immune class S and the immune other shares. */
static void test_aj04_share_classes(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int ua;
		enum an_task_class cls;
		double usage, target, hi_slots;
		double thr_a; /* NAN: catalogue default 1000 */
		const char *code;
		double pct, limit;
	} rows[] = {
		{"AJ-04 C at 90 %", 1, AN_CLASS_C, 180, 200, 0, NAN, NULL, 0, 0},
		{"AJ-04 C at 90.5 %", 1, AN_CLASS_C, 181, 200, 0, NAN,
		 "share_class_c", 90.5, 90},
		{"AJ-04 B at 95 %", 1, AN_CLASS_B, 95, 100, 0, NAN, NULL, 0, 0},
		{"AJ-04 B at 96 %", 1, AN_CLASS_B, 96, 100, 0, NAN,
		 "share_class_b", 96, 95},
		{"AJ-04 B at 91 %", 1, AN_CLASS_B, 91, 100, 0, NAN, NULL, 0, 0},
		/* 1000 / 500 slots = 2 -> 200 % */
		{"AJ-04 A 500 slots at 200 %", 1, AN_CLASS_A, 200, 100, 500,
		 NAN, NULL, 0, 0},
		{"AJ-04 A 500 slots at 201 %", 1, AN_CLASS_A, 201, 100, 500,
		 NAN, "share_class_a", 201, 200},
		/* 1000 / 5000 = 0.2 -> max(0.2, 1) = 100 % */
		{"AJ-04 A 5000 slots at 100 %", 1, AN_CLASS_A, 100, 100, 5000,
		 NAN, NULL, 0, 0},
		{"AJ-04 A 5000 slots at 101 %", 1, AN_CLASS_A, 101, 100, 5000,
		 NAN, "share_class_a", 101, 100},
		/* 1000 / 1000 = 1 exactly */
		{"AJ-04 A 1000 slots at 101 %", 1, AN_CLASS_A, 101, 100, 1000,
		 NAN, "share_class_a", 101, 100},
		/* the parameter moves the limit: 4000 / 500 = 8 -> 800 % */
		{"AJ-04 A threshold 4000 at 800 %", 1, AN_CLASS_A, 800, 100,
		 500, 4000, NULL, 0, 0},
		{"AJ-04 A threshold 4000 at 801 %", 1, AN_CLASS_A, 801, 100,
		 500, 4000, "share_class_a", 801, 800},
		/* threshold 0: max(0, 1) = 100 % */
		{"AJ-04 A threshold 0 at 101 %", 1, AN_CLASS_A, 101, 100, 10, 0,
		 "share_class_a", 101, 100},
		/* no hi-site slots: the quotient is unbounded, never throttled */
		{"AJ-04 A 0 slots", 1, AN_CLASS_A, 1e6, 100, 0, NAN, NULL, 0,
		 0},
		{"AJ-04 S immune", 1, AN_CLASS_S, 1e6, 100, 0, NAN, NULL, 0, 0},
		{"AJ-04 other share C immune", 0, AN_CLASS_C, 1e6, 100, 0, NAN,
		 NULL, 0, 0},
		{"AJ-04 other share B immune", 0, AN_CLASS_B, 1e6, 100, 0, NAN,
		 NULL, 0, 0},
		{"AJ-04 other share A immune", 0, AN_CLASS_A, 1e6, 100, 5000,
		 NAN, NULL, 0, 0},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct prm_kv kv[] = {{"USER_USAGE_THRESHOLD_A", rows[i].thr_a}};
		struct prm_set set = set_of(kv, isnan(rows[i].thr_a) ? 0 : 1);
		struct an_user_load u = quiet_load();
		u.user_analysis = rows[i].ua;
		u.task_class = rows[i].cls;
		u.share_usage = rows[i].usage;
		u.share_target = rows[i].target;
		u.hi_site_slots = rows[i].hi_slots;
		check_throttle(rows[i].name, &u, &set,
			       rows[i].code ? "AJ-04" : NULL, rows[i].code,
			       rows[i].pct, rows[i].limit);
	}
}

/* AJ-01..AJ-04: refused inputs. */
static void test_aj04_invalid(void **state)
{
	(void)state;
	struct an_throttle t;
	struct an_user_load u = quiet_load();
	assert_int_equal(an_throttle_check(NULL, NULL, &t), GB_EINVAL);
	assert_int_equal(an_throttle_check(&u, NULL, NULL), GB_EINVAL);
	const double values[] = {-1, NAN, INFINITY};
	for (size_t f = 0; f < 6; f++)
		for (size_t v = 0; v < N(values); v++) {
			u = quiet_load();
			double *fields[] = {&u.running_jobs,  &u.queued_jobs,
					    &u.running_cores, &u.queued_cores,
					    &u.share_usage,   &u.hi_site_slots};
			*fields[f] = values[v];
			if (an_throttle_check(&u, NULL, &t) != GB_EINVAL)
				fail_msg("field %zu = %g accepted", f,
					 values[v]);
		}
	u = quiet_load();
	u.share_target = 0;
	assert_int_equal(an_throttle_check(&u, NULL, &t), GB_EINVAL);
	u.share_target = NAN;
	assert_int_equal(an_throttle_check(&u, NULL, &t), GB_EINVAL);
	u.user_analysis = 0; /* the target is not read for other shares */
	assert_int_equal(an_throttle_check(&u, NULL, &t), GB_OK);
	assert_int_equal(t.throttled, 0);
	u = quiet_load();
	u.task_class = (enum an_task_class)7;
	assert_int_equal(an_throttle_check(&u, NULL, &t), GB_EINVAL);
}

/* AJ-21..AJ-23 with the catalogue defaults. */
static void test_aj21_aj23_stabilizer(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		struct an_queue_load q; /* nq, nr, trr, nq_user, nr_user, nusers */
		int can;
		double nq_max, pct, mql;
		int skip;
	} rows[] = {
		/* nQ 99 < 100: not throttled even far over max_q_len
		** (10 = max(5, 0, 100 x 1/10)) */
		{"AJ-21 nQ < BASE_QUEUE_LENGTH_PER_PQ", {99, 0, 0, 50, 0, 10},
		 0, 100, 0.1, 10, 0},
		{"AJ-21 nQ = BASE_QUEUE_LENGTH_PER_PQ", {100, 0, 0, 50, 0, 10},
		 1, 100, 0.1, 10, 1},
		/* 159 < 8 x 20; nQ_max = max(100, 0, 12 x 20) = 240 */
		{"AJ-21 nQ < wait x trr", {159, 0, 20, 100, 0, 10}, 0, 240, 0.1,
		 24, 0},
		{"AJ-21 nQ = wait x trr", {160, 0, 20, 100, 0, 10}, 1, 240, 0.1,
		 24, 1},
		/* max(100, 2 x 40, 12 x 5) = 100; max(10/40, 1/2) = 0.5;
		** max(5, 2, 50) = 50 */
		{"AJ-22 base length wins", {300, 40, 5, 50, 10, 2}, 1, 100, 0.5,
		 50, 0},
		{"AJ-22 base length wins, over", {300, 40, 5, 51, 10, 2}, 1, 100,
		 0.5, 50, 1},
		/* max(100, 400, 120) = 400; max(50/200, 1/10) = 0.25;
		** max(5, 10, 100) = 100 */
		{"AJ-22 running ratio wins", {1000, 200, 10, 100, 50, 10}, 1,
		 400, 0.25, 100, 0},
		{"AJ-22 running ratio wins, over", {1000, 200, 10, 101, 50, 10},
		 1, 400, 0.25, 100, 1},
		/* max(100, 20, 600) = 600; max(1/10, 1/4) = 0.25;
		** max(5, 0.5, 150) = 150 */
		{"AJ-22 expected wait wins", {1000, 10, 50, 150, 1, 4}, 1, 600,
		 0.25, 150, 0},
		{"AJ-22 expected wait wins, over", {1000, 10, 50, 151, 1, 4}, 1,
		 600, 0.25, 150, 1},
		/* nQ_max 4000, percentage max(0, 1/1000) = 0.001;
		** max(5, 0.05 x 2000, 4) = 100 */
		{"AJ-23 queue ratio wins", {5000, 2000, 0, 100, 0, 1000}, 1,
		 4000, 0.001, 100, 0},
		{"AJ-23 queue ratio wins, over", {5000, 2000, 0, 101, 0, 1000},
		 1, 4000, 0.001, 100, 1},
		/* no running jobs, no users: both percentage terms 0;
		** max(5, 0, 0) = 5 */
		{"AJ-23 user default wins", {100, 0, 0, 5, 0, 0}, 1, 100, 0, 5,
		 0},
		{"AJ-23 user default wins, over", {100, 0, 0, 6, 0, 0}, 1, 100,
		 0, 5, 1},
		/* the user runs everything: percentage 1, max_q_len = nQ_max */
		{"AJ-22 sole runner", {500, 100, 0, 200, 100, 3}, 1, 200, 1.0,
		 200, 0},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct an_stab s = {.can_throttle = -1, .skip = -1};
		int rc = an_stabilizer(&rows[i].q, NULL, &s);
		if (rc != GB_OK)
			fail_msg("%s: rc %d", rows[i].name, rc);
		if (s.can_throttle != rows[i].can || s.skip != rows[i].skip)
			fail_msg("%s: can_throttle %d skip %d, expected %d %d",
				 rows[i].name, s.can_throttle, s.skip,
				 rows[i].can, rows[i].skip);
		assert_near(s.nq_max, rows[i].nq_max, EPS);
		assert_near(s.percentage, rows[i].pct, EPS);
		assert_near(s.max_q_len, rows[i].mql, EPS);
	}
}

/* AJ-21..AJ-23 read their parameters from the set. */
static void test_aj21_aj23_parameters(void **state)
{
	(void)state;
	static const struct prm_kv kv[] = {
		{"BASE_QUEUE_LENGTH_PER_PQ", 10},
		{"BASE_EXPECTED_WAIT_HOUR_ON_PQ", 1},
		{"STATIC_MAX_QUEUE_RUNNING_RATIO", 3},
		{"MAX_EXPECTED_WAIT_HOUR", 2},
		{"BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER", 7},
		{"BASE_QUEUE_RATIO_ON_PQ", 0.5},
	};
	struct prm_set set = set_of(kv, N(kv));
	/* nQ 50 >= 10 and >= 1 x 20: throttled;
	** nQ_max = max(10, 3 x 20, 2 x 20) = 60; percentage max(5/20, 1/5)
	** = 0.25; max_q_len = max(7, 0.5 x 20, 15) = 15 */
	struct an_queue_load q = {50, 20, 20, 16, 5, 5};
	struct an_stab s;
	assert_int_equal(an_stabilizer(&q, &set, &s), GB_OK);
	assert_int_equal(s.can_throttle, 1);
	assert_near(s.nq_max, 60, EPS);
	assert_near(s.percentage, 0.25, EPS);
	assert_near(s.max_q_len, 15, EPS);
	assert_int_equal(s.skip, 1);
	/* the defaults would not throttle this queue (50 < 100) */
	assert_int_equal(an_stabilizer(&q, NULL, &s), GB_OK);
	assert_int_equal(s.can_throttle, 0);
	assert_int_equal(s.skip, 0);
}

static void test_aj21_stabilizer_invalid(void **state)
{
	(void)state;
	struct an_stab s;
	struct an_queue_load ok = {100, 10, 1, 1, 1, 1};
	assert_int_equal(an_stabilizer(NULL, NULL, &s), GB_EINVAL);
	assert_int_equal(an_stabilizer(&ok, NULL, NULL), GB_EINVAL);
	const double values[] = {-1, NAN, INFINITY};
	for (size_t f = 0; f < 6; f++)
		for (size_t v = 0; v < N(values); v++) {
			struct an_queue_load q = ok;
			double *fields[] = {&q.nq,	&q.nr,	    &q.trr,
					    &q.nq_user, &q.nr_user, &q.nusers};
			*fields[f] = values[v];
			if (an_stabilizer(&q, NULL, &s) != GB_EINVAL)
				fail_msg("field %zu = %g accepted", f,
					 values[v]);
		}
}

/* AJ-21: trr counts starts with now - 6 h < t <= now, per hour. */
static void test_aj21_trr_window(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		long long t[4];
		size_t n;
		double trr;
	} rows[] = {
		{"AJ-21 trr none", {0}, 0, 0},
		{"AJ-21 trr now included", {NOW}, 1, 1.0 / 6},
		{"AJ-21 trr 6 h ago excluded", {NOW - SIX_HOURS}, 1, 0},
		{"AJ-21 trr 6 h - 1 s included", {NOW - SIX_HOURS + 1}, 1,
		 1.0 / 6},
		{"AJ-21 trr future excluded", {NOW + 1}, 1, 0},
		{"AJ-21 trr mixed",
		 {NOW, NOW - SIX_HOURS, NOW - 3600, NOW - SIX_HOURS - 1},
		 4,
		 2.0 / 6},
		{"AJ-21 trr four starts", {NOW - 1, NOW - 2, NOW - 3, NOW}, 4,
		 4.0 / 6},
	};
	for (size_t i = 0; i < N(rows); i++) {
		double got = an_trr(rows[i].t, rows[i].n, NOW);
		if (fabs(got - rows[i].trr) > EPS)
			fail_msg("%s: %g, expected %g", rows[i].name, got,
				 rows[i].trr);
	}
	/* far-apart values must not overflow (UBSan checks this) */
	const long long extreme[] = {LLONG_MIN, LLONG_MAX};
	assert_near(an_trr(extreme, 2, LLONG_MAX), 1.0 / 6, EPS);
	assert_near(an_trr(extreme, 2, LLONG_MIN), 1.0 / 6, EPS);
	assert_true(isnan(an_trr(NULL, 3, NOW)));
	assert_near(an_trr(NULL, 0, NOW), 0, 0);
}

/* AJ-24: (running + 1) / (activated + assigned + starting + defined + 1). */
static void test_aj24_original_weight(void **state)
{
	(void)state;
	static const struct {
		double r, act, ass, st, def, w;
	} rows[] = {
		{0, 0, 0, 0, 0, 1},	 /* empty queue */
		{9, 3, 2, 1, 3, 1},	 /* 10 / 10 */
		{99, 10, 5, 4, 0, 5},	 /* 100 / 20 */
		{0, 0, 0, 0, 9, 0.1},	 /* 1 / 10 */
		{19, 0, 1, 2, 0.5, 20.0 / 4.5},
	};
	for (size_t i = 0; i < N(rows); i++) {
		double w = -1;
		assert_int_equal(an_weight_original(rows[i].r, rows[i].act,
						    rows[i].ass, rows[i].st,
						    rows[i].def, &w),
				 GB_OK);
		assert_near(w, rows[i].w, EPS);
	}
	double w;
	assert_int_equal(an_weight_original(-1, 0, 0, 0, 0, &w), GB_EINVAL);
	assert_int_equal(an_weight_original(0, 0, 0, -1, 0, &w), GB_EINVAL);
	assert_int_equal(an_weight_original(0, 0, NAN, 0, 0, &w), GB_EINVAL);
	assert_int_equal(an_weight_original(0, 0, 0, 0, 0, NULL), GB_EINVAL);
}

/* AJ-25: the whole class table for User Analysis, N_j for other shares. */
static void test_aj25_site_weight(void **state)
{
	(void)state;
	const double nj = 12;
	static const struct {
		enum an_task_class cls;
		double hi, mid, lo; /* -1 eps1, -2 eps2, 0 N_j */
	} table[] = {
		{AN_CLASS_S, 0, -1, -2},
		{AN_CLASS_A, 0, -1, -2},
		{AN_CLASS_B, -2, 0, -1},
		{AN_CLASS_C, -2, -1, 0},
	};
	const enum an_site_class sites[] = {AN_SITE_HI, AN_SITE_MID,
					    AN_SITE_LO};
	assert_true(AN_EPS1 > AN_EPS2 && AN_EPS2 > 0);
	for (size_t i = 0; i < N(table); i++) {
		const double cell[] = {table[i].hi, table[i].mid, table[i].lo};
		for (size_t s = 0; s < N(sites); s++) {
			double want = cell[s] == -1   ? AN_EPS1
				      : cell[s] == -2 ? AN_EPS2
						      : nj;
			double got = an_weight_site(1, table[i].cls, sites[s],
						    nj);
			if (got != want)
				fail_msg("AJ-25 class %d site %d: %g, "
					 "expected %g",
					 (int)table[i].cls, (int)sites[s], got,
					 want);
			/* other shares ignore both classifications */
			assert_near(an_weight_site(0, table[i].cls, sites[s],
						   nj),
				    nj, 0);
		}
	}
	assert_true(isnan(an_weight_site(1, (enum an_task_class)9,
					 AN_SITE_HI, nj)));
	assert_true(isnan(an_weight_site(1, AN_CLASS_A,
					 (enum an_site_class)5, nj)));
	assert_true(isnan(an_weight_site(0, AN_CLASS_A, AN_SITE_HI, -1)));
}

/* AJ-26: W_q by hand, the floor and the refused inputs. */
static void test_aj26_queue_weight(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		double mql[3], nqu[3];
		size_t n;
		double nj;
		double wq[3];
	} rows[] = {
		/* room 40, 20, 20; denominator 80 - 12 = 68; N_j / N_PQ = 4 */
		{"AJ-26 three queues",
		 {50, 30, 20},
		 {10, 10, 0},
		 3,
		 12,
		 {36.0 / 68, 16.0 / 68, 16.0 / 68}},
		/* one queue: (40 - 12) / (40 - 12) */
		{"AJ-26 one queue", {50}, {10}, 1, 12, {1}},
		/* no jobs: the share of the room */
		{"AJ-26 no jobs", {50, 30}, {10, 10}, 2, 0, {40.0 / 60, 20.0 / 60}},
		/* queue 0 at its length: -6 / 38 floored; (50 - 6) / 38 */
		{"AJ-26 floor of a full queue",
		 {10, 50},
		 {10, 0},
		 2,
		 12,
		 {AN_WQ_FLOOR, 44.0 / 38}},
		/* room 10 < N_j 12: negative denominator, all floored */
		{"AJ-26 negative denominator",
		 {5, 5},
		 {0, 0},
		 2,
		 12,
		 {AN_WQ_FLOOR, AN_WQ_FLOOR}},
		/* room 12 = N_j: zero denominator, all floored */
		{"AJ-26 zero denominator",
		 {6, 6},
		 {0, 0},
		 2,
		 12,
		 {AN_WQ_FLOOR, AN_WQ_FLOOR}},
		/* a user over max_q_len counts its negative room (seed) */
		{"AJ-26 negative room counted",
		 {50, 10},
		 {10, 20},
		 2,
		 4,
		 {38.0 / 26, AN_WQ_FLOOR}},
	};
	for (size_t r = 0; r < N(rows); r++)
		for (size_t i = 0; i < rows[r].n; i++) {
			double w = -1;
			int rc = an_weight_queue(rows[r].mql, rows[r].nqu,
						 rows[r].n, i, rows[r].nj, &w);
			if (rc != GB_OK)
				fail_msg("%s[%zu]: rc %d", rows[r].name, i, rc);
			assert_near(w, rows[r].wq[i], EPS);
		}
	const double mql[] = {50, 30}, nqu[] = {10, 10};
	const double neg[] = {-1, 10};
	double w;
	assert_int_equal(an_weight_queue(mql, nqu, 0, 0, 1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(mql, nqu, 2, 2, 1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(NULL, nqu, 2, 0, 1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(mql, NULL, 2, 0, 1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(mql, nqu, 2, 0, 1, NULL), GB_EINVAL);
	assert_int_equal(an_weight_queue(mql, nqu, 2, 0, -1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(neg, nqu, 2, 1, 1, &w), GB_EINVAL);
	assert_int_equal(an_weight_queue(mql, neg, 2, 0, 1, &w), GB_EINVAL);
}

/* AJ-27: the new weight by default, the original when the parameter is 0. */
static void test_aj27_weight_choice(void **state)
{
	(void)state;
	static const struct prm_kv off[] = {{"USE_NEW_BASIC_WEIGHT", 0}};
	static const struct prm_kv on[] = {{"USE_NEW_BASIC_WEIGHT", 1}};
	static const struct prm_kv back[] = {{"USE_NEW_BASIC_WEIGHT", 0},
					     {"USE_NEW_BASIC_WEIGHT", 1}};
	static const struct {
		const char *name;
		const struct prm_kv *kv;
		size_t n;
		int want;
	} rows[] = {
		{"AJ-27 default new", NULL, 0, 1},
		{"AJ-27 set 0", off, N(off), 0},
		{"AJ-27 set 1", on, N(on), 1},
		{"AJ-27 last override wins", back, N(back), 1},
	};
	for (size_t i = 0; i < N(rows); i++) {
		struct prm_set set = set_of(rows[i].kv, rows[i].n);
		if (an_use_new_weight(&set) != rows[i].want)
			fail_msg("%s: expected %d", rows[i].name, rows[i].want);
	}
	assert_int_equal(an_use_new_weight(NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aj02_user_caps),
		cmocka_unit_test(test_aj01_group_caps),
		cmocka_unit_test(test_aj02_unset_caps),
		cmocka_unit_test(test_aj03_quota),
		cmocka_unit_test(test_aj04_share_classes),
		cmocka_unit_test(test_aj04_invalid),
		cmocka_unit_test(test_aj21_aj23_stabilizer),
		cmocka_unit_test(test_aj21_aj23_parameters),
		cmocka_unit_test(test_aj21_stabilizer_invalid),
		cmocka_unit_test(test_aj21_trr_window),
		cmocka_unit_test(test_aj24_original_weight),
		cmocka_unit_test(test_aj25_site_weight),
		cmocka_unit_test(test_aj26_queue_weight),
		cmocka_unit_test(test_aj27_weight_choice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
