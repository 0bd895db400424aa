/*
** test_jobbroker_weights.c — the weighing and distribution half of the
** production job brokerage (PJ-28..PJ-36) with the rules' numbers, the
** stage chain, input validation, and many random grids checked against
** the invariants every decision must keep.
**
** Same fixture as test_jobbroker.c (jbfixture.h): queues that pass every
** filter, so what a test changes reaches the weights, caps, best-10 cut
** and the per-job draws unfiltered.
*/
#include "jbfixture.h"

/* ---- PJ-28 .. PJ-32: weights -------------------------------------------- */

/* PJ-28: numSlots counts cores, so a job takes the queue's coreCount of
** them (the task's at a coreCount 0 queue): max(numSlots / cores,
** running); numSlots 0 adds the starting jobs. The case: an 8-core
** queue with numSlots 800 counts 100 running, not 800. */
static void test_pj28_running_count(void **state)
{
	(void)state;
	struct jb_params p;
	jb_params_resolve(NULL, "MC Simul", &p);
	struct jb_task t = {0};
	static const struct {
		long prio;
		double running, nbatch, starting;
		long slots, qcores, tcores;
		double want;
	} cases[] = {
		{100, 5, 0, 0, -1, 1, 1, 5},
		{100, 5, 12, 0, -1, 1, 1, 12},   /* bootstrap from batch jobs */
		{100, 5, 50, 0, -1, 1, 1, 20},   /* min(nBatchJob, 20) */
		{100, 25, 50, 0, -1, 1, 1, 25},  /* running >= 20: no bootstrap */
		{100, 5, 3, 0, -1, 1, 1, 5},     /* nBatchJob not above running */
		{100, 5, 0, 0, 30, 1, 1, 30},    /* numSlots > 0, 1 core */
		{100, 50, 0, 0, 30, 1, 1, 50},
		/* 8 cores: 800 slots are 100 jobs; running decides either side */
		{100, 5, 0, 0, 800, 8, 8, 100},
		{100, 99, 0, 0, 800, 8, 8, 100},
		{100, 101, 0, 0, 800, 8, 8, 101},
		{100, 5, 0, 0, 801, 8, 8, 100.125}, /* not rounded */
		/* coreCount 0 (unified): the task's cores */
		{100, 5, 0, 0, 800, 0, 8, 100},
		{100, 5, 0, 0, 800, 0, 1, 800},
		/* numSlots 0: running + starting, not the max */
		{100, 5, 0, 8, 0, 1, 1, 13},
		{100, 10, 0, 8, 0, 1, 1, 18},
		{100, 5, 12, 8, 0, 1, 1, 20},    /* bootstrap 12, then + 8 */
		{100, 5, 0, 8, -1, 1, 1, 5},     /* numSlots unset: no starting */
		{150, 5, 12, 0, 30, 1, 1, 30},   /* at MAX_PRIO_TO_BOOTSTRAP */
		{150, 5, 0, 0, 800, 8, 8, 100},
		{151, 5, 12, 8, 30, 1, 1, 5},    /* above: real running only */
		{151, 5, 12, 8, 0, 1, 1, 5},
		{151, 5, 0, 0, 800, 8, 8, 5},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jb_queue q = {0};
		t.priority = cases[i].prio;
		t.core_count = cases[i].tcores;
		q.core_count = cases[i].qcores;
		q.counts.running = cases[i].running;
		q.counts.nbatchjob = cases[i].nbatch;
		q.counts.starting = cases[i].starting;
		q.num_slots = cases[i].slots;
		double got = jb_running(&q, &t, &p);
		if (got != cases[i].want)
			fail_msg("PJ-28 case %zu: %g, expected %g", i, got,
				 cases[i].want);
	}
}

