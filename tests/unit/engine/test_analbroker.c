/*
** test_analbroker.c — the analysis job brokerage (AJ-05..AJ-20, AJ-24..
** AJ-28) with the rules' numbers.
**
** The fixture is a grid where every queue passes every rule: a filter row
** of the table changes the one attribute a rule reads on one copy of the
** base queue and checks that the base survives and the copy is dropped
** with the rule ID, the reason code and the numbers compared. Boundary
** tests walk the limits the seed gives; the weight tests recompute a
** 3-queue example by hand; the AJ-28 tests cover the locality retry, the
** 20-minute pending and the best 10 with ties by name.
*/
#include "gbtest.h"

#include <stdlib.h>

#include "analbroker.h"
#include "analysis.h"
#include "gb_error.h"

#define MAXQ 32
#define NOW 1700000000LL

struct fx {
	struct jb_queue jq[MAXQ];
	struct ab_queue q[MAXQ];
	size_t n;
	struct jb_job jobs[2];
	struct jb_task jt;
	struct ab_task t;
	struct prm_kv kv[8];
	struct prm_set set;
	struct dec_candidate cands[MAXQ];
	struct dec_decision d;
	struct ab_plan plan;
	struct rc_need need;
};

/* A task that fits the base queue: one job of 1000 events, class A user
** analysis, 10 jobs to submit. */
static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->jt.task_id = 42000001;
	f->jt.gshare = "User Analysis";
	f->jt.priority = 1000;
	f->jt.io_intensity = 100;
	f->jt.core_count = 1;
	f->jt.ram_count = 2000;
	f->jt.cpu_time = 300;
	f->jt.cpu_efficiency = 90;
	f->jt.base_time = 600;
	f->jt.jobs = f->jobs;
	f->jt.njobs = 1;
	f->jobs[0] = (struct jb_job){4200000001LL, 1000, 1000, 2};
	f->t.t = &f->jt;
	f->t.task_priority = 1000;
	f->t.ram_per_core = 1;
	f->t.input_disk_count = 1000;
	f->t.out_disk_ratio = 0.5;
	f->t.user_analysis = 1;
	f->t.task_class = AN_CLASS_A;
	f->t.nj = 10;
	f->t.grand_ratio = 1; /* AJ-11: as many queued as running */
	f->set.kv = f->kv;
	return f;
}

/* A queue that passes every rule: online analysis queue, 100 running,
** a short queue (nQ 10 < BASE_QUEUE_LENGTH_PER_PQ: never throttled). */
static struct ab_queue *fx_add(struct fx *f, const char *name)
{
	size_t i = f->n++;
	assert_true(i < MAXQ);
	struct jb_queue *jq = &f->jq[i];
	memset(jq, 0, sizeof(*jq));
	jq->name = name;
	jq->status = "online";
	jq->site = name;
	jq->nucleus = "";
	jq->corepower = 10;
	jq->wnconnectivity = "";
	jq->max_diskio = NAN;
	jq->num_slots = -1;
	jq->last_pilot = NOW - 120;
	jq->storage = "SCRATCHDISK";
	jq->storage_free = 1000;
	jq->counts.running = 100;
	struct ab_queue *q = &f->q[i];
	memset(q, 0, sizeof(*q));
	q->q = jq;
	q->type = AB_QT_ANALYSIS;
	q->site_class = AN_SITE_HI;
	q->load = (struct an_queue_load){10, 100, 0, 0, 10, 5};
	return q;
}

/* The writable production view of an analysis queue of the fixture. */
static struct jb_queue *jq_of(struct fx *f, const struct ab_queue *q)
{
	return &f->jq[q - f->q];
}

static void fx_param(struct fx *f, const char *name, double v)
{
	f->kv[f->set.n++] = (struct prm_kv){name, v};
}

static void fx_run(struct fx *f)
{
	assert_int_equal(ab_broker(&f->t, f->q, f->n, &f->set, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_OK);
}

static const struct dec_candidate *cand(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->d.ncands; i++)
		if (strcmp(f->cands[i].name, name) == 0)
			return &f->cands[i];
	fail_msg("no candidate %s", name);
	return NULL;
}

static void assert_alive(const struct fx *f, const char *name)
{
	const struct dec_candidate *c = cand(f, name);
	if (dec_dropped(c))
		fail_msg("%s dropped by %s (%s)", name, c->reasons[0].rule,
			 c->reasons[0].code);
	assert_true(isfinite(c->weight) && c->weight > 0);
}

static const struct dec_reason *assert_dropped(const struct fx *f,
					       const char *name,
					       const char *rule,
					       const char *code)
{
	const struct dec_candidate *c = cand(f, name);
	if (!dec_dropped(c))
		fail_msg("%s survived, expected %s/%s", name, rule, code);
	assert_true(isnan(c->weight));
	const struct dec_reason *r = &c->reasons[0];
	if (strcmp(r->rule, rule) != 0 || strcmp(r->code, code) != 0)
		fail_msg("%s dropped by %s/%s, expected %s/%s", name, r->rule,
			 r->code, rule, code);
	return r;
}

static void assert_stage(const struct fx *f, const char *name, int in,
			 int out)
{
	for (size_t i = 0; i < f->d.nstages; i++) {
		const struct dec_stage *s = &f->d.stages[i];
		if (strcmp(s->name, name) != 0)
			continue;
		if (s->in != in || s->out != out)
			fail_msg("stage %s: %d -> %d, expected %d -> %d", name,
				 s->in, s->out, in, out);
		return;
	}
	fail_msg("no stage %s", name);
}

/* ---- one row per filter ------------------------------------------------- */

