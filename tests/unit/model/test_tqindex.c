/*
** test_tqindex.c — the worker's task queue index (worker/model/tqindex.h).
**
** Interning, TQ put/replace/remove, the per-level job orders, the
** statistics for pr_recompute and the pilot's resource are checked with
** small tables. The job orders are then checked against a reference model
** (one sorted array per (TQ, UserPriority)) over thousands of random adds
** and removals with a fixed seed, draining every level at the end so the
** whole order is compared and not only the ten lowest ids the views show.
** Last, the index feeds tq_match (TQ-07, TQ-08): every chosen job must be
** one of the ten lowest of a level of a matching TQ, and once removed it is
** never chosen again.
*/
#include "gbtest.h"

#include <stdlib.h>

#include "gb_error.h"
#include "rng.h"
#include "taskqueue.h"
#include "model/tqindex.h"

#define NPRIO (TQ_MAX_PRIORITY - TQ_MIN_PRIORITY + 1)

/* Put a TQ with only a site set (the other sets empty). */
static int put_tq(struct tqi_index *x, long long id, const char *owner,
		  const char *group, long long cpu, const char **sites,
		  size_t nsites, double prio)
{
	struct tq_strset set[TQ_NFIELDS];
	memset(set, 0, sizeof(set));
	set[TQ_F_SITES].v = sites;
	set[TQ_F_SITES].n = nsites;
	return tqi_tq_put(x, id, owner, group, "LHCb-Production", cpu, set,
			  prio);
}

/* The view of tq_id, failing the test when absent. */
static const struct tq_view *view(const struct tqi_index *x, long long id)
{
	size_t n;
	const struct tq_view *v = tqi_views(x, &n);
	for (size_t i = 0; i < n; i++)
		if (v[i].tq_id == id)
			return &v[i];
	fail_msg("TQ %lld not in the views", id);
	return NULL;
}

/* Views strictly ascending by tq_id, njobs the sum of the levels', every
** level non-empty with min(njobs, TQ_PICK_FROM) ascending lowest ids. */
static void check_views(const struct tqi_index *x)
{
	size_t n, total = 0;
	const struct tq_view *v = tqi_views(x, &n);
	assert_non_null(v);
	assert_int_equal(n, tqi_ntqs(x));
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(v[i - 1].tq_id < v[i].tq_id);
		size_t sum = 0;
		for (size_t l = 0; l < v[i].nlevels; l++) {
			const struct tq_level *lv = &v[i].levels[l];
			assert_true(lv->njobs > 0);
			size_t want = lv->njobs < TQ_PICK_FROM ? lv->njobs
							       : TQ_PICK_FROM;
			assert_int_equal(lv->nlowest, want);
			for (size_t k = 1; k < lv->nlowest; k++)
				assert_true(lv->lowest[k - 1] < lv->lowest[k]);
			for (size_t m = 0; m < l; m++)
				assert_int_not_equal(v[i].levels[m].user_priority,
						     lv->user_priority);
			sum += lv->njobs;
		}
		assert_int_equal(v[i].njobs, sum);
		assert_int_equal(tqi_tq_njobs(x, v[i].tq_id), sum);
		total += sum;
	}
	assert_int_equal(tqi_njobs(x), total);
}

/* ---- interning ------------------------------------------------------------ */

static void test_intern(void **state)
{
	(void)state;
	static const char *const words[] = {
		"/DC=ch/CN=alice", "lhcb_user", "LCG.CERN.ch", "", "LCG.CERN.c",
		"LCG.CERN.ch ", "x86_64-el9", "lhcb_user", "LCG.CERN.ch", ""};
	/* ids in first-seen order; repeats get the earlier id */
	static const uint32_t want[] = {0, 1, 2, 3, 4, 5, 6, 1, 2, 3};
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	assert_int_equal(tqi_lookup(x, "LCG.CERN.ch"), TQ_ID_UNKNOWN);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t id = tqi_intern(x, words[i]);
		assert_int_equal(id, want[i]);
		assert_int_equal(tqi_lookup(x, words[i]), id);
		assert_string_equal(tqi_name(x, id), words[i]);
	}
	assert_int_equal(tqi_lookup(x, "LCG.PIC.es"), TQ_ID_UNKNOWN);
	assert_int_equal(tqi_lookup(x, NULL), TQ_ID_UNKNOWN);
	assert_null(tqi_name(x, 7));
	assert_null(tqi_name(x, TQ_ID_UNKNOWN));
	/* Past several table growths every id still maps back. */
	char buf[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "site-%d", i);
		assert_int_equal(tqi_intern(x, buf), (uint32_t)(7 + i));
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "site-%d", i);
		assert_int_equal(tqi_lookup(x, buf), (uint32_t)(7 + i));
		assert_string_equal(tqi_name(x, (uint32_t)(7 + i)), buf);
	}
	assert_int_equal(tqi_lookup(x, "lhcb_user"), 1);
	tqi_free(x);
}

/* ---- task queues ---------------------------------------------------------- */