/* PJ-28 through PJ-33: the cap an 8-core queue with numSlots 800 gets is
** max(NQUEUELIMITSITE 20, 2 x 100) = 200, so 201 activated drop it and
** 200 do not (it was 1600 when numSlots counted jobs). */
static void test_pj28_num_slots_cap(void **state)
{
	(void)state;
	static const struct {
		double activated;
		int dropped;
	} cases[] = {{200, 0}, {201, 1}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		f->t.core_count = 8;
		f->t.priority = 100; /* <= MAX_PRIO_TO_BOOTSTRAP: slots count */
		struct jb_queue *q = fx_add(f, "MCORE");
		q->core_count = 8;
		q->num_slots = 800;
		q->counts.running = 40;
		q->counts.activated = cases[i].activated;
		fx_run(f, 1);
		if (!cases[i].dropped) {
			assert_alive(f, "MCORE");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "MCORE", "PJ-33", "cap");
			assert_near(r->v[0], 201, 0);
			assert_near(r->v[1], 200, 0);
			assert_near(r->v[3], 100, 0);
		}
		free(f);
	}
}

/* PJ-33 / PJ-34 / PJ-36 for express tasks (PJ-27's: urgent or priority
** >= 1000): no cap at all, as in PanDA. A queue with 10 running has the
** cap max(NQUEUELIMITSITE 20, 2 x 10) = 20: 30 activated drop it for
** priority 999 (PJ-33), and so do 25 defined + 1 activated (PJ-34); at
** 1000, or urgent, it stays and takes all 5 jobs, where 19 activated
** would have left it room for one (PJ-36). */
static void test_pj33_pj36_express_uncapped(void **state)
{
	(void)state;
	static const struct {
		long prio;
		const char *ptype;
		double activated, defined;
		const char *rule; /* NULL: kept */
		size_t placed;
	} cases[] = {
		{999, "simul", 30, 0, "PJ-33", 0},
		{1000, "simul", 30, 0, NULL, 5},
		{500, "urgent", 30, 0, NULL, 5},
		{999, "simul", 1, 25, "PJ-34", 0},
		{1000, "simul", 1, 25, NULL, 5},
		{500, "urgent", 1, 25, NULL, 5},
		{999, "simul", 1, 19, NULL, 5}, /* PJ-34 counts 20: not over */
		{999, "simul", 19, 0, NULL, 1},
		{1000, "simul", 19, 0, NULL, 5},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		f->t.priority = cases[i].prio;
		f->t.processing_type = cases[i].ptype;
		fx_jobs(f, 5);
		struct jb_queue *q = fx_add(f, "SMALL");
		q->nucleus = "NUC"; /* PJ-08 keeps priority >= 800 there */
		q->counts.running = 10;
		q->counts.activated = cases[i].activated;
		q->counts.defined = cases[i].defined;
		fx_run(f, 1);
		if (cases[i].rule != NULL) {
			const struct dec_reason *r =
				assert_dropped(f, "SMALL", cases[i].rule, "cap");
			assert_near(r->v[0],
				    cases[i].activated + cases[i].defined, 0);
			assert_near(r->v[1], 20, 0);
		} else {
			assert_alive(f, "SMALL");
		}
		if (f->plan.nassigned != cases[i].placed)
			fail_msg("express case %zu: %zu placed, expected %zu", i,
				 f->plan.nassigned, cases[i].placed);
		int express = cases[i].prio >= 1000 ||
			      strcmp(cases[i].ptype, "urgent") == 0;
		assert_int_equal(strstr(f->d.note, "no PJ-33/PJ-34/PJ-36 cap") !=
					 NULL,
				 express);
		/* the code and the numbers compared */
		if (express) {
			char want[96];
			snprintf(want, sizeof(want),
				 "express [express_uncapped] (priority %ld %s "
				 "1000",
				 cases[i].prio, cases[i].prio >= 1000 ? ">=" : "<");
			if (strstr(f->d.note, want) == NULL)
				fail_msg("express case %zu: note '%s' lacks '%s'",
					 i, f->d.note, want);
		}
		free(f);
	}
}

