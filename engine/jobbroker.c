/*
** jobbroker.c — production job brokerage (PJ-01..PJ-36, FC-06; RC-* through
** swcheck.c, NW-* through netweight.c): the pipeline. The filter rows
** (PJ-01..PJ-27) live in jobbroker_filters.c with their interpretations;
** the context both files read is in jobbroker_internal.h.
**
** A decision runs candidate-major: for each queue the rows of jb_filters[]
** run in table order and the first row that rejects drops the queue (one
** reason, the rule ID, a stable code and the numbers compared). A per-row
** drop counter then becomes the PanDA-style stage summary ("150 -> 120
** candidates, 20% cut : memory"). Candidate-major rather than stage-major
** because the per-queue facts (associated with the nucleus, pre-assigned,
** cores) are computed once per queue and stay in cache while every rule
** reads them; a decision over 1000 queues must stay under 50 us. Nothing
** here allocates, formats text per queue or parses per queue what can be
** parsed once per task: the task's ipConnectivity, its smallest job (and
** its disk) and its flags are read once into struct jb_ctx. Rows that
** cannot drop anything for this task (the scout rules for non-scouts, ...)
** are left out of the per-queue loop (a bit mask for jb_filter_queue) and
** show in == out. Queues are validated, and their candidates reset, in the
** same pass, so on GB_EINVAL the outputs hold a partial decision to ignore.
**
** After the filters: weights (PJ-28..PJ-32), the cap filters (PJ-33,
** PJ-34, MIN_WEIGHT), the best JB_BEST_N (PJ-35) and the distribution of
** the jobs by weighted draws whose counts move with every job (PJ-36).
** Each of these is a stage too, so the stage list is one chain where every
** stage's `in` is the previous stage's `out`.
**
** Interpretations (where the seeds are silent or the public code differs):
** - PJ-02: the pre-assignment is ignored for merge jobs when it has been
**   skipped for JB_PREASSIGN_GIVEUP_S (since > 0); out->note says so.
** - PJ-17/PJ-21 look at the task's smallest job (fewest events, first on
**   ties), found once in setup_ctx().
** - PJ-27: express (processingType containing "urgent" or priority >=
**   1000) is decided once in setup_ctx().
** - PJ-24 compares with the raw running count, PJ-33/34 with PJ-28's.
** - PJ-28: the bootstrap terms (nBatchJob, numSlots, starting) apply only up
**   to MAX_PRIO_TO_BOOTSTRAP, as in the public code. numSlots > 0 gives
**   max(numSlots / cores, running), cores being the queue's coreCount (the
**   task's on a coreCount 0 queue), unrounded; numSlots 0 adds the starting
**   jobs to running (the public code's sum, not the seed's max).
** - PJ-30: manyAssigned = clamp((assigned+1)/(activated+1), 1, 2), the
**   public code's smoothing (the seed's assigned/activated divides by zero
**   on an empty queue).
** - PJ-33/34: cap = max(NQUEUELIMITSITE, 2 x running): the public code's
**   floor; "2 x running" alone would never let an empty queue start. An
**   express task (PJ-27's: urgent or priority >= 1000) has no cap, in
**   PJ-33/34 nor in PJ-36, as in the public code: its queues take every
**   job their weight draws.
**   MIN_WEIGHT (off at 0) is reported as rule PJ-35, "below_min_weight".
** - PJ-35: ties in weight keep the lower queue index first.
** - PJ-36: a best queue accepts jobs while activated + starting (+ assigned
**   when its input is not local) < cap; each job raises activated (input
**   local: the job is activated) or assigned (the job waits for its input)
**   and the queue's weight is recomputed from the new counts. A job no best
**   queue accepts stays unassigned; with none assigned the task is pending.
** - A request places at least one job: njobs == 0 is GB_EINVAL.
** - Candidates dropped after weighting (caps, best 10) keep their weight
**   breakdown in wexpl so the explanation can say what they weighed.
*/
#include "jobbroker.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gb_error.h"
#include "jobbroker_internal.h"

