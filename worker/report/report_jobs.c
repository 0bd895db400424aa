/*
** report_jobs.c — the JSON and the table of a job-brokerage decision
** (declared in report_jobs.h).
**
** Like report.c for task brokerage, the renderers read only the decision,
** the plan and the request's job IDs: reasons keep static templates and
** numbers, and dec_reason_format renders them here, once, when asked.
**
** Shape of the table: a job decision has hundreds of candidate queues and
** most of them are dropped, so listing them in grid order buries the few
** that matter. The best queues come first, in rank order with their weight
** breakdown; the dropped ones follow grouped under the stage that dropped
** them, in stage order, so "why not AGLT2?" is answered by one group and
** the group sizes read like the stage summary below them. Queues dropped
** after they were weighed (caps, best 10) also show what they weighed.
*/
#include "report/report_jobs.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/jsonutil.h"
#include "gb_error.h"

#define RPJ_NAME_MAX 40 /* widest queue column */
#define RPJ_SHOW_IDS 5  /* job IDs printed per assignment line */

static const char *cand_name(const struct jb_queue *queues,
			     const struct dec_decision *d, size_t i)
{
	if (d->cands[i].name)
		return d->cands[i].name;
	return queues && queues[i].name ? queues[i].name : "?";
}

/* The arguments agree with each other (sizes, indexes in range). */
static int consistent(const struct gm_request *r,
		      const struct jb_queue *queues, size_t nq,
		      const struct dec_decision *d, const struct jb_plan *plan)
{
	if (r == NULL || d == NULL || plan == NULL || d->ncands != nq ||
	    (nq && d->cands == NULL) || (nq && queues == NULL) ||
	    plan->nbest > JB_BEST_N || d->nstages > DEC_MAX_STAGES)
		return 0;
	if (r->njobs &&
	    (r->jobs == NULL || !plan->job_queue || !plan->job_status))
		return 0;
	for (size_t b = 0; b < plan->nbest; b++)
		if (plan->best[b] < 0 || (size_t)plan->best[b] >= nq)
			return 0;
	return 1;
}

/* ---- JSON --------------------------------------------------------------- */

/* The jobs of best queue `qi` with status `st`, or NULL when none. */
static json_t *assignment_json(const struct gm_request *r,
			       const struct jb_plan *plan, long qi,
			       enum jb_job_status st, const char *name,
			       double weight, int *bad)
{
	json_t *ids = NULL;
	for (size_t j = 0; j < r->njobs && !*bad; j++) {
		if (plan->job_queue[j] != qi || plan->job_status[j] != st)
			continue;
		if (ids == NULL && (ids = json_array()) == NULL)
			*bad = 1;
		else
			*bad |= ju_push(ids, json_integer(r->jobs[j].job_id));
	}
	if (ids == NULL || *bad) {
		json_decref(ids);
		return NULL;
	}
	json_t *o = json_object();
	*bad |= o == NULL;
	if (o != NULL) {
		*bad |= ju_set(o, "queue", ju_str(name));
		*bad |= ju_set(o, "weight",
			       isfinite(weight) ? json_real(weight)
						: json_null());
		*bad |= ju_set(o, "status", ju_str(jb_job_status_name(st)));
	}
	if (o == NULL || ju_set(o, "jobIDs", ids)) {
		*bad = 1;
		json_decref(o);
		if (o == NULL)
			json_decref(ids);
		return NULL;
	}
	return o;
}

int rpj_plan_json(json_t *root, const struct gm_request *r,
		  const struct jb_queue *queues, const struct dec_decision *d,
		  const struct jb_plan *plan)
{
	if (root == NULL || d == NULL || !consistent(r, queues, d->ncands, d, plan))
		return GB_EINVAL;
	json_t *best = json_array(), *asg = json_array(), *un = json_array();
	int bad = !best || !asg || !un;
	static const enum jb_job_status order[] = {JB_JOB_ACTIVATED,
						   JB_JOB_ASSIGNED};
	for (size_t b = 0; !bad && b < plan->nbest; b++) {
		long qi = plan->best[b];
		const char *name = cand_name(queues, d, (size_t)qi);
		bad |= ju_push(best, ju_str(name));
		for (size_t s = 0; !bad && s < 2; s++) {
			json_t *o = assignment_json(r, plan, qi, order[s], name,
						    d->cands[qi].weight, &bad);
			if (o != NULL)
				bad |= ju_push(asg, o);
		}
	}
	for (size_t j = 0; !bad && j < r->njobs; j++)
		if (plan->job_queue[j] < 0)
			bad |= ju_push(un, json_integer(r->jobs[j].job_id));
	if (bad) {
		json_decref(best);
		json_decref(asg);
		json_decref(un);
		return GB_ENOMEM;
	}
	/* ju_set steals its value even when it fails */
	bad |= ju_set(root, "best", best);
	bad |= ju_set(root, "assignments", asg);
	bad |= ju_set(root, "unassigned", un);
	return bad ? GB_ENOMEM : GB_OK;
}