/* PJ-29 / PJ-30 */
static void test_pj29_pj30_base_weight(void **state)
{
	(void)state;
	struct jb_counts k = {0};
	/* PJ-30: an empty queue: manyAssigned (0+1)/(0+1) = 1, (0+1)/10. */
	assert_near(jb_base_weight(&k, 0, 0), 0.1, 1e-12);
	k = (struct jb_counts){.activated = 10, .assigned = 5, .starting = 2,
			       .defined = 3};
	/* manyAssigned clamp(6/11) = 1: 101/(10+5+2+3+10) */
	assert_near(jb_base_weight(&k, 100, 0), 101.0 / 30, 1e-12);
	/* PJ-29: input local: assigned dropped: 101/(10+2+3+10) */
	assert_near(jb_base_weight(&k, 100, 1), 101.0 / 25, 1e-12);
	/* manyAssigned (29+1)/(9+1) = 3, clamped to 2 */
	k = (struct jb_counts){.activated = 9, .assigned = 29};
	assert_near(jb_base_weight(&k, 100, 0), 101.0 / (48 * 2), 1e-12);
	/* manyAssigned (14+1)/(9+1) = 1.5 */
	k = (struct jb_counts){.activated = 9, .assigned = 14};
	assert_near(jb_base_weight(&k, 100, 0), 101.0 / (33 * 1.5), 1e-12);
}

/* PJ-31 */
static void test_pj31_data_factor(void **state)
{
	(void)state;
	assert_near(jb_data_factor(0, 0, 0), 1, 0); /* no input */
	assert_near(jb_data_factor(100, 100, 0), 2, 1e-12);
	assert_near(jb_data_factor(0, 100, 0), 1, 1e-12);
	assert_near(jb_data_factor(50, 100, 50), 150.0 / (100 * 1.5), 1e-12);
	assert_near(jb_data_factor(0, 100, 100), 0.5, 1e-12);
}

/* PJ-32 */
static void test_pj32_weight_and_explanation(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *q = fx_add(f, "Q");
	q->counts = (struct jb_counts){.running = 100, .activated = 10,
				       .assigned = 5, .starting = 2,
				       .defined = 3};
	q->local_size = 50;
	q->missing_size = 50;
	q->missing_files = 50;
	f->link[0].closeness = 0; /* nw 0.5 x 2 + 0.5 x 2 = 2 */
	f->t.total_input_gb = 100;
	double base = 101.0 / 30, data = 150.0 / 150;
	fx_run(f, 1);
	const struct dec_candidate *c = cand(f, "Q");
	/* PJ-32: NW_ACTIVE off: reported, not multiplied. */
	assert_near(c->weight, base * data, 1e-12);
	assert_string_equal(c->wexpl.rule, "PJ-30");
	assert_near(c->wexpl.v[0], base, 1e-12);
	assert_near(c->wexpl.v[1], data, 1e-12);
	assert_near(c->wexpl.v[2], 2, 1e-12);
	assert_near(c->wexpl.v[3], base * data, 1e-12);
	assert_reason_text(&c->wexpl,
			   "(running+1)/(queued+10)/manyAssigned 3.367 x data "
			   "1 (network 2, not applied) = 3.367");

	fx_param(f, "NW_ACTIVE", 1);
	fx_run(f, 1);
	c = cand(f, "Q");
	assert_near(c->weight, base * data * 2, 1e-12);
	assert_near(c->wexpl.v[3], base * data * 2, 1e-12);
	assert_stage(f, "weight", 1, 1);
	free(f);
}

/* ---- PJ-33 / PJ-34 / MIN_WEIGHT ----------------------------------------- */

