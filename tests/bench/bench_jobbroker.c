/*
** bench_jobbroker.c — how long one production job brokerage decision takes
** over a realistic grid of 1000 queues (target: < 50 us on 2 cores), and
** how that time grows with the grid (100, 1000 and 10,000 queues).
**
** Builds the grid in memory with a seeded generator: mixed releases (AUTO
** queues with small published software dictionaries, ANY, release lists),
** links with and without throughput figures, job counts, storages, pilots,
** a tenth of the queues at the task's nucleus. The task has 100 jobs and a
** software need, so every rule, the weights and the distribution run.
**
** Prints decisions per second, the median and 99th percentile of one
** decision in microseconds, and the same figures for a baseline loop that
** only reads the fields of every queue (what any decision must at least
** touch), with the ratio. Then a table of the same figures at 100, 1000
** and 10,000 queues: one grid of 10,000 queues is generated and each size
** takes its first queues, so the 1000-queue grid is the one above and the
** smaller grid is its first tenth; each size has its own baseline over the
** same queues, measured in the same run. It never asserts a speed:
** machines differ, and a timing threshold in a test suite only makes it
** flaky. Usage:
**   bench_jobbroker [decisions]   (default 2000, at every size)
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_error.h"
#include "jobbroker.h"
#include "params.h"
#include "rng.h"

#define NQ 1000      /* the headline grid */
#define NQ_MAX 10000 /* the largest of the scaling table */
#define NJOBS 100
#define NSW 8
#define NOW 1700000000LL

static char names[NQ_MAX][32];
static char sites[NQ_MAX][32];
static struct jb_queue queues[NQ_MAX];
static struct nw_link links[NQ_MAX];
static struct dec_candidate cands[NQ_MAX];
static struct jb_job jobs[NJOBS];
static long job_queue[NJOBS];
static enum jb_job_status job_status[NJOBS];

/* A small pool of software dictionaries, shared by the AUTO queues the way
** many CRIC queues publish the same site software. */
static const char *const cmtconfigs[] = {"x86_64-centos7-gcc8-opt",
					 "x86_64-centos7-gcc62-opt",
					 "x86_64-el9-gcc13-opt"};
static const char *const cvmfs_all[] = {"atlas", "nightlies"};
static const char *const cvmfs_atlas[] = {"atlas"};
static const char *const containers_any[] = {"any"};
static const char *const cpu_arch[] = {"x86_64"};
static const char *const cpu_vendor[] = {"intel", "amd"};
static const char *const cpu_instr[] = {"avx2", "avx512"};
static const char *const releases[] = {"21.0.36", "21.0.37", "21.0.38",
				       "22.0.1", "23.0.5"};
static const char *const old_releases[] = {"20.7.9", "21.0.20"};
static const char *const tag_sources[] = {"/cvmfs/atlas.cern.ch/repo"};
static struct rc_hw cpu_hw;
static struct rc_tag tags[NSW][5];
static struct rc_sw sw_pool[NSW];

static const char *const gshare = "MC Simul";

static void build_sw(void)
{
	cpu_hw = (struct rc_hw){cpu_arch, 1, cpu_vendor, 2, cpu_instr, 2,
				NULL, 0};
	for (int s = 0; s < NSW; s++) {
		for (int k = 0; k < 5; k++)
			tags[s][k] = (struct rc_tag){
				cmtconfigs[k % 3], "", "Athena",
				releases[(k + s) % 5], tag_sources, 1};
		struct rc_sw *sw = &sw_pool[s];
		memset(sw, 0, sizeof(*sw));
		sw->cmtconfigs = cmtconfigs;
		sw->ncmtconfigs = (size_t)(1 + s % 3);
		/* Half of them publish cvmfs; the others rely on their tags. */
		sw->cvmfs = s % 2 ? cvmfs_all : cvmfs_atlas;
		sw->ncvmfs = s % 4 == 3 ? 0 : (size_t)(1 + s % 2);
		sw->containers = containers_any;
		sw->ncontainers = (size_t)(s % 2);
		sw->cpu = s % 3 ? &cpu_hw : NULL;
		sw->tags = tags[s];
		sw->ntags = 5;
	}
}