/* ---- small helpers ---------------------------------------------------- */

static int contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* PJ-03: the queue is associated with the task's nucleus. */
static int is_associated(const struct jb_task *t, const struct jb_queue *q)
{
	/* The first-byte test spares a strcmp call for most satellites. */
	return t->nucleus && t->nucleus[0] && q->nucleus &&
	       q->nucleus[0] == t->nucleus[0] &&
	       strcmp(q->nucleus, t->nucleus) == 0;
}

static int is_preassigned(const struct jb_task *t, const char *name)
{
	for (size_t i = 0; i < t->npreassigned; i++)
		if (strcmp(t->preassigned[i], name) == 0)
			return 1;
	return 0;
}

static void note_append(struct dec_decision *out, const char *fmt, ...)
{
	size_t used = strlen(out->note);
	if (used + 3 >= sizeof(out->note))
		return;
	if (used > 0) {
		memcpy(out->note + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->note + used, sizeof(out->note) - used, fmt, ap);
	va_end(ap);
}

/* ---- exported pieces -------------------------------------------------- */

double jb_running(const struct jb_queue *q, const struct jb_task *t,
		  const struct jb_params *p)
{
	const struct jb_counts *k = &q->counts;
	double r = k->running;
	if ((double)t->priority > p->max_prio_bootstrap)
		return r; /* bootstrap terms are for low-priority work only */
	if (r < JB_BOOTSTRAP_BATCH_CAP && k->nbatchjob > r)
		r = jb_fmax(r, jb_fmin(k->nbatchjob, JB_BOOTSTRAP_BATCH_CAP));
	/* numSlots counts cores a queue was given (Harvester slots), not
	** jobs: a job takes the queue's coreCount of them (the task's on a
	** coreCount 0 queue, the cores PJ-13 says a job uses there). */
	long cores = q->core_count > 0 ? q->core_count : t->core_count;
	if (cores < 1)
		cores = 1;
	if (q->num_slots > 0)
		r = jb_fmax(r, (double)q->num_slots / (double)cores);
	else if (q->num_slots == 0)
		r += k->starting;
	return r;
}

double jb_base_weight(const struct jb_counts *k, double running,
		      int input_local)
{
	if (input_local) /* PJ-29: assigned jobs wait for other data */
		return (running + 1) /
		       (k->activated + k->starting + k->defined + 10);
	double many = jb_fmin(2.0, jb_fmax(1.0, (k->assigned + 1) /
						   (k->activated + 1)));
	return (running + 1) / ((k->activated + k->assigned + k->starting +
				 k->defined + 10) *
				many);
}

double jb_data_factor(double local_gb, double total_gb, long missing_files)
{
	if (!(total_gb > 0))
		return 1.0;
	return (local_gb + total_gb) /
	       (total_gb * ((double)missing_files / 100.0 + 1.0));
}

enum jb_out_unit jb_out_unit_parse(const char *unit)
{
	static const char suffix[] = "PerEvent";
	size_t k = sizeof(suffix) - 1;
	size_t n = unit != NULL ? strlen(unit) : 0;
	if (n < k || strcmp(unit + n - k, suffix) != 0)
		return JB_OUT_RATIO;
	if (strncmp(unit, "GB", 2) == 0)
		return JB_OUT_GB_PER_EVENT;
	if (strncmp(unit, "MB", 2) == 0)
		return JB_OUT_MB_PER_EVENT;
	return JB_OUT_KB_PER_EVENT;
}

const char *jb_out_unit_name(enum jb_out_unit u)
{
	switch (u) {
	case JB_OUT_KB_PER_EVENT:
		return "kBPerEvent";
	case JB_OUT_MB_PER_EVENT:
		return "MBPerEvent";
	case JB_OUT_GB_PER_EVENT:
		return "GBPerEvent";
	case JB_OUT_RATIO:
		break;
	}
	return "kB";
}

const char *jb_job_status_name(enum jb_job_status s)
{
	switch (s) {
	case JB_JOB_ASSIGNED:
		return "assigned";
	case JB_JOB_ACTIVATED:
		return "activated";
	case JB_JOB_UNASSIGNED:
		break;
	}
	return "unassigned";
}

void jb_params_resolve(const struct prm_set *set, const char *gshare,
		       struct jb_params *out)
{
	out->nqueued_sat_cap = prm_get(set, "NQUEUED_SAT_CAP");
	out->nqueued_nuc_cap = prm_get(set, "NQUEUED_NUC_CAP_FOR_JOBS");
	out->io_cutoff = prm_get(set, "IO_INTENSITY_CUTOFF");
	out->size_cutoff_move = prm_get(set, "SIZE_CUTOFF_TO_MOVE_INPUT");
	out->num_cutoff_move = prm_get(set, "NUM_CUTOFF_TO_MOVE_INPUT");
	out->max_diskio_default = prm_get(set, "MAX_DISKIO_DEFAULT");
	out->nw_active = prm_get(set, "NW_ACTIVE") != 0;
	out->nw_queue_importance = prm_get(set, "NW_QUEUE_IMPORTANCE");
	out->nw_threshold = prm_get(set, "NW_THRESHOLD");
	out->nw_multiplier = prm_get(set, "NW_WEIGHT_MULTIPLIER");
	out->max_prio_bootstrap = prm_get(set, "MAX_PRIO_TO_BOOTSTRAP");
	out->nqueue_limit = prm_get_sfx(set, "NQUEUELIMITSITE", gshare);
	out->storage_min_free = prm_get(set, "STORAGE_MIN_FREE_SIZE");
	out->min_weight = prm_get_sfx(set, "MIN_WEIGHT", gshare);
}

/* ---- weights ---------------------------------------------------------- */

/* The pieces of one queue's weight (PJ-28..PJ-32). */
struct jb_wparts {
	double running; /* PJ-28 */
	double base;    /* PJ-29/30 */
	double data;    /* PJ-31 */
	double nw;      /* PJ-32, reported even when not applied */
	double mult;    /* data x (nw when NW_ACTIVE) */
	double weight;
	int input_local;
};

static void weigh(const struct jb_ctx *ctx, const struct jb_queue *q,
		  int associated, struct jb_wparts *w)
{
	struct nw_weight nw;
	w->running = jb_running(q, ctx->t, ctx->p);
	w->input_local = q->missing_files == 0;
	w->base = jb_base_weight(&q->counts, w->running, w->input_local);
	w->data = jb_data_factor(q->local_size, ctx->t->total_input_gb,
				 q->missing_files);
	nw_compute(q->link, associated, &ctx->nwp, &nw);
	w->nw = nw.weight;
	w->mult = w->data * (ctx->p->nw_active ? w->nw : 1.0);
	w->weight = w->base * w->mult;
}

static void explain_weight(const struct jb_ctx *ctx,
			   const struct jb_wparts *w, struct dec_reason *r)
{
	memset(r, 0, sizeof(*r));
	r->rule = "PJ-30";
	r->code = "weight";
	r->fmt = ctx->p->nw_active
			 ? "(running+1)/(queued+10)/manyAssigned %.4g x data "
			   "%.4g x network %.4g = %.4g"
			 : "(running+1)/(queued+10)/manyAssigned %.4g x data "
			   "%.4g (network %.4g, not applied) = %.4g";
	r->v[0] = w->base;
	r->v[1] = w->data;
	r->v[2] = w->nw;
	r->v[3] = w->weight;
}

/* The per-queue cap of PJ-33/PJ-34/PJ-36; an express task has none. */
static double queue_cap(const struct jb_ctx *ctx, double running)
{
	if (ctx->express)
		return INFINITY;
	return jb_fmax(ctx->p->nqueue_limit, 2 * running);
}

/* ---- validation ------------------------------------------------------- */

/* Finite and >= 0; two comparisons, both false for NaN. */
static inline int nonneg(double x)
{
	return x >= 0 && x <= DBL_MAX;
}

static int counts_valid(const struct jb_counts *k)
{
	return nonneg(k->running) && nonneg(k->defined) &&
	       nonneg(k->assigned) && nonneg(k->activated) &&
	       nonneg(k->starting) && nonneg(k->transferring) &&
	       nonneg(k->nbatchjob);
}

static int queue_valid(const struct jb_queue *q)
{
	if (q->name == NULL || q->core_count < 0 || !nonneg(q->corepower) ||
	    q->corepower == 0 || !nonneg(q->min_rss_per_core) ||
	    !nonneg(q->max_rss_per_core) || !nonneg(q->maxwdir) ||
	    !nonneg(q->mintime) || !nonneg(q->maxtime) ||
	    (q->nrelease_list > 0 && q->release_list == NULL) ||
	    (unsigned)q->releases > JB_REL_LIST ||
	    (unsigned)q->es > JB_ES_ONLY ||
	    (!isnan(q->max_diskio) && !(q->max_diskio >= 0)) ||
	    !nonneg(q->diskio_avg) || !nonneg(q->transferring_limit) ||
	    q->num_slots < -1 || !isfinite(q->storage_free) ||
	    !nonneg(q->local_size) || !nonneg(q->missing_size) ||
	    q->missing_files < 0 || q->last_pilot < 0 || q->last_start < 0 ||
	    !counts_valid(&q->counts))
		return 0;
	for (size_t i = 0; i < q->nrelease_list; i++)
		if (q->release_list[i] == NULL)
			return 0;
	return 1;
}

static int task_valid(const struct jb_task *t)
{
	if (!nonneg(t->io_intensity) || !nonneg(t->diskio) ||
	    t->core_count < 1 || t->max_core_count < 0 ||
	    !nonneg(t->base_ram) || !nonneg(t->ram_count) ||
	    !nonneg(t->out_disk_count) || !nonneg(t->work_disk_count) ||
	    (unsigned)t->out_disk_unit > JB_OUT_GB_PER_EVENT ||
	    !nonneg(t->cpu_time) || !isfinite(t->cpu_efficiency) ||
	    !(t->cpu_efficiency > 0) || t->cpu_efficiency > 100 ||
	    !nonneg(t->base_time) || !isfinite(t->t1_weight) ||
	    !nonneg(t->total_input_gb) || t->njobs == 0 || t->jobs == NULL ||
	    (t->npreassigned > 0 && t->preassigned == NULL) ||
	    t->preassign_skipped_since < 0 || (unsigned)t->scope > 1)
		return 0;
	for (size_t i = 0; i < t->npreassigned; i++)
		if (t->preassigned[i] == NULL)
			return 0;
	for (size_t i = 0; i < t->njobs; i++) {
		const struct jb_job *j = &t->jobs[i];
		if (j->nevents < 0 || !nonneg(j->input_mb) ||
		    j->input_files < 0)
			return 0;
	}
	return 1;
}

static int params_valid(const struct jb_params *p)
{
	/* Compared only; NaN would make every comparison silently false. */
	return !isnan(p->nqueued_sat_cap) && !isnan(p->nqueued_nuc_cap) &&
	       !isnan(p->io_cutoff) && !isnan(p->size_cutoff_move) &&
	       !isnan(p->num_cutoff_move) && !isnan(p->max_diskio_default) &&
	       nonneg(p->nw_queue_importance) && !isnan(p->nw_threshold) &&
	       !isnan(p->nw_multiplier) && !isnan(p->max_prio_bootstrap) &&
	       nonneg(p->nqueue_limit) && !isnan(p->storage_min_free) &&
	       !isnan(p->min_weight);
}

/* ---- the pipeline ----------------------------------------------------- */

static void setup_ctx(struct jb_ctx *ctx, const struct jb_task *t,
		      const struct jb_params *p, const struct jb_env *env,
		      struct dec_decision *out)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->t = t;
	ctx->p = p;
	ctx->env = env;
	ctx->ptype = jb_str_or_empty(t->processing_type);
	ctx->prio_or_scout = t->priority >= JB_HIGH_PRIO || t->scout;
	ctx->check_inactive = ctx->prio_or_scout || t->merge || t->premerged;
	ctx->scout_or_merge = t->scout || t->merge;
	ctx->express = contains(ctx->ptype, "urgent") ||
		       t->priority >= JB_EXPRESS_PRIO;
	ctx->links_full = env->nucleus_queued_files > p->nqueued_nuc_cap;
	if (ctx->express) /* the caps' absence leaves no reason: say it,
			  ** with a code and the numbers that made it so */
		note_append(out, "express [express_uncapped] (priority %ld %s "
				 "%d, processingType %s%s): no PJ-33/PJ-34/"
				 "PJ-36 cap",
			    t->priority,
			    t->priority >= JB_EXPRESS_PRIO ? ">=" : "<",
			    JB_EXPRESS_PRIO, ctx->ptype[0] ? ctx->ptype : "-",
			    contains(ctx->ptype, "urgent") ? ", urgent" : "");
	jb_split_ip(t->ip_connectivity, &ctx->ip_conn, &ctx->ip_stack);
	ctx->nwp.nqueued_sat_cap = p->nqueued_sat_cap;
	ctx->nwp.queue_importance = p->nw_queue_importance;
	ctx->nw_min = p->nw_threshold * p->nw_multiplier;

	/* PJ-17/PJ-21 look at the smallest job (fewest events, first wins). */
	size_t small = 0;
	for (size_t i = 1; i < t->njobs; i++)
		if (t->jobs[i].nevents < t->jobs[small].nevents)
			small = i;
	ctx->min_nevents = t->jobs[small].nevents;
	ctx->min_input_mb = t->jobs[small].input_mb;
	for (int direct = 0; direct < 2; direct++)
		ctx->disk_mb[direct] = jb_disk_mb(t, ctx->min_nevents,
						  ctx->min_input_mb, direct);

	/* PJ-02: merge jobs give up a pre-assignment skipped for a day. */
	ctx->preassign_active = t->npreassigned > 0;
	if (ctx->preassign_active && t->merge &&
	    t->preassign_skipped_since > 0 &&
	    env->now - t->preassign_skipped_since >= JB_PREASSIGN_GIVEUP_S) {
		ctx->preassign_active = 0;
		note_append(out, "PJ-02: pre-assignment ignored, skipped for "
				 "%lld h",
			    (env->now - t->preassign_skipped_since) / 3600);
	}
}