/* PJ-33 / PJ-34 */
static void test_pj33_pj34_caps(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	/* running 10: cap = max(NQUEUELIMITSITE 20, 2 x 10) = 20 */
	struct jb_queue *a = fx_add(f, "AT_CAP");
	a->counts = (struct jb_counts){.running = 10, .activated = 15,
				       .starting = 5};
	struct jb_queue *b = fx_add(f, "OVER");
	b->counts = (struct jb_counts){.running = 10, .activated = 16,
				       .starting = 5};
	struct jb_queue *c = fx_add(f, "EMPTY"); /* the floor lets it start */
	c->counts = (struct jb_counts){0};
	struct jb_queue *d = fx_add(f, "BIG"); /* cap 2 x 100 = 200 */
	d->counts = (struct jb_counts){.running = 100, .activated = 200};
	/* PJ-34: defined + activated + assigned + starting */
	struct jb_queue *e = fx_add(f, "TOTAL_OVER");
	e->counts = (struct jb_counts){.running = 10, .defined = 5,
				       .activated = 10, .assigned = 6};
	e->missing_files = 1; /* input not local: assigned counts */
	e->missing_size = 0.1;
	struct jb_queue *g = fx_add(f, "TOTAL_LOCAL");
	g->counts = e->counts; /* input local: assigned ignored, 15 */
	fx_run(f, 1);
	assert_alive(f, "AT_CAP");
	const struct dec_reason *r = assert_dropped(f, "OVER", "PJ-33", "cap");
	assert_near(r->v[0], 21, 0);
	assert_near(r->v[1], 20, 0);
	assert_near(r->v[2], 20, 0);
	assert_near(r->v[3], 10, 0);
	assert_alive(f, "EMPTY");
	assert_alive(f, "BIG");
	r = assert_dropped(f, "TOTAL_OVER", "PJ-34", "cap");
	assert_near(r->v[0], 21, 0);
	assert_near(r->v[1], 20, 0);
	assert_alive(f, "TOTAL_LOCAL");
	assert_stage(f, "queue cap", 6, 5);
	assert_stage(f, "queue limit", 5, 4);
	/* The weight breakdown stays for a queue the caps dropped. */
	assert_string_equal(cand(f, "OVER")->wexpl.rule, "PJ-30");

	/* NQUEUELIMITSITE per gshare raises the floor. */
	fx_param(f, "NQUEUELIMITSITE_MC Simul", 25);
	fx_run(f, 1);
	assert_alive(f, "OVER");
	assert_alive(f, "TOTAL_OVER");
	free(f);
}

/* PJ-35 */
static void test_pj35_min_weight(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "HEAVY")->counts.running = 100; /* 101/10 */
	fx_add(f, "LIGHT")->counts.running = 3;   /* 4/10 */
	fx_param(f, "MIN_WEIGHT", 0.5);
	fx_run(f, 1);
	assert_alive(f, "HEAVY");
	const struct dec_reason *r =
		assert_dropped(f, "LIGHT", "PJ-35", "below_min_weight");
	assert_near(r->v[0], 0.4, 1e-12);
	assert_near(r->v[1], 0.5, 0);
	assert_stage(f, "min weight", 2, 1);
	free(f);
}

/* ---- PJ-35: best 10 and pending ----------------------------------------- */

/* PJ-35 */
static void test_pj35_best_ten_of_fifteen(void **state)
{
	(void)state;
	static const char *const names[15] = {
		"Q00", "Q01", "Q02", "Q03", "Q04", "Q05", "Q06", "Q07",
		"Q08", "Q09", "Q10", "Q11", "Q12", "Q13", "Q14"};
	struct fx *f = fx_new();
	/* Running 10 x i: weights rise with the index; Q07 and Q08 tie. */
	for (int i = 0; i < 15; i++)
		fx_add(f, names[i])->counts.running = 10.0 * i;
	f->q[7].counts.running = 80;
	fx_run(f, 1);
	assert_int_equal(f->plan.nbest, 10);
	/* Best first: Q14 .. Q07 then Q08 (tie: lower index first), Q06. */
	static const long want[10] = {14, 13, 12, 11, 10, 9, 7, 8, 6, 5};
	for (int i = 0; i < 10; i++)
		assert_int_equal(f->plan.best[i], want[i]);
	for (int i = 0; i < 5; i++) {
		const struct dec_reason *r =
			assert_dropped(f, names[i], "PJ-35", "not_best");
		assert_near(r->v[0], (10.0 * i + 1) / 10, 1e-12);
		assert_near(r->v[1], 10, 0);
		assert_near(r->v[2], 51.0 / 10, 1e-12);
	}
	assert_stage(f, "best 10", 15, 10);
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	assert_int_equal(f->d.chosen, 14);
	assert_int_equal(f->d.retry_after_s, 0);
	free(f);
}