static void test_tq_put_sorted_sets(void **state)
{
	(void)state;
	static const long long order[] = {42, 7, 1000, 3, 19, 8, 1};
	const char *sites[] = {"LCG.PIC.es", "LCG.CERN.ch", "LCG.PIC.es",
			       "LCG.RAL.uk", "LCG.CERN.ch"};
	const char *plat[] = {"el9", "el8", "el9"};
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct tq_strset set[TQ_NFIELDS];
		memset(set, 0, sizeof(set));
		set[TQ_F_SITES] = (struct tq_strset){sites, 5};
		set[TQ_F_PLATFORMS] = (struct tq_strset){plat, 3};
		assert_int_equal(tqi_tq_put(x, order[i], "/CN=a", "g", "s",
					    500 * (long long)(i + 1), set, 1.5),
				 GB_OK);
		check_views(x);
		assert_true(tqi_tq_has(x, order[i]));
		assert_int_equal(tqi_seq(x, order[i]), 0);
	}
	assert_int_equal(tqi_ntqs(x), 7);
	const struct tq_view *v = view(x, 1000);
	assert_int_equal(v->cpu_time, 1500);
	assert_near(v->priority, 1.5, 1e-12);
	assert_string_equal(tqi_name(x, v->owner), "/CN=a");
	assert_string_equal(tqi_name(x, v->owner_group), "g");
	assert_string_equal(tqi_name(x, v->setup), "s");
	/* sites: 3 distinct, ascending ids, the right names */
	static const char *const want_sites[] = {"LCG.CERN.ch", "LCG.PIC.es",
						 "LCG.RAL.uk"};
	assert_int_equal(v->set[TQ_F_SITES].n, 3);
	int seen[3] = {0};
	for (size_t k = 0; k < 3; k++) {
		if (k > 0)
			assert_true(v->set[TQ_F_SITES].v[k - 1] <
				    v->set[TQ_F_SITES].v[k]);
		const char *nm = tqi_name(x, v->set[TQ_F_SITES].v[k]);
		for (int w = 0; w < 3; w++)
			seen[w] += strcmp(nm, want_sites[w]) == 0;
	}
	assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
	assert_int_equal(v->set[TQ_F_PLATFORMS].n, 2);
	assert_int_equal(v->set[TQ_F_BANNED_SITES].n, 0);
	assert_int_equal(v->set[TQ_F_GRID_CES].n, 0);

	/* Replace: new owner and sets, jobs and seq stay. */
	assert_int_equal(tqi_job_add(x, 19, 5, 1), GB_OK);
	assert_int_equal(tqi_job_add(x, 19, 4, 3), GB_OK);
	assert_int_equal(tqi_set_seq(x, 19, 77), GB_OK);
	assert_int_equal(tqi_set_rm_seq(x, 19, 41), GB_OK);
	const char *ce[] = {"ce2.cern.ch", "ce1.cern.ch"};
	struct tq_strset set2[TQ_NFIELDS];
	memset(set2, 0, sizeof(set2));
	set2[TQ_F_GRID_CES] = (struct tq_strset){ce, 2};
	assert_int_equal(tqi_tq_put(x, 19, "/CN=b", "g2", "s", 86400, set2, 9),
			 GB_OK);
	check_views(x);
	v = view(x, 19);
	assert_string_equal(tqi_name(x, v->owner), "/CN=b");
	assert_int_equal(v->cpu_time, 86400);
	assert_int_equal(v->set[TQ_F_SITES].n, 0);
	assert_int_equal(v->set[TQ_F_GRID_CES].n, 2);
	assert_true(v->set[TQ_F_GRID_CES].v[0] < v->set[TQ_F_GRID_CES].v[1]);
	assert_int_equal(v->njobs, 2);
	assert_int_equal(tqi_seq(x, 19), 77);
	assert_int_equal(tqi_rm_seq(x, 19), 41); /* the two are apart */
	assert_int_equal(tqi_ntqs(x), 7);

	/* A NULL set pointer is "no requirement at all". */
	assert_int_equal(tqi_tq_put(x, 8, "/CN=a", "g", "s", 5, NULL, 0), GB_OK);
	for (int f = 0; f < TQ_NFIELDS; f++)
		assert_int_equal(view(x, 8)->set[f].n, 0);

	/* Remove keeps the rest sorted, and its jobs leave the totals. */
	static const long long gone[] = {3, 1000, 19, 1};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(tqi_tq_remove(x, gone[i]), GB_OK);
		assert_false(tqi_tq_has(x, gone[i]));
		assert_int_equal(tqi_tq_remove(x, gone[i]), GB_ENOTFOUND);
		check_views(x);
	}
	assert_int_equal(tqi_ntqs(x), 3);
	assert_int_equal(tqi_njobs(x), 0);
	assert_int_equal(tqi_tq_njobs(x, 19), 0);
	tqi_free(x);
}

