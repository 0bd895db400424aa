/*
** jbfixture.h — the job-brokerage test fixture shared by test_jobbroker.c
** (filter rows PJ-01..PJ-27) and test_jobbroker_weights.c (PJ-28..PJ-36,
** stages, errors, randomized invariants).
**
** A header of static functions rather than a jbfixture.c because the build
** turns every tests/unit/<room>/test_*.c into its own executable and knows no
** other source there. Every helper is static and JBFX_FN (marked unused):
** each test file uses only some of them, and -Werror would otherwise fail
** the build on the rest.
**
** The fixture is a grid where every queue passes every rule: a test
** changes the one attribute a rule reads and checks who survives and why.
*/
#ifndef GB_JBFIXTURE_H
#define GB_JBFIXTURE_H

#include "gbtest.h"

#include <stdint.h>
#include <stdlib.h>

#include "gb_error.h"
#include "jobbroker.h"
#include "params.h"
#include "rng.h"

#define JBFX_FN __attribute__((unused))

#define MAXQ 64
#define MAXJ 2000
#define NOW 1700000000LL

struct fx {
	struct jb_queue q[MAXQ];
	struct nw_link link[MAXQ];
	size_t n;
	struct jb_job jobs[MAXJ];
	struct jb_task t;
	struct prm_kv kv[8];
	struct prm_set set;
	struct jb_params p;
	struct jb_env env;
	struct dec_candidate cands[MAXQ];
	struct dec_decision d;
	long jq[MAXJ];
	enum jb_job_status js[MAXJ];
	struct jb_plan plan;
	struct gb_rng rng;
};

/* A fresh fixture: one job of 1000 events and 100 MB input, no queues. */
JBFX_FN
static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->t.task_id = 36100001;
	f->t.gshare = "MC Simul";
	f->t.nucleus = "NUC";
	f->t.scope = TB_SCOPE_SATELLITES;
	f->t.priority = 500;
	f->t.processing_type = "simul";
	f->t.io_intensity = 100;
	f->t.core_count = 1;
	f->t.ram_count = 2000;
	f->t.cpu_time = 300;
	f->t.cpu_efficiency = 90;
	f->t.base_time = 600;
	f->t.ip_connectivity = "";
	f->t.jobs = f->jobs;
	f->t.njobs = 1;
	f->jobs[0] = (struct jb_job){4711000001LL, 1000, 100, 1};
	f->set.kv = f->kv;
	f->env.now = NOW;
	return f;
}

/* A queue that passes every rule: online satellite, 100 running. */
JBFX_FN
static struct jb_queue *fx_add(struct fx *f, const char *name)
{
	size_t i = f->n++;
	struct jb_queue *q = &f->q[i];
	memset(q, 0, sizeof(*q));
	q->name = name;
	q->status = "online";
	q->site = name;
	q->nucleus = "";
	q->corepower = 10;
	q->wnconnectivity = "";
	q->max_diskio = NAN;
	q->fairsharepolicy = "";
	q->num_slots = -1;
	q->last_pilot = NOW - 120;
	q->last_start = NOW - 300;
	q->storage = "DATADISK";
	q->storage_free = 1000;
	q->counts.running = 100;
	f->link[i] = (struct nw_link){0, NAN, NAN, NAN, 3};
	q->link = &f->link[i];
	return q;
}

JBFX_FN
static void fx_param(struct fx *f, const char *name, double v)
{
	f->kv[f->set.n++] = (struct prm_kv){name, v};
}

JBFX_FN
static int fx_try(struct fx *f, uint64_t seed)
{
	jb_params_resolve(&f->set, f->t.gshare, &f->p);
	gb_rng_seed(&f->rng, seed);
	f->plan.job_queue = f->jq;
	f->plan.job_status = f->js;
	return jb_broker(&f->t, f->q, f->n, &f->p, &f->env, &f->rng, f->cands,
			 &f->d, &f->plan);
}

JBFX_FN
static void fx_run(struct fx *f, uint64_t seed)
{
	assert_int_equal(fx_try(f, seed), GB_OK);
}

JBFX_FN
static const struct dec_candidate *cand(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->d.ncands; i++)
		if (strcmp(f->cands[i].name, name) == 0)
			return &f->cands[i];
	fail_msg("no candidate %s", name);
	return NULL;
}

JBFX_FN
static void assert_alive(const struct fx *f, const char *name)
{
	const struct dec_candidate *c = cand(f, name);
	if (dec_dropped(c))
		fail_msg("%s dropped by %s (%s)", name, c->reasons[0].rule,
			 c->reasons[0].code);
	assert_true(isfinite(c->weight) && c->weight > 0);
}

/* Assert `name` was dropped by `rule`/`code` and return that reason. */
JBFX_FN
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

JBFX_FN
static const struct dec_stage *stage(const struct fx *f, const char *name)
{
	for (size_t i = 0; i < f->d.nstages; i++)
		if (strcmp(f->d.stages[i].name, name) == 0)
			return &f->d.stages[i];
	fail_msg("no stage %s", name);
	return NULL;
}

JBFX_FN
static void assert_stage(const struct fx *f, const char *name, int in,
			 int out)
{
	const struct dec_stage *s = stage(f, name);
	if (s->in != in || s->out != out)
		fail_msg("stage %s: %d -> %d, expected %d -> %d", name, s->in,
			 s->out, in, out);
}

JBFX_FN
static void assert_reason_text(const struct dec_reason *r, const char *want)
{
	char buf[256];
	dec_reason_format(r, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

JBFX_FN
static void fx_jobs(struct fx *f, size_t n)
{
	for (size_t j = 0; j < n; j++)
		f->jobs[j] = (struct jb_job){(long long)(1000 + j), 1000, 100,
					     1};
	f->t.njobs = n;
}

JBFX_FN
static void count_per_queue(const struct fx *f, int *per)
{
	for (size_t i = 0; i < f->n; i++)
		per[i] = 0;
	for (size_t j = 0; j < f->t.njobs; j++)
		if (f->plan.job_queue[j] >= 0)
			per[f->plan.job_queue[j]]++;
}

#endif
