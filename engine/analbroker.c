/*
** analbroker.c — the ATLAS analysis job brokerage (AJ-05..AJ-20, AJ-28 with
** the weights AJ-24..AJ-27 of analysis.c): the pipeline. The filter rows
** live in analbroker_filters.c with their interpretations; the context both
** files read is in analbroker_internal.h.
**
** A pass runs candidate-major, like jb_broker(): per queue the per-queue
** facts (pre-assigned, cores, the stabilizer of AJ-21..AJ-23) are computed
** once, then the rows of ab_filters[] run in table order and the first
** failing row drops the queue. Per-row drop counters become the stage
** summary. The stabilizer is computed for every candidate before any
** weight, because W_q (AJ-26) needs every survivor's max_q_len and user
** queue.
**
** Interpretations (where the seed is silent or the public code differs):
** - AJ-28 runs the second pass only when the persistent rows (the rows
**   marked persistent in ab_filters[]) leave nothing AND the locality row
**   dropped something: otherwise the pass without AJ-08 would be the same
**   pass. The decision then holds the second pass only (its stages and
**   reasons); the note says how many queues AJ-08 had dropped. When the
**   persistent rows leave queues but the temporary rows (AJ-18..AJ-20)
**   drop them all, there is no retry: the task is pending (the seed).
** - AJ-28 pending: AB_PENDING_RETRY_S, the seed's 20 minutes (the public
**   code's value could not be found, reference discrepancy 10).
** - AJ-28 best 10: weight descending, equal weights by queue name (then
**   by index for equal names). The public code's "PQs already used by the
**   task first" and random shuffle of equal weights are not in the seed and
**   need state this pure function does not have.
** - AJ-24: running is PJ-28's (jb_running, with MAX_PRIO_TO_BOOTSTRAP).
** - AJ-25/26: no data weight factor: the public code multiplies by one,
**   the seed has none. W_q is analysis.c's an_weight_queue() formula
**   computed from the survivors' sum in weight_queue() below, because
**   an_weight_queue() takes arrays of all survivors and this module may not
**   allocate them; the unit test checks the two agree.
*/
#include "analbroker.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analbroker_internal.h"
#include "gb_error.h"

/* ---- exported pieces -------------------------------------------------- */

double ab_memory_mb(const struct ab_task *t, long cores)
{
	const struct jb_task *jt = t->t;
	double per_job = t->ram_per_core
				 ? jt->base_ram + jt->ram_count * (double)cores
				 : jt->base_ram + jt->ram_count;
	return per_job * AB_MEM_COMPENSATION;
}

double ab_disk_mb(const struct ab_task *t, int direct_access)
{
	double in = t->input_disk_count;
	return (direct_access ? 0.0 : in) + t->out_disk_ratio * in +
	       t->t->work_disk_count;
}

/* ---- helpers ---------------------------------------------------------- */