static void test_tq_errors(void **state)
{
	(void)state;
	const char *bad[] = {"LCG.CERN.ch", NULL};
	struct tq_strset nullv[TQ_NFIELDS], nullstr[TQ_NFIELDS];
	memset(nullv, 0, sizeof(nullv));
	memset(nullstr, 0, sizeof(nullstr));
	nullv[TQ_F_PLATFORMS].n = 2; /* v NULL with n > 0 */
	nullstr[TQ_F_SITES] = (struct tq_strset){bad, 2};
	const struct {
		const char *name;
		long long id;
		const char *owner, *group, *setup;
		const struct tq_strset *set;
		double prio;
		int want;
	} cases[] = {
		{"tq_id 0", 0, "o", "g", "s", NULL, 1, GB_EINVAL},
		{"tq_id < 0", -4, "o", "g", "s", NULL, 1, GB_EINVAL},
		{"owner NULL", 1, NULL, "g", "s", NULL, 1, GB_EINVAL},
		{"group NULL", 1, "o", NULL, "s", NULL, 1, GB_EINVAL},
		{"setup NULL", 1, "o", "g", NULL, NULL, 1, GB_EINVAL},
		{"set v NULL", 1, "o", "g", "s", nullv, 1, GB_EINVAL},
		{"set string NULL", 1, "o", "g", "s", nullstr, 1, GB_EINVAL},
		{"priority NaN", 1, "o", "g", "s", NULL, NAN, GB_EINVAL},
		{"priority inf", 1, "o", "g", "s", NULL, INFINITY, GB_EINVAL},
	};
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = tqi_tq_put(x, cases[i].id, cases[i].owner,
				    cases[i].group, cases[i].setup, 500,
				    cases[i].set, cases[i].prio);
		if (rc != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].name, rc,
				 cases[i].want);
	}
	assert_int_equal(tqi_ntqs(x), 0);
	/* nothing half-interned by the refused puts */
	assert_int_equal(tqi_lookup(x, "LCG.CERN.ch"), TQ_ID_UNKNOWN);
	assert_null(tqi_name(x, 0));

	assert_int_equal(tqi_set_priority(x, 5, 1), GB_ENOTFOUND);
	assert_int_equal(tqi_seq(x, 5), GB_ENOTFOUND);
	assert_int_equal(tqi_set_seq(x, 5, 1), GB_ENOTFOUND);
	assert_int_equal(tqi_rm_seq(x, 5), GB_ENOTFOUND);
	assert_int_equal(tqi_set_rm_seq(x, 5, 1), GB_ENOTFOUND);
	assert_int_equal(tqi_rm_seq(NULL, 5), GB_EINVAL);
	assert_int_equal(put_tq(x, 5, "o", "g", 500, NULL, 0, 1), GB_OK);
	assert_int_equal(tqi_rm_seq(x, 5), 0);
	assert_int_equal(tqi_set_rm_seq(x, 5, -1), GB_EINVAL);
	assert_int_equal(tqi_set_priority(x, 5, NAN), GB_EINVAL);
	assert_int_equal(tqi_set_seq(x, 5, -1), GB_EINVAL);
	assert_int_equal(tqi_set_priority(x, 5, 0.25), GB_OK);
	assert_near(view(x, 5)->priority, 0.25, 1e-12);

	const struct {
		const char *name;
		long long tq, job;
		int prio, want;
	} jobs[] = {
		{"job id 0", 5, 0, 1, GB_EINVAL},
		{"job id < 0", 5, -3, 1, GB_EINVAL},
		{"priority below", 5, 1, TQ_MIN_PRIORITY - 1, GB_EINVAL},
		{"priority above", 5, 1, TQ_MAX_PRIORITY + 1, GB_EINVAL},
		{"absent TQ", 6, 1, 1, GB_ENOTFOUND},
		{"lowest priority", 5, 1, TQ_MIN_PRIORITY, GB_OK},
		{"highest priority", 5, 2, TQ_MAX_PRIORITY, GB_OK},
		{"again, other priority", 5, 2, 3, GB_OK},
	};
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		int rc = tqi_job_add(x, jobs[i].tq, jobs[i].job, jobs[i].prio);
		if (rc != jobs[i].want)
			fail_msg("%s: got %d, want %d", jobs[i].name, rc,
				 jobs[i].want);
	}
	assert_int_equal(tqi_njobs(x), 2);
	assert_int_equal(view(x, 5)->nlevels, 2); /* no level 3 appeared */
	assert_int_equal(tqi_job_remove(x, 6, 1), GB_ENOTFOUND);
	assert_int_equal(tqi_job_remove(x, 5, 3), GB_ENOTFOUND);
	assert_int_equal(tqi_job_remove(x, 5, 0), GB_ENOTFOUND);
	tqi_free(x);
}

/* ---- levels --------------------------------------------------------------- */

static void test_levels_appear_and_go(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	assert_int_equal(put_tq(x, 1, "o", "g", 500, NULL, 0, 1), GB_OK);
	/* op: +job (prio) or -job; then the expected (priority, njobs) list */
	const struct {
		long long job;
		int prio; /* -1: remove */
		size_t nlevels;
		int lvprio[3];
		size_t lvjobs[3];
	} steps[] = {
		{10, 2, 1, {2}, {1}},
		{11, 2, 1, {2}, {2}},
		{12, 7, 2, {2, 7}, {2, 1}},
		{13, 0, 3, {0, 2, 7}, {1, 2, 1}},
		{12, -1, 2, {0, 2}, {1, 2}},
		{10, -1, 2, {0, 2}, {1, 1}},
		{11, -1, 1, {0}, {1}},
		{14, 7, 2, {0, 7}, {1, 1}},
		{13, -1, 1, {7}, {1}},
		{14, -1, 0, {0}, {0}},
	};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int rc = steps[i].prio < 0
				 ? tqi_job_remove(x, 1, steps[i].job)
				 : tqi_job_add(x, 1, steps[i].job,
					       steps[i].prio);
		assert_int_equal(rc, GB_OK);
		check_views(x);
		const struct tq_view *v = view(x, 1);
		assert_int_equal(v->nlevels, steps[i].nlevels);
		for (size_t l = 0; l < steps[i].nlevels; l++) {
			/* any order is allowed; find the level */
			size_t k = 0;
			while (k < v->nlevels &&
			       v->levels[k].user_priority != steps[i].lvprio[l])
				k++;
			assert_true(k < v->nlevels);
			assert_int_equal(v->levels[k].njobs, steps[i].lvjobs[l]);
		}
	}
	assert_true(tqi_tq_has(x, 1)); /* an empty TQ stays */
	tqi_free(x);
}

