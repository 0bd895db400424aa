/*
** decide.c — the task, job and analysis decision paths (decide.h).
**
** Each is the sequence of engine calls the specification describes, in
** one place: resolving the model into the engine's input, resolving the
** parameters for the request's gshare, seeding the generator, running the
** brokerage and deriving what follows from the verdict (the retry time,
** each job's status). The callers only load and store.
*/
#include "model/decide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_error.h"
#include "rng.h"

/*
** A decision does not depend on the order its candidates were listed in:
** they are considered in name order, the order the worker's loaders read
** them in (ORDER BY name), whatever order a scenario file gives. The draws
** (TB-13, PJ-36) walk the candidates in that order, so the same inputs in
** any order give the same decision.
*/
static int nucleus_cmp(const void *x, const void *y)
{
	return strcmp(((const struct tb_nucleus *)x)->name,
		      ((const struct tb_nucleus *)y)->name);
}

static int queue_cmp(const void *x, const void *y)
{
	return strcmp(((const struct gm_queue *)x)->q.name,
		      ((const struct gm_queue *)y)->q.name);
}

/* `g` with its queues in name order, in `a` (`g` itself untouched). */
static int grid_in_order(const struct gm_grid *g, struct arena *a,
			 struct gm_grid *out)
{
	*out = *g;
	if (g->nqueues < 2)
		return GB_OK;
	struct gm_queue *q = arena_alloc(a, g->nqueues * sizeof(*q));
	if (q == NULL)
		return GB_ETOOBIG;
	memcpy(q, g->queues, g->nqueues * sizeof(*q));
	qsort(q, g->nqueues, sizeof(*q), queue_cmp);
	out->queues = q;
	return GB_OK;
}

int md_decide_task(const struct tb_task *task, const struct tb_nucleus *nuclei,
		   size_t n, const struct prm_set *params, long long now,
		   uint64_t seed, struct arena *a, struct md_task *out)
{
	if (task == NULL || (n && nuclei == NULL) || params == NULL ||
	    a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	tb_params_resolve(params, task->gshare, &out->params);
	/* one slot at least, so no nucleus is a decision, not an error */
	out->cands = arena_alloc(a, (n ? n : 1) * sizeof(*out->cands));
	struct tb_nucleus *sorted = arena_alloc(a, (n ? n : 1) * sizeof(*sorted));
	if (out->cands == NULL || sorted == NULL)
		return GB_ETOOBIG;
	if (n)
		memcpy(sorted, nuclei, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), nucleus_cmp);
	nuclei = sorted;
	struct gb_rng rng;
	gb_rng_seed(&rng, seed);
	int rc = tb_broker(task, nuclei, n, &out->params, &rng, out->cands,
			   &out->dec);
	if (rc != GB_OK)
		return rc;
	out->retry_at = out->dec.outcome == DEC_PENDING
				? now + out->dec.retry_after_s
				: 0;
	return GB_OK;
}

/* Per-job arrays of a plan, every job unassigned. */
static int plan_alloc(struct arena *a, size_t nj, struct jb_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->job_queue = arena_alloc(a, (nj ? nj : 1) * sizeof(*plan->job_queue));
	plan->job_status =
		arena_alloc(a, (nj ? nj : 1) * sizeof(*plan->job_status));
	if (plan->job_queue == NULL || plan->job_status == NULL)
		return GB_ETOOBIG;
	for (size_t i = 0; i < nj; i++) {
		plan->job_queue[i] = -1;
		plan->job_status[i] = JB_JOB_UNASSIGNED;
	}
	return GB_OK;
}

/* Where the parts both job brokerages share go (md_jobs, md_analysis). */
struct resolved {
	struct gm_request *req;
	struct jb_queue **queues;
	size_t *nqueues;
	struct jb_env *env;
	struct dec_candidate **cands;
	struct jb_plan *plan;
};

/* `r` resolved on `grid` with its queues in name order (`g` gets that
** grid), a candidate slot per queue and a plan with every job
** unassigned. */
static int resolve(const struct gm_grid *grid, const struct gm_request *r,
		   long long now, struct arena *a, struct gm_grid *g,
		   const struct resolved *x)
{
	*x->req = *r;
	int rc = grid_in_order(grid, a, g);
	if (rc == GB_OK)
		rc = gm_resolve(g, x->req, now, a, x->queues, x->env);
	if (rc != GB_OK)
		return rc;
	size_t nq = g->nqueues;
	*x->nqueues = nq;
	/* one slot at least, so an empty grid is a decision, not an error */
	*x->cands = arena_alloc(a, (nq ? nq : 1) * sizeof(**x->cands));
	if (*x->cands == NULL)
		return GB_ETOOBIG;
	return plan_alloc(a, x->req->njobs, x->plan);
}