static void queue_facts(struct jb_ctx *ctx, const struct jb_queue *q)
{
	ctx->f.associated = is_associated(ctx->t, q);
	ctx->f.preassigned = ctx->preassign_active &&
			     is_preassigned(ctx->t, q->name);
	ctx->f.cores = q->core_count > 0 ? q->core_count : ctx->t->core_count;
}

/* Insert queue i into the best list (weight descending, index ascending). */
static void best_insert(const struct dec_candidate *cands, long *best,
			size_t *nbest, long i)
{
	double w = cands[i].weight;
	size_t pos = *nbest;
	/* Strictly greater moves ahead: equal weights keep index order. */
	while (pos > 0 && w > cands[best[pos - 1]].weight)
		pos--;
	if (pos >= JB_BEST_N)
		return;
	size_t last = *nbest < JB_BEST_N ? *nbest : JB_BEST_N - 1;
	for (size_t k = last; k > pos; k--)
		best[k] = best[k - 1];
	best[pos] = i;
	if (*nbest < JB_BEST_N)
		(*nbest)++;
}

/* One best queue's working state during PJ-36. */
struct jb_slot {
	struct jb_counts k;
	double running, cap, mult, weight;
	int input_local;
	int got; /* jobs received */
};

static int slot_accepts(const struct jb_slot *s)
{
	double queued = s->k.activated + s->k.starting +
			(s->input_local ? 0 : s->k.assigned);
	return queued < s->cap;
}

