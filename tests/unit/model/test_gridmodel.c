/*
** test_gridmodel.c — gm_resolve: the per-task view of the grid (counts for
** the task's gshare, the link to its nucleus, input locality at each
** queue's storage), the jobs' engine view, and the parsed architecture.
**
** The grids are built in C, small enough to check by hand; one randomized
** test compares the sorted-index locality of gm_resolve with a brute-force
** count over every (queue, file, replica) on grids too big to check by hand.
*/
#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/arena.h"
#include "gb_error.h"
#include "model/gridmodel.h"
#include "rng.h"

#define ARENA_CAP (64u << 20)

/* ---- a small hand-checked grid ------------------------------------------ */

/*
** Storages: A holds f1, f2; B holds f1 (listed twice); C holds f3, which no
** job reads... except job 2 names f1 again. Queues: QA on A, QB on B, QD on
** D (nothing local), QA2 also on A but at another site.
*/
static const char *const rep_f1[] = {"A", "B", "B"};
static const char *const rep_f2[] = {"A"};
static const char *const rep_f3[] = {"C"};
static const char *const rep_other[] = {"A", "D"};
static const struct gm_file files[] = {
	{"f1", rep_f1, 3},
	{"f2", rep_f2, 1},
	{"f3", rep_f3, 1},
	{"not-read", rep_other, 2},
};

static const struct gm_input in1[] = {{"f1", 1000}, {"f2", 500}};
static const struct gm_input in2[] = {{"f3", 250}, {"f1", 1000}};
static const struct gm_job jobs[] = {
	{101, 1000, in1, 2},
	{102, 400, in2, 2},
	{103, 10, NULL, 0},
};

static const struct gm_counts counts_qa[] = {
	{"MC Reco", {1, 2, 3, 4, 5, 6, 7}},
	{"MC Simul", {100, 10, 20, 30, 4, 5, 6}},
};

static const struct gm_link links[] = {
	/* site A1 -> two nuclei: only the task's counts */
	{"SITE-A1", "NUC-X", 0, {12, 300, NAN, NAN, 2}},
	{"SITE-A1", "NUC-Y", 1, {900, NAN, NAN, NAN, 9}},
	{"SITE-B", "NUC-X", 1, {30, NAN, NAN, NAN, 3}},
	{"SITE-D", "NUC-X", 0, {NAN, NAN, NAN, NAN, -1}},
	{"SITE-OTHER", "NUC-X", 0, {8, NAN, 50, NAN, 5}},
};

static struct gm_queue mkq(const char *name, const char *site,
			   const char *storage)
{
	struct gm_queue q;
	memset(&q, 0, sizeof(q));
	q.q.name = name;
	q.q.status = "online";
	q.q.site = site;
	q.q.nucleus = "";
	q.q.corepower = 10;
	q.q.max_diskio = NAN;
	q.q.num_slots = -1;
	q.q.storage = storage;
	return q;
}

static void small_grid(struct gm_queue *qs, struct gm_grid *g)
{
	qs[0] = mkq("QA", "SITE-A1", "A");
	qs[0].counts = counts_qa;
	qs[0].ncounts = 2;
	qs[1] = mkq("QB", "SITE-B", "B");
	qs[2] = mkq("QD", "SITE-D", "D");
	qs[3] = mkq("QA2", "SITE-A2", "A");
	memset(g, 0, sizeof(*g));
	g->queues = qs;
	g->nqueues = 4;
	g->links = links;
	g->nlinks = sizeof(links) / sizeof(links[0]);
	g->files = files;
	g->nfiles = sizeof(files) / sizeof(files[0]);
}

static void small_request(struct gm_request *r)
{
	memset(r, 0, sizeof(*r));
	r->t.task_id = 42;
	r->t.gshare = "MC Simul";
	r->t.nucleus = "NUC-X";
	r->t.core_count = 1;
	r->t.cpu_efficiency = 100;
	r->architecture = "";
	r->jobs = jobs;
	r->njobs = sizeof(jobs) / sizeof(jobs[0]);
}

static void resolve(struct gm_grid *g, struct gm_request *r, struct arena *a,
		    struct jb_queue **qs, struct jb_env *env)
{
	assert_int_equal(gm_resolve(g, r, 1715675400, a, qs, env), GB_OK);
	assert_non_null(*qs);
}

/* The small grid and request, an arena, and what gm_resolve gives. */
struct fx {
	struct gm_queue qs[4];
	struct gm_grid g;
	struct gm_request r;
	struct arena a;
	struct jb_queue *out;
	struct jb_env env;
};