static double uniform(struct gb_rng *g, double lo, double hi)
{
	return lo + (hi - lo) * gb_rng_uniform(g);
}

static long below(struct gb_rng *g, long n)
{
	return (long)gb_rng_below(g, (uint64_t)n);
}

/* Queue i draws only from `g` in order, so the first n queues of a larger
** grid are the grid of n queues. */
static void build_grid(struct gb_rng *g, int nq)
{
	static const char *const status[] = {"online", "online", "online",
					     "online", "online", "online",
					     "online", "online", "offline",
					     "brokeroff"};
	static const char *const other_nuclei[] = {"", "", "", "BNL-ATLAS",
						   "FZK-LCG2", "RAL-LCG2"};
	static const char *const conns[] = {"", "full", "full#IPv4", "http"};
	for (int i = 0; i < nq; i++) {
		struct jb_queue *q = &queues[i];
		memset(q, 0, sizeof(*q));
		snprintf(names[i], sizeof(names[i]), "%s%04d_%s",
			 below(g, 50) == 0 ? "TEST_" : "", i,
			 below(g, 2) ? "UCORE" : "MCORE");
		snprintf(sites[i], sizeof(sites[i]), "SITE%03d", i / 3);
		q->name = names[i];
		q->site = sites[i];
		q->status = status[below(g, 10)];
		q->nucleus = below(g, 10) == 0 ? "CERN-PROD"
					       : other_nuclei[below(g, 6)];
		q->core_count = below(g, 3) == 0 ? 1 : (below(g, 2) ? 0 : 8);
		q->corepower = uniform(g, 8, 16);
		q->max_rss_per_core =
			below(g, 5) == 0 ? 0 : 2000 + 500.0 * below(g, 5);
		q->min_rss_per_core = 0;
		q->maxwdir = 10000.0 + 5000.0 * (double)below(g, 7);
		q->maxtime = below(g, 4) == 0 ? 0 : 86400.0 * (1 + below(g, 4));
		long rel = below(g, 10);
		if (rel < 4) {
			q->releases = JB_REL_AUTO;
			q->sw = &sw_pool[below(g, NSW)];
		} else if (rel < 7) {
			q->releases = JB_REL_ANY;
		} else {
			q->releases = JB_REL_LIST;
			q->release_list = rel == 9 ? old_releases : releases;
			q->nrelease_list = rel == 9 ? 2 : 5;
		}
		q->direct_access = below(g, 4) == 0;
		q->wnconnectivity = conns[below(g, 4)];
		q->max_diskio = below(g, 3) == 0 ? uniform(g, 500, 2000) : NAN;
		q->diskio_avg = uniform(g, 0, 1500);
		q->fairsharepolicy =
			below(g, 8) == 0 ? "type=evgensimul:100%" : "";
		q->es = below(g, 10) == 0 ? JB_ES_ALLOWED : JB_ES_NONE;
		q->transferring_limit = 0;
		q->num_slots = below(g, 5) == 0 ? 0 : -1;
		q->last_pilot = NOW - below(g, 14400);
		q->last_start = NOW - below(g, 7200);
		q->storage = "DATADISK";
		q->storage_free = uniform(g, 50, 5000);
		q->storage_blacklisted = below(g, 50) == 0;
		struct jb_counts *k = &q->counts;
		k->running = (double)below(g, 2000);
		k->activated = (double)below(g, (long)k->running / 2 + 30);
		k->assigned = (double)below(g, 50);
		k->starting = (double)below(g, 20);
		k->defined = (double)below(g, 20);
		k->transferring = (double)below(g, 2100);
		k->nbatchjob = (double)below(g, 40);
		links[i] = (struct nw_link){
			(double)below(g, 180),
			below(g, 2) ? uniform(g, 0, 400) : NAN, NAN,
			below(g, 2) ? uniform(g, 0, 400) : NAN,
			below(g, 30) == 0 ? -1 : (double)below(g, 12)};
		q->link = below(g, 20) == 0 ? NULL : &links[i];
		q->missing_files = below(g, 3) == 0 ? 0 : below(g, 120);
		q->missing_size = 0.05 * (double)q->missing_files;
		q->local_size = uniform(g, 0, 10);
	}
}