/* PJ-35 */
static void test_pj35_pending_when_nothing_left(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "OFF")->status = "offline";
	fx_add(f, "FULL")->storage_free = 0;
	f->t.njobs = 3;
	f->jobs[1] = (struct jb_job){2, 1000, 100, 1};
	f->jobs[2] = (struct jb_job){3, 1000, 100, 1};
	fx_run(f, 1);
	assert_int_equal(f->d.outcome, DEC_PENDING);
	assert_int_equal(f->d.chosen, -1);
	assert_int_equal(f->d.retry_after_s, 3600);
	assert_int_equal(f->plan.nbest, 0);
	assert_int_equal(f->plan.nassigned, 0);
	for (int j = 0; j < 3; j++) {
		assert_int_equal(f->plan.job_queue[j], -1);
		assert_int_equal(f->plan.job_status[j], JB_JOB_UNASSIGNED);
	}
	assert_stage(f, "best 10", 0, 0);
	assert_stage(f, "distribution", 0, 0);
	assert_non_null(strstr(f->d.note, "PJ-35"));

	/* No queue at all: pending too. */
	f->n = 0;
	fx_run(f, 1);
	assert_int_equal(f->d.outcome, DEC_PENDING);
	free(f);
}

/* ---- PJ-36: distribution ------------------------------------------------ */

/* PJ-36 */
static void test_pj36_even_split_of_equal_queues(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "A")->counts.running = 1000; /* cap 2000 */
	fx_add(f, "B")->counts.running = 1000;
	fx_jobs(f, 1000);
	fx_run(f, 42);
	assert_int_equal(f->plan.nassigned, 1000);
	int per[MAXQ];
	count_per_queue(f, per);
	assert_int_equal(per[0] + per[1], 1000);
	/* Moving counts pull the draw back towards balance: far tighter
	** than independent draws would be. */
	assert_in_range(per[0], 450, 550);
	for (size_t j = 0; j < 1000; j++)
		assert_int_equal(f->plan.job_status[j], JB_JOB_ACTIVATED);
	assert_stage(f, "distribution", 2, 2);
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	free(f);
}

/* PJ-36 */
static void test_pj36_heavier_queue_gets_more(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "BIG")->counts.running = 3000;
	fx_add(f, "SMALL")->counts.running = 1000;
	fx_jobs(f, 1000);
	fx_run(f, 7);
	int per[MAXQ];
	count_per_queue(f, per);
	/* Each draw is proportional to (R+1)/(activated+10), so da/db =
	** (R_a b)/(R_b a) and a^2/b^2 -> R_a/R_b: BIG's share tends to
	** sqrt(3)/(sqrt(3)+1) = 63.4%, not 3/4 (weights move with counts). */
	assert_in_range(per[0], 600, 670);
	assert_int_equal(per[0] + per[1], 1000);
	free(f);
}

/* PJ-36 */
static void test_pj36_cap_stops_a_queue(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	/* running 5: cap max(20, 10) = 20; already 12 activated + 3 starting */
	struct jb_queue *a = fx_add(f, "SMALL");
	a->counts = (struct jb_counts){.running = 5, .activated = 12,
				       .starting = 3};
	/* input not local: assigned counts; 20 - 0 = room for 20 */
	struct jb_queue *b = fx_add(f, "REMOTE");
	b->counts = (struct jb_counts){.running = 5};
	b->missing_files = 2;
	b->missing_size = 0.2;
	fx_jobs(f, 100);
	fx_run(f, 3);
	int per[MAXQ];
	count_per_queue(f, per);
	assert_int_equal(per[0], 5);  /* 12 + 3 + 5 = 20 */
	assert_int_equal(per[1], 20); /* 0 + 20 assigned = 20 */
	assert_int_equal(f->plan.nassigned, 25);
	size_t unassigned = 0;
	for (size_t j = 0; j < 100; j++) {
		long qi = f->plan.job_queue[j];
		if (qi < 0) {
			unassigned++;
			assert_int_equal(f->plan.job_status[j],
					 JB_JOB_UNASSIGNED);
		} else {
			assert_int_equal(f->plan.job_status[j],
					 qi == 0 ? JB_JOB_ACTIVATED
						 : JB_JOB_ASSIGNED);
		}
	}
	assert_int_equal(unassigned, 75);
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	free(f);
}