static const char *const excl_mod[] = {"MOD"};
static const char *const rel_22[] = {"22.0.1"};

struct filter_case {
	const char *rule;
	const char *code;
	const char *stage;
	void (*modify)(struct fx *f, struct ab_queue *q, struct jb_queue *jq);
	double v[4]; /* the numbers of the reason */
};

static void m_type(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)jq;
	q->type = AB_QT_PRODUCTION;
}
static void m_excluded(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)q, (void)jq;
	f->t.excluded_sites = excl_mod;
	f->t.nexcluded = 1;
}
static void m_status(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->status = "brokeroff";
}
static void m_locality(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->missing_files = 2; /* both of the job's 2 files */
	jq->missing_size = 2.5;
}
static void m_diskio(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)q;
	f->jt.diskio = 700;
	jq->diskio_avg = 600;
	jq->max_diskio = 500;
}
static void m_cores(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->core_count = 8;
}
static void m_avoid_vp(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)jq;
	q->is_vp = 1;
	f->t.avoid_vp = 1;
}
static void m_cache(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)q;
	f->need.sw_project = "Athena";
	f->need.sw_version = "21.0.38";
	f->jt.sw = &f->need;
	jq->releases = JB_REL_LIST;
	jq->release_list = rel_22;
	jq->nrelease_list = 1;
}
static void m_memory(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->max_rss_per_core = 1000;
}
static void m_disk(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->maxwdir = 1000;
}
static void m_space(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->storage_free = 200;
}
static void m_blacklist(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->storage_blacklisted = 1;
}
static void m_walltime(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->maxtime = 1000;
}
static void m_pilot(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->last_pilot = NOW - 10801;
}
static void m_bad_jobs(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)jq;
	q->task_failed = 3;
	q->task_closed = 2;
}
static void m_queued(struct fx *f, struct ab_queue *q, struct jb_queue *jq)
{
	(void)f, (void)q;
	jq->counts.activated = 201;
}
static void m_user_queue(struct fx *f, struct ab_queue *q,
			 struct jb_queue *jq)
{
	(void)f, (void)jq;
	q->load = (struct an_queue_load){1000, 100, 0, 50, 10, 5};
}

/* clang-format off */
static const struct filter_case filter_cases[] = {
	{"AJ-05", "type", "type", m_type, {0, 0, 0, 0}},
	{"AJ-06", "excluded", "sites", m_excluded, {1, 0, 0, 0}},
	{"AJ-07", "status", "status", m_status, {0, 0, 0, 0}},
	{"AJ-08", "locality", "locality", m_locality, {0, 90, 2, 2}},
	{"AJ-09", "diskIO", "disk io", m_diskio, {700, 600, 500, 700}},
	{"AJ-10", "cpucore", "core count", m_cores, {8, 1, 0, 0}},
	{"AJ-11", "avoid_vp", "vp", m_avoid_vp, {0, 0, 0, 0}},
	{"AJ-12", "cache", "software", m_cache, {1, 0, 0, 0}},
	/* (0 + 2000 x 1) x 0.9 = 1800 MB > 1000 MB x 1 core */
	{"AJ-13", "highmemory", "memory", m_memory, {1800, 1000, 1, 0}},
	/* 1000 input + 0.5 x 1000 output + 0 work = 1500 MB >= 1000 / 1 */
	{"AJ-14", "disk", "disk", m_disk, {1500, 1000, 1, 0}},
	{"AJ-15", "space", "storage", m_space, {200, 200, 0, 0}},
	{"AJ-15", "blacklist", "storage", m_blacklist, {0, 0, 0, 0}},
	/* 300 x 1000 / (1 x 10 x 0.9) + 600 s */
	{"AJ-16", "longwalltime", "walltime", m_walltime,
	 {300.0 * 1000 / 9 + 600, 1000, 1000, 1}},
	{"AJ-17", "nopilot", "pilot", m_pilot, {10801, 10800, 0, 0}},
	/* 3 + 2 >= max(2 x 0, 5), TW_DONE_JOB_STAT 6 h */
	{"AJ-18", "badjobs", "bad jobs", m_bad_jobs, {5, 0, 5, 6}},
	{"AJ-19", "cap_rt", "queued", m_queued, {201, 20, 100, 200}},
	/* nQ_max max(100, 2 x 100) = 200, x max(10/100, 1/5) = 40 */
	{"AJ-20", "user_queue", "user queue", m_user_queue, {50, 40, 1000, 100}},
};
/* clang-format on */

/* AJ-05..AJ-20 */
static void test_aj05_aj20_each_filter_drops_modified_copy(void **state)
{
	(void)state;
	size_t ncase = sizeof(filter_cases) / sizeof(filter_cases[0]);
	for (size_t k = 0; k < ncase; k++) {
		const struct filter_case *fc = &filter_cases[k];
		struct fx *f = fx_new();
		fx_add(f, "BASE");
		struct ab_queue *mod = fx_add(f, "MOD");
		fc->modify(f, mod, jq_of(f, mod));
		fx_run(f);
		assert_alive(f, "BASE");
		const struct dec_reason *r =
			assert_dropped(f, "MOD", fc->rule, fc->code);
		assert_string_equal(cand(f, "MOD")->stage, fc->stage);
		for (int v = 0; v < 4; v++)
			assert_near(r->v[v], fc->v[v], 1e-12);
		assert_stage(f, fc->stage, 2, 1);
		assert_int_equal(f->d.outcome, DEC_ASSIGNED);
		assert_string_equal(f->cands[f->d.chosen].name, "BASE");
		assert_int_equal(f->plan.locality_dropped, 0);
		free(f);
	}
}