static void build_task(struct jb_task *t, struct rc_need *need)
{
	memset(need, 0, sizeof(*need));
	if (rc_parse_arch("x86_64-centos7-gcc8-opt#x86_64-intel-avx2",
			  &need->arch) != GB_OK) {
		fprintf(stderr, "bench: cannot parse the architecture\n");
		exit(1);
	}
	need->sw_project = "Athena";
	need->sw_version = "21.0.38";
	need->kind = RC_RELEASE;
	for (int j = 0; j < NJOBS; j++)
		jobs[j] = (struct jb_job){4711000000LL + j, 1000 - j % 7,
					  2048.5, 2};
	memset(t, 0, sizeof(*t));
	t->task_id = 36100001;
	t->gshare = gshare;
	t->nucleus = "CERN-PROD";
	t->scope = TB_SCOPE_SATELLITES;
	t->priority = 500;
	t->processing_type = "simul";
	t->io_intensity = 100;
	t->diskio = 800;
	t->core_count = 8;
	t->ram_count = 2000;
	t->out_disk_count = 500;
	t->out_disk_unit = JB_OUT_KB_PER_EVENT;
	t->work_disk_count = 1000;
	t->cpu_time = 300;
	t->cpu_efficiency = 90;
	t->base_time = 600;
	t->ip_connectivity = "";
	t->sw = need;
	t->total_input_gb = 200;
	t->jobs = jobs;
	t->njobs = NJOBS;
}

static double elapsed_us(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e6 +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Figures of one timed loop. */
struct timing {
	double per_s;  /* iterations per second of the whole loop */
	double median; /* us */
	double p99;    /* us */
};

/* Sort `us` in place and summarise it. */
static struct timing summarise(double *us, int n, double total_us)
{
	qsort(us, (size_t)n, sizeof(*us), cmp_double);
	return (struct timing){(double)n / (total_us / 1e6), us[n / 2],
			       us[(int)((double)(n - 1) * 0.99)]};
}

static void report(const char *what, const struct timing *t)
{
	printf("%-9s %9.0f per s   median %8.2f us   p99 %8.2f us\n", what,
	       t->per_s, t->median, t->p99);
}

/* What every decision must at least do: read each queue's fields once. */
static double baseline_pass(int nq)
{
	double acc = 0;
	for (int i = 0; i < nq; i++) {
		const struct jb_queue *q = &queues[i];
		acc += q->counts.running + q->counts.activated +
		       q->counts.assigned + q->storage_free + q->maxtime +
		       (double)(unsigned char)q->name[0] +
		       (double)(unsigned char)q->status[0] +
		       (q->link ? q->link->queued_files : 0);
	}
	return acc;
}

/* Everything one decision reads besides the queues. */
struct setup {
	const struct jb_task *task;
	const struct jb_params *params;
	const struct jb_env *env;
	struct jb_plan *plan;
	struct dec_decision *d;
};

/* Time `n` decisions over the first `nq` queues, each seeded by its index
** as the distribution's generator; `us` has n slots. */
static struct timing time_decisions(const struct setup *su, int nq, int n,
				    double *us)
{
	struct gb_rng rng;
	struct timespec t0, t1, a, b;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		gb_rng_seed(&rng, (uint64_t)i);
		clock_gettime(CLOCK_MONOTONIC, &a);
		jb_broker(su->task, queues, (size_t)nq, su->params, su->env,
			  &rng, cands, su->d, su->plan);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us[i] = elapsed_us(&a, &b);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return summarise(us, n, elapsed_us(&t0, &t1));
}

/* Time `n` baseline passes over the first `nq` queues. */
static struct timing time_baseline(int nq, int n, double *us)
{
	volatile double sink = 0;
	struct timespec t0, t1, a, b;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &a);
		sink += baseline_pass(nq);
		clock_gettime(CLOCK_MONOTONIC, &b);
		us[i] = elapsed_us(&a, &b);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	(void)sink;
	return summarise(us, n, elapsed_us(&t0, &t1));
}