static void note_append(struct dec_decision *d, const char *fmt, ...)
{
	size_t used = strlen(d->note);
	if (used + 3 >= sizeof(d->note))
		return;
	if (used > 0) {
		memcpy(d->note + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->note + used, sizeof(d->note) - used, fmt, ap);
	va_end(ap);
}

static int is_preassigned(const struct jb_task *t, const char *name)
{
	for (size_t i = 0; i < t->npreassigned; i++)
		if (t->preassigned[i] && strcmp(t->preassigned[i], name) == 0)
			return 1;
	return 0;
}

/* AJ-26 exactly as an_weight_queue(): room_i = max_q_len - nQ(PQ,user) of
** this queue, room_sum the same over the survivors. */
static double weight_queue(double room_i, double room_sum, double nsurv,
			   double nj)
{
	double den = room_sum - nj;
	double num = room_i - nj / nsurv;
	return den > 0 ? fmax(num / den, AN_WQ_FLOOR) : AN_WQ_FLOOR;
}

/* AJ-28 order: a before b when heavier, or equally heavy and first by name
** (then by index, so the order is total). */
static int ranks_before(const struct dec_candidate *cands, long a, long b)
{
	double wa = cands[a].weight, wb = cands[b].weight;
	if (wa != wb)
		return wa > wb;
	int s = strcmp(cands[a].name, cands[b].name);
	return s != 0 ? s < 0 : a < b;
}

static void best_insert(const struct dec_candidate *cands,
			struct ab_plan *plan, long i)
{
	size_t pos = plan->nbest;
	while (pos > 0 && ranks_before(cands, i, plan->best[pos - 1]))
		pos--;
	if (pos >= AB_BEST_N)
		return;
	size_t last = plan->nbest < AB_BEST_N ? plan->nbest : AB_BEST_N - 1;
	for (size_t k = last; k > pos; k--)
		plan->best[k] = plan->best[k - 1];
	plan->best[pos] = i;
	if (plan->nbest < AB_BEST_N)
		plan->nbest++;
}

static int in_best(const struct ab_plan *plan, long i)
{
	for (size_t k = 0; k < plan->nbest; k++)
		if (plan->best[k] == i)
			return 1;
	return 0;
}

/* ---- the pipeline ----------------------------------------------------- */

/* Inputs the filters and weights would otherwise trip on. */
static int inputs_valid(const struct ab_task *t, const struct ab_queue *qs,
			size_t n, const struct prm_set *set)
{
	const struct jb_task *jt = t->t;
	if (!(t->nj > 0) || !isfinite(t->nj) || jt->core_count < 1 ||
	    (jt->npreassigned > 0 && jt->preassigned == NULL) ||
	    (t->nexcluded > 0 && t->excluded_sites == NULL) ||
	    (t->nincluded > 0 && t->included_sites == NULL) ||
	    !(jt->cpu_efficiency > 0) ||
	    !(isnan(t->grand_ratio) ||
	      (isfinite(t->grand_ratio) && t->grand_ratio >= 0)) ||
	    n > (size_t)INT_MAX ||
	    n > (size_t)LONG_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct jb_queue *q = qs[i].q;
		struct an_stab st;
		if (q == NULL || q->name == NULL ||
		    (q->nrelease_list > 0 && q->release_list == NULL) ||
		    !(q->corepower > 0) ||
		    an_stabilizer(&qs[i].load, set, &st) != GB_OK)
			return 0;
	}
	return 1;
}

/*
** One pass of the rows over every queue: resets `d` and `cands`, records
** the row stages, and returns through `persistent_left` the queues left
** after the last persistent row and through `locality_drops` AJ-08's drops.
*/
static void run_pass(struct ab_ctx *ctx, const struct ab_queue *qs, size_t n,
		     const struct prm_set *set, struct dec_candidate *cands,
		     struct dec_decision *d, int *persistent_left,
		     int *locality_drops)
{
	int dropped[AB_NFILTERS];
	size_t rows[AB_NFILTERS], nrows = 0;
	memset(dropped, 0, sizeof(dropped));
	dec_init(d, cands, n);
	for (size_t r = 0; r < AB_NFILTERS; r++)
		if (ab_row_applies(ctx, &ab_filters[r]))
			rows[nrows++] = r;
	for (size_t i = 0; i < n; i++) {
		const struct ab_queue *q = &qs[i];
		struct dec_candidate *c = &cands[i];
		c->name = q->q->name;
		ctx->f.preassigned = is_preassigned(ctx->t, q->q->name);
		ctx->f.cores = q->q->core_count > 0 ? q->q->core_count
						    : ctx->t->core_count;
		/* Validated by inputs_valid(): cannot fail here. */
		(void)an_stabilizer(&q->load, set, &ctx->f.stab);
		for (size_t k = 0; k < nrows; k++) {
			ctx->stage = ab_filters[rows[k]].name;
			if (!ab_filters[rows[k]].fn(ctx, q, c)) {
				dropped[rows[k]]++;
				break;
			}
		}
	}
	int alive = (int)n;
	*persistent_left = alive;
	*locality_drops = 0;
	for (size_t r = 0; r < AB_NFILTERS; r++) {
		const struct ab_filter *f = &ab_filters[r];
		dec_stage(d, f->name, f->rule, alive, alive - dropped[r]);
		alive -= dropped[r];
		if (f->persistent)
			*persistent_left = alive;
		if (strcmp(f->rule, "AJ-08") == 0)
			*locality_drops = dropped[r];
	}
}

/* AJ-24..AJ-27 over the survivors, then the best AB_BEST_N (AJ-28). */
static int weigh_and_rank(const struct ab_ctx *ctx, const struct ab_queue *qs,
			  size_t n, const struct prm_set *set,
			  struct dec_candidate *cands, struct dec_decision *d,
			  struct ab_plan *plan)
{
	const struct ab_task *at = ctx->at;
	int use_new = an_use_new_weight(set);
	struct jb_params jbp;
	jb_params_resolve(set, ctx->t->gshare, &jbp);

	/* AJ-26's denominator needs every survivor's room first. */
	double room_sum = 0;
	int alive = 0;
	for (size_t i = 0; i < n; i++) {
		struct an_stab st;
		if (dec_dropped(&cands[i]))
			continue;
		(void)an_stabilizer(&qs[i].load, set, &st);
		room_sum += st.max_q_len - qs[i].load.nq_user;
		alive++;
	}

	for (size_t i = 0; i < n; i++) {
		struct dec_candidate *c = &cands[i];
		if (dec_dropped(c))
			continue;
		const struct ab_queue *q = &qs[i];
		const struct jb_counts *k = &q->q->counts;
		struct dec_reason *r = &c->wexpl;
		memset(r, 0, sizeof(*r));
		r->code = "weight";
		double w;
		if (use_new) {
			struct an_stab st;
			(void)an_stabilizer(&q->load, set, &st);
			double ws = an_weight_site(at->user_analysis,
						   at->task_class,
						   q->site_class, at->nj);
			if (isnan(ws))
				return GB_EINVAL; /* class out of range */
			double wq = weight_queue(st.max_q_len - q->load.nq_user,
						 room_sum, (double)alive, at->nj);
			w = ws * wq;
			r->rule = "AJ-25";
			r->fmt = "W_s %.4g x W_q %.4g = %.4g (max_q_len %.4g)";
			r->v[0] = ws;
			r->v[1] = wq;
			r->v[2] = w;
			r->v[3] = st.max_q_len;
		} else {
			double running = jb_running(q->q, ctx->t, &jbp);
			if (an_weight_original(running, k->activated,
					       k->assigned, k->starting,
					       k->defined, &w) != GB_OK)
				return GB_EINVAL; /* negative counts */
			r->rule = "AJ-24";
			r->fmt = "(running %.0f + 1) / (queued %.0f + 1) = %.4g";
			r->v[0] = running;
			r->v[1] = k->activated + k->assigned + k->starting +
				  k->defined;
			r->v[2] = w;
		}
		c->weight = w;
		best_insert(cands, plan, (long)i);
	}
	dec_stage(d, "weight", use_new ? "AJ-25" : "AJ-24", alive, alive);

	for (size_t i = 0; i < n; i++) {
		struct dec_candidate *c = &cands[i];
		if (dec_dropped(c) || in_best(plan, (long)i))
			continue;
		double wl = cands[plan->best[AB_BEST_N - 1]].weight;
		dec_reject(c, "best 10", "AJ-28", "not_best",
			   "weight %.4g below the best %.0f (last kept %.4g)",
			   NULL, c->weight, AB_BEST_N, wl, 0);
	}
	dec_stage(d, "best 10", "AJ-28", alive, (int)plan->nbest);
	for (size_t b = 0; b < plan->nbest; b++)
		plan->weight[b] = cands[plan->best[b]].weight;
	return GB_OK;
}

int ab_broker(const struct ab_task *t, const struct ab_queue *qs, size_t n,
	      const struct prm_set *set, long long now,
	      struct dec_candidate *cands, struct dec_decision *d,
	      struct ab_plan *plan)
{
	if (!t || !t->t || !d || !plan || (n > 0 && (!qs || !cands)))
		return GB_EINVAL;
	if (!inputs_valid(t, qs, n, set))
		return GB_EINVAL;
	memset(plan, 0, sizeof(*plan));

	struct ab_ctx ctx;
	memset(&ctx, 0, sizeof(ctx));
	ctx.at = t;
	ctx.t = t->t;
	ctx.now = now;
	ctx.max_diskio_default = prm_get(set, "MAX_DISKIO_DEFAULT");
	ctx.max_missing_files = prm_get(set, "MAX_MISSING_INPUT_FILES");
	ctx.min_completeness = prm_get(set, "MIN_INPUT_COMPLETENESS");
	if (t->t->jobs != NULL)
		for (size_t j = 0; j < t->t->njobs; j++)
			ctx.total_files += (double)t->t->jobs[j].input_files;
	ctx.overload_min_queue = prm_get(set, "OVERLOAD_MIN_QUEUE");
	ctx.overload_ratio = prm_get(set, "OVERLOAD_RATIO_OFFSET");
	ctx.storage_min_free = prm_get(set, "STORAGE_MIN_FREE_SIZE_OUTPUT");
	ctx.tw_done_h = prm_get(set, "TW_DONE_JOB_STAT");
	ctx.min_bad_jobs = prm_get(set, "MIN_BAD_JOBS_TO_SKIP_PQ");
	/* AJ-08: an unset cutoff (NAN) compares false: never suppressed. */
	ctx.locality = !(t->task_priority >= AB_LOCALITY_OFF_PRIO ||
			 t->t->io_intensity <=
				 prm_get(set, "IO_INTENSITY_CUTOFF_USER"));
	ctx.min_nevents = -1;
	if (t->t->jobs != NULL)
		for (size_t j = 0; j < t->t->njobs; j++)
			if (ctx.min_nevents < 0 ||
			    t->t->jobs[j].nevents < ctx.min_nevents)
				ctx.min_nevents = t->t->jobs[j].nevents;

	int left, loc_drops;
	run_pass(&ctx, qs, n, set, cands, d, &left, &loc_drops);
	if (left == 0 && loc_drops > 0) {
		/* AJ-28: nothing passed the persistent rows and locality was
		** among the reasons: everything again without AJ-08. */
		int first_drops = loc_drops;
		ctx.locality = 0;
		plan->locality_dropped = 1;
		run_pass(&ctx, qs, n, set, cands, d, &left, &loc_drops);
		note_append(d, "AJ-28: no queue passed the persistent filters "
			       "with the locality check (%d dropped by AJ-08), "
			       "retried without it",
			    first_drops);
	}
	int rc = weigh_and_rank(&ctx, qs, n, set, cands, d, plan);
	if (rc != GB_OK)
		return rc;

	if (plan->nbest == 0) {
		d->outcome = DEC_PENDING;
		d->chosen = -1;
		d->retry_after_s = AB_PENDING_RETRY_S;
		note_append(d, "AJ-28: no queue left, pending for %d s",
			    AB_PENDING_RETRY_S);
		return GB_OK;
	}
	d->outcome = DEC_ASSIGNED;
	d->chosen = plan->best[0];
	d->retry_after_s = 0;
	return GB_OK;
}

/* ---- spreading the jobs ----------------------------------------------- */

int ab_distribute(const struct ab_plan *plan, size_t njobs, long *job_queue)
{
	if (plan == NULL || (njobs > 0 && job_queue == NULL) ||
	    plan->nbest > AB_BEST_N)
		return GB_EINVAL;
	double sum = 0;
	for (size_t k = 0; k < plan->nbest; k++) {
		if (!isfinite(plan->weight[k]) || plan->weight[k] < 0)
			return GB_EINVAL;
		sum += plan->weight[k];
	}
	if (plan->nbest == 0) {
		for (size_t i = 0; i < njobs; i++)
			job_queue[i] = -1;
		return GB_OK;
	}
	/* Hamilton's method: floors first, then one more job to each of the
	** largest remainders. Exact in integers, so the counts always add up
	** to njobs, which a rounding of each share alone does not promise. */
	size_t count[AB_BEST_N] = {0};
	double rem[AB_BEST_N] = {0};
	size_t given = 0;
	for (size_t k = 0; k < plan->nbest; k++) {
		double share = sum > 0 ? (double)njobs * plan->weight[k] / sum
				       : (k == 0 ? (double)njobs : 0);
		double fl = floor(share);
		count[k] = (size_t)fl;
		rem[k] = share - fl;
		given += count[k];
	}
	while (given < njobs) {
		size_t pick = 0;
		for (size_t k = 1; k < plan->nbest; k++)
			if (rem[k] > rem[pick])
				pick = k; /* strict: ties keep the better rank */
		count[pick]++;
		rem[pick] = -1;
		given++;
	}
	size_t i = 0;
	for (size_t k = 0; k < plan->nbest && i < njobs; k++)
		for (size_t c = 0; c < count[k] && i < njobs; c++)
			job_queue[i++] = plan->best[k];
	return GB_OK;
}