/* PJ-36: spread the jobs over the best queues. */
static void distribute(const struct jb_ctx *ctx, const struct jb_queue *queues,
		       struct gb_rng *rng, struct jb_plan *plan,
		       struct dec_decision *out)
{
	const struct jb_task *t = ctx->t;
	struct jb_slot slot[JB_BEST_N];
	double w[JB_BEST_N];
	for (size_t b = 0; b < plan->nbest; b++) {
		const struct jb_queue *q = &queues[plan->best[b]];
		struct jb_wparts wp;
		weigh(ctx, q, is_associated(t, q), &wp);
		slot[b].k = q->counts;
		slot[b].running = wp.running;
		slot[b].cap = queue_cap(ctx, wp.running);
		slot[b].mult = wp.mult;
		slot[b].weight = wp.weight;
		slot[b].input_local = wp.input_local;
		slot[b].got = 0;
	}
	size_t j = 0;
	for (; j < t->njobs; j++) {
		for (size_t b = 0; b < plan->nbest; b++)
			w[b] = slot_accepts(&slot[b]) ? slot[b].weight : 0;
		long pick = gb_rng_weighted(rng, w, plan->nbest, 0);
		if (pick < 0)
			break; /* counts only grow: no later job fits either */
		struct jb_slot *s = &slot[pick];
		plan->job_queue[j] = plan->best[pick];
		if (s->input_local) {
			plan->job_status[j] = JB_JOB_ACTIVATED;
			s->k.activated += 1;
		} else {
			plan->job_status[j] = JB_JOB_ASSIGNED;
			s->k.assigned += 1;
		}
		s->got++;
		s->weight = jb_base_weight(&s->k, s->running, s->input_local) *
			    s->mult;
		plan->nassigned++;
	}
	int used = 0;
	for (size_t b = 0; b < plan->nbest; b++)
		used += slot[b].got > 0;
	dec_stage(out, "distribution", "PJ-36", (int)plan->nbest, used);
}