/* PJ-36 */
static void test_pj36_pending_when_every_best_is_at_cap(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *a = fx_add(f, "FULL");
	/* 20 queued = cap 20: passes PJ-33 (not > cap), accepts nothing. */
	a->counts = (struct jb_counts){.running = 5, .activated = 20};
	fx_jobs(f, 4);
	fx_run(f, 1);
	assert_int_equal(f->plan.nbest, 1);
	assert_int_equal(f->plan.nassigned, 0);
	assert_int_equal(f->d.outcome, DEC_PENDING);
	assert_int_equal(f->d.retry_after_s, 3600);
	assert_int_equal(f->d.chosen, -1);
	assert_string_equal(f->d.note, "PJ-36: every best queue is at its cap");
	assert_stage(f, "distribution", 1, 0);
	free(f);
}

/* PJ-36 */
static void test_pj36_same_seed_same_plan(void **state)
{
	(void)state;
	static const char *const names[6] = {"A", "B", "C", "D", "E", "F"};
	struct fx *f = fx_new();
	for (int i = 0; i < 6; i++)
		fx_add(f, names[i])->counts.running = 100.0 + 50 * i;
	fx_jobs(f, 500);
	fx_run(f, 99);
	long first[500];
	memcpy(first, f->plan.job_queue, sizeof(first));
	fx_run(f, 99);
	assert_memory_equal(first, f->plan.job_queue, sizeof(first));
	/* A different seed gives some other plan. */
	fx_run(f, 100);
	assert_true(memcmp(first, f->plan.job_queue, sizeof(first)) != 0);
	free(f);
}

/* ---- stages, errors ----------------------------------------------------- */

static void test_stage_chain_and_summary_line(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "A");
	fx_add(f, "B")->status = "offline";
	fx_add(f, "C")->storage_free = 10;
	struct jb_queue *d = fx_add(f, "D");
	d->core_count = 4;
	d->max_rss_per_core = 100;
	f->t.core_count = 4;
	fx_run(f, 1);
	/* Every filter row is a stage, in table order, then the rest. */
	size_t nrows = 0;
	while (jb_filters[nrows].name)
		nrows++;
	/* weight, queue cap, queue limit, min weight, best 10, distribution */
	assert_int_equal(f->d.nstages, nrows + 6);
	for (size_t i = 0; i < nrows; i++) {
		assert_string_equal(f->d.stages[i].name, jb_filters[i].name);
		assert_string_equal(f->d.stages[i].rule, jb_filters[i].rule);
	}
	assert_int_equal(f->d.stages[0].in, 4);
	for (size_t i = 1; i < f->d.nstages - 1; i++)
		assert_int_equal(f->d.stages[i].in, f->d.stages[i - 1].out);
	assert_stage(f, "status", 4, 3);
	assert_stage(f, "memory", 3, 2);
	assert_stage(f, "space", 2, 1);
	char buf[128];
	dec_stage_format(stage(f, "memory"), buf, sizeof(buf));
	assert_string_equal(buf, "    3 ->   2 candidates,  33% cut : memory");
	free(f);
}

static void test_invalid_inputs(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "A");
	fx_run(f, 1);
	assert_int_equal(jb_broker(NULL, f->q, 1, &f->p, &f->env, &f->rng,
				   f->cands, &f->d, &f->plan),
			 GB_EINVAL);
	assert_int_equal(jb_broker(&f->t, NULL, 1, &f->p, &f->env, &f->rng,
				   f->cands, &f->d, &f->plan),
			 GB_EINVAL);

	f->q[0].counts.activated = -1;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->q[0].counts.activated = 0;
	f->q[0].missing_size = NAN;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->q[0].missing_size = 0;
	f->q[0].corepower = 0;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->q[0].corepower = 10;
	f->t.cpu_efficiency = 0;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->t.cpu_efficiency = 90;
	f->jobs[0].input_mb = NAN;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->jobs[0].input_mb = 100;
	f->t.njobs = 0;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->t.njobs = 1;
	f->t.core_count = 0;
	assert_int_equal(fx_try(f, 1), GB_EINVAL);
	f->t.core_count = 1;
	f->plan.job_queue = NULL;
	assert_int_equal(jb_broker(&f->t, f->q, 1, &f->p, &f->env, &f->rng,
				   f->cands, &f->d, &f->plan),
			 GB_EINVAL);
	fx_run(f, 1);
	assert_string_equal(jb_job_status_name(JB_JOB_ASSIGNED), "assigned");
	assert_string_equal(jb_job_status_name(JB_JOB_ACTIVATED), "activated");
	assert_string_equal(jb_job_status_name(JB_JOB_UNASSIGNED),
			    "unassigned");
	free(f);
}