/* ---- boundaries --------------------------------------------------------- */

/* AJ-06 */
static void test_aj06_included_excluded_preassigned(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	jq_of(f, fx_add(f, "A"))->site = "SITE_A";
	jq_of(f, fx_add(f, "B"))->site = "SITE_B";
	jq_of(f, fx_add(f, "C"))->site = "SITE_C";
	static const char *const inc[] = {"SITE_A"};
	static const char *const pre[] = {"C"};
	f->t.included_sites = inc;
	f->t.nincluded = 1;
	f->jt.preassigned = pre;
	f->jt.npreassigned = 1;
	fx_run(f);
	assert_alive(f, "A");
	const struct dec_reason *r =
		assert_dropped(f, "B", "AJ-06", "notincluded");
	assert_string_equal(r->str, "SITE_B");
	assert_near(r->v[0], 1, 0);
	assert_near(r->v[1], 1, 0);
	/* AJ-06: a pre-assigned queue counts as included. */
	assert_alive(f, "C");
	assert_stage(f, "sites", 3, 2);

	/* AJ-06: excludedSite wins over includedSite. */
	static const char *const exc[] = {"SITE_A"};
	f->t.excluded_sites = exc;
	f->t.nexcluded = 1;
	fx_run(f);
	assert_dropped(f, "A", "AJ-06", "excluded");
	assert_alive(f, "C");

	/* AJ-06 + AJ-07: the pre-assignment alone restricts and lifts the
	** status check. */
	f->t.nexcluded = 0;
	f->t.nincluded = 0;
	jq_of(f, &f->q[2])->status = "offline";
	fx_run(f);
	assert_dropped(f, "A", "AJ-06", "notincluded");
	assert_alive(f, "C");
	free(f);
}

/* AJ-08: complete enough is at most MAX_MISSING_INPUT_FILES (10) missing
** and at least MIN_INPUT_COMPLETENESS (90 %) there, on both sides of each
** boundary; the parameters move the boundaries. */
static void test_aj08_locality_complete_enough(void **state)
{
	(void)state;
	static const struct {
		long files, missing;
		double max_missing, min_complete; /* NAN: default */
		int dropped;
		double v0, v1; /* missing & max, or completeness & min */
	} cases[] = {
		{100, 0, NAN, NAN, 0, 0, 0},
		{100, 10, NAN, NAN, 0, 0, 0},     /* 10 missing, 90 %: local */
		{100, 11, NAN, NAN, 1, 11, 10},   /* 11 > 10 */
		{50, 5, NAN, NAN, 0, 0, 0},       /* 90 % exactly */
		{50, 6, NAN, NAN, 1, 88, 90},     /* 88 % < 90 % */
		{1000, 10, NAN, NAN, 0, 0, 0},    /* 99 % */
		{1000, 11, NAN, NAN, 1, 11, 10},
		{100, 11, 20, NAN, 1, 89, 90},    /* MAX_MISSING 20: 89 % */
		{100, 11, 20, 89, 0, 0, 0},       /* ... and 89 % enough */
		{100, 11, 20, 95, 1, 89, 95},     /* MIN_COMPLETENESS 95 */
		{100, 1, 0, NAN, 1, 1, 0},        /* zero missing allowed */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *f = fx_new();
		f->jobs[0].input_files = cases[i].files;
		if (!isnan(cases[i].max_missing))
			fx_param(f, "MAX_MISSING_INPUT_FILES",
				 cases[i].max_missing);
		if (!isnan(cases[i].min_complete))
			fx_param(f, "MIN_INPUT_COMPLETENESS",
				 cases[i].min_complete);
		fx_add(f, "LOCAL");
		jq_of(f, fx_add(f, "MOD"))->missing_files = cases[i].missing;
		fx_run(f);
		const struct dec_candidate *c = cand(f, "MOD");
		if (dec_dropped(c) != cases[i].dropped)
			fail_msg("AJ-08 case %zu: dropped %d (%s)", i,
				 dec_dropped(c),
				 c->nreasons ? c->reasons[0].code : "-");
		if (cases[i].dropped) {
			const struct dec_reason *r =
				assert_dropped(f, "MOD", "AJ-08", "locality");
			assert_near(r->v[0], cases[i].v0, 1e-12);
			assert_near(r->v[1], cases[i].v1, 1e-12);
		}
		free(f);
	}
}

/* ---- both sides of AJ-09, AJ-10, AJ-12, AJ-16 ------------------------------
** One row per case: `set` changes the fixture with `x`, the queue MOD is
** kept or dropped by the rule with its code and first two numbers. */

struct side_case {
	const char *rule, *code; /* code NULL: MOD is kept */
	void (*set)(struct fx *f, struct jb_queue *jq, double x);
	double x;
	double v0, v1;
};

/* AJ-09 = PJ-12: the queue's running jobs above maxDiskIO 500, the task's
** diskIO x per core. */
static void s_diskio(struct fx *f, struct jb_queue *jq, double x)
{
	jq->max_diskio = 500;
	jq->diskio_avg = 600;
	f->jt.diskio = x;
}
/* AJ-10 = PJ-13: an 8-core queue, a task of x cores. */
static void s_cores(struct fx *f, struct jb_queue *jq, double x)
{
	jq->core_count = 8;
	f->jt.core_count = (long)x;
}
/* AJ-16 = PJ-21: walltime 300 x 1000 / (1 x 10 x 0.9) + 600 = 33933 s
** against maxtime x. */
static void s_maxtime(struct fx *f, struct jb_queue *jq, double x)
{
	(void)f;
	jq->maxtime = x;
}
/* AJ-12 = PJ-14 through RC-05 on an AUTO queue publishing containers by
** prefix only: x = 0 no ALL dictionary, 1 ALL resolving the container to
** a matching source path, 2 ALL resolving it elsewhere. */
static const char *const pfx[] = {"/cvmfs/unpacked.cern.ch/"};
static const char *const src_ok[] = {
	"/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athena:22.0.1"};