int jb_broker(const struct jb_task *task, const struct jb_queue *queues,
	      size_t nqueues, const struct jb_params *params,
	      const struct jb_env *env, struct gb_rng *rng,
	      struct dec_candidate *cands, struct dec_decision *out,
	      struct jb_plan *plan)
{
	if (!task || !params || !env || !rng || !out || !plan ||
	    (nqueues && (!queues || !cands)))
		return GB_EINVAL;
	if (!task_valid(task) || !params_valid(params) ||
	    !plan->job_queue || !plan->job_status ||
	    nqueues > (size_t)LONG_MAX || nqueues > (size_t)INT_MAX)
		return GB_EINVAL;
	dec_init_lazy(out, cands, nqueues); /* each reset in the loop below */
	plan->nbest = 0;
	plan->nassigned = 0;
	for (size_t j = 0; j < task->njobs; j++) {
		plan->job_queue[j] = -1;
		plan->job_status[j] = JB_JOB_UNASSIGNED;
	}
	struct jb_ctx ctx;
	setup_ctx(&ctx, task, params, env, out);

	/* Filters, candidate-major: the first failing row drops the queue. */
	int dropped[JB_NFILTERS];
	uint32_t rows = 0;
	memset(dropped, 0, sizeof(dropped));
	for (size_t r = 0; r < JB_NFILTERS; r++)
		if (jb_row_applies(&ctx, &jb_filters[r]))
			rows |= UINT32_C(1) << r;
	for (size_t i = 0; i < nqueues; i++) {
		const struct jb_queue *q = &queues[i];
		struct dec_candidate *c = &cands[i];
		if (!queue_valid(q))
			return GB_EINVAL;
		dec_candidate_reset(c);
		c->name = q->name;
		queue_facts(&ctx, q);
		int r = jb_filter_queue(&ctx, rows, q, c);
		if (r >= 0)
			dropped[r]++;
	}
	int alive = (int)nqueues;
	for (size_t r = 0; r < JB_NFILTERS; r++) {
		dec_stage(out, jb_filters[r].name, jb_filters[r].rule, alive,
			  alive - dropped[r]);
		alive -= dropped[r];
	}