static void fx_init(struct fx *f)
{
	small_grid(f->qs, &f->g);
	small_request(&f->r);
	arena_init(&f->a, ARENA_CAP);
	f->out = NULL;
}

/* Distinct request files: f1 (1000 MB), f2 (500), f3 (250) = 1.75 GB. */
static void test_locality(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	resolve(&f.g, &f.r, &f.a, &f.out, &f.env);
	static const struct {
		size_t q;
		double local_gb, missing_gb;
		long missing_files;
	} want[] = {
		{0, 1.5, 0.25, 1},  /* A: f1 + f2 local, f3 missing */
		{1, 1.0, 0.75, 2},  /* B: f1 once although listed twice */
		{2, 0.0, 1.75, 3},  /* D: only a file no job reads */
		{3, 1.5, 0.25, 1},  /* another queue on A: same locality */
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct jb_queue *q = &f.out[want[i].q];
		assert_near(q->local_size, want[i].local_gb, 1e-12);
		assert_near(q->missing_size, want[i].missing_gb, 1e-12);
		assert_int_equal(q->missing_files, want[i].missing_files);
	}
	/* f1 is read by two jobs but transferred once */
	assert_near(f.r.t.total_input_gb, 1.75, 1e-12);
	arena_free(&f.a);
}

static void test_jobs_view(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	resolve(&f.g, &f.r, &f.a, &f.out, &f.env);
	assert_int_equal(f.r.t.njobs, 3);
	assert_non_null(f.r.t.jobs);
	static const struct jb_job want[] = {
		{101, 1000, 1500, 2}, {102, 400, 1250, 2}, {103, 10, 0, 0}};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(f.r.t.jobs[i].job_id, want[i].job_id);
		assert_int_equal(f.r.t.jobs[i].nevents, want[i].nevents);
		assert_near(f.r.t.jobs[i].input_mb, want[i].input_mb, 0);
		assert_int_equal(f.r.t.jobs[i].input_files,
				 want[i].input_files);
	}
	/* the grid's queues are copied, not modified */
	assert_null(f.qs[0].q.link);
	assert_near(f.qs[0].q.local_size, 0, 0);
	assert_string_equal(f.out[2].name, "QD");
	arena_free(&f.a);
}

/* Counts for the task's gshare only; zeros where the queue has none. */
static void test_counts_by_gshare(void **state)
{
	(void)state;
	static const struct {
		const char *gshare;
		double running, assigned;
	} cases[] = {
		{"MC Simul", 100, 20},
		{"MC Reco", 1, 3},
		{"Express", 0, 0},
		{"MC", 0, 0}, /* a prefix is not the share */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		fx_init(&f);
		f.r.t.gshare = cases[i].gshare;
		resolve(&f.g, &f.r, &f.a, &f.out, &f.env);
		assert_near(f.out[0].counts.running, cases[i].running, 0);
		assert_near(f.out[0].counts.assigned, cases[i].assigned, 0);
		assert_near(f.out[1].counts.running, 0, 0);
		assert_near(f.out[1].counts.nbatchjob, 0, 0);
		arena_free(&f.a);
	}
}