/* Ascending adds, lowest removals, then adds below the lowest (the gap
** before the first id), with the ten lowest checked at every step. */
static void test_lowest_through_gap(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	assert_int_equal(put_tq(x, 9, "o", "g", 500, NULL, 0, 1), GB_OK);
	for (long long id = 1; id <= 1000; id++)
		assert_int_equal(tqi_job_add(x, 9, id, 4), GB_OK);
	for (long long id = 1; id <= 990; id++) {
		const struct tq_level *lv = &view(x, 9)->levels[0];
		assert_int_equal(lv->lowest[0], id);
		assert_int_equal(lv->nlowest, 10);
		assert_int_equal(tqi_job_remove(x, 9, id), GB_OK);
	}
	const struct tq_level *lv = &view(x, 9)->levels[0];
	assert_int_equal(lv->njobs, 10);
	for (size_t k = 0; k < 10; k++)
		assert_int_equal(lv->lowest[k], 991 + (long long)k);
	for (long long id = 500; id >= 1; id--) {
		assert_int_equal(tqi_job_add(x, 9, id, 4), GB_OK);
		lv = &view(x, 9)->levels[0];
		assert_int_equal(lv->lowest[0], id);
		long long want_last = id + 9 <= 500 ? id + 9 : 991 + (id + 9 - 501);
		assert_int_equal(lv->lowest[9], want_last);
	}
	assert_int_equal(tqi_tq_njobs(x, 9), 510);
	/* a middle removal and the ids around it */
	assert_int_equal(tqi_job_remove(x, 9, 5), GB_OK);
	lv = &view(x, 9)->levels[0];
	static const long long want[] = {1, 2, 3, 4, 6, 7, 8, 9, 10, 11};
	for (size_t k = 0; k < 10; k++)
		assert_int_equal(lv->lowest[k], want[k]);
	tqi_free(x);
}

/* ---- reference model ------------------------------------------------------ */

#define M_TQS 4
#define M_MAXID 6000

static const long long m_tq_ids[M_TQS] = {7, 3, 42, 19};

struct model {
	long long ids[M_TQS][NPRIO][M_MAXID]; /* ascending */
	size_t n[M_TQS][NPRIO];
};

/* Priority level holding job in TQ t, or -1. */
static int model_find(const struct model *m, int t, long long job, size_t *pos)
{
	for (int p = 0; p < NPRIO; p++)
		for (size_t i = 0; i < m->n[t][p]; i++)
			if (m->ids[t][p][i] == job) {
				*pos = i;
				return p;
			}
	return -1;
}

static void model_check(const struct model *m, const struct tqi_index *x)
{
	check_views(x);
	size_t total = 0;
	for (int t = 0; t < M_TQS; t++) {
		const struct tq_view *v = view(x, m_tq_ids[t]);
		size_t nonempty = 0;
		for (int p = 0; p < NPRIO; p++) {
			size_t n = m->n[t][p];
			if (n == 0)
				continue;
			nonempty++;
			total += n;
			size_t l = 0;
			while (l < v->nlevels &&
			       v->levels[l].user_priority != p + TQ_MIN_PRIORITY)
				l++;
			assert_true(l < v->nlevels);
			const struct tq_level *lv = &v->levels[l];
			assert_int_equal(lv->njobs, n);
			for (size_t k = 0; k < lv->nlowest; k++)
				assert_int_equal(lv->lowest[k], m->ids[t][p][k]);
		}
		assert_int_equal(v->nlevels, nonempty);
	}
	assert_int_equal(tqi_njobs(x), total);
}