/* ---- randomized invariants ---------------------------------------------- */

static const char *const rnd_names[MAXQ] = {
	"R00", "R01", "R02", "R03", "R04", "R05", "R06", "R07", "R08", "R09",
	"R10", "R11", "R12", "R13", "R14", "R15", "R16", "R17", "R18", "R19",
	"R20", "R21", "R22", "R23", "R24", "R25", "R26", "R27", "R28", "R29",
	"R30", "R31", "R32", "R33", "R34", "R35", "R36", "R37", "R38", "R39",
	"R40", "R41", "R42", "R43", "R44", "R45", "R46", "R47", "R48", "R49",
	"R50", "R51", "R52", "R53", "R54", "R55", "R56", "R57", "R58", "R59",
	"R60", "R61", "R62", "TEST63"};

static double rnd_count(struct gb_rng *g, double max)
{
	return (double)gb_rng_below(g, (uint64_t)max + 1);
}

static void random_grid(struct fx *f, struct gb_rng *g)
{
	static const char *const status[] = {"online", "online", "online",
					     "offline", "brokeroff"};
	static const char *const nuclei[] = {"", "", "NUC", "NUC2"};
	static const char *const conns[] = {"", "full", "http#IPv4",
					    "none#IPv6"};
	size_t n = (size_t)gb_rng_below(g, MAXQ + 1);
	f->n = 0;
	for (size_t i = 0; i < n; i++) {
		struct jb_queue *q = fx_add(f, rnd_names[i]);
		q->status = status[gb_rng_below(g, 5)];
		q->nucleus = nuclei[gb_rng_below(g, 4)];
		q->core_count = (long)gb_rng_below(g, 3) * 4; /* 0, 4, 8 */
		q->max_rss_per_core = rnd_count(g, 4) * 1000;
		q->maxwdir = rnd_count(g, 3) * 10000;
		q->maxtime = rnd_count(g, 2) * 100000;
		q->wnconnectivity = conns[gb_rng_below(g, 4)];
		q->storage_free = rnd_count(g, 2000);
		q->storage_blacklisted = gb_rng_below(g, 20) == 0;
		q->last_pilot = NOW - (long long)rnd_count(g, 14000);
		q->counts.running = rnd_count(g, 300);
		q->counts.activated = rnd_count(g, 200);
		q->counts.assigned = rnd_count(g, 50);
		q->counts.starting = rnd_count(g, 10);
		q->counts.defined = rnd_count(g, 20);
		q->counts.transferring = rnd_count(g, 2500);
		q->counts.nbatchjob = rnd_count(g, 40);
		q->num_slots = (long)gb_rng_below(g, 4) - 1;
		q->missing_files = (long)rnd_count(g, 3);
		q->missing_size = (double)q->missing_files * 2;
		q->local_size = rnd_count(g, 20);
		q->link_blocked = gb_rng_below(g, 20) == 0;
		f->link[i].queued_files = rnd_count(g, 200);
		f->link[i].closeness = rnd_count(g, 11);
	}
	f->t.priority = (long)rnd_count(g, 1100);
	f->t.core_count = gb_rng_below(g, 2) ? 1 : 4;
	f->t.scout = gb_rng_below(g, 10) == 0;
	f->t.ip_connectivity = gb_rng_below(g, 2) ? "" : "http";
	f->t.total_input_gb = 20;
	fx_jobs(f, 1 + (size_t)gb_rng_below(g, 200));
}