static const char *const src_far[] = {"/srv/images/atlas/athena:22.0.1"};
static const struct rc_tag all_ok[] = {
	{"x86_64-el9-gcc13-opt", "atlas/athena:22.0.1", "Athena", "22.0.1",
	 src_ok, 1}};
static const struct rc_tag all_far[] = {
	{"x86_64-el9-gcc13-opt", "atlas/athena:22.0.1", "Athena", "22.0.1",
	 src_far, 1}};
static const struct rc_sw sw_pfx = {.containers = pfx, .ncontainers = 1};
static const struct rc_sw all_sw_ok = {.tags = all_ok, .ntags = 1};
static const struct rc_sw all_sw_far = {.tags = all_far, .ntags = 1};
static void s_all(struct fx *f, struct jb_queue *jq, double x)
{
	f->need.container_name = "atlas/athena:22.0.1";
	f->jt.sw = &f->need;
	jq->releases = JB_REL_AUTO;
	jq->sw = &sw_pfx;
	f->t.all_sw = x == 1 ? &all_sw_ok : x == 2 ? &all_sw_far : NULL;
}
/* AJ-12 with a release list: x = 1 holds 21.0.38, 0 only 22.0.1. */
static const char *const rel_both[] = {"22.0.1", "21.0.38"};
static void s_list(struct fx *f, struct jb_queue *jq, double x)
{
	f->need.sw_project = "Athena";
	f->need.sw_version = "21.0.38";
	f->jt.sw = &f->need;
	jq->releases = JB_REL_LIST;
	jq->release_list = x == 1 ? rel_both : rel_22;
	jq->nrelease_list = x == 1 ? 2 : 1;
}

static void test_aj09_aj10_aj12_aj16_both_sides(void **state)
{
	(void)state;
	static const struct side_case cases[] = {
		{"AJ-09", NULL, s_diskio, 500, 0, 0},
		{"AJ-09", "diskIO", s_diskio, 501, 501, 600},
		{"AJ-10", NULL, s_cores, 8, 0, 0},
		{"AJ-10", NULL, s_cores, 4, 0, 0},
		{"AJ-10", "cpucore", s_cores, 1, 8, 1},
		{"AJ-12", NULL, s_list, 1, 0, 0},
		{"AJ-12", "cache", s_list, 0, 1, 0},
		{"AJ-12", NULL, s_all, 1, 0, 0},
		{"RC-05", "container", s_all, 0, 1, 0},
		{"RC-05", "container", s_all, 2, 1, 0},
		{"AJ-16", NULL, s_maxtime, 33934, 0, 0},
		{"AJ-16", "longwalltime", s_maxtime, 33933,
		 300.0 * 1000 / 9 + 600, 33933},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct side_case *k = &cases[i];
		struct fx *f = fx_new();
		fx_add(f, "BASE");
		struct jb_queue *jq = jq_of(f, fx_add(f, "MOD"));
		k->set(f, jq, k->x);
		fx_run(f);
		const struct dec_candidate *c = cand(f, "MOD");
		if (dec_dropped(c) != (k->code != NULL))
			fail_msg("%s case %zu: dropped %d by %s/%s", k->rule, i,
				 dec_dropped(c),
				 c->nreasons ? c->reasons[0].rule : "-",
				 c->nreasons ? c->reasons[0].code : "-");
		if (k->code != NULL) {
			const struct dec_reason *r =
				assert_dropped(f, "MOD", k->rule, k->code);
			assert_near(r->v[0], k->v0, 1e-9);
			assert_near(r->v[1], k->v1, 1e-9);
		}
		free(f);
	}
}

/* AJ-08 */
static void test_aj08_locality_suppressed(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "BASE");
	struct ab_queue *mod = fx_add(f, "MOD");
	jq_of(f, mod)->missing_files = 1;
	/* AJ-08: taskPriority 1999 checks locality, 2000 does not. */
	f->t.task_priority = AB_LOCALITY_OFF_PRIO - 1;
	fx_run(f);
	assert_dropped(f, "MOD", "AJ-08", "locality");
	f->t.task_priority = AB_LOCALITY_OFF_PRIO;
	fx_run(f);
	assert_alive(f, "MOD");
	assert_stage(f, "locality", 2, 2);

	/* AJ-08: ioIntensity at the cutoff suppresses it, above does not;
	** unset (the default) never does, whatever the intensity. */
	f->t.task_priority = 1000;
	f->jt.io_intensity = 0;
	fx_run(f);
	assert_dropped(f, "MOD", "AJ-08", "locality");
	fx_param(f, "IO_INTENSITY_CUTOFF_USER", 100);
	f->jt.io_intensity = 100;
	fx_run(f);
	assert_alive(f, "MOD");
	f->jt.io_intensity = 101;
	fx_run(f);
	assert_dropped(f, "MOD", "AJ-08", "locality");
	free(f);
}