json_t *rpj_decision_json(const struct gm_request *r,
			  const struct jb_queue *queues, size_t nqueues,
			  const struct dec_decision *d,
			  const struct jb_plan *plan)
{
	if (!consistent(r, queues, nqueues, d, plan))
		return NULL;
	json_t *root = json_object();
	json_t *cands = json_array(), *stages = json_array();
	int bad = !root || !cands || !stages;
	for (size_t i = 0; !bad && i < nqueues; i++)
		bad |= ju_push(cands,
			       ju_candidate_json(&d->cands[i],
						 cand_name(queues, d, i), 1));
	for (size_t i = 0; !bad && i < d->nstages; i++)
		bad |= ju_push(stages, ju_stage_json(&d->stages[i]));
	if (bad) {
		json_decref(root);
		json_decref(cands);
		json_decref(stages);
		return NULL;
	}
	bad |= ju_set(root, "taskID", json_integer(r->t.task_id));
	bad |= ju_set(root, "nucleus", ju_str(r->t.nucleus));
	bad |= ju_set(root, "gshare", ju_str(r->t.gshare));
	bad |= ju_set(root, "decision", ju_str(dec_outcome_name(d->outcome)));
	if (d->outcome == DEC_PENDING)
		bad |= ju_set(root, "retryAfter",
			      json_integer(d->retry_after_s));
	bad |= ju_set(root, "note", d->note[0] ? ju_str(d->note) : json_null());
	bad |= rpj_plan_json(root, r, queues, d, plan) != GB_OK;
	bad |= ju_set(root, "candidates", cands);
	bad |= ju_set(root, "stages", stages);
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* A parameter as JSON: NaN (unset) becomes null. */
static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* The jb_params fields by their catalogue names (NW_ACTIVE is an int). */
#define P(name, field) {name, offsetof(struct jb_params, field)}
static const struct {
	const char *name;
	size_t off;
} param_names[] = {
	P("NQUEUED_SAT_CAP", nqueued_sat_cap),
	P("NQUEUED_NUC_CAP_FOR_JOBS", nqueued_nuc_cap),
	P("IO_INTENSITY_CUTOFF", io_cutoff),
	P("SIZE_CUTOFF_TO_MOVE_INPUT", size_cutoff_move),
	P("NUM_CUTOFF_TO_MOVE_INPUT", num_cutoff_move),
	P("MAX_DISKIO_DEFAULT", max_diskio_default),
	P("NW_QUEUE_IMPORTANCE", nw_queue_importance),
	P("NW_THRESHOLD", nw_threshold),
	P("NW_WEIGHT_MULTIPLIER", nw_multiplier),
	P("MAX_PRIO_TO_BOOTSTRAP", max_prio_bootstrap),
	P("NQUEUELIMITSITE", nqueue_limit),
	P("STORAGE_MIN_FREE_SIZE", storage_min_free),
	P("MIN_WEIGHT", min_weight),
};
#undef P

json_t *rpj_detail_json(const struct gm_request *r,
			const struct jb_queue *queues, size_t nqueues,
			const struct dec_decision *d,
			const struct jb_plan *plan, const struct jb_params *p,
			const struct jb_env *env)
{
	json_t *root = rpj_decision_json(r, queues, nqueues, d, plan);
	if (root == NULL)
		return NULL;
	int bad = 0;
	/* jset steals `o` even when it fails, so nothing leaks on error */
	if (p != NULL) {
		json_t *o = json_object();
		bad = ju_set(root, "params", o);
		for (size_t i = 0; !bad && i < sizeof(param_names) /
							sizeof(param_names[0]);
		     i++) {
			double v;
			memcpy(&v, (const char *)p + param_names[i].off,
			       sizeof(v));
			bad |= ju_set(o, param_names[i].name, jnum(v));
		}
		if (!bad)
			bad = ju_set(o, "NW_ACTIVE",
				     json_integer(p->nw_active));
	}
	if (env != NULL && !bad) {
		json_t *o = json_object();
		bad = ju_set(root, "env", o);
		if (!bad)
			bad = ju_set(o, "now", json_integer(env->now)) ||
			      ju_set(o, "nucleusQueuedFiles",
				     jnum(env->nucleus_queued_files));
	}
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* ---- table -------------------------------------------------------------- */

struct tctx {
	FILE *out;
	const struct gm_request *r;
	const struct jb_queue *queues;
	const struct dec_decision *d;
	const struct jb_plan *plan;
	int w; /* queue column width */
};

static void row(const struct tctx *t, const char *mark, const char *name,
		const char *weight, const struct dec_reason *x)
{
	char buf[512] = "";
	if (x->fmt)
		dec_reason_format(x, buf, sizeof(buf));
	fprintf(t->out, "%-3s %-*.*s %-10s %-6s %-18s %s\n", mark, t->w, t->w,
		name, weight, x->rule ? x->rule : "", x->code ? x->code : "",
		buf);
}

/* A dropped queue: its reasons, then what it weighed if it got that far. */
static void dropped_rows(const struct tctx *t, size_t i)
{
	const struct dec_candidate *c = &t->d->cands[i];
	unsigned nr = c->nreasons < DEC_MAX_REASONS ? c->nreasons
						    : DEC_MAX_REASONS;
	const char *name = cand_name(t->queues, t->d, i);
	for (unsigned k = 0; k < nr; k++)
		row(t, "", k ? "" : name, k ? "" : "-", &c->reasons[k]);
	if (nr == 0)
		fprintf(t->out, "%-3s %-*.*s %-10s %s\n", "", t->w, t->w, name,
			"-", c->stage);
	if (c->nreasons > DEC_MAX_REASONS)
		fprintf(t->out, "%-3s %-*s (+%u more reasons)\n", "", t->w, "",
			c->nreasons - DEC_MAX_REASONS);
	if (c->wexpl.fmt)
		row(t, "", "", "weighed", &c->wexpl);
}

static int stage_listed(const struct dec_decision *d, const char *stage)
{
	for (size_t s = 0; s < d->nstages; s++)
		if (d->stages[s].name && strcmp(d->stages[s].name, stage) == 0)
			return 1;
	return 0;
}

/* The candidates dropped at stage `name`, under a header; once per name. */
static void dropped_group(const struct tctx *t, size_t si)
{
	const struct dec_decision *d = t->d;
	const char *name = d->stages[si].name;
	for (size_t s = 0; name && s < si; s++)
		if (d->stages[s].name && strcmp(d->stages[s].name, name) == 0)
			return;
	size_t n = 0;
	for (size_t i = 0; name && i < d->ncands; i++)
		n += dec_dropped(&d->cands[i]) &&
		     strcmp(d->cands[i].stage, name) == 0;
	if (n == 0)
		return;
	fprintf(t->out, "-- dropped at %s (%s): %zu queue%s --\n", name,
		d->stages[si].rule ? d->stages[si].rule : "?", n,
		n == 1 ? "" : "s");
	for (size_t i = 0; i < d->ncands; i++)
		if (dec_dropped(&d->cands[i]) &&
		    strcmp(d->cands[i].stage, name) == 0)
			dropped_rows(t, i);
}

/* "4711, 4712, 4713, ... (+17)" for the jobs of queue qi with status st. */
static size_t job_list(const struct tctx *t, long qi, int st, char *buf,
		       size_t n)
{
	size_t cnt = 0, used = 0;
	buf[0] = '\0';
	for (size_t j = 0; j < t->r->njobs; j++) {
		if (t->plan->job_queue[j] != qi ||
		    (st >= 0 && (int)t->plan->job_status[j] != st))
			continue;
		if (cnt++ < RPJ_SHOW_IDS && used < n) {
			int w = snprintf(buf + used, n - used, "%s%lld",
					 cnt > 1 ? ", " : "",
					 t->r->jobs[j].job_id);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	if (cnt > RPJ_SHOW_IDS && used < n)
		snprintf(buf + used, n - used, ", ... (+%zu)",
			 cnt - RPJ_SHOW_IDS);
	return cnt;
}

static void summary(const struct tctx *t)
{
	const struct dec_decision *d = t->d;
	const struct jb_plan *p = t->plan;
	char buf[512];
	fprintf(t->out, "===== Job brokerage summary =====\n");
	fprintf(t->out, "the number of initial candidates: %d\n",
		d->nstages ? d->stages[0].in : (int)d->ncands);
	for (size_t i = 0; i < d->nstages; i++) {
		dec_stage_format(&d->stages[i], buf, sizeof(buf));
		fprintf(t->out, "%s\n", buf);
	}
	fprintf(t->out, "the number of final candidates: %zu\n", p->nbest);
	if (d->note[0])
		fprintf(t->out, "note: %s\n", d->note);
	size_t queues_used = 0;
	for (size_t b = 0; b < p->nbest; b++) {
		static const enum jb_job_status order[] = {JB_JOB_ACTIVATED,
							   JB_JOB_ASSIGNED};
		int any = 0;
		for (size_t s = 0; s < 2; s++) {
			size_t cnt = job_list(t, p->best[b], (int)order[s], buf,
					      sizeof(buf));
			if (cnt == 0)
				continue;
			fprintf(t->out, "  %-*.*s %-9s %5zu job%s: %s\n", t->w,
				t->w,
				cand_name(t->queues, d, (size_t)p->best[b]),
				jb_job_status_name(order[s]), cnt,
				cnt == 1 ? " " : "s", buf);
			any = 1;
		}
		queues_used += (size_t)any;
	}
	size_t un = job_list(t, -1, -1, buf, sizeof(buf));
	fprintf(t->out, "unassigned: %zu job%s%s%s\n", un, un == 1 ? "" : "s",
		un ? ": " : "", un ? buf : "");
	if (d->outcome == DEC_ASSIGNED && d->chosen >= 0 &&
	    (size_t)d->chosen < d->ncands)
		fprintf(t->out,
			"decision: assigned %zu of %zu jobs to %zu queue%s, "
			"best %s (weight %.4g)\n",
			p->nassigned, t->r->njobs, queues_used,
			queues_used == 1 ? "" : "s",
			cand_name(t->queues, d, (size_t)d->chosen),
			d->cands[d->chosen].weight);
	else
		fprintf(t->out,
			"decision: pending, %zu jobs retried after %d s\n",
			t->r->njobs, d->retry_after_s);
}

void rpj_print_decision(FILE *out, const struct gm_request *r,
			const struct jb_queue *queues, size_t nqueues,
			const struct dec_decision *d,
			const struct jb_plan *plan)
{
	if (out == NULL || !consistent(r, queues, nqueues, d, plan))
		return;
	struct tctx t = {out, r, queues, d, plan, 5};
	for (size_t i = 0; i < nqueues; i++) {
		int len = (int)strlen(cand_name(queues, d, i));
		if (len > t.w)
			t.w = len < RPJ_NAME_MAX ? len : RPJ_NAME_MAX;
	}
	fprintf(out, "== Job brokerage: task %lld, gshare %s, nucleus %s, "
		     "%zu job%s, %zu queue%s ==\n",
		r->t.task_id, r->t.gshare ? r->t.gshare : "?",
		r->t.nucleus ? r->t.nucleus : "?", r->njobs,
		r->njobs == 1 ? "" : "s", nqueues, nqueues == 1 ? "" : "s");
	fprintf(out, "%-3s %-*s %-10s %-6s %-18s %s\n", "", t.w, "QUEUE",
		"WEIGHT", "RULE", "CODE", "DETAIL");
	char rank[24], wt[32];
	for (size_t b = 0; b < plan->nbest; b++) {
		const struct dec_candidate *c = &d->cands[plan->best[b]];
		snprintf(rank, sizeof(rank), "*%zu", b + 1);
		snprintf(wt, sizeof(wt), "%.4g", c->weight);
		row(&t, rank, cand_name(queues, d, (size_t)plan->best[b]), wt,
		    &c->wexpl);
	}
	/* Alive but not among the best: only if an engine ever leaves any. */
	for (size_t i = 0; i < nqueues; i++) {
		int in_best = 0;
		for (size_t b = 0; b < plan->nbest; b++)
			in_best |= (size_t)plan->best[b] == i;
		if (in_best || dec_dropped(&d->cands[i]))
			continue;
		snprintf(wt, sizeof(wt), "%.4g", d->cands[i].weight);
		row(&t, "", cand_name(queues, d, i), wt, &d->cands[i].wexpl);
	}
	for (size_t s = 0; s < d->nstages; s++)
		dropped_group(&t, s);
	size_t other = 0;
	for (size_t i = 0; i < nqueues; i++) {
		if (!dec_dropped(&d->cands[i]) ||
		    stage_listed(d, d->cands[i].stage))
			continue;
		if (other++ == 0)
			fprintf(out, "-- dropped at other stages --\n");
		dropped_rows(&t, i);
	}
	summary(&t);
}