/* One random add or removal, applied to both. */
static void model_step(struct model *m, struct tqi_index *x, struct gb_rng *r,
		       int add_pct)
{
	int t = (int)gb_rng_below(r, M_TQS);
	long long tq = m_tq_ids[t];
	if ((int)gb_rng_below(r, 100) < add_pct) {
		/* skewed priorities so that some levels grow long */
		int p = gb_rng_below(r, 10) < 6 ? 1 : (int)gb_rng_below(r, NPRIO);
		long long job = 1 + (long long)gb_rng_below(r, M_MAXID - 1);
		size_t pos;
		assert_int_equal(tqi_job_add(x, tq, job, p + TQ_MIN_PRIORITY),
				 GB_OK);
		if (model_find(m, t, job, &pos) >= 0)
			return; /* idempotent */
		long long *a = m->ids[t][p];
		size_t n = m->n[t][p], i = n;
		while (i > 0 && a[i - 1] > job) {
			a[i] = a[i - 1];
			i--;
		}
		a[i] = job;
		m->n[t][p]++;
		return;
	}
	int p = (int)gb_rng_below(r, NPRIO);
	int kind = (int)gb_rng_below(r, 10);
	long long job;
	if (kind < 3)
		job = 1 + (long long)gb_rng_below(r, M_MAXID - 1); /* any id */
	else if (m->n[t][p] == 0)
		return;
	else if (kind < 7)
		job = m->ids[t][p][0]; /* the lowest: a match's claim */
	else
		job = m->ids[t][p][gb_rng_below(r, m->n[t][p])];
	size_t pos;
	int lp = model_find(m, t, job, &pos);
	int rc = tqi_job_remove(x, tq, job);
	if (lp < 0) {
		assert_int_equal(rc, GB_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, GB_OK);
	memmove(&m->ids[t][lp][pos], &m->ids[t][lp][pos + 1],
		(m->n[t][lp] - pos - 1) * sizeof(long long));
	m->n[t][lp]--;
}

static void test_jobs_against_model(void **state)
{
	(void)state;
	struct model *m = calloc(1, sizeof(*m));
	struct tqi_index *x = tqi_new();
	assert_non_null(m);
	assert_non_null(x);
	for (int t = 0; t < M_TQS; t++)
		assert_int_equal(put_tq(x, m_tq_ids[t], "o", "g", 500, NULL, 0,
					1),
				 GB_OK);
	struct gb_rng r;
	gb_rng_seed(&r, 20260404);
	/* grow, shrink, grow again, shrink to little */
	static const struct {
		int ops, add_pct;
	} phases[] = {{12000, 75}, {12000, 25}, {6000, 60}, {12000, 15}};
	for (size_t ph = 0; ph < sizeof(phases) / sizeof(phases[0]); ph++)
		for (int i = 0; i < phases[ph].ops; i++) {
			model_step(m, x, &r, phases[ph].add_pct);
			model_check(m, x);
		}
	/* Drain every level through its lowest id: the whole order. */
	for (int t = 0; t < M_TQS; t++)
		for (int p = 0; p < NPRIO; p++)
			for (size_t i = 0; i < m->n[t][p]; i++) {
				const struct tq_view *v = view(x, m_tq_ids[t]);
				size_t l = 0;
				while (v->levels[l].user_priority !=
				       p + TQ_MIN_PRIORITY)
					l++;
				assert_int_equal(v->levels[l].lowest[0],
						 m->ids[t][p][i]);
				assert_int_equal(v->levels[l].njobs,
						 m->n[t][p] - i);
				assert_int_equal(
					tqi_job_remove(x, m_tq_ids[t],
						       m->ids[t][p][i]),
					GB_OK);
			}
	check_views(x);
	assert_int_equal(tqi_njobs(x), 0);
	for (int t = 0; t < M_TQS; t++)
		assert_int_equal(view(x, m_tq_ids[t])->nlevels, 0);
	tqi_free(x);
	free(m);
}

/* ---- statistics and the pilot --------------------------------------------- */

static void test_stats(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	assert_int_equal(put_tq(x, 30, "/CN=b", "lhcb_user", 500, NULL, 0, 1),
			 GB_OK);
	assert_int_equal(put_tq(x, 10, "/CN=a", "lhcb_prod", 500, NULL, 0, 1),
			 GB_OK);
	assert_int_equal(put_tq(x, 20, "/CN=a", "lhcb_prod", 500, NULL, 0, 1),
			 GB_OK);
	const struct {
		long long tq, job;
		int prio;
	} jobs[] = {{10, 1, 1}, {10, 2, 1}, {10, 3, 5}, {10, 3, 9},
		    {30, 4, 0}, {30, 5, 0}, {30, 6, 10}, {30, 7, 2}};
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		assert_int_equal(tqi_job_add(x, jobs[i].tq, jobs[i].job,
					     jobs[i].prio),
				 GB_OK);
	struct pr_tq out[3];
	memset(out, 0x5a, sizeof(out)); /* outputs must come back zeroed */
	tqi_stats(x, out);
	const struct {
		long long tq;
		const char *owner, *group;
		long long njobs;
		double prio_sum;
	} want[] = {{10, "/CN=a", "lhcb_prod", 3, 7}, /* 1+1+5; job 3 once */
		    {20, "/CN=a", "lhcb_prod", 0, 0},
		    {30, "/CN=b", "lhcb_user", 4, 12}};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(out[i].tq_id, want[i].tq);
		assert_string_equal(out[i].owner, want[i].owner);
		assert_string_equal(out[i].owner_group, want[i].group);
		assert_int_equal(out[i].njobs, want[i].njobs);
		assert_near(out[i].prio_sum, want[i].prio_sum, 1e-12);
		assert_true(out[i].group_share == 0 && out[i].group_corr == 0 &&
			    out[i].user_corr == 0 && out[i].entity_share == 0 &&
			    out[i].j == 0 && out[i].priority == 0);
	}
	assert_int_equal(tqi_job_remove(x, 30, 6), GB_OK);
	tqi_stats(x, out);
	assert_near(out[2].prio_sum, 2, 1e-12);
	tqi_free(x);
}