	/* PJ-28..PJ-32 weights, then the caps and MIN_WEIGHT (PJ-33..35). */
	int ncap = 0, ntotal = 0, nmin = 0;
	for (size_t i = 0; i < nqueues; i++) {
		struct dec_candidate *c = &cands[i];
		if (dec_dropped(c))
			continue;
		const struct jb_queue *q = &queues[i];
		struct jb_wparts w;
		weigh(&ctx, q, is_associated(task, q), &w);
		explain_weight(&ctx, &w, &c->wexpl);
		const struct jb_counts *k = &q->counts;
		double cap = queue_cap(&ctx, w.running);
		double queued = k->activated + k->starting;
		double total = k->defined + k->activated + k->starting +
			       (w.input_local ? 0 : k->assigned);
		if (queued > cap) {
			ncap++;
			dec_reject(c, "queue cap", "PJ-33", "cap",
				   "activated+starting %.0f > cap %.0f = max("
				   "NQUEUELIMITSITE %.0f, 2 x running %.0f)",
				   NULL, queued, cap, params->nqueue_limit,
				   w.running);
		} else if (total > cap) {
			ntotal++;
			dec_reject(c, "queue limit", "PJ-34", "cap",
				   "defined+activated+assigned+starting %.0f > "
				   "cap %.0f = max(NQUEUELIMITSITE %.0f, 2 x "
				   "running %.0f)",
				   NULL, total, cap, params->nqueue_limit,
				   w.running);
		} else if (params->min_weight > 0 &&
			   w.weight < params->min_weight) {
			nmin++;
			dec_reject(c, "min weight", "PJ-35", "below_min_weight",
				   "weight %.4g < MIN_WEIGHT %.4g", NULL,
				   w.weight, params->min_weight, 0, 0);
		} else {
			c->weight = w.weight;
			/* PJ-35: the best JB_BEST_N, kept as we go. */
			best_insert(cands, plan->best, &plan->nbest, (long)i);
		}
	}
	dec_stage(out, "weight", "PJ-30", alive, alive);
	dec_stage(out, "queue cap", "PJ-33", alive, alive - ncap);
	alive -= ncap;
	dec_stage(out, "queue limit", "PJ-34", alive, alive - ntotal);
	alive -= ntotal;
	dec_stage(out, "min weight", "PJ-35", alive, alive - nmin);
	alive -= nmin;