/* Run 50 decisions over the first `nq` queues to warm the caches; returns
** 0, or -1 when jb_broker refuses the input. */
static int warm(const struct setup *su, int nq)
{
	struct gb_rng rng;
	for (int i = 0; i < 50; i++) {
		gb_rng_seed(&rng, (uint64_t)i);
		if (jb_broker(su->task, queues, (size_t)nq, su->params, su->env,
			      &rng, cands, su->d, su->plan) != GB_OK) {
			fprintf(stderr, "bench: jb_broker failed at %d queues\n",
				nq);
			return -1;
		}
	}
	return 0;
}

/* Candidates entering the weight stage: those that passed the filters. */
static int survivors(const struct dec_decision *d)
{
	int weighed = -1;
	for (size_t s = 0; s < d->nstages; s++)
		if (strcmp(d->stages[s].name, "weight") == 0)
			weighed = d->stages[s].in;
	return weighed;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	if (n < 10 || n > 1000000) {
		fprintf(stderr, "usage: bench_jobbroker [decisions 10..1e6]\n");
		return 2;
	}
	double *us = calloc((size_t)n, sizeof(*us));
	double *base_us = calloc((size_t)n, sizeof(*base_us));
	if (us == NULL || base_us == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		return 1;
	}

	struct gb_rng g;
	gb_rng_seed(&g, 20240601);
	build_sw();
	build_grid(&g, NQ_MAX);
	struct jb_task task;
	struct rc_need need;
	build_task(&task, &need);
	struct jb_params params;
	jb_params_resolve(NULL, gshare, &params);
	struct jb_env env = {NOW, 2500, NULL};
	struct dec_decision d;
	struct jb_plan plan = {.job_queue = job_queue,
			       .job_status = job_status};
	struct setup su = {&task, &params, &env, &plan, &d};

	/* Warm the caches and check the decision once. */
	if (warm(&su, NQ) != 0)
		return 1;
	printf("grid: %d queues, %d jobs; %d survive the filters, best %zu, "
	       "%zu jobs assigned, outcome %s\n",
	       NQ, NJOBS, survivors(&d), plan.nbest, plan.nassigned,
	       dec_outcome_name(d.outcome));
	char line[128];
	for (size_t s = 0; s < d.nstages; s++) {
		if (d.stages[s].in == d.stages[s].out)
			continue;
		dec_stage_format(&d.stages[s], line, sizeof(line));
		printf("  %s\n", line);
	}

	struct timing dec = time_decisions(&su, NQ, n, us);
	report("decision", &dec);
	struct timing base = time_baseline(NQ, n, base_us);
	report("baseline", &base);
	printf("ratio decision/baseline (median): %.1f\n",
	       base.median > 0 ? dec.median / base.median : 0.0);

	/* The same grid scaled: each size against its own baseline. */
	static const int sizes[] = {100, 1000, NQ_MAX};
	printf("\nscaling (%d decisions per size; baseline = one read pass "
	       "over the same queues)\n",
	       n);
	printf("%7s %8s %11s %10s %10s %12s %7s\n", "queues", "survive",
	       "decisions/s", "median us", "p99 us", "baseline us", "ratio");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int nq = sizes[k];
		if (warm(&su, nq) != 0)
			return 1;
		int alive = survivors(&d);
		dec = time_decisions(&su, nq, n, us);
		base = time_baseline(nq, n, base_us);
		printf("%7d %8d %11.0f %10.2f %10.2f %12.2f %7.1f\n", nq, alive,
		       dec.per_s, dec.median, dec.p99, base.median,
		       base.median > 0 ? dec.median / base.median : 0.0);
	}
	free(us);
	free(base_us);
	return 0;
}