/* A list of strings for a tqi_pilot. */
#define L(...)                                                             \
	((struct tq_strset){(const char *[]){__VA_ARGS__},                 \
			    sizeof((const char *[]){__VA_ARGS__}) /        \
				    sizeof(const char *)})

/* tqi_resource: ids sorted and unique, unknown values kept once as
** TQ_ID_UNKNOWN, has[] from absent / ANY, tags absent = none offered. */
static void test_resource(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	const char *sites[] = {"LCG.CERN.ch", "LCG.RAL.uk"};
	assert_int_equal(put_tq(x, 1, "/CN=a", "lhcb_user", 5000, sites, 2, 1),
			 GB_OK);
	uint32_t setup = tqi_lookup(x, "LHCb-Production");
	uint32_t cern = tqi_lookup(x, "LCG.CERN.ch");
	uint32_t ral = tqi_lookup(x, "LCG.RAL.uk");
	uint32_t grp = tqi_lookup(x, "lhcb_user");
	const uint32_t U = TQ_ID_UNKNOWN;
	struct tqi_pilot p;
	memset(&p, 0, sizeof(p));
	p.setup = "LHCb-Production";
	p.cpu_time = 86400;
	p.want[TQ_P_SITE] = L("LCG.RAL.uk", "LCG.PIC.es", "LCG.CERN.ch",
			      "LCG.RAL.uk", "LCG.IN2P3.fr");
	p.any[TQ_P_PLATFORM] = 1;
	p.want[TQ_P_PLATFORM] = L("el9"); /* ignored: ANY */
	p.groups = L("lhcb_user", "lhcb_prod");
	int js[] = {1, 0};
	struct tqi_resource_ids ids;
	struct tq_resource r;
	tqi_resource(x, &p, js, &ids, &r);
	assert_int_equal(r.setup, setup);
	assert_int_equal(r.cpu_time, 86400);
	assert_int_equal(r.has[TQ_P_SITE], 1);
	/* CERN < RAL (interned in that order), then one unknown */
	assert_int_equal(r.want[TQ_P_SITE].n, 3);
	assert_int_equal(r.want[TQ_P_SITE].v[0], cern);
	assert_int_equal(r.want[TQ_P_SITE].v[1], ral);
	assert_int_equal(r.want[TQ_P_SITE].v[2], U);
	assert_int_equal(r.has[TQ_P_PLATFORM], 0);
	assert_int_equal(r.has[TQ_P_GRID_CE], 0); /* absent */
	assert_int_equal(r.has[TQ_P_TAG], 1);	   /* absent: none offered */
	assert_int_equal(r.want[TQ_P_TAG].n, 0);
	assert_int_equal(r.groups.n, 2);
	assert_int_equal(r.groups.v[0], grp);
	assert_int_equal(r.groups.v[1], U);
	assert_int_equal(r.js_groups.n, 1);
	assert_int_equal(r.js_groups.v[0], grp);
	assert_int_equal(r.owners.n, 0);
	/* tags ANY lifts the tag test */
	p.any[TQ_P_TAG] = 1;
	tqi_resource(x, &p, NULL, &ids, &r);
	assert_int_equal(r.has[TQ_P_TAG], 0);
	assert_int_equal(r.js_groups.n, 0);
	/* lookup only: the pilot's strings were not interned */
	assert_int_equal(tqi_lookup(x, "LCG.PIC.es"), TQ_ID_UNKNOWN);
	tqi_free(x);
}

/* ---- the index's cut: the same answer as a full scan ---------------------- */

#define C_TQS 300
#define C_PILOTS 400

static const char *const c_sites[] = {"S0", "S1", "S2", "S3", "S4", "S5"};
static const char *const c_ces[] = {"C0", "C1", "C2"};
static const char *const c_plats[] = {"P0", "P1", "P2", "P3"};
static const char *const c_pts[] = {"T0", "T1"};
static const char *const c_jts[] = {"J0", "J1", "J2"};
static const char *const c_tags[] = {"MP", "GPU", "WN", "8P"};

/* A random subset (possibly empty) of v[0..n) into out. */
static size_t pick(struct gb_rng *r, const char *const *v, size_t n,
		   const char **out, int empty_bias)
{
	size_t k = 0;
	if (gb_rng_below(r, 4) < (uint64_t)empty_bias)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (gb_rng_below(r, 2))
			out[k++] = v[i];
	return k;
}