/* AJ-11: PanDA's overload test, queued > OVERLOAD_MIN_QUEUE and (running
** == 0 or queued / running > OVERLOAD_RATIO_OFFSET x grandRatio). Each
** boundary has a row on each side: queued 20 vs 21 (with running 0 and
** with a ratio far above the limit), running 0 (also when the grid has
** nothing running: grandRatio NAN), the ratio exactly at 1.2 x grandRatio
** (150 / 100 = 1.5 = 1.2 x 1.25, exact in binary) vs just above (151 /
** 100), and the two parameters moved. Ratios stay below AJ-19's 2 x
** running, so a kept queue survives every row. */
static void test_aj11_vp_overload_boundary(void **state)
{
	(void)state;
	static const struct {
		double min_queue, offset; /* 0: the catalogue's 20 and 1.2 */
		double grand, running, queued;
		int kept;
	} rows[] = {
		{0, 0, 1, 0, 20, 1},        /* 20 is not > 20 */
		{0, 0, 1, 0, 21, 0},        /* > 20 and nothing running */
		{0, 0, NAN, 0, 20, 1},      /* grid runs nothing: the same */
		{0, 0, NAN, 0, 21, 0},
		{0, 0, 0.1, 100, 20, 1},    /* 0.2 > 0.12, but 20 is not > 20 */
		{0, 0, 0.1, 100, 21, 0},    /* 0.21 > 0.12 */
		{0, 0, 1.25, 100, 150, 1},  /* 1.5 is not > 1.2 x 1.25 = 1.5 */
		{0, 0, 1.25, 100, 151, 0},  /* 1.51 > 1.5 */
		{0, 0, 1.25, 1, 21, 0},     /* 21 > 1.5 */
		{0, 0, 0, 100, 21, 0},      /* grid queues nothing: limit 0 */
		{0, 0, NAN, 100, 150, 1},   /* NAN limit with running: kept */
		{50, 0, 1, 30, 50, 1},      /* OVERLOAD_MIN_QUEUE 50; 50 / 30 */
		{50, 0, 1, 30, 51, 0},      /* is above 1.2 x 1 in both */
		{0, 2, 0.75, 100, 150, 1},  /* OVERLOAD_RATIO_OFFSET 2: 1.5 */
		{0, 2, 0.75, 100, 151, 0},
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx *f = fx_new();
		if (rows[k].min_queue > 0)
			fx_param(f, "OVERLOAD_MIN_QUEUE", rows[k].min_queue);
		if (rows[k].offset > 0)
			fx_param(f, "OVERLOAD_RATIO_OFFSET", rows[k].offset);
		double min_queue = rows[k].min_queue > 0 ? rows[k].min_queue
							 : 20;
		double offset = rows[k].offset > 0 ? rows[k].offset : 1.2;
		f->t.grand_ratio = rows[k].grand;
		fx_add(f, "BASE");
		struct ab_queue *vp = fx_add(f, "VP");
		vp->is_vp = 1;
		jq_of(f, vp)->counts.running = rows[k].running;
		/* split over the four states AJ-11 counts */
		jq_of(f, vp)->counts.defined = 1;
		jq_of(f, vp)->counts.assigned = 2;
		jq_of(f, vp)->counts.starting = 3;
		jq_of(f, vp)->counts.activated = rows[k].queued - 6;
		fx_run(f);
		if (rows[k].kept) {
			assert_alive(f, "VP");
			free(f);
			continue;
		}
		const struct dec_reason *r =
			assert_dropped(f, "VP", "AJ-11", "overloaded_vp");
		if (rows[k].running == 0) {
			/* queued against OVERLOAD_MIN_QUEUE, running 0 */
			assert_near(r->v[0], rows[k].queued, 0);
			assert_near(r->v[1], min_queue, 0);
			assert_near(r->v[2], 0, 0);
		} else {
			/* the ratio against its limit, then the counts */
			assert_near(r->v[0], rows[k].queued / rows[k].running,
				    0);
			assert_near(r->v[1], offset * rows[k].grand, 0);
			assert_near(r->v[2], rows[k].queued, 0);
			assert_near(r->v[3], rows[k].running, 0);
		}
		free(f);
	}
}

/* AJ-13 */
static void test_aj13_memory_both_units(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	f->jt.base_ram = 500;
	f->jt.ram_count = 1000;
	/* AJ-13 MBPerCore: (500 + 1000 x 8) x 0.9; MB: (500 + 1000) x 0.9 */
	assert_near(ab_memory_mb(&f->t, 8), 7650, 1e-12);
	f->t.ram_per_core = 0;
	assert_near(ab_memory_mb(&f->t, 8), 1350, 1e-12);
	f->t.ram_per_core = 1;

	f->jt.core_count = 8;
	struct ab_queue *q = fx_add(f, "MCORE");
	jq_of(f, q)->core_count = 8;
	jq_of(f, q)->max_rss_per_core = 1000;
	jq_of(f, q)->min_rss_per_core = 200;
	fx_run(f);
	assert_alive(f, "MCORE"); /* 7650 <= 8000 */
	f->jt.ram_count = 1100;   /* (500 + 8800) x 0.9 = 8370 > 8000 */
	fx_run(f);
	const struct dec_reason *r =
		assert_dropped(f, "MCORE", "AJ-13", "highmemory");
	assert_near(r->v[0], 8370, 1e-12);
	assert_near(r->v[1], 8000, 0);
	/* AJ-13 MB: (500 + 1100) x 0.9 = 1440 < 200 x 8 = 1600 */
	f->t.ram_per_core = 0;
	fx_run(f);
	r = assert_dropped(f, "MCORE", "AJ-13", "lowmemory");
	assert_near(r->v[0], 1440, 1e-12);
	assert_near(r->v[1], 1600, 0);
	free(f);
}