static void check_invariants(const struct fx *f)
{
	size_t nalive = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct dec_candidate *c = &f->cands[i];
		assert_string_equal(c->name, f->q[i].name);
		if (dec_dropped(c)) {
			assert_true(isnan(c->weight));
			assert_true(c->nreasons >= 1);
			assert_non_null(c->reasons[0].rule);
			assert_non_null(c->reasons[0].code);
			assert_non_null(c->stage);
		} else {
			assert_true(isfinite(c->weight) && c->weight > 0);
			assert_string_equal(c->wexpl.rule, "PJ-30");
			nalive++;
		}
	}
	/* The stage chain: each stage starts where the previous ended. */
	assert_int_equal(f->d.stages[0].in, (int)f->n);
	for (size_t s = 1; s < f->d.nstages; s++)
		assert_int_equal(f->d.stages[s].in, f->d.stages[s - 1].out);
	assert_int_equal(stage(f, "best 10")->out, (int)nalive);
	assert_int_equal(nalive, f->plan.nbest);
	/* The best list holds exactly the survivors, best first. */
	for (size_t b = 0; b < f->plan.nbest; b++) {
		long qi = f->plan.best[b];
		assert_in_range(qi, 0, (long)f->n - 1);
		assert_false(dec_dropped(&f->cands[qi]));
		if (b > 0)
			assert_true(f->cands[f->plan.best[b - 1]].weight >=
				    f->cands[qi].weight);
	}
	size_t assigned = 0;
	for (size_t j = 0; j < f->t.njobs; j++) {
		long qi = f->plan.job_queue[j];
		if (qi < 0) {
			assert_int_equal(f->plan.job_status[j],
					 JB_JOB_UNASSIGNED);
			continue;
		}
		assigned++;
		int in_best = 0;
		for (size_t b = 0; b < f->plan.nbest; b++)
			in_best |= f->plan.best[b] == qi;
		assert_true(in_best);
		assert_int_equal(f->plan.job_status[j],
				 f->q[qi].missing_files == 0
					 ? JB_JOB_ACTIVATED
					 : JB_JOB_ASSIGNED);
	}
	assert_int_equal(assigned, f->plan.nassigned);
	if (f->plan.nassigned > 0) {
		assert_int_equal(f->d.outcome, DEC_ASSIGNED);
		assert_int_equal(f->d.chosen, f->plan.best[0]);
	} else {
		assert_int_equal(f->d.outcome, DEC_PENDING);
		assert_int_equal(f->d.retry_after_s, 3600);
	}
}

static void test_random_grids_keep_invariants(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct gb_rng g;
	gb_rng_seed(&g, 20240601);
	int assigned = 0, pending = 0;
	for (int it = 0; it < 1500; it++) {
		random_grid(f, &g);
		fx_run(f, (uint64_t)it);
		check_invariants(f);
		if (f->d.outcome == DEC_ASSIGNED)
			assigned++;
		else
			pending++;
	}
	/* The generator exercises both outcomes. */
	assert_true(assigned > 100);
	assert_true(pending > 10);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pj28_running_count),
		cmocka_unit_test(test_pj28_num_slots_cap),
		cmocka_unit_test(test_pj33_pj36_express_uncapped),
		cmocka_unit_test(test_pj29_pj30_base_weight),
		cmocka_unit_test(test_pj31_data_factor),
		cmocka_unit_test(test_pj32_weight_and_explanation),
		cmocka_unit_test(test_pj33_pj34_caps),
		cmocka_unit_test(test_pj35_min_weight),
		cmocka_unit_test(test_pj35_best_ten_of_fifteen),
		cmocka_unit_test(test_pj35_pending_when_nothing_left),
		cmocka_unit_test(test_pj36_even_split_of_equal_queues),
		cmocka_unit_test(test_pj36_heavier_queue_gets_more),
		cmocka_unit_test(test_pj36_cap_stops_a_queue),
		cmocka_unit_test(test_pj36_pending_when_every_best_is_at_cap),
		cmocka_unit_test(test_pj36_same_seed_same_plan),
		cmocka_unit_test(test_stage_chain_and_summary_line),
		cmocka_unit_test(test_invalid_inputs),
		cmocka_unit_test(test_random_grids_keep_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