/* Random TQs (sets, groups, owners, CPU, jobs), then random pilots with
** lists, ANY, tags, required tags, bans and owners: tqi_candidates +
** tq_match_among gives exactly tq_match's result, counts and verdicts,
** and the candidates are exactly the views passing the indexed filters.
** TQs are also removed and re-put on the way, so slots get reused. */
static void test_candidates_equal_full_scan(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	struct gb_rng r;
	gb_rng_seed(&r, 1717);
	static const char *sv[TQ_NFIELDS][8];
	for (long long t = 1; t <= C_TQS; t++) {
		struct tq_strset set[TQ_NFIELDS];
		memset(set, 0, sizeof(set));
		set[TQ_F_SITES].v = sv[TQ_F_SITES];
		set[TQ_F_SITES].n = pick(&r, c_sites, 6, sv[TQ_F_SITES], 1);
		set[TQ_F_BANNED_SITES].v = sv[TQ_F_BANNED_SITES];
		set[TQ_F_BANNED_SITES].n =
			pick(&r, c_sites, 6, sv[TQ_F_BANNED_SITES], 3);
		set[TQ_F_GRID_CES].v = sv[TQ_F_GRID_CES];
		set[TQ_F_GRID_CES].n = pick(&r, c_ces, 3, sv[TQ_F_GRID_CES], 2);
		set[TQ_F_PLATFORMS].v = sv[TQ_F_PLATFORMS];
		set[TQ_F_PLATFORMS].n =
			pick(&r, c_plats, 4, sv[TQ_F_PLATFORMS], 1);
		set[TQ_F_PILOT_TYPES].v = sv[TQ_F_PILOT_TYPES];
		set[TQ_F_PILOT_TYPES].n =
			pick(&r, c_pts, 2, sv[TQ_F_PILOT_TYPES], 3);
		set[TQ_F_JOB_TYPES].v = sv[TQ_F_JOB_TYPES];
		set[TQ_F_JOB_TYPES].n =
			pick(&r, c_jts, 3, sv[TQ_F_JOB_TYPES], 2);
		set[TQ_F_TAGS].v = sv[TQ_F_TAGS];
		set[TQ_F_TAGS].n = pick(&r, c_tags, 4, sv[TQ_F_TAGS], 2);
		const char *owner = gb_rng_below(&r, 2) ? "/CN=a" : "/CN=b";
		const char *group = gb_rng_below(&r, 2) ? "g_user" : "g_prod";
		long long cpu = gb_rng_below(&r, 2) ? 5000 : 50000;
		assert_int_equal(tqi_tq_put(x, t, owner, group,
					    gb_rng_below(&r, 8) ? "Prod" : "Dev",
					    cpu, set,
					    1.0 + (double)gb_rng_below(&r, 5)),
				 GB_OK);
		int nj = (int)gb_rng_below(&r, 4);
		for (int j = 0; j < nj; j++)
			assert_int_equal(tqi_job_add(x, t, t * 100 + j, 1),
					 GB_OK);
		if (t % 37 == 0) /* a slot freed, then reused */
			assert_int_equal(tqi_tq_remove(x, t - 5), GB_OK);
	}
	size_t n;
	tqi_views(x, &n);
	double *w1 = calloc(n, sizeof(double)), *w2 = calloc(n, sizeof(double));
	uint8_t *v1 = calloc(n, 1), *v2 = calloc(n, 1);
	assert_true(w1 && w2 && v1 && v2);
	size_t cut_total = 0, matched = 0;
	for (int k = 0; k < C_PILOTS; k++) {
		static const char *pw[TQ_NPFIELDS][8], *pb[TQ_NPFIELDS][8],
			*preq[8];
		struct tqi_pilot p;
		memset(&p, 0, sizeof(p));
		p.setup = "Prod";
		p.cpu_time = gb_rng_below(&r, 2) ? 86400 : 10000;
		const char *const *vals[TQ_NPFIELDS] = {c_sites, c_ces, c_plats,
							c_pts, c_jts, c_tags};
		const size_t nv[TQ_NPFIELDS] = {6, 3, 4, 2, 3, 4};
		for (int f = 0; f < TQ_NPFIELDS; f++) {
			p.want[f].v = pw[f];
			p.want[f].n = pick(&r, vals[f], nv[f], pw[f], 1);
			p.any[f] = gb_rng_below(&r, 6) == 0;
			p.banned[f].v = pb[f];
			p.banned[f].n = pick(&r, vals[f], nv[f], pb[f], 3);
		}
		if (gb_rng_below(&r, 3) == 0) {
			p.required.v = preq;
			p.required.n = pick(&r, c_tags, 4, preq, 1);
		}
		if (gb_rng_below(&r, 3) == 0) {
			static const char *g[] = {"g_user"}, *o[] = {"/CN=a"};
			p.groups = (struct tq_strset){g, 1};
			if (gb_rng_below(&r, 2))
				p.owners = (struct tq_strset){o, 1};
		}
		int js[1] = {(int)gb_rng_below(&r, 2)};
		struct tqi_resource_ids ids;
		struct tq_resource res;
		tqi_resource(x, &p, js, &ids, &res);
		const struct tq_view *views = tqi_views(x, &n);
		struct gb_rng g1, g2;
		gb_rng_seed(&g1, (uint64_t)k);
		gb_rng_seed(&g2, (uint64_t)k);
		struct tq_result a, b;
		assert_int_equal(tq_match(views, n, &res, &g1, w1, v1, &a), GB_OK);
		const size_t *cand;
		size_t ncand, cut[TQ_NFILTERS];
		memset(v2, 0xee, n);
		assert_int_equal(tqi_candidates(x, &res, &cand, &ncand, cut, v2),
				 GB_OK);
		/* the candidates are exactly the views passing the indexed
		** filters */
		size_t want_cand = 0;
		for (size_t i = 0; i < n; i++)
			want_cand += v1[i] >= TQ_FL_NINDEXED;
		assert_int_equal(ncand, want_cand);
		assert_int_equal(tq_match_among(views, n, cand, ncand, cut, &res,
						&g2, w2, v2, &b),
				 GB_OK);
		assert_int_equal(a.chosen, b.chosen);
		assert_int_equal(a.level, b.level);
		assert_true(a.job_id == b.job_id);
		assert_int_equal(a.in, b.in);
		assert_int_equal(a.matched, b.matched);
		assert_int_equal(a.empty, b.empty);
		assert_int_equal(a.entrants, b.entrants);
		assert_true(a.lottery_total == b.lottery_total);
		for (int f = 0; f < TQ_NFILTERS; f++)
			assert_int_equal(a.rejected[f], b.rejected[f]);
		assert_memory_equal(v1, v2, n);
		cut_total += n - ncand;
		matched += a.chosen >= 0;
	}
	/* the pilots exercised both sides: cuts and matches */
	assert_true(cut_total > (size_t)C_PILOTS * 10);
	assert_true(matched > C_PILOTS / 10);
	free(w1);
	free(w2);
	free(v1);
	free(v2);
	tqi_free(x);
}