/* AJ-14 */
static void test_aj14_disk_direct_access(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	f->jt.work_disk_count = 100;
	/* AJ-14: 1000 + 0.5 x 1000 + 100; direct access drops the input */
	assert_near(ab_disk_mb(&f->t, 0), 1600, 1e-12);
	assert_near(ab_disk_mb(&f->t, 1), 600, 1e-12);
	jq_of(f, fx_add(f, "COPY"))->maxwdir = 1000;
	struct jb_queue *da = jq_of(f, fx_add(f, "DIRECT"));
	da->maxwdir = 1000;
	da->direct_access = 1;
	fx_run(f);
	assert_alive(f, "DIRECT");
	const struct dec_reason *r = assert_dropped(f, "COPY", "AJ-14", "disk");
	assert_near(r->v[0], 1600, 1e-12);
	assert_near(r->v[1], 1000, 0);
	free(f);
}

/* AJ-18 */
static void test_aj18_bad_jobs_boundary(void **state)
{
	(void)state;
	static const struct {
		double finished, bad;
		int kept;
	} rows[] = {
		{4, 7, 1}, /* max(2 x 4, 5) = 8 */
		{4, 8, 0},
		{0, 4, 1}, /* max(0, MIN_BAD_JOBS_TO_SKIP_PQ 5) = 5 */
		{0, 5, 0},
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx *f = fx_new();
		fx_add(f, "BASE");
		struct ab_queue *q = fx_add(f, "Q");
		q->task_finished = rows[k].finished;
		q->task_failed = rows[k].bad - 1;
		q->task_closed = 1;
		fx_run(f);
		if (rows[k].kept) {
			assert_alive(f, "Q");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "Q", "AJ-18", "badjobs");
			assert_near(r->v[0], rows[k].bad, 0);
			assert_near(r->v[2], fmax(2 * rows[k].finished, 5), 0);
		}
		free(f);
	}
}

/* AJ-19 */
static void test_aj19_queued_boundary(void **state)
{
	(void)state;
	static const struct {
		double running, queued;
		int kept;
	} rows[] = {
		{10, 40, 1}, /* 2 x max(20, 10) = 40 */
		{10, 41, 0},
		{30, 60, 1}, /* 2 x max(20, 30) = 60 */
		{30, 61, 0},
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx *f = fx_new();
		fx_add(f, "BASE");
		struct jb_queue *jq = jq_of(f, fx_add(f, "Q"));
		jq->counts.running = rows[k].running;
		jq->counts.defined = 10;
		jq->counts.assigned = 5;
		jq->counts.starting = 1;
		jq->counts.activated = rows[k].queued - 16;
		fx_run(f);
		if (rows[k].kept) {
			assert_alive(f, "Q");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "Q", "AJ-19", "cap_rt");
			assert_near(r->v[0], rows[k].queued, 0);
			assert_near(r->v[3], rows[k].queued - 1, 0);
		}
		free(f);
	}
}

/* AJ-20 */
static void test_aj20_stabilizer_skip(void **state)
{
	(void)state;
	struct an_queue_load busy = {1000, 100, 0, 0, 10, 5};
	struct an_stab st;
	assert_int_equal(an_stabilizer(&busy, NULL, &st), GB_OK);
	assert_true(st.can_throttle);
	assert_near(st.max_q_len, 40, 1e-12);
	static const struct {
		double nq, nq_user;
		int kept;
	} rows[] = {
		{1000, 40, 1}, /* at max_q_len: kept */
		{1000, 41, 0},
		{99, 1000, 1}, /* AJ-21: nQ < 100, the queue is not throttled */
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx *f = fx_new();
		fx_add(f, "BASE");
		struct ab_queue *q = fx_add(f, "Q");
		q->load = busy;
		q->load.nq = rows[k].nq;
		q->load.nq_user = rows[k].nq_user;
		fx_run(f);
		if (rows[k].kept) {
			assert_alive(f, "Q");
		} else {
			const struct dec_reason *r =
				assert_dropped(f, "Q", "AJ-20", "user_queue");
			assert_near(r->v[0], rows[k].nq_user, 0);
			assert_near(r->v[1], st.max_q_len, 1e-12);
		}
		free(f);
	}
}

/* ---- weights ------------------------------------------------------------ */

/*
** Three queues, stabilizer defaults, N_j = 10, class A user analysis:
**   X hi:  nR 1000, user 100 of 10 users: max_q_len max(5, 50, 2000 x 0.1)
**          = 200, user queue 20 -> room 180
**   Y mid: nR 200, 4 users: max(5, 10, 400 x 0.25) = 100, user 40 -> 60
**   Z lo:  nothing running: max(5, 0, 100 x 0) = 5, user 0 -> 5
** sum 245, denominator 245 - 10 = 235, N_j / N_PQ = 10 / 3:
**   W = 10 x (180 - 10/3) / 235, 0.05 x (60 - 10/3) / 235,
**       0.002 x (5 - 10/3) / 235
** Original: X (99 + 1) / (10 + 5 + 3 + 1 + 1) = 5, Y (49 + 1) / (4 + 1)
** = 10, Z (0 + 1) / (9 + 1) = 0.1.
*/
static void weight_fixture(struct fx *f)
{
	struct ab_queue *x = fx_add(f, "X");
	x->load = (struct an_queue_load){0, 1000, 0, 20, 100, 10};
	jq_of(f, x)->counts = (struct jb_counts){99, 1, 5, 10, 3, 0, 0};
	struct ab_queue *y = fx_add(f, "Y");
	y->site_class = AN_SITE_MID;
	y->load = (struct an_queue_load){0, 200, 0, 40, 0, 4};
	jq_of(f, y)->counts = (struct jb_counts){49, 0, 0, 4, 0, 0, 0};
	struct ab_queue *z = fx_add(f, "Z");
	z->site_class = AN_SITE_LO;
	z->load = (struct an_queue_load){0, 0, 0, 0, 0, 0};
	jq_of(f, z)->counts = (struct jb_counts){0, 9, 0, 0, 0, 0, 0};
}