int md_decide_jobs(const struct gm_grid *grid, const struct gm_request *r,
		   const struct prm_set *params, long long now, uint64_t seed,
		   struct arena *a, struct md_jobs *out)
{
	if (grid == NULL || r == NULL || params == NULL || a == NULL ||
	    out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	struct gm_grid g;
	struct resolved x = {&out->req, &out->queues, &out->nqueues,
			     &out->env, &out->cands, &out->plan};
	int rc = resolve(grid, r, now, a, &g, &x);
	if (rc != GB_OK)
		return rc;
	size_t nq = out->nqueues, nj = out->req.njobs;
	jb_params_resolve(params, out->req.t.gshare, &out->params);
	struct gb_rng rng;
	gb_rng_seed(&rng, seed);
	rc = jb_broker(&out->req.t, out->queues, nq, &out->params, &out->env,
		       &rng, out->cands, &out->dec, &out->plan);
	if (rc != GB_OK)
		return rc;
	/* PJ-35: a pending task, and jobs no best queue could take, are
	** tried again in an hour. */
	if (out->dec.outcome == DEC_PENDING || out->plan.nassigned < nj)
		out->retry_at = now + JB_PENDING_RETRY_S;
	return GB_OK;
}

/* The throttle held the task: a pending decision that names every queue,
** weighs none and says which cap in its note. */
static void throttled_decision(struct md_analysis *out)
{
	dec_init(&out->dec, out->cands, out->nqueues);
	for (size_t i = 0; i < out->nqueues; i++)
		out->cands[i].name = out->queues[i].name;
	out->dec.outcome = DEC_PENDING;
	out->dec.chosen = -1;
	out->dec.retry_after_s = AB_PENDING_RETRY_S;
	const struct an_throttle *th = &out->throttle;
	snprintf(out->dec.note, sizeof(out->dec.note),
		 "%s: throttled, %s %g > %g", th->rule, th->code, th->value,
		 th->limit);
}

int md_decide_analysis(const struct gm_grid *grid, const struct gm_request *r,
		       const struct gm_analysis_state *st,
		       enum an_task_class tclass, const struct prm_set *params,
		       long long now, uint64_t seed, struct arena *a,
		       struct md_analysis *out)
{
	(void)seed; /* no draw: the analysis brokerage is deterministic */
	if (grid == NULL || r == NULL || st == NULL || params == NULL ||
	    a == NULL || out == NULL)
		return GB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->task_class = tclass;
	out->user = st->user;
	out->user.task_class = tclass;
	struct gm_grid sorted;
	const struct gm_grid *g = &sorted;
	struct resolved x = {&out->req, &out->queues, &out->nqueues,
			     &out->env, &out->cands, &out->plan};
	int rc = resolve(grid, r, now, a, &sorted, &x);
	size_t nq = out->nqueues, nj = out->req.njobs;
	if (rc == GB_OK)
		rc = an_throttle_check(&out->user, params, &out->throttle);
	if (rc != GB_OK)
		return rc;
	if (out->throttle.throttled) {
		throttled_decision(out);
	} else {
		rc = gm_analysis_resolve(g, out->queues, &out->req, st, tclass,
					 a, &out->aqs, &out->task);
		if (rc == GB_OK)
			rc = ab_broker(&out->task, out->aqs, nq, params, now,
				       out->cands, &out->dec, &out->aplan);
		if (rc == GB_OK && out->dec.outcome == DEC_ASSIGNED)
			rc = ab_distribute(&out->aplan, nj,
					   out->plan.job_queue);
		if (rc != GB_OK)
			return rc;
	}
	/* The production plan's shape, so the record, the store and the
	** jobs.* events serve both brokerages. */
	struct jb_plan *p = &out->plan;
	for (size_t k = 0; k < out->aplan.nbest && k < JB_BEST_N; k++)
		p->best[p->nbest++] = out->aplan.best[k];
	for (size_t i = 0; i < nj; i++) {
		if (p->job_queue[i] < 0)
			continue;
		const struct jb_queue *q = &out->queues[p->job_queue[i]];
		p->job_status[i] = q->missing_files == 0 && q->missing_size <= 0
					   ? JB_JOB_ACTIVATED
					   : JB_JOB_ASSIGNED;
		p->nassigned++;
	}
	if (out->dec.outcome == DEC_PENDING || p->nassigned < nj)
		out->retry_at = now + AB_PENDING_RETRY_S;
	return GB_OK;
}