/* ---- with the engine: tq_match over the views ----------------------------- */

#define E_TQS 24

static void test_match_end_to_end(void **state)
{
	(void)state;
	struct tqi_index *x = tqi_new();
	assert_non_null(x);
	const char *cern[] = {"LCG.CERN.ch"};
	const char *pic[] = {"LCG.PIC.es"};
	const char *both[] = {"LCG.PIC.es", "LCG.CERN.ch"};
	struct gb_rng r;
	gb_rng_seed(&r, 4242);
	/* TQs: a mix of sites and CPU times; some cannot match the pilot */
	for (long long t = 1; t <= E_TQS; t++) {
		const char **s = t % 3 == 0 ? cern : t % 3 == 1 ? pic : both;
		size_t ns = t % 3 == 2 ? 2 : 1;
		long long cpu = t % 4 == 0 ? 300000 : t % 2 ? 5000 : 50000;
		assert_int_equal(put_tq(x, t * 10, "/CN=u", "lhcb_user", cpu,
					s, ns, 1.0 + (double)(t % 5)),
				 GB_OK);
		int njobs = (int)(t % 7) * 9; /* some TQs empty */
		for (int j = 0; j < njobs; j++)
			assert_int_equal(tqi_job_add(x, t * 10,
						     t * 10000 + 1 +
							     (long long)gb_rng_below(&r, 5000),
						     (int)gb_rng_below(&r, 4)),
					 GB_OK);
	}
	/* The pilot: at CERN, 86400 s; TQs at 300000 never match it. */
	const char *site = "LCG.CERN.ch";
	struct tq_resource res;
	struct tqi_pilot pp;
	memset(&pp, 0, sizeof(pp));
	pp.setup = "LHCb-Production";
	pp.cpu_time = 86400;
	pp.want[TQ_P_SITE] = (struct tq_strset){&site, 1};
	struct tqi_resource_ids ids;
	tqi_resource(x, &pp, NULL, &ids, &res);
	size_t nmatchable = 0;
	{
		size_t n;
		const struct tq_view *v = tqi_views(x, &n);
		for (size_t i = 0; i < n; i++)
			if (tq_check(&v[i], &res) < 0)
				nmatchable += v[i].njobs;
	}
	assert_true(nmatchable > 50);
	long long *taken = calloc(nmatchable + 1, sizeof(*taken));
	assert_non_null(taken);
	size_t ntaken = 0;
	double weights[E_TQS];
	uint8_t verdict[E_TQS];
	for (;;) {
		size_t n;
		const struct tq_view *v = tqi_views(x, &n);
		struct tq_result out;
		assert_int_equal(tq_match(v, n, &res, &r, weights, verdict, &out),
				 GB_OK);
		if (out.chosen < 0)
			break;
		assert_true((size_t)out.chosen < n);
		const struct tq_view *cv = &v[out.chosen];
		assert_int_equal(tq_check(cv, &res), -1);
		assert_true(out.level >= 0 && (size_t)out.level < cv->nlevels);
		const struct tq_level *lv = &cv->levels[out.level];
		int among = 0;
		for (size_t k = 0; k < lv->nlowest; k++)
			among += lv->lowest[k] == out.job_id;
		assert_int_equal(among, 1);
		for (size_t k = 0; k < ntaken; k++)
			assert_true(taken[k] != out.job_id);
		assert_true(ntaken < nmatchable);
		taken[ntaken++] = out.job_id;
		assert_int_equal(tqi_job_remove(x, cv->tq_id, out.job_id), GB_OK);
		check_views(x);
	}
	/* Every job the pilot could take was taken, each once. */
	assert_int_equal(ntaken, nmatchable);
	size_t n;
	const struct tq_view *v = tqi_views(x, &n);
	for (size_t i = 0; i < n; i++)
		if (tq_check(&v[i], &res) < 0)
			assert_int_equal(v[i].njobs, 0);
	assert_true(tqi_njobs(x) > 0); /* the others are untouched */
	free(taken);
	tqi_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_tq_put_sorted_sets),
		cmocka_unit_test(test_tq_errors),
		cmocka_unit_test(test_levels_appear_and_go),
		cmocka_unit_test(test_lowest_through_gap),
		cmocka_unit_test(test_jobs_against_model),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_resource),
		cmocka_unit_test(test_candidates_equal_full_scan),
		cmocka_unit_test(test_match_end_to_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