/* AJ-24, AJ-25, AJ-26 */
static void test_aj24_aj26_weights_by_hand(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	weight_fixture(f);
	fx_run(f);
	double want[3] = {10 * (180 - 10.0 / 3) / 235,
			  0.05 * (60 - 10.0 / 3) / 235,
			  0.002 * (5 - 10.0 / 3) / 235};
	const char *names[3] = {"X", "Y", "Z"};
	double mql[3] = {200, 100, 5}, nqu[3] = {20, 40, 0};
	for (size_t i = 0; i < 3; i++) {
		const struct dec_candidate *c = cand(f, names[i]);
		assert_near(c->weight, want[i], 1e-12);
		assert_string_equal(c->wexpl.rule, "AJ-25");
		assert_near(c->wexpl.v[3], mql[i], 1e-12);
		/* AJ-26: the pipeline's W_q is analysis.c's. */
		double wq;
		assert_int_equal(an_weight_queue(mql, nqu, 3, i, 10, &wq),
				 GB_OK);
		assert_near(c->wexpl.v[1], wq, 1e-12);
	}
	assert_int_equal(f->plan.nbest, 3);
	assert_int_equal(f->plan.best[0], 0);
	assert_int_equal(f->plan.best[1], 1);
	assert_int_equal(f->plan.best[2], 2);
	assert_near(f->plan.weight[0], want[0], 1e-12);
	assert_stage(f, "weight", 3, 3);

	/* AJ-24: (running + 1) / (queued + 1). */
	fx_param(f, "USE_NEW_BASIC_WEIGHT", 0);
	fx_run(f);
	double orig[3] = {5, 10, 0.1};
	for (size_t i = 0; i < 3; i++) {
		assert_near(cand(f, names[i])->weight, orig[i], 1e-12);
		assert_string_equal(cand(f, names[i])->wexpl.rule, "AJ-24");
	}
	free(f);
}

/* AJ-27 */
static void test_aj27_switch_changes_choice(void **state)
{
	(void)state;
	static const struct {
		int set;
		double use_new;
		const char *chosen;
		const char *rule;
	} rows[] = {
		{0, 0, "X", "AJ-25"}, /* default: new */
		{1, 1, "X", "AJ-25"},
		{1, 0, "Y", "AJ-24"},
	};
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		struct fx *f = fx_new();
		weight_fixture(f);
		if (rows[k].set)
			fx_param(f, "USE_NEW_BASIC_WEIGHT", rows[k].use_new);
		fx_run(f);
		assert_int_equal(f->d.outcome, DEC_ASSIGNED);
		assert_string_equal(f->cands[f->d.chosen].name, rows[k].chosen);
		assert_string_equal(f->d.stages[f->d.nstages - 2].rule,
				    rows[k].rule);
		free(f);
	}
}

/* ---- AJ-28 -------------------------------------------------------------- */

/* AJ-28 (a) */
static void test_aj28_locality_retry(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	jq_of(f, fx_add(f, "FAR1"))->missing_files = 4;
	jq_of(f, fx_add(f, "FAR2"))->missing_files = 2;
	jq_of(f, fx_add(f, "DOWN"))->status = "offline";
	fx_run(f);
	assert_int_equal(f->plan.locality_dropped, 1);
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	assert_alive(f, "FAR1");
	assert_alive(f, "FAR2");
	assert_dropped(f, "DOWN", "AJ-07", "status");
	/* the decision is the second pass: locality keeps everyone */
	assert_stage(f, "locality", 2, 2);
	assert_int_equal(f->plan.nbest, 2);
	assert_non_null(strstr(f->d.note, "AJ-28"));
	assert_non_null(strstr(f->d.note, "2 dropped by AJ-08"));
	free(f);
}

/* AJ-28 (b) */
static void test_aj28_pending_20_minutes(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	struct jb_queue *a = jq_of(f, fx_add(f, "FAR_NOPILOT"));
	a->missing_files = 1;
	a->last_pilot = 0;
	struct jb_queue *b = jq_of(f, fx_add(f, "FAR_FULL"));
	b->missing_files = 1;
	b->storage_free = 10;
	fx_run(f);
	assert_int_equal(f->plan.locality_dropped, 1);
	assert_int_equal(f->d.outcome, DEC_PENDING);
	assert_int_equal(f->d.retry_after_s, AB_PENDING_RETRY_S);
	assert_int_equal(f->d.retry_after_s, 1200);
	assert_int_equal(f->d.chosen, -1);
	assert_int_equal(f->plan.nbest, 0);
	assert_dropped(f, "FAR_NOPILOT", "AJ-17", "nopilot");
	assert_dropped(f, "FAR_FULL", "AJ-15", "space");

	/* AJ-28: temporary rows leaving nothing do not retry: pending. */
	struct fx *g = fx_new();
	fx_add(g, "BUSY")->task_failed = 9;
	fx_run(g);
	assert_int_equal(g->plan.locality_dropped, 0);
	assert_int_equal(g->d.outcome, DEC_PENDING);
	assert_int_equal(g->d.retry_after_s, 1200);
	free(g);
	free(f);
}