/* The link of the queue's site to the task's nucleus, and its sum. */
static void test_links(void **state)
{
	(void)state;
	static const struct {
		const char *nucleus;
		double qa_queued; /* NAN: QA has no link */
		int qa_blocked, qb_blocked, qd_blocked;
		int qd_link;
		double sum;
	} cases[] = {
		/* NUC-X: QA's link is the first row; QD's closeness -1
		** blocks it; NaN queued counts as none in the sum. */
		{"NUC-X", 12, 0, 1, 1, 1, 12 + 30 + 8},
		{"NUC-Y", 900, 1, 0, 0, 0, 900},
		{"NUC-Z", NAN, 0, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		fx_init(&f);
		f.r.t.nucleus = cases[i].nucleus;
		resolve(&f.g, &f.r, &f.a, &f.out, &f.env);
		const struct jb_queue *out = f.out;
		if (isnan(cases[i].qa_queued)) {
			assert_null(out[0].link);
		} else {
			assert_non_null(out[0].link);
			assert_near(out[0].link->queued_files,
				    cases[i].qa_queued, 0);
		}
		assert_int_equal(out[0].link_blocked, cases[i].qa_blocked);
		assert_int_equal(out[1].link_blocked, cases[i].qb_blocked);
		assert_int_equal(out[2].link_blocked, cases[i].qd_blocked);
		assert_int_equal(out[2].link != NULL, cases[i].qd_link);
		assert_null(out[3].link); /* SITE-A2 has no link at all */
		assert_near(f.env.nucleus_queued_files, cases[i].sum, 0);
		assert_int_equal(f.env.now, 1715675400);
		arena_free(&f.a);
	}
}

/* RC-02 parsing happens here; t.sw is NULL when no software is asked. */
static void test_architecture_and_sw(void **state)
{
	(void)state;
	static const struct rc_sw all = {0};
	static const struct {
		const char *arch, *container, *version;
		int rc, has_sw;
	} cases[] = {
		{"x86_64-centos7-gcc8-opt@centos7#x86_64-intel-avx2&nvidia-kt100",
		 "", "", GB_OK, 1},
		{"", "", "", GB_OK, 0},
		{NULL, NULL, NULL, GB_OK, 0},
		{"", "atlas/athena:22.0.1", "", GB_OK, 1},
		{"", "", "21.0.38", GB_OK, 1},
		{"x@a@b", "", "", GB_EINVAL, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		fx_init(&f);
		f.g.all_sw = &all;
		f.r.architecture = cases[i].arch;
		f.r.need.container_name = cases[i].container;
		f.r.need.sw_version = cases[i].version;
		int rc = gm_resolve(&f.g, &f.r, 1, &f.a, &f.out, &f.env);
		assert_int_equal(rc, cases[i].rc);
		if (rc == GB_OK) {
			assert_int_equal(f.r.t.sw != NULL, cases[i].has_sw);
			if (f.r.t.sw)
				assert_ptr_equal(f.r.t.sw, &f.r.need);
			assert_ptr_equal(f.env.all_sw, &all);
		}
		arena_free(&f.a);
	}
	/* the pieces, as the engine reads them */
	struct fx f;
	fx_init(&f);
	f.r.architecture =
		"x86_64-centos7-gcc8-opt@centos7#x86_64-intel-avx2&nvidia-kt100";
	resolve(&f.g, &f.r, &f.a, &f.out, &f.env);
	const struct rc_arch *x = &f.r.need.arch;
	assert_string_equal(x->sw_platform, "x86_64-centos7-gcc8-opt");
	assert_string_equal(x->base_platform, "centos7");
	assert_true(x->has_cpu);
	assert_string_equal(x->cpu_arch, "x86_64");
	assert_string_equal(x->cpu_vendor, "intel");
	assert_string_equal(x->cpu_instr, "avx2");
	assert_true(x->has_gpu);
	assert_string_equal(x->gpu_vendor, "nvidia");
	assert_string_equal(x->gpu_model, "kt100");
	arena_free(&f.a);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	struct gm_grid *g = &f.g;
	struct gm_request *r = &f.r;
	struct jb_queue **out = &f.out;
	assert_int_equal(gm_resolve(NULL, r, 1, &f.a, out, &f.env), GB_EINVAL);
	assert_int_equal(gm_resolve(g, NULL, 1, &f.a, out, &f.env), GB_EINVAL);
	assert_int_equal(gm_resolve(g, r, 1, NULL, out, &f.env), GB_EINVAL);
	assert_int_equal(gm_resolve(g, r, 1, &f.a, NULL, &f.env), GB_EINVAL);
	assert_int_equal(gm_resolve(g, r, 1, &f.a, out, NULL), GB_EINVAL);
	r->t.nucleus = NULL; /* the worker must complete it first */
	assert_int_equal(gm_resolve(g, r, 1, &f.a, out, &f.env), GB_EINVAL);
	small_request(r);
	static const struct gm_input bad[] = {{"f1", -1}};
	static const struct gm_job badjob[] = {{1, 1, bad, 1}};
	r->jobs = badjob;
	r->njobs = 1;
	assert_int_equal(gm_resolve(g, r, 1, &f.a, out, &f.env), GB_EINVAL);
	arena_free(&f.a);

	/* the arena cap is a clean GB_ENOMEM */
	arena_init(&f.a, 64);
	small_request(r);
	assert_int_equal(gm_resolve(g, r, 1, &f.a, out, &f.env), GB_ENOMEM);
	arena_free(&f.a);

	/* an empty grid resolves to no queues */
	arena_init(&f.a, ARENA_CAP);
	struct gm_grid empty;
	memset(&empty, 0, sizeof(empty));
	struct jb_queue dummy;
	f.out = &dummy;
	assert_int_equal(gm_resolve(&empty, r, 1, &f.a, out, &f.env), GB_OK);
	assert_null(f.out);
	assert_near(f.env.nucleus_queued_files, 0, 0);
	arena_free(&f.a);
}

/* ---- randomized: the index agrees with brute force -------------------- */

#define RQ 60  /* queues */
#define RS 12  /* storages */
#define RF 400 /* files in the grid */
#define RJ 150 /* jobs */

static void test_locality_matches_brute_force(void **state)
{
	(void)state;
	static char snames[RS][8], fnames[RF][16], qnames[RQ][8];
	for (int i = 0; i < RS; i++)
		snprintf(snames[i], sizeof(snames[i]), "S%02d", i);
	for (int i = 0; i < RF; i++)
		snprintf(fnames[i], sizeof(fnames[i]), "file.%04d", i);
	for (int i = 0; i < RQ; i++)
		snprintf(qnames[i], sizeof(qnames[i]), "Q%02d", i);
	struct gb_rng rng;
	for (uint64_t round = 1; round <= 20; round++) {
		gb_rng_seed(&rng, round);
		struct arena a;
		arena_init(&a, ARENA_CAP);
		struct gm_file *gf = arena_alloc(&a, RF * sizeof(*gf));
		double fsize[RF];
		for (int i = 0; i < RF; i++) {
			size_t n = gb_rng_below(&rng, 4); /* 0..3, may repeat */
			const char **st = arena_alloc(&a, 4 * sizeof(*st));
			for (size_t k = 0; k < n; k++)
				st[k] = snames[gb_rng_below(&rng, RS)];
			gf[i] = (struct gm_file){fnames[i], st, n};
			fsize[i] = (double)(1 + gb_rng_below(&rng, 5000));
		}
		struct gm_job *gj = arena_alloc(&a, RJ * sizeof(*gj));
		for (int j = 0; j < RJ; j++) {
			size_t n = gb_rng_below(&rng, 5);
			struct gm_input *in = arena_alloc(&a, 5 * sizeof(*in));
			for (size_t k = 0; k < n; k++) {
				/* some lfns have no replica entry at all */
				int f = (int)gb_rng_below(&rng, RF + 50);
				const char *name = f < RF ? fnames[f] : "orphan";
				in[k] = (struct gm_input){
					name, f < RF ? fsize[f] : 7};
			}
			gj[j] = (struct gm_job){j + 1, 100, in, n};
		}
		struct gm_queue qs[RQ];
		for (int i = 0; i < RQ; i++)
			qs[i] = mkq(qnames[i], "SITE",
				    snames[gb_rng_below(&rng, RS)]);
		struct gm_grid g = {qs, RQ, NULL, 0, NULL, NULL, gf, RF};
		struct gm_request r;
		small_request(&r);
		r.jobs = gj;
		r.njobs = RJ;
		struct jb_queue *out;
		struct jb_env env;
		resolve(&g, &r, &a, &out, &env);

		/* brute force: distinct request files, then each queue */
		int wanted[RF + 1];
		memset(wanted, 0, sizeof(wanted));
		for (int j = 0; j < RJ; j++)
			for (size_t k = 0; k < gj[j].ninputs; k++) {
				const char *l = gj[j].inputs[k].lfn;
				int f = strcmp(l, "orphan") == 0 ? RF
								 : atoi(l + 5);
				wanted[f] = 1;
			}
		double total = 0;
		long nfiles = 0;
		for (int f = 0; f <= RF; f++) {
			total += wanted[f] ? (f < RF ? fsize[f] : 7) : 0;
			nfiles += wanted[f];
		}
		assert_near(r.t.total_input_gb, total / 1000.0, 1e-12);
		for (int i = 0; i < RQ; i++) {
			double local = 0;
			long nlocal = 0;
			for (int f = 0; f < RF; f++) {
				int here = 0;
				for (size_t k = 0; k < gf[f].nstorages; k++)
					here |= strcmp(gf[f].storages[k],
						       qs[i].q.storage) == 0;
				if (here && wanted[f]) {
					local += fsize[f];
					nlocal++;
				}
			}
			assert_near(out[i].local_size, local / 1000.0, 1e-12);
			assert_int_equal(out[i].missing_files, nfiles - nlocal);
			assert_near(out[i].missing_size + out[i].local_size,
				    total / 1000.0, 1e-9);
		}
		arena_free(&a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locality),
		cmocka_unit_test(test_jobs_view),
		cmocka_unit_test(test_counts_by_gshare),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_architecture_and_sw),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_locality_matches_brute_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