	/* PJ-35: the survivors outside the best JB_BEST_N are cut. */
	if (plan->nbest == JB_BEST_N && alive > JB_BEST_N) {
		long lastb = plan->best[JB_BEST_N - 1];
		double wl = cands[lastb].weight;
		for (size_t i = 0; i < nqueues; i++) {
			struct dec_candidate *c = &cands[i];
			if (dec_dropped(c))
				continue;
			if (c->weight > wl ||
			    (c->weight == wl && (long)i <= lastb))
				continue;
			dec_reject(c, "best 10", "PJ-35", "not_best",
				   "weight %.4g below the best %.0f (last "
				   "kept %.4g)",
				   NULL, c->weight, JB_BEST_N, wl, 0);
		}
	}
	dec_stage(out, "best 10", "PJ-35", alive, (int)plan->nbest);

	if (plan->nbest == 0) {
		dec_stage(out, "distribution", "PJ-36", 0, 0);
		out->outcome = DEC_PENDING;
		out->chosen = -1;
		out->retry_after_s = JB_PENDING_RETRY_S;
		note_append(out, "PJ-35: no queue left, pending for %d s",
			    JB_PENDING_RETRY_S);
		return GB_OK;
	}

	distribute(&ctx, queues, rng, plan, out);
	if (plan->nassigned == 0) {
		out->outcome = DEC_PENDING;
		out->chosen = -1;
		out->retry_after_s = JB_PENDING_RETRY_S;
		note_append(out, "PJ-36: every best queue is at its cap");
		return GB_OK;
	}
	out->outcome = DEC_ASSIGNED;
	out->chosen = plan->best[0];
	out->retry_after_s = 0;
	return GB_OK;
}