/* AJ-28 (c) */
static void test_aj28_best_ten_ties_by_name_and_stages(void **state)
{
	(void)state;
	static const char *const names[] = {
		"Q07", "Q11", "Q02", "Q09", "Q00", "Q05", "Q10", "Q03",
		"Q08", "Q01", "Q06", "BIG", "PROD", "NOPILOT"};
	struct fx *f = fx_new();
	for (size_t i = 0; i < 14; i++) {
		struct ab_queue *q = fx_add(f, names[i]);
		q->load.nq_user = 2; /* equal rooms: equal weights */
	}
	f->q[11].load.nq_user = 0; /* BIG: more room, heavier */
	f->q[12].type = AB_QT_PRODUCTION;
	f->jq[13].last_pilot = NOW - 20000;
	fx_run(f);

	static const struct {
		const char *name;
		int in, out;
	} stages[] = {
		{"type", 14, 13},     {"sites", 13, 13},   {"status", 13, 13},
		{"locality", 13, 13}, {"disk io", 13, 13}, {"core count", 13, 13},
		{"vp", 13, 13},       {"software", 13, 13}, {"memory", 13, 13},
		{"disk", 13, 13},     {"storage", 13, 13}, {"walltime", 13, 13},
		{"pilot", 13, 12},    {"bad jobs", 12, 12}, {"queued", 12, 12},
		{"user queue", 12, 12}, {"weight", 12, 12}, {"best 10", 12, 10},
	};
	size_t ns = sizeof(stages) / sizeof(stages[0]);
	assert_int_equal(f->d.nstages, ns);
	for (size_t s = 0; s < ns; s++) {
		assert_string_equal(f->d.stages[s].name, stages[s].name);
		assert_int_equal(f->d.stages[s].in, stages[s].in);
		assert_int_equal(f->d.stages[s].out, stages[s].out);
	}

	/* BIG first by weight, then the equal ones by name. */
	static const char *const order[AB_BEST_N] = {
		"BIG", "Q00", "Q01", "Q02", "Q03", "Q05", "Q06", "Q07", "Q08",
		"Q09"};
	assert_int_equal(f->plan.nbest, AB_BEST_N);
	for (size_t b = 0; b < AB_BEST_N; b++) {
		assert_string_equal(f->cands[f->plan.best[b]].name, order[b]);
		assert_near(f->plan.weight[b],
			    f->cands[f->plan.best[b]].weight, 0);
	}
	assert_true(f->plan.weight[0] > f->plan.weight[1]);
	assert_near(f->plan.weight[1], f->plan.weight[9], 0);
	const struct dec_reason *r =
		assert_dropped(f, "Q10", "AJ-28", "not_best");
	assert_near(r->v[1], AB_BEST_N, 0);
	assert_near(r->v[2], f->plan.weight[9], 0);
	assert_dropped(f, "Q11", "AJ-28", "not_best");
	assert_int_equal(f->d.outcome, DEC_ASSIGNED);
	assert_string_equal(f->cands[f->d.chosen].name, "BIG");
	free(f);
}

/* ---- errors ------------------------------------------------------------- */

static void test_ab_broker_rejects_bad_input(void **state)
{
	(void)state;
	struct fx *f = fx_new();
	fx_add(f, "A");
	assert_int_equal(ab_broker(NULL, f->q, f->n, NULL, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_EINVAL);
	f->t.nj = 0;
	assert_int_equal(ab_broker(&f->t, f->q, f->n, NULL, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_EINVAL);
	f->t.nj = 10;
	f->q[0].q = NULL;
	assert_int_equal(ab_broker(&f->t, f->q, f->n, NULL, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_EINVAL);
	f->q[0].q = &f->jq[0];
	f->q[0].load.nq = -1; /* an_stabilizer refuses it */
	assert_int_equal(ab_broker(&f->t, f->q, f->n, NULL, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_EINVAL);
	f->q[0].load.nq = 10;
	/* AJ-11: grandRatio NAN or finite >= 0 */
	static const double bad_ratio[] = {-1, INFINITY};
	for (size_t k = 0; k < 2; k++) {
		f->t.grand_ratio = bad_ratio[k];
		assert_int_equal(ab_broker(&f->t, f->q, f->n, NULL, NOW,
					   f->cands, &f->d, &f->plan),
				 GB_EINVAL);
	}
	f->t.grand_ratio = NAN;
	assert_int_equal(ab_broker(&f->t, f->q, f->n, NULL, NOW, f->cands,
				   &f->d, &f->plan),
			 GB_OK);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aj05_aj20_each_filter_drops_modified_copy),
		cmocka_unit_test(test_aj06_included_excluded_preassigned),
		cmocka_unit_test(test_aj08_locality_suppressed),
		cmocka_unit_test(test_aj09_aj10_aj12_aj16_both_sides),
		cmocka_unit_test(test_aj08_locality_complete_enough),
		cmocka_unit_test(test_aj11_vp_overload_boundary),
		cmocka_unit_test(test_aj13_memory_both_units),
		cmocka_unit_test(test_aj14_disk_direct_access),
		cmocka_unit_test(test_aj18_bad_jobs_boundary),
		cmocka_unit_test(test_aj19_queued_boundary),
		cmocka_unit_test(test_aj20_stabilizer_skip),
		cmocka_unit_test(test_aj24_aj26_weights_by_hand),
		cmocka_unit_test(test_aj27_switch_changes_choice),
		cmocka_unit_test(test_aj28_locality_retry),
		cmocka_unit_test(test_aj28_pending_20_minutes),
		cmocka_unit_test(test_aj28_best_ten_ties_by_name_and_stages),
		cmocka_unit_test(test_ab_broker_rejects_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
